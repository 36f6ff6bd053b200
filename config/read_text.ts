/**
 * Reading a file the operator named as configuration, in bounded memory
 * and time: at most {@linkcode MAX_CONFIG_BYTES} are read whatever the
 * file is, so `/dev/zero`, `/dev/urandom` or a 10 GB log given by mistake
 * is answered at once with one line rather than filling memory.
 *
 * @module
 */

import { fileError, formatBytes } from "./errors.ts";
import { MAX_CONFIG_BYTES } from "./limits.ts";

/**
 * Reads `path` as UTF-8 text of at most `maxBytes` bytes. A byte order
 * mark is dropped. Throws `Deno.errors.NotFound` (with a one-line
 * message) when there is no such file, a `RangeError` when it is larger
 * than `maxBytes`, a `TypeError` when it is not UTF-8, and an `Error`
 * when it cannot be read; every message starts
 * `Cannot load config PATH: `.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { readConfigText } from "./read_text.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".yaml" });
 * await Deno.writeTextFile(path, "listen: off\n");
 * assert.equal(await readConfigText(path), "listen: off\n");
 * await assert.rejects(readConfigText(path, 4), RangeError);
 * await Deno.remove(path);
 * ```
 *
 * @param path The file.
 * @param maxBytes The most bytes accepted.
 * @returns Its text.
 */
export async function readConfigText(
  path: string,
  maxBytes: number = MAX_CONFIG_BYTES,
): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    throw openError(path, error);
  }
  let bytes: Uint8Array;
  try {
    const info = await file.stat();
    if (info.isDirectory) {
      throw fileError(Error, path, 0, "is a directory, not a file");
    }
    // A regular file says its size; a device or a pipe says 0 and is read
    // up to the bound instead.
    if (info.isFile && info.size > maxBytes) throw tooLarge(path, maxBytes);
    bytes = await readAtMost(file, path, maxBytes);
  } finally {
    file.close();
  }
  return decode(bytes, path);
}

/** Reads until the end or one byte past `maxBytes`, which is refused. */
async function readAtMost(
  file: Deno.FsFile,
  path: string,
  maxBytes: number,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(maxBytes + 1);
  let length = 0;
  while (length < buffer.length) {
    let n: number | null;
    try {
      n = await file.read(buffer.subarray(length));
    } catch (error) {
      throw readError(path, error);
    }
    if (n === null) return buffer.subarray(0, length);
    length += n;
  }
  throw tooLarge(path, maxBytes);
}

function tooLarge(path: string, maxBytes: number): RangeError {
  return fileError(
    RangeError,
    path,
    0,
    `is larger than ${
      formatBytes(maxBytes)
    } (${maxBytes} bytes), the most a configuration file may be`,
  );
}

/** UTF-8 to text; a file that is not UTF-8 is named, with where it breaks. */
function decode(bytes: Uint8Array, path: string): string {
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
    throw fileError(
      TypeError,
      path,
      0,
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

/** Keeps the NotFound class, with a message naming the file. */
function openError(path: string, error: unknown): unknown {
  if (error instanceof Deno.errors.NotFound) {
    return new Deno.errors.NotFound(
      fileError(Error, path, 0, "file not found").message,
      { cause: error },
    );
  }
  return readError(path, error);
}

function readError(path: string, error: unknown): unknown {
  return error instanceof Error
    ? fileError(Error, path, 0, `cannot read it: ${error.message}`, {
      cause: error,
    })
    : error;
}
