/**
 * A log file read in blocks at chosen byte offsets, every byte read
 * counted: finding one event in a file of hundreds of megabytes seeks to
 * a few dozen places and reads a few kilobytes at each, and the count is
 * what proves it (event_lookup.ts reports it; its tests check it).
 * Compressed files cannot be seeked: {@linkcode BlockFile.gzip} says so
 * and {@linkcode BlockFile.stream} reads them whole, still counted.
 *
 * @module
 */

import { DamagedFileError } from "./errors.ts";

/** Bytes a block read takes by default: a few rows of a wide log. */
export const BLOCK_BYTES = 16 * 1024;

/** Opens a file for reading: `Deno.open` by default, a test's own to count or fail. */
export type FileOpener = (path: string) => Promise<Deno.FsFile>;

const openForReading: FileOpener = (path) => Deno.open(path, { read: true });

/**
 * One open log file.
 *
 * @example Usage
 * ```ts ignore
 * await using file = await BlockFile.open("/var/log/dpu-traceback/nic-events.log");
 * const head = await file.readAt(0, 4096); // the header block's start
 * file.bytesRead; // 4096 (or the file's size, if smaller)
 * ```
 */
export class BlockFile {
  /** The path it was opened by. */
  readonly path: string;
  /** Its size when opened, bytes. */
  readonly size: number;
  /** Whether it is gzip-compressed (a rotated `.gz`): only {@linkcode stream} reads it. */
  readonly gzip: boolean;
  readonly #file: Deno.FsFile;
  readonly #onRead: (bytes: number) => void;
  #closed = false;

  private constructor(
    path: string,
    file: Deno.FsFile,
    size: number,
    gzip: boolean,
    onRead: (bytes: number) => void,
  ) {
    this.path = path;
    this.#file = file;
    this.size = size;
    this.gzip = gzip;
    this.#onRead = onRead;
  }

  /**
   * Opens `path`; `onRead` is told every read's byte count (the two magic
   * bytes that tell gzip included). Throws what opening throws.
   */
  static async open(
    path: string,
    onRead: (bytes: number) => void,
    opener: FileOpener = openForReading,
  ): Promise<BlockFile> {
    const file = await opener(path);
    try {
      const size = (await file.stat()).size;
      const magic = new Uint8Array(2);
      const n = await readFull(file, magic);
      onRead(n);
      const gzip = n === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
      return new BlockFile(path, file, size, gzip, onRead);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /**
   * Up to `length` bytes from byte `offset` (fewer at the end of the
   * file; none past it). Not for a compressed file.
   */
  async readAt(offset: number, length: number): Promise<Uint8Array> {
    const end = Math.min(this.size, offset + length);
    if (end <= offset) return new Uint8Array(0);
    const buf = new Uint8Array(end - offset);
    await this.#file.seek(offset, Deno.SeekMode.Start);
    const n = await readFull(this.#file, buf);
    this.#onRead(n);
    return n === buf.length ? buf : buf.subarray(0, n);
  }

  /**
   * The file's bytes from `offset` on (decompressed, from the start, for
   * a gzip file), in blocks of `blockBytes`, read as they are asked for:
   * a reader that stops early reads no more.
   */
  async *stream(
    offset = 0,
    blockBytes = BLOCK_BYTES,
  ): AsyncGenerator<Uint8Array> {
    if (this.gzip) {
      await this.#file.seek(0, Deno.SeekMode.Start);
      const onRead = this.#onRead;
      const file = this.#file;
      const compressed = new ReadableStream<Uint8Array<ArrayBuffer>>({
        async pull(controller) {
          const buf = new Uint8Array(blockBytes);
          const n = await file.read(buf);
          if (n === null) controller.close();
          else {
            onRead(n);
            controller.enqueue(buf.subarray(0, n));
          }
        },
      });
      try {
        yield* compressed.pipeThrough(new DecompressionStream("gzip"));
      } catch (error) {
        // The decompressor's errors are TypeErrors; I/O errors pass.
        if (!(error instanceof TypeError)) throw error;
        throw new DamagedFileError(
          `truncated or corrupt gzip data (${error.message.split("\n")[0]})`,
          { cause: error },
        );
      }
      return;
    }
    for (let at = offset; at < this.size; at += blockBytes) {
      const block = await this.readAt(at, blockBytes);
      if (block.length === 0) return;
      yield block;
    }
  }

  /** Closes the file (safe to call twice). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#file.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

// Reads until `buf` is full or the file ends; returns the bytes read.
async function readFull(file: Deno.FsFile, buf: Uint8Array): Promise<number> {
  let n = 0;
  while (n < buf.length) {
    const got = await file.read(buf.subarray(n));
    if (got === null) break;
    n += got;
  }
  return n;
}
