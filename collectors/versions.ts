/**
 * Which DOCA and NVML libraries this host has, for `--version` and bug
 * reports. Found the way the collectors look for them, but only looked at
 * (the real file behind the soname link), never loaded: `--version` must
 * work on a host whose driver is broken.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import {
  firstExisting,
  libraryFileVersion,
  libraryPaths,
} from "../ffi/library.ts";
import { DOCA_SONAME_SUFFIXES, docaLibraryDirs } from "./doca.ts";
import { nvmlLibraryDirs } from "./nvml/collector.ts";

/** Where a library is, as a collector would find it: looked at, never loaded. */
export type LibraryProbe =
  | { readonly found: string }
  | { readonly notFound: readonly string[] }
  | { readonly cannotLook: string };

/** The first of `paths` that exists; `lookedIn` is what to say when none does. */
function probe(
  paths: readonly string[],
  lookedIn: readonly string[],
): LibraryProbe {
  try {
    const path = firstExisting(paths);
    return path === null ? { notFound: lookedIn } : { found: path };
  } catch (error) {
    // A compiled binary may read only some directories (deploy/permissions.ts).
    const message = errorMessage(error);
    return {
      cannotLook: message.split("\n")[0].replace(/, run again.*$/, ""),
    };
  }
}

/**
 * Where the GPU monitor would find NVML at start (collectors/nvml: the
 * same directories, `libDir` first, then `NVML_LIB_DIR`), found by a stat
 * only: nothing is loaded and nothing of NVML runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeNvml } from "./versions.ts";
 *
 * const probe = probeNvml("/nonexistent");
 * if ("notFound" in probe) assert.equal(probe.notFound[0], "/nonexistent");
 * ```
 */
export function probeNvml(libDir?: string): LibraryProbe {
  const dirs = nvmlLibraryDirs(libDir);
  return probe(libraryPaths("libnvidia-ml", dirs, [".so.1"]), dirs);
}

/** One library: `not found`, or its version and where it is. */
function describe(
  paths: readonly string[],
  lookedIn: readonly string[],
): string {
  const probed = probe(paths, lookedIn);
  if ("cannotLook" in probed) return `cannot look: ${probed.cannotLook}`;
  if ("notFound" in probed) {
    return `not found (looked in ${probed.notFound.join(", ")})`;
  }
  const path = probed.found;
  try {
    const found = libraryFileVersion(path);
    return `${found.version ?? "version unknown"} (${found.path})`;
  } catch (error) {
    const message = errorMessage(error);
    return `unreadable: ${path}: ${message.split("\n")[0]}`;
  }
}

/**
 * Lines naming the DOCA (libdoca_common) and NVML libraries found.
 *
 * @example
 * ```ts ignore
 * libraryVersions();
 * // ["doca: 3.1.0105 (/opt/mellanox/doca/lib/aarch64-linux-gnu/libdoca_common.so.3.1.0105)",
 * //  "nvml: not found (looked in /usr/lib/aarch64-linux-gnu, /usr/lib64, /usr/lib)"]
 * ```
 */
export function libraryVersions(docaLibDir?: string): string[] {
  const docaDirs = docaLibraryDirs(docaLibDir);
  const nvmlDirs = nvmlLibraryDirs();
  return [
    `doca: ${
      describe(
        libraryPaths("libdoca_common", docaDirs, DOCA_SONAME_SUFFIXES),
        docaDirs,
      )
    }`,
    `nvml: ${
      describe(libraryPaths("libnvidia-ml", nvmlDirs, [".so.1"]), nvmlDirs)
    }`,
  ];
}
