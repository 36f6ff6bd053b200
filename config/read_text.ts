/**
 * Reading a file the operator named: the configuration, its `--data-ids`,
 * the web config and the certificate and key it names, the labels file,
 * and the Alertmanagers' password, token, CA and client certificate files.
 * Every one goes through {@linkcode readConfigText}, so none can hang or
 * flood the agent's start:
 *
 * - Only a regular file is read. A FIFO's open waits for a writer for
 *   ever, a device such as `/dev/zero` never ends, and opening some devices
 *   does something (a watchdog starts counting): the path is looked at
 *   first, and anything but a regular file is refused unopened, naming
 *   what it is (`is a FIFO, not a regular file`).
 * - The look and the open are two steps, and the path may be replaced
 *   between them. The open is therefore non-blocking (`O_NONBLOCK`, and
 *   `O_NOCTTY` so a terminal never becomes the agent's), so a FIFO swapped
 *   in is opened at once rather than waited on; then the open file itself
 *   is looked at, and it must be a regular file and the very one the path
 *   named (the same device and inode), or nothing is read.
 * - At most `maxBytes` are read ({@linkcode MAX_CONFIG_BYTES} by default),
 *   whatever the file's size says.
 *
 * What remains: a device swapped in between the look and the open is
 * opened (and closed unread), which only someone who may already rewrite
 * the agent's files can arrange; and a regular file whose reads wait (on
 * a hung network or FUSE file system, or `/proc/kmsg`) still waits.
 *
 * @module
 */

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { fileKind, type FileKindInfo, sameFile } from "../base/file_kind.ts";
import { terminalSafe } from "../base/terminal_text.ts";
import { fileError } from "./errors.ts";
import { formatBytes } from "../base/units.ts";
import { MAX_CONFIG_BYTES } from "./limits.ts";

/** Opened for reading, never waiting, never taking a controlling terminal. */
const READ_NOW = constants.O_RDONLY | constants.O_NONBLOCK |
  constants.O_NOCTTY;

/** How {@linkcode readConfigText} reads and words its errors. */
export interface ReadTextOptions {
  /** The most bytes accepted; default {@linkcode MAX_CONFIG_BYTES}. */
  readonly maxBytes?: number;
  /**
   * What every message starts with, before `: ` and the problem; default
   * `Cannot load config PATH`.
   */
  readonly prefix?: string;
  /**
   * What the file is, for the size message (`..., the most a labels file
   * may be`); default `a configuration file`.
   */
  readonly kind?: string;
}

/**
 * Reads `path` as UTF-8 text of at most `maxBytes` bytes, if it is a
 * regular file (see the module). A byte order mark is dropped. Every
 * message is one line, starting with the prefix (`Cannot load config
 * PATH: `) and never quoting the file's text. Throws
 * `Deno.errors.NotFound` when there is no such file, a `TypeError` when
 * it is not a regular file or not UTF-8, a `RangeError` when it is larger
 * than `maxBytes`, and an `Error` when it cannot be read (its cause is the
 * runtime's error: `Deno.errors.PermissionDenied`, `NotCapable`, ...) or
 * was replaced while being opened.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { readConfigText } from "./read_text.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".yaml" });
 * await Deno.writeTextFile(path, "listen: off\n");
 * assert.equal(await readConfigText(path), "listen: off\n");
 * await assert.rejects(readConfigText(path, { maxBytes: 4 }), RangeError);
 * await Deno.remove(path);
 * await assert.rejects(readConfigText("/dev/zero"), {
 *   name: "TypeError",
 *   message: "Cannot load config /dev/zero: is a character device, not a regular file",
 * });
 * ```
 *
 * @param path The file.
 * @param options The bound and the messages' wording.
 * @returns Its text.
 */
export async function readConfigText(
  path: string,
  options: ReadTextOptions = {},
): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_CONFIG_BYTES;
  const fail = failure(path, options.prefix);
  let named: Deno.FileInfo;
  try {
    named = await Deno.stat(path);
  } catch (error) {
    throw ioError(fail, error);
  }
  if (!named.isFile) {
    throw fail(TypeError, `is ${fileKind(named)}, not a regular file`);
  }
  let file: FileHandle;
  try {
    file = await open(path, READ_NOW);
  } catch (error) {
    throw ioError(fail, runtimeError(error));
  }
  let bytes: Uint8Array;
  try {
    let opened: FileKindInfo & { dev: number; ino: number; size: number };
    try {
      opened = kindOf(await file.stat());
    } catch (error) {
      throw ioError(fail, runtimeError(error));
    }
    if (!opened.isFile) {
      throw fail(
        Error,
        `is ${
          fileKind(opened)
        } now, not a regular file: it was replaced while being opened; nothing was read`,
      );
    }
    if (!sameFile(opened, named)) {
      throw fail(
        Error,
        "was replaced by another file while being opened; nothing was read",
      );
    }
    // A regular file says its size: a sparse 10 GB file is refused unread.
    if (opened.size > maxBytes) throw tooLarge(fail, maxBytes, options.kind);
    bytes = await readAtMost(file, fail, maxBytes, options.kind);
  } finally {
    await file.close().catch(() => {});
  }
  return decode(bytes, fail);
}

