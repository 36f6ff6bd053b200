/**
 * Reading /sys by path: list a directory, resolve a link, read a small
 * attribute file. Deno's own file calls refuse every path under /sys to a
 * program without `--allow-all` (denoland/deno#27564), which the agent
 * never has, so the device lookups walk sysfs through libc
 * (ffi/libc_dir.ts, ffi/libc_file.ts) instead. Each call takes any path, so
 * the tests' fixture trees read the same way.
 *
 * Errors are Deno's error classes, as `Deno.readDirSync` would throw them:
 * `Deno.errors.NotFound` for ENOENT, `Deno.errors.NotADirectory` for
 * ENOTDIR, `Deno.errors.PermissionDenied` for EACCES and EPERM, and an
 * `Error` naming the errno otherwise; each message names the path.
 *
 * @module
 */

import { fileKind } from "../base/file_kind.ts";
import {
  decodeDirent,
  DirentType,
  type LibcDir,
  openLibcDir,
  PATH_MAX,
} from "../ffi/libc_dir.ts";
import {
  AT_EMPTY_PATH,
  AT_FDCWD,
  AT_SYMLINK_NOFOLLOW,
  Errno,
  errnoName,
  fileKindInfoFromMode,
  type LibcFile,
  O_CLOEXEC,
  O_NOCTTY,
  O_NONBLOCK,
  O_RDONLY,
  openLibcFile,
  sizeWord,
  STATX_SIZE,
  STATX_TYPE,
  statxMode,
} from "../ffi/libc_file.ts";
import { toCString } from "../ffi/library.ts";

/** One entry of a directory, as `Deno.DirEntry` describes it. */
export interface SysfsEntry {
  /** The entry's name. */
  readonly name: string;
  /** A regular file (sysfs attributes are). */
  readonly isFile: boolean;
  /** A directory. */
  readonly isDirectory: boolean;
  /** A symbolic link, not followed. */
  readonly isSymlink: boolean;
}

let libs: { dir: LibcDir; file: LibcFile; errno: Int32Array } | undefined;

/** libc, opened on first use and kept: a handful of calls at start. */
function libc(): NonNullable<typeof libs> {
  if (libs === undefined) {
    const file = openLibcFile();
    const at = file.symbols.__errno_location();
    if (at === null) throw new Error("libc gave no errno location");
    libs = {
      dir: openLibcDir(),
      file,
      errno: new Int32Array(Deno.UnsafePointerView.getArrayBuffer(at, 4)),
    };
  }
  return libs;
}

/** The error a failed call on `path` throws, from errno. */
function failure(path: string, what: string, errno: number): Error {
  const message = `Cannot ${what} ${path}: ${errnoName(errno)}`;
  if (errno === Errno.ENOENT) return new Deno.errors.NotFound(message);
  if (errno === Errno.ENOTDIR) return new Deno.errors.NotADirectory(message);
  if (errno === Errno.EACCES || errno === Errno.EPERM) {
    return new Deno.errors.PermissionDenied(message);
  }
  return new Error(message);
}

/** `statx` mode bits of `path` (the link itself where `follow` is false). */
function modeOf(path: string, follow: boolean): number {
  const { file, errno } = libc();
  const buffer = new Uint8Array(STATX_SIZE);
  const flags = follow ? 0 : AT_SYMLINK_NOFOLLOW;
  if (
    file.symbols.statx(AT_FDCWD, toCString(path), flags, STATX_TYPE, buffer)
  ) {
    throw failure(path, "stat", errno[0]);
  }
  return statxMode(buffer);
}

/**
 * The entries of directory `path`, without `.` and `..`, in the order the
 * file system gives them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSysfsDir } from "./sysfs.ts";
 *
 * const lo = readSysfsDir("/sys/class/net").find((e) => e.name === "lo");
 * assert.equal(lo?.isSymlink, true);
 * assert.throws(() => readSysfsDir("/sys/no-such-dir"), Deno.errors.NotFound);
 * ```
 */
export function readSysfsDir(path: string): SysfsEntry[] {
  const { dir, errno } = libc();
  const handle = dir.symbols.opendir(toCString(path));
  if (handle === null) throw failure(path, "list", errno[0]);
  const entries: SysfsEntry[] = [];
  try {
    for (;;) {
      errno[0] = 0;
      const entry = dir.symbols.readdir(handle);
      if (entry === null) {
        if (errno[0] !== 0) throw failure(path, "list", errno[0]);
        return entries;
      }
      const { name, type } = decodeDirent(entry);
      if (name === "." || name === "..") continue;
      if (type === DirentType.DT_UNKNOWN) {
        const kind = fileKindInfoFromMode(modeOf(`${path}/${name}`, false));
        entries.push({
          name,
          isFile: kind.isFile,
          isDirectory: kind.isDirectory,
          isSymlink: kind.isSymlink,
        });
      } else {
        entries.push({
          name,
          isFile: type === DirentType.DT_REG,
          isDirectory: type === DirentType.DT_DIR,
          isSymlink: type === DirentType.DT_LNK,
        });
      }
    }
  } finally {
    dir.symbols.closedir(handle);
  }
}

