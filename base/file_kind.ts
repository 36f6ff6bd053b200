/**
 * What kind of file a path names, in the words an operator reads in a
 * message (`a FIFO`, `a character device`), and whether two looks at a
 * path saw the same file. Every place that refuses to open anything but a
 * regular file says so the same way.
 *
 * @module
 */

/** The parts of a file's status that say its kind; `Deno.FileInfo` has them. */
export interface FileKindInfo {
  readonly isFile: boolean;
  readonly isDirectory: boolean;
  readonly isSymlink: boolean;
  readonly isFifo: boolean | null;
  readonly isSocket: boolean | null;
  readonly isCharDevice: boolean | null;
  readonly isBlockDevice: boolean | null;
}

/**
 * The kind of file `info` describes, with its article, for a message such
 * as `PATH is a FIFO, not a regular file`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileKind } from "./file_kind.ts";
 *
 * assert.equal(fileKind(await Deno.stat("/dev/null")), "a character device");
 * assert.equal(fileKind(await Deno.stat("/")), "a directory");
 * ```
 *
 * @param info The file's status, from `Deno.stat`, `Deno.lstat` or an open
 * file's `stat()`.
 * @returns `a regular file`, `a directory`, `a symbolic link`, `a FIFO`,
 * `a socket`, `a character device`, `a block device` or
 * `something else`.
 */
export function fileKind(info: FileKindInfo): string {
  return info.isFile
    ? "a regular file"
    : info.isDirectory
    ? "a directory"
    : info.isSymlink
    ? "a symbolic link"
    : info.isFifo
    ? "a FIFO"
    : info.isSocket
    ? "a socket"
    : info.isCharDevice
    ? "a character device"
    : info.isBlockDevice
    ? "a block device"
    : "something else";
}

/**
 * Whether two looks at files saw the same one: the same device and inode
 * (Linux always gives both).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { sameFile } from "./file_kind.ts";
 *
 * assert.ok(sameFile(await Deno.stat("/dev/null"), await Deno.stat("/dev/null")));
 * assert.ok(!sameFile(await Deno.stat("/dev/null"), await Deno.stat("/")));
 * ```
 *
 * @param a One look.
 * @param b The other.
 * @returns True when both name the same file.
 */
export function sameFile(
  a: { readonly dev: number; readonly ino: number | null },
  b: { readonly dev: number; readonly ino: number | null },
): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
