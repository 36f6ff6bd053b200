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

/** One library: `not found`, or its version and where it is. */
function describe(
  paths: readonly string[],
  lookedIn: readonly string[],
): string {
  let path: string | null;
  try {
    path = firstExisting(paths);
  } catch (error) {
    // A compiled binary may read only some directories (deploy/permissions.ts).
    const message = errorMessage(error);
    return `cannot look: ${
      message.split("\n")[0].replace(/, run again.*$/, "")
    }`;
  }
  if (path === null) return `not found (looked in ${lookedIn.join(", ")})`;
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
