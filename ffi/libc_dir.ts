/**
 * libc's calls for walking a directory tree by path: `opendir(3)`,
 * `readdir(3)`, `closedir(3)`, `realpath(3)`, `readlink(2)` and `free(3)`,
 * with the decoding of glibc's `struct dirent`. The kernel source and the
 * PCIe lookups walk /sys through these because Deno's own file calls
 * refuse every path under /sys (and /proc, /dev) to a program without
 * `--allow-all`, whatever `--allow-read` says. Declarations and decoding
 * only: what a missing entry means is the caller's call (collectors/sysfs.ts).
 *
 * `struct dirent` has one layout on glibc for x86_64 and aarch64:
 * `d_ino` (8 bytes), `d_off` (8), `d_reclen` (2), `d_type` (1), then
 * `d_name`, NUL-terminated.
 *
 * @module
 */

import { LIBC_SONAME } from "./libc.ts";

/** Byte offset of `unsigned char d_type` in glibc's `struct dirent`. */
export const DIRENT_TYPE_OFFSET = 18;
/** Byte offset of `char d_name[256]` in glibc's `struct dirent`. */
export const DIRENT_NAME_OFFSET = 19;

/** `d_type` values: the entry's kind, or unknown (ask `statx`). */
export const DirentType = {
  DT_UNKNOWN: 0,
  DT_DIR: 4,
  DT_REG: 8,
  DT_LNK: 10,
} as const;

/** `PATH_MAX` on Linux: the longest path `readlink` is given room for. */
export const PATH_MAX = 4096;

/** The symbols of libc the directory walk binds. */
export const LIBC_DIR_SYMBOLS = {
  /** `DIR *opendir(const char *name)`. */
  opendir: { parameters: ["buffer"], result: "pointer" },
  /** `struct dirent *readdir(DIR *dirp)`: null at the end or on error. */
  readdir: { parameters: ["pointer"], result: "pointer" },
  /** `int closedir(DIR *dirp)`. */
  closedir: { parameters: ["pointer"], result: "i32" },
  /** `char *realpath(const char *path, char *resolved)`; resolved null: malloc'd. */
  realpath: { parameters: ["buffer", "pointer"], result: "pointer" },
  /**
   * `ssize_t readlink(const char *path, char *buf, size_t size)`, the
   * size given as a 32-bit count ({@linkcode PATH_MAX} fits) and the
   * result read as its low 32 bits: the length, or -1.
   */
  readlink: { parameters: ["buffer", "buffer", "u32"], result: "i32" },
  /** `void free(void *ptr)`. */
  free: { parameters: ["pointer"], result: "void" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc opened with {@linkcode LIBC_DIR_SYMBOLS}. */
export type LibcDir = Deno.DynamicLibrary<typeof LIBC_DIR_SYMBOLS>;

/** Opens libc with the directory symbols. Throws without FFI permission. */
export function openLibcDir(): LibcDir {
  return Deno.dlopen(LIBC_SONAME, LIBC_DIR_SYMBOLS);
}

/**
 * The name and `d_type` of the `struct dirent` at `entry` (from
 * `readdir`).
 */
export function decodeDirent(
  entry: Deno.PointerObject,
): { readonly name: string; readonly type: number } {
  const view = new Deno.UnsafePointerView(entry);
  return {
    name: view.getCString(DIRENT_NAME_OFFSET),
    type: view.getUint8(DIRENT_TYPE_OFFSET),
  };
}
