/**
 * Finding and opening a native library by trying directories and sonames
 * in order. Declarations only: what a failure means is the caller's call.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { fileKind } from "../base/file_kind.ts";

/**
 * Candidate paths for `stem` (e.g. `libdoca_common`) in `dirs`, each with
 * `suffixes` in order (e.g. `.so.3`, `.so.2`, `.so`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { libraryPaths } from "./library.ts";
 *
 * assert.deepEqual(libraryPaths("libdoca_common", ["/opt/d"], [".so.3", ".so"]), [
 *   "/opt/d/libdoca_common.so.3",
 *   "/opt/d/libdoca_common.so",
 * ]);
 * ```
 */
export function libraryPaths(
  stem: string,
  dirs: readonly string[],
  suffixes: readonly string[],
): string[] {
  const paths: string[] = [];
  for (const dir of dirs) {
    for (const suffix of suffixes) {
      paths.push(`${dir.replace(/\/+$/, "")}/${stem}${suffix}`);
    }
  }
  return paths;
}

/** What {@linkcode openFirst} returns: the library and the path it came from. */
export interface OpenedLibrary<S extends Deno.ForeignLibraryInterface> {
  readonly library: Deno.DynamicLibrary<S>;
  readonly path: string;
}

/**
 * Opens the first of `paths` that exists with `symbols`. Paths that do not
 * exist are skipped; a file that exists but is not a regular file or
 * cannot be loaded (wrong architecture, a required symbol missing) is an
 * error naming it, since silently trying the next one would hide a broken
 * install. Returns null when none exists.
 */
export function openFirst<S extends Deno.ForeignLibraryInterface>(
  paths: readonly string[],
  symbols: S,
): OpenedLibrary<S> | null {
  for (const path of paths) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    // dlopen opens the file and waits: a FIFO put where a library belongs
    // would hang the start for good. (A soname link is followed: the
    // library behind it is a regular file.)
    if (!info.isFile) {
      throw new Error(
        `Cannot load ${path}: is ${fileKind(info)}, not a regular file`,
      );
    }
    try {
      return { library: Deno.dlopen(path, symbols), path };
    } catch (error) {
      throw new Error(
        `Cannot load ${path}: ${errorMessage(error).split("\n")[0]}`,
        { cause: error },
      );
    }
  }
  return null;
}

/**
 * The first of `paths` that exists, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstExisting } from "./library.ts";
 *
 * assert.equal(firstExisting(["/nonexistent/libx.so.1"]), null);
 * ```
 */
export function firstExisting(paths: readonly string[]): string | null {
  for (const path of paths) {
    try {
      Deno.statSync(path);
      return path;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
  }
  return null;
}

/**
 * The version a library's file name carries once its soname link is
 * followed (`libnvidia-ml.so.1` -> `libnvidia-ml.so.550.54.14` gives
 * `550.54.14`), with the resolved path; version undefined when the file
 * name has none beyond the soname's.
 *
 * @example
 * ```ts ignore
 * libraryFileVersion("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
 * // { path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14", version: "550.54.14" }
 * ```
 */
export function libraryFileVersion(
  path: string,
): { path: string; version?: string } {
  const real = Deno.realPathSync(path);
  const version = /\.so\.(\d+(?:\.[0-9A-Za-z]+)+)$/.exec(real)?.[1];
  return { path: real, version };
}

/**
 * Reads a NUL-terminated C string, or "" for a null pointer (the static
 * strings of `doca_error_get_name` and `nvmlErrorString`).
 */
export function readCString(pointer: Deno.PointerValue): string {
  return pointer === null ? "" : Deno.UnsafePointerView.getCString(pointer);
}

/**
 * A NUL-terminated string out of a fixed-size `char[]` buffer (up to the
 * first NUL, or the whole buffer without one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cStringFromBuffer } from "./library.ts";
 *
 * // Up to the first NUL: "GPU", not "GPU\0X".
 * assert.equal(cStringFromBuffer(new Uint8Array([71, 80, 85, 0, 88])), "GPU");
 * ```
 */
export function cStringFromBuffer(buffer: Uint8Array): string {
  const end = buffer.indexOf(0);
  return new TextDecoder().decode(end < 0 ? buffer : buffer.subarray(0, end));
}

/** `text` as a NUL-terminated C string. */
export function toCString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}
