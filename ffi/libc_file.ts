/**
 * libc's file calls for attribute files kept open and read again in
 * place: `open(2)`, `pread(2)`, `close(2)`, `statx(2)` on an open
 * descriptor, and `errno`. Deno's `FsFile` exposes no descriptor and
 * reads at its own position, while a sysfs attribute is re-read by a
 * `pread` at offset 0 with no seek. Declarations and decoding only: which
 * files, and what a failed read means, are the caller's call
 * (collectors/kernel/).
 *
 * The flag and mode values are Linux's generic ones, the same on x86_64
 * and aarch64; `struct statx` has one layout on every architecture.
 *
 * @module
 */

import type { FileKindInfo } from "../base/file_kind.ts";
import { LIBC_SONAME } from "./libc.ts";

/** `O_RDONLY`. */
export const O_RDONLY = 0;
/** `O_NOCTTY`: a terminal opened by mistake does not become ours. */
export const O_NOCTTY = 0o400;
/** `O_NONBLOCK`: opening a FIFO by mistake does not wait for a writer. */
export const O_NONBLOCK = 0o4000;
/** `O_CLOEXEC`: the descriptor does not leak into children. */
export const O_CLOEXEC = 0o2000000;

/** `AT_FDCWD`: a path relative to the working directory (or absolute). */
export const AT_FDCWD = -100;
/** `AT_SYMLINK_NOFOLLOW`: `statx` of a link itself, not of what it names. */
export const AT_SYMLINK_NOFOLLOW = 0x100;
/** `AT_EMPTY_PATH`: `statx` on the descriptor itself (path ""). */
export const AT_EMPTY_PATH = 0x1000;
/** `STATX_TYPE`: ask for the file type bits of `stx_mode`. */
export const STATX_TYPE = 0x1;
/** Bytes of `struct statx`. */
export const STATX_SIZE = 256;
/** Byte offset of `__u16 stx_mode` in `struct statx`. */
export const STATX_MODE_OFFSET = 28;

/** `S_IFMT` and the file types it selects. */
export const S_IFMT = 0o170000;
export const S_IFSOCK = 0o140000;
export const S_IFLNK = 0o120000;
export const S_IFREG = 0o100000;
export const S_IFBLK = 0o060000;
export const S_IFDIR = 0o040000;
export const S_IFCHR = 0o020000;
export const S_IFIFO = 0o010000;

/** `errno` values the callers name or act on (Linux, every architecture). */
export const Errno = {
  EPERM: 1,
  ENOENT: 2,
  ESRCH: 3,
  EINTR: 4,
  EIO: 5,
  ENXIO: 6,
  EAGAIN: 11,
  EACCES: 13,
  ENODEV: 19,
  ENOTDIR: 20,
  EISDIR: 21,
  EINVAL: 22,
  EOPNOTSUPP: 95,
} as const;

const ERRNO_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(Errno).map(([name, code]) => [code, name]),
);

/**
 * The symbolic name of an errno value, `errno N` for one not in
 * {@linkcode Errno}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errnoName } from "./libc_file.ts";
 *
 * assert.equal(errnoName(19), "ENODEV");
 * assert.equal(errnoName(1234), "errno 1234");
 * ```
 */
export function errnoName(code: number): string {
  return ERRNO_NAMES.get(code) ?? `errno ${code}`;
}

/** The symbols of libc the file reads bind. */
export const LIBC_FILE_SYMBOLS = {
  /** `int open(const char *path, int flags, ...)` (no mode: never creates). */
  open: { parameters: ["buffer", "i32"], result: "i32" },
  /**
   * `ssize_t pread(int fd, void *buf, size_t count, off_t offset)`, typed
   * so that a call crosses no BigInt: Deno passes and returns 64-bit
   * integers as BigInts, which allocate. `count` and `offset` are
   * pointer-sized words on the 64-bit targets the agent runs on (x86_64,
   * aarch64), so they go as pointers made once ({@linkcode sizeWord};
   * null is 0). The result is the low 32 bits of the `ssize_t`, exact for
   * a read of fewer than 2^31 bytes: the count read, or -1.
   */
  pread: {
    parameters: ["i32", "buffer", "pointer", "pointer"],
    result: "i32",
  },
  /** `int close(int fd)`. */
  close: { parameters: ["i32"], result: "i32" },
  /**
   * `int statx(int dirfd, const char *path, int flags, unsigned mask,
   * struct statx *buf)` (glibc 2.28 and later).
   */
  statx: {
    parameters: ["i32", "buffer", "i32", "u32", "buffer"],
    result: "i32",
  },
  /**
   * `int *__errno_location(void)`: the calling thread's errno, at an
   * address that stays the same for the thread's life.
   */
  __errno_location: { parameters: [], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc opened with {@linkcode LIBC_FILE_SYMBOLS}. */
export type LibcFile = Deno.DynamicLibrary<typeof LIBC_FILE_SYMBOLS>;

/** Opens libc with the file symbols. Throws without FFI permission. */
export function openLibcFile(): LibcFile {
  return Deno.dlopen(LIBC_SONAME, LIBC_FILE_SYMBOLS);
}

/**
 * A `size_t` or `off_t` as the pointer-sized word {@linkcode LIBC_FILE_SYMBOLS}'
 * `pread` takes: made once, at start (null for 0).
 */
export function sizeWord(n: number): Deno.PointerValue {
  return Deno.UnsafePointer.create(BigInt(n));
}

/** `stx_mode` out of a `struct statx` buffer filled by `statx`. */
export function statxMode(buffer: Uint8Array): number {
  return buffer[STATX_MODE_OFFSET] | (buffer[STATX_MODE_OFFSET + 1] << 8);
}

/**
 * The file-kind flags of a mode's type bits, for
 * {@linkcode fileKind}'s wording.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileKind } from "../base/file_kind.ts";
 * import { fileKindInfoFromMode, S_IFIFO } from "./libc_file.ts";
 *
 * assert.equal(fileKind(fileKindInfoFromMode(S_IFIFO | 0o644)), "a FIFO");
 * ```
 */
export function fileKindInfoFromMode(mode: number): FileKindInfo {
  const type = mode & S_IFMT;
  return {
    isFile: type === S_IFREG,
    isDirectory: type === S_IFDIR,
    isSymlink: type === S_IFLNK,
    isFifo: type === S_IFIFO,
    isSocket: type === S_IFSOCK,
    isCharDevice: type === S_IFCHR,
    isBlockDevice: type === S_IFBLK,
  };
}