/**
 * `path` with every link resolved, as an absolute path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sysfsRealPath } from "./sysfs.ts";
 *
 * assert.equal(sysfsRealPath("/sys/class/net/lo"), "/sys/devices/virtual/net/lo");
 * ```
 */
export function sysfsRealPath(path: string): string {
  const { dir, errno } = libc();
  const resolved = dir.symbols.realpath(toCString(path), null);
  if (resolved === null) throw failure(path, "resolve", errno[0]);
  try {
    return Deno.UnsafePointerView.getCString(resolved);
  } finally {
    dir.symbols.free(resolved);
  }
}

/**
 * Where link `path` points, as written in the link.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sysfsReadLink } from "./sysfs.ts";
 *
 * assert.match(sysfsReadLink("/sys/class/net/lo"), /\/devices\/virtual\/net\/lo$/);
 * ```
 */
export function sysfsReadLink(path: string): string {
  const { dir, errno } = libc();
  const buffer = new Uint8Array(PATH_MAX);
  const length = dir.symbols.readlink(toCString(path), buffer, PATH_MAX);
  if (length < 0) throw failure(path, "read the link", errno[0]);
  return new TextDecoder().decode(buffer.subarray(0, length));
}

/**
 * Whether `path`, links followed, is a directory; false where it is
 * missing or cannot be looked at.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSysfsDirectory } from "./sysfs.ts";
 *
 * assert.equal(isSysfsDirectory("/sys/class/net/lo"), true);
 * assert.equal(isSysfsDirectory("/sys/class/net/lo/ifindex"), false);
 * ```
 */
export function isSysfsDirectory(path: string): boolean {
  try {
    return fileKindInfoFromMode(modeOf(path, true)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Opens `path` read-only for `pread`, refusing anything but a regular file:
 * `O_NONBLOCK` so that a FIFO in its place cannot hang the caller, and
 * `O_NOCTTY` so that a terminal never becomes ours. Returns the descriptor,
 * which the caller closes. Throws, naming the path (and what it is, where
 * it is not a regular file: "Cannot `doing` PATH: is a FIFO, ..."); nothing
 * is left open then.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openSysfsFile } from "./sysfs.ts";
 *
 * assert.ok(openSysfsFile("/sys/class/net/lo/ifindex") >= 0);
 * assert.throws(() => openSysfsFile("/sys/class/net/lo"), {
 *   message: "Cannot read /sys/class/net/lo: is a directory, not a regular file",
 * });
 * ```
 */
export function openSysfsFile(path: string, doing = "read"): number {
  const { file, errno } = libc();
  const fd = file.symbols.open(
    toCString(path),
    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
  );
  if (fd < 0) throw failure(path, "open", errno[0]);
  try {
    const stat = new Uint8Array(STATX_SIZE);
    if (
      file.symbols.statx(fd, toCString(""), AT_EMPTY_PATH, STATX_TYPE, stat)
    ) {
      throw failure(path, "stat", errno[0]);
    }
    const kind = fileKindInfoFromMode(statxMode(stat));
    if (!kind.isFile) {
      throw new Error(
        `Cannot ${doing} ${path}: is ${fileKind(kind)}, not a regular file`,
      );
    }
    return fd;
  } catch (error) {
    file.symbols.close(fd);
    throw error;
  }
}

/** The most of an attribute file {@linkcode readSysfsText} reads. */
export const SYSFS_TEXT_MAX_BYTES = 65_536;

let textBuffer: Uint8Array<ArrayBuffer> | undefined;

/**
 * The text of a small file (a sysfs attribute): at most
 * {@linkcode SYSFS_TEXT_MAX_BYTES}, throwing where it is longer. Opened as
 * {@linkcode openSysfsFile} opens it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readSysfsText } from "./sysfs.ts";
 *
 * assert.equal(readSysfsText("/sys/class/net/lo/ifindex"), "1\n");
 * ```
 */
export function readSysfsText(path: string): string {
  const { file, errno } = libc();
  const fd = openSysfsFile(path);
  try {
    // One buffer for every read: a device lookup reads many small files.
    textBuffer ??= new Uint8Array(SYSFS_TEXT_MAX_BYTES + 1);
    const buffer = textBuffer;
    let length = 0;
    for (;;) {
      const n = file.symbols.pread(
        fd,
        buffer.subarray(length),
        sizeWord(buffer.length - length),
        sizeWord(length),
      );
      if (n < 0) throw failure(path, "read", errno[0]);
      if (n === 0) break;
      length += n;
      if (length > SYSFS_TEXT_MAX_BYTES) {
        throw new Error(
          `Cannot read ${path}: longer than ${SYSFS_TEXT_MAX_BYTES} bytes`,
        );
      }
    }
    return new TextDecoder().decode(buffer.subarray(0, length));
  } finally {
    file.symbols.close(fd);
  }
}
