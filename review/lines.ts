/**
 * Streams a file line by line as bytes, in bounded memory: a
 * multi-gigabyte events.log is read in 1 MiB pieces and each line is
 * handed over as a range of a buffer, so data rows can be parsed without
 * making strings. Gzipped files (logrotate's `compress`) are recognised by
 * their magic bytes and decompressed on the way.
 *
 * @module
 */

import { DamagedFileError, NotAnEventsLogError } from "./errors.ts";

/** Longest line accepted: an events.log row is at most a few KiB. */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * Receives one line: bytes `[start, end)` of `buf` (no newline, no
 * trailing CR), the line number (from 1), the byte offset of its start in
 * the (decompressed) file, and whether a newline ended it (only the last
 * line of a file can lack one). Return `false` to stop reading. The
 * buffer is reused: copy what you keep.
 */
export type LineHandler = (
  buf: Uint8Array,
  start: number,
  end: number,
  line: number,
  offset: number,
  terminated: boolean,
) => boolean | void;

/** An open log file, as chunks. */
export interface LogSource {
  /** The file's chunks, decompressed. */
  readonly chunks: AsyncIterable<Uint8Array>;
  /** Size of the file on disk. */
  readonly size: number;
  /** Whether it is gzip-compressed. */
  readonly gzip: boolean;
  /** Closes the file (safe to call twice). */
  close(): void;
}

/**
 * Opens `path` for reading, from byte `offset` when it is not compressed
 * (a gzipped file always starts at 0: check {@linkcode LogSource.gzip}).
 * `onRead` is told how many bytes of the file were read, for progress.
 */
export async function openLogSource(
  path: string,
  offset = 0,
  onRead?: (bytes: number) => void,
): Promise<LogSource> {
  const file = await Deno.open(path, { read: true });
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      try {
        file.close();
      } catch (error) {
        // A gzip source's stream closes the file when it has read it all.
        if (!(error instanceof Deno.errors.BadResource)) throw error;
      }
    }
  };
  try {
    const size = (await file.stat()).size;
    const magic = new Uint8Array(2);
    const n = await file.read(magic);
    const gzip = n === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
    // The gzip trailer's ISIZE (the data's length mod 2^32) tells a file
    // cut short from a whole one whose data is corrupt.
    let isize = -1;
    if (gzip && size >= 18) {
      const trailer = new Uint8Array(4);
      await file.seek(size - 4, Deno.SeekMode.Start);
      if (await file.read(trailer) === 4) {
        isize = new DataView(trailer.buffer).getUint32(0, true);
      }
    }
    await file.seek(gzip ? 0 : offset, Deno.SeekMode.Start);
    if (!gzip) onRead?.(offset);
    const chunks = gzip
      ? gunzipChunks(file, isize, onRead)
      : plainChunks(file, onRead);
    return { chunks, size, gzip, close };
  } catch (error) {
    close();
    throw error;
  }
}

async function* plainChunks(
  file: Deno.FsFile,
  onRead?: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  // One buffer for the whole file: readLines copies only partial lines.
  const buf = new Uint8Array(1 << 20);
  while (true) {
    const n = await file.read(buf);
    if (n === null) return;
    onRead?.(n);
    yield buf.subarray(0, n);
  }
}

async function* gunzipChunks(
  file: Deno.FsFile,
  isize: number,
  onRead?: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  const counted = file.readable.pipeThrough(
    new TransformStream<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>({
      transform(chunk, controller) {
        onRead?.(chunk.length);
        controller.enqueue(chunk);
      },
    }),
  );
  let length = 0;
  try {
    for await (
      const chunk of counted.pipeThrough(new DecompressionStream("gzip"))
    ) {
      length += chunk.length;
      yield chunk;
    }
  } catch (error) {
    // The decompressor's errors are TypeErrors; the file's own I/O errors
    // (Deno.errors.*) pass through as they are.
    if (!(error instanceof TypeError)) throw error;
    // A whole file whose data is corrupt still ends in the length of its
    // data; a cut one ends in whatever bytes the cut left.
    const whole = isize >= 0 && length % 2 ** 32 === isize;
    throw new DamagedFileError(
      `${whole ? "corrupt gzip data" : "truncated"} (${
        error.message.split("\n")[0]
      })`,
      { cause: error },
    );
  }
}

