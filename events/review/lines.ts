/**
 * Streams a file line by line as bytes, in bounded memory: a
 * multi-gigabyte events.log is read in 1 MiB pieces and each line is
 * handed over as a range of a buffer, so data rows can be parsed without
 * making strings. Gzipped files (logrotate's `compress`) are recognised by
 * their magic bytes and decompressed on the way.
 *
 * @module
 */

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
    await file.seek(gzip ? 0 : offset, Deno.SeekMode.Start);
    if (!gzip) onRead?.(offset);
    const chunks = gzip
      ? gunzipChunks(file, onRead)
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
  yield* counted.pipeThrough(new DecompressionStream("gzip"));
}

/**
 * Calls `onLine` for every line of `chunks`, in order; resolves to the
 * number of lines read. Throws a RangeError naming the line if one is
 * longer than `maxLineBytes` (a binary file, not a log).
 *
 * @example
 * ```ts
 * import { readLines } from "./lines.ts";
 * const text = new TextEncoder().encode("a\nbc\r\nd");
 * const seen: string[] = [];
 * await readLines([text], (buf, s, e) => { seen.push(new TextDecoder().decode(buf.subarray(s, e))); });
 * seen; // ["a", "bc", "d"]
 * ```
 */
export async function readLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  onLine: LineHandler,
  options: { readonly maxLineBytes?: number; readonly firstLine?: number } = {},
): Promise<number> {
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  let carry = new Uint8Array(4096);
  let carryLen = 0;
  let line = (options.firstLine ?? 1) - 1;
  let offset = 0; // of the line being assembled
  const append = (chunk: Uint8Array, from: number, to: number) => {
    const need = carryLen + (to - from);
    if (need > max) {
      throw new RangeError(`line ${line + 1} is longer than ${max} bytes`);
    }
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
      if (nl < 0) {
        append(chunk, pos, chunk.length);
        break;
      }
      let go: boolean;
      const length = carryLen + nl - pos;
      if (carryLen > 0) {
        append(chunk, pos, nl);
        go = emit(carry, 0, carryLen, true);
        carryLen = 0;
      } else {
        if (nl - pos > max) {
          throw new RangeError(`line ${line + 1} is longer than ${max} bytes`);
        }
        go = emit(chunk, pos, nl, true);
      }
      offset += length + 1;
      pos = nl + 1;
      if (!go) return line;
    }
  }
  if (carryLen > 0) emit(carry, 0, carryLen, false);
  return line;
}