/** Makes this file's errors: `PREFIX: what`, one line. */
type Fail = <E extends Error>(
  Class: new (message: string, options?: ErrorOptions) => E,
  what: string,
  options?: ErrorOptions,
) => E;

function failure(path: string, prefix: string | undefined): Fail {
  return (Class, what, options) =>
    prefix === undefined
      ? fileError(Class, path, 0, what, options)
      // terminalSafe also writes a line break as \u000a: one line.
      : new Class(terminalSafe(`${prefix}: ${what}`), options);
}

/** An open file's node:fs status in the shape {@linkcode fileKind} reads. */
function kindOf(
  stats: Awaited<ReturnType<FileHandle["stat"]>>,
): FileKindInfo & { dev: number; ino: number; size: number } {
  return {
    isFile: stats.isFile(),
    isDirectory: stats.isDirectory(),
    isSymlink: stats.isSymbolicLink(),
    isFifo: stats.isFIFO(),
    isSocket: stats.isSocket(),
    isCharDevice: stats.isCharacterDevice(),
    isBlockDevice: stats.isBlockDevice(),
    dev: Number(stats.dev),
    ino: Number(stats.ino),
    size: Number(stats.size),
  };
}

/** Reads until the end or one byte past `maxBytes`, which is refused. */
async function readAtMost(
  file: FileHandle,
  fail: Fail,
  maxBytes: number,
  kind: string | undefined,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(maxBytes + 1);
  let length = 0;
  while (length < buffer.length) {
    let n: number;
    try {
      ({ bytesRead: n } = await file.read(
        buffer,
        length,
        buffer.length - length,
        null,
      ));
    } catch (error) {
      throw ioError(fail, runtimeError(error));
    }
    if (n === 0) return buffer.subarray(0, length);
    length += n;
  }
  // The file grew past its size since it was looked at.
  throw tooLarge(fail, maxBytes, kind);
}

function tooLarge(
  fail: Fail,
  maxBytes: number,
  kind = "a configuration file",
): RangeError {
  return fail(
    RangeError,
    `is larger than ${
      formatBytes(maxBytes)
    } (${maxBytes} bytes), the most ${kind} may be`,
  );
}

/** UTF-8 to text; a file that is not UTF-8 is named, with where it breaks. */
function decode(bytes: Uint8Array, fail: Fail): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    const soFar = validPrefix(bytes);
    // The character that breaks starts at the end of the last whole one.
    let start = soFar;
    while (start > 0 && !decodes(bytes.subarray(0, start), false)) start--;
    const lines = new TextDecoder().decode(bytes.subarray(0, start))
      .split("\n");
    const line = lines.length;
    const column = lines[line - 1].length + 1;
    const where = `byte ${start} (line ${line}, column ${column})`;
    throw fail(
      TypeError,
      soFar === bytes.length
        ? `is not UTF-8 text: it ends inside the character at ${where}`
        : `is not UTF-8 text: the character at ${where} is not valid UTF-8`,
      { cause: error },
    );
  }
}

/**
 * Length of the longest prefix that is UTF-8 so far (it may end inside a
 * character): the byte after it is the first that cannot be.
 */
function validPrefix(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (decodes(bytes.subarray(0, mid), true)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Whether `bytes` are UTF-8; with `stream`, a character cut at the end is. */
function decodes(bytes: Uint8Array, stream: boolean): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream });
    return true;
  } catch {
    return false;
  }
}

/**
 * node:fs's error (`EACCES: permission denied, open 'x'`, a plain Error
 * with a code) as the `Deno.errors` class Deno.stat would have thrown, so
 * callers tell them apart one way whichever step failed.
 */
function runtimeError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const Class = code === "ENOENT"
    ? Deno.errors.NotFound
    : code === "EACCES" || code === "EPERM"
    ? Deno.errors.PermissionDenied
    : code === "EISDIR"
    ? Deno.errors.IsADirectory
    : undefined;
  return Class === undefined || !(error instanceof Error)
    ? error
    : new Class(error.message, { cause: error });
}

/** Keeps the NotFound class, with a message naming the file. */
function ioError(fail: Fail, error: unknown): unknown {
  if (error instanceof Deno.errors.NotFound) {
    return fail(Deno.errors.NotFound, "file not found", { cause: error });
  }
  return error instanceof Error
    ? fail(Error, `cannot read it: ${error.message}`, { cause: error })
    : error;
}