/** How {@linkcode readLines} reads. */
export interface ReadLinesOptions {
  /** Longest line accepted, in bytes (default {@linkcode MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
  /** Number of the first line (default 1). */
  readonly firstLine?: number;
  /**
   * Byte offset of the first line in its file (default 0), for chunks
   * that start part-way into one.
   */
  readonly firstOffset?: number;
  /**
   * Told about a line longer than the limit, which is then skipped (NUL
   * padding after a crash can be megabytes without a newline). Without
   * it, such a line is an error.
   */
  readonly onLongLine?: (line: number, offset: number) => void;
}

/**
 * Calls `onLine` for every line of `chunks`, in order; resolves to the
 * number of lines read. A line longer than `maxLineBytes` goes to
 * `onLongLine`, or without one throws a {@linkcode NotAnEventsLogError}
 * naming the line (a binary file, not a log).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLines } from "./lines.ts";
 *
 * const text = new TextEncoder().encode("a\nbc\r\nd");
 * const seen: string[] = [];
 * const count = await readLines([text], (buf, s, e) => {
 *   seen.push(new TextDecoder().decode(buf.subarray(s, e)));
 * });
 * assert.deepEqual(seen, ["a", "bc", "d"]);
 * assert.equal(count, 3);
 * ```
 */
export async function readLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  onLine: LineHandler,
  options: ReadLinesOptions = {},
): Promise<number> {
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  let carry = new Uint8Array(4096);
  let carryLen = 0;
  let line = (options.firstLine ?? 1) - 1;
  let offset = options.firstOffset ?? 0; // of the line being assembled
  let skipped = -1; // bytes of an over-long line skipped so far; -1: none
  const tooLong = () => {
    if (options.onLongLine === undefined) {
      throw new NotAnEventsLogError(
        `line ${line + 1} is longer than ${max} bytes: not an events log`,
      );
    }
    options.onLongLine(line + 1, offset);
  };
  const append = (chunk: Uint8Array, from: number, to: number) => {
    const need = carryLen + (to - from);
    if (need > carry.length) {
      const bigger = new Uint8Array(
        Math.min(max, Math.max(need, carry.length * 2)),
      );
      bigger.set(carry.subarray(0, carryLen));
      carry = bigger;
    }
    carry.set(chunk.subarray(from, to), carryLen);
    carryLen = need;
  };
  const emit = (
    buf: Uint8Array,
    start: number,
    end: number,
    terminated: boolean,
  ): boolean => {
    line++;
    let e = end;
    if (e > start && buf[e - 1] === 13) e--;
    return onLine(buf, start, e, line, offset, terminated) !== false;
  };
  for await (const chunk of chunks) {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      if (skipped >= 0) {
        // Inside an over-long line: drop bytes up to its newline.
        if (nl < 0) {
          skipped += chunk.length - pos;
          break;
        }
        skipped += nl - pos;
        line++;
        offset += skipped + 1;
        skipped = -1;
        pos = nl + 1;
        continue;
      }
      const length = carryLen + (nl < 0 ? chunk.length : nl) - pos;
      if (length > max) {
        tooLong();
        skipped = carryLen;
        carryLen = 0;
        continue;
      }
      if (nl < 0) {
        append(chunk, pos, chunk.length);
        break;
      }
      let go: boolean;
      if (carryLen > 0) {
        append(chunk, pos, nl);
        go = emit(carry, 0, carryLen, true);
        carryLen = 0;
      } else {
        go = emit(chunk, pos, nl, true);
      }
      offset += length + 1;
      pos = nl + 1;
      if (!go) return line;
    }
  }
  if (skipped >= 0) line++;
  else if (carryLen > 0) emit(carry, 0, carryLen, false);
  return line;
}
