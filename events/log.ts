/**
 * The events.log writer: the reference layout, appended (never truncated),
 * formatted into preallocated byte chunks and written by an asynchronous
 * pump so that logging a sample never waits on the disk. One writer per
 * file (an exclusive lock), and regular files only.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { errorMessage } from "../base/error_message.ts";
import { fileKind, sameFile } from "../base/file_kind.ts";
import {
  formatColumnNames,
  formatHeader,
  type HeaderOptions,
  quoteName,
} from "./header.ts";
import {
  MAX_U64_DIGITS,
  U64Writer,
  UTC_MILLIS_LENGTH,
  UTC_SECOND_LENGTH,
  writeUint,
  writeUtcMillis,
  writeUtcSecond,
} from "./format.ts";
import type { EventSink } from "../rules/event_sink.ts";
import {
  DROPPED_FIELD,
  EVENT_END,
  EVENT_START,
  FROM_FIELD,
  GAP,
  LOST_FIELD,
  PEAK,
  PEAK_FIELD,
  PEAK_UNKNOWN,
  RULE_FIELD,
  STOPPED_FIELD,
  TIME_FIELD,
  TO_FIELD,
  UNKNOWN_TIME,
} from "./markers.ts";
import { isReferenceRule } from "../config/types.ts";

/** What an events log needs to know about its monitor. */
export interface EventsLogOptions extends HeaderOptions {
  /** Where the log lives; created (with its directory) if missing. */
  readonly path: string;
  /** Bytes per buffer chunk (default 256 KiB; raised to fit the longest line). */
  readonly chunkBytes?: number;
  /** Chunks the writer may hold while the disk is behind (default 64). */
  readonly maxChunks?: number;
  /** Longest time rows sit in memory before a write is started (default 1000 ms). */
  readonly flushIntervalMs?: number;
  /**
   * Told when writing fails (disk full, I/O error), at most once per
   * {@linkcode WARN_INTERVAL_MS}, and once when writing works again. The
   * log keeps retrying either way; sampling never waits for it.
   */
  readonly warn?: (message: string) => void;
  /**
   * Rotate when the file reaches this many bytes (0: never): it becomes
   * `PATH.1` (older ones shift up to `PATH.<keep>`, the oldest is
   * deleted) and writing goes on in a fresh `PATH`. Checked between
   * writes, so a file may pass the size by up to one buffer chunk.
   */
  readonly maxBytes?: number;
  /** Rotated files kept (`PATH.1` .. `PATH.<keep>`); default 4. */
  readonly keep?: number;
}

/** Least time between two warnings about a failing events log. */
export const WARN_INTERVAL_MS = 60_000;

/** Counters an operator (and the metrics endpoint) wants from the writer. */
export interface EventsLogStats {
  /**
   * Bytes the file has accepted, in whole lines: the head of a row cut
   * short by a failing write is not counted (and is taken out of the file
   * again), so this is what the file holds and it never decreases.
   */
  readonly bytesWritten: number;
  /** Write or sync calls that failed (each retried later). */
  readonly writeErrors: number;
  /**
   * Rows discarded because the disk stayed behind for all chunks, and,
   * once {@linkcode EventsLog.close} gives up, the rows it could not write:
   * after close, every row formatted and not in the file.
   */
  readonly droppedRows: number;
  /** Bytes formatted but not yet accepted by the file. */
  readonly pendingBytes: number;
}

const encoder = new TextEncoder();
const START = encoder.encode(`${EVENT_START} ${TIME_FIELD}: `);
const END = encoder.encode(`${EVENT_END} ${TIME_FIELD}: `);
const GAP_START = encoder.encode(`${GAP} ${TIME_FIELD}: `);
const PEAK_START = encoder.encode(`${PEAK} ${RULE_FIELD}: `);
const RULE = encoder.encode(`, ${RULE_FIELD}: `);
const DROPPED = encoder.encode(`, ${DROPPED_FIELD}: `);
const LOST = encoder.encode(`, ${LOST_FIELD}: `);
const FROM = encoder.encode(`, ${FROM_FIELD}: `);
const FROM_UNKNOWN = encoder.encode(`, ${FROM_FIELD}: ${UNKNOWN_TIME}`);
const TO = encoder.encode(`, ${TO_FIELD}: `);
const STOPPED = encoder.encode(`, ${STOPPED_FIELD}: `);
const COMMA = 44;
const SPACE = 32;
const NEWLINE = 10;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const LOST_MARKER_BYTES = GAP_START.length + UTC_SECOND_LENGTH + LOST.length +
  MAX_U64_DIGITS + 1;

/**
 * Appends the traceback history of one monitor to its events log.
 *
 * The per-sample methods ({@linkcode row} and the markers) only format bytes
 * into the current chunk. Event boundaries and a one-second timer queue what
 * was formatted since the last flush (a segment of the current chunk, which
 * stays current); a full chunk is queued and replaced by a spare. A pump
 * writes the segments in order. An event end and {@linkcode close} also
 * fsync. If the disk falls behind by every chunk, rows are counted as
 * dropped (and a marker says how many) rather than blocking the sampler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventsLog } from "./log.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const options = {
 *   path: `${dir}/events.log`,
 *   version: "dpu-traceback 0.1.0",
 *   device: "sim",
 *   depth: 2,
 *   samplePeriodNs: 100_000,
 *   columns: [{ name: "rx", dataId: "0x1020000100000000" }],
 *   rules: [{ name: "rx > 5", column: 0, comparisonType: "gt" as const, comparisonValue: 5n }],
 * };
 * const log = await EventsLog.open(options);
 * // One writer per file: a second one is refused while this one has it.
 * await assert.rejects(
 *   () => EventsLog.open(options),
 *   /^Error: Cannot open events log .*: another dpu-traceback is writing it$/,
 * );
 * // What a Monitor calls as an event starts and ends (a Monitor passes its ring).
 * const record = new Uint32Array([1_000, 0, 9, 0]); // timestamp 1000 ns, rx 9
 * log.columnNames();
 * log.row(record, 0);
 * log.eventStart(0, Date.UTC(2026, 10, 21, 14, 50));
 * log.eventEnd(0, Date.UTC(2026, 10, 21, 14, 50, 1), 9); // its peak: 9
 * await log.close();
 *
 * const text = await Deno.readTextFile(`${dir}/events.log`);
 * assert.ok(text.startsWith("Telemetry monitor : dpu-traceback 0.1.0\n"));
 * assert.ok(text.endsWith(
 *   "timestamp, rx\n" +
 *     "1000, 9\n" +
 *     '<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "rx > 5"\n' +
 *     '<<Peak>> Rule: "rx > 5", Peak: 9\n' +
 *     '<<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "rx > 5"\n',
 * ));
 * assert.equal(log.stats.bytesWritten, new TextEncoder().encode(text).length);
 * assert.equal(log.stats.droppedRows, 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class EventsLog implements EventSink {
  /**
   * The log's path, as given in {@linkcode EventsLogOptions.path}; the
   * same path after a rotation or {@linkcode reopen}.
   */
  readonly path: string;
  #file: Deno.FsFile;
  readonly #header: Uint8Array;
  readonly #warn: ((message: string) => void) | undefined;
  #reopenWanted = false;
  readonly #maxBytes: number;
  readonly #keep: number;
  #fileBytes = 0; // size of the open file, as far as this writer knows
  #rotations = 0;
  #reopens = 0;
  #lastWarnMs = -Infinity;
  #failing = false; // a write failed and none has succeeded since
  readonly #chunkBytes: number;
  readonly #maxChunks: number;
  readonly #columnNames: Uint8Array;
  readonly #ruleNames: Uint8Array[];
  readonly #perSecond: boolean[]; // the rule's peak is a rate
  readonly #rowBytes: number;
  readonly #recordWords: number;
  readonly #u64: U64Writer;
  readonly #timer: ReturnType<typeof setInterval>;
  // Segments handed to the pump, in file order: bytes [start, end) of a
  // chunk, and whether the chunk is free again once that segment is written
  // (true only for the last segment of a full chunk).
  readonly #queue: Uint8Array[] = [];
  readonly #queueStarts: number[] = [];
  readonly #queueEnds: number[] = [];
  readonly #queueReleases: boolean[] = [];
  readonly #spare: Uint8Array[] = [];
  #chunks = 1;
  #chunk: Uint8Array;
  #pos = 0;
  #queuedTo = 0; // bytes of the current chunk already queued
  #headWritten = 0; // bytes of the first segment already in the file
  #headCounted = 0; // of those, the whole lines, counted in #bytesWritten
  #pump: Promise<void> | null = null;
  #syncWanted = false;
  #closed = false;
  #bytesWritten = 0;
  #writeErrors = 0;
  #droppedRows = 0;
  #lostRows = 0; // dropped rows not yet reported in the log
  #lastError: Error | null = null;
  readonly #waiters: (() => void)[] = [];

  private constructor(file: Deno.FsFile, options: EventsLogOptions) {
    this.path = options.path;
    this.#file = file;
    this.#header = encoder.encode(formatHeader(options));
    this.#warn = options.warn;
    this.#maxBytes = options.maxBytes ?? 0;
    this.#keep = Math.max(1, options.keep ?? 4);
    this.#columnNames = encoder.encode(formatColumnNames(options.columns));
    this.#ruleNames = options.rules.map((r) =>
      encoder.encode(quoteName(r.name) + "\n")
    );
    this.#perSecond = options.rules.map((r) =>
      !isReferenceRule(r) && r.signal === "rate"
    );
    this.#recordWords = 2 * (options.columns.length + 1);
    this.#u64 = new U64Writer(options.columns.length + 1);
    this.#rowBytes = (options.columns.length + 1) * (MAX_U64_DIGITS + 2) + 1;
    let longest = Math.max(this.#columnNames.length, this.#rowBytes, 256);
    for (const name of this.#ruleNames) {
      longest = Math.max(longest, name.length + 64);
    }
    this.#chunkBytes = Math.max(options.chunkBytes ?? 256 * 1024, 4 * longest);
    this.#maxChunks = Math.max(2, options.maxChunks ?? 64);
    this.#chunk = new Uint8Array(this.#chunkBytes);
    this.#timer = setInterval(
      () => this.flush(),
      options.flushIntervalMs ?? 1000,
    );
  }

  /**
   * Opens (creating it and its directory if needed) the log for appending
   * and writes a fresh header block: a restart never erases the last
   * incident.
   *
   * The log is this writer's alone: it holds an exclusive lock on the file
   * (`flock`) from here to {@linkcode close}, and rejects, writing nothing,
   * when another writer holds it. It also rejects a path that is not a
   * regular file: a symbolic link, directory, FIFO, socket or device.
   */
  static async open(options: EventsLogOptions): Promise<EventsLog> {
    // Nothing is held yet, so a file always comes back.
    const file = (await openFile(options.path)) as Deno.FsFile;
    const log = new EventsLog(file, options);
    log.#fileBytes = (await file.stat()).size;
    log.#enqueue(log.#header, 0, log.#header.length, false);
    log.#startPump();
    return log;
  }

  /**
   * Closes the file and opens `path` again, for logrotate (SIGHUP): what
   * was formatted before the call goes to the old file, later rows to the
   * old or the new one (which starts with a header block of its own), whole
   * lines only. No row is lost and sampling never waits. If the new file
   * cannot be opened (refused as in {@linkcode open}, or locked by another
   * writer) the old one stays in use and the failure is warned about; if
   * `path` is still the open file, nothing changes.
   */
  reopen(): void {
    if (this.#closed) return;
    this.#queueCurrent();
    this.#reopenWanted = true;
    this.#startPump();
  }

  /** Times {@linkcode reopen} has switched files. */
  get reopens(): number {
    return this.#reopens;
  }

  /** Times the log was rotated for size. */
  get rotations(): number {
    return this.#rotations;
  }

  /** Writer counters, for health reporting. */
  get stats(): EventsLogStats {
    let pending = this.#pos - this.#queuedTo - this.#headWritten;
    for (let i = 0; i < this.#queue.length; i++) {
      pending += this.#queueEnds[i] - this.#queueStarts[i];
    }
    return {
      bytesWritten: this.#bytesWritten,
      writeErrors: this.#writeErrors,
      droppedRows: this.#droppedRows,
      pendingBytes: pending,
    };
  }

  /** Writes the column-name row. */
  columnNames(): void {
    this.#put(this.#columnNames);
  }

  /** Writes one record as `ts, v0, v1, ...`. */
  row(words: Uint32Array, at: number): void {
    if (!this.#reserve(this.#rowBytes)) {
      this.#droppedRows++;
      this.#lostRows++;
      return;
    }
    const buf = this.#chunk;
    const u64 = this.#u64;
    let pos = u64.write(buf, this.#pos, words[at], words[at + 1], 0);
    const end = at + this.#recordWords;
    for (let i = at + 2, slot = 1; i < end; i += 2, slot++) {
      buf[pos++] = COMMA;
      buf[pos++] = SPACE;
      pos = u64.write(buf, pos, words[i], words[i + 1], slot);
    }
    buf[pos++] = NEWLINE;
    this.#pos = pos;
  }

  /** Writes the `<<Event start>>` marker and starts writing what came before. */
  eventStart(rule: number, unixMs: number): void {
    this.#marker(START, unixMs, RULE, this.#ruleNames[rule]);
    this.flush();
  }

  /**
   * Writes the event's `<<Peak>>` line and the `<<Event end>>` marker, and
   * has everything written and synced.
   */
  eventEnd(rule: number, unixMs: number, peak: number): void {
    this.peak(rule, peak);
    const name = this.#ruleNames[rule];
    this.#marker(END, unixMs, RULE, name);
    this.#syncWanted = true;
    this.flush();
  }

  /**
   * Writes a `<<Peak>>` line: rule `rule`'s peak over its event, before its
   * end marker, or so far, for an event still open as the agent stops.
   */
  peak(rule: number, peak: number): void {
    // Formatted here, once an event: not a per-sample cost.
    const text = encoder.encode(
      `, ${PEAK_FIELD}: ${formatLogPeak(peak, this.#perSecond[rule])}\n`,
    );
    const name = this.#ruleNames[rule];
    if (!this.#reserve(PEAK_START.length + name.length + text.length)) return;
    this.#putBytes(PEAK_START);
    // The name's bytes end in a newline: the peak goes before it.
    this.#chunk.set(name.subarray(0, name.length - 1), this.#pos);
    this.#pos += name.length - 1;
    this.#putBytes(text);
  }

  /** Writes a `<<Gap>>` marker: the source lost samples before the next row. */
  gap(dropped: number, unixMs: number): void {
    if (
      !this.#reserve(
        GAP_START.length + UTC_SECOND_LENGTH + DROPPED.length + MAX_U64_DIGITS +
          1,
      )
    ) return;
    this.#putBytes(GAP_START);
    this.#pos = writeUtcSecond(this.#chunk, this.#pos, unixMs);
    this.#putBytes(DROPPED);
    this.#pos = writeUint(this.#chunk, this.#pos, dropped);
    this.#chunk[this.#pos++] = NEWLINE;
  }

  /**
   * Writes a blind period on a line of its own: a `<<Gap>>` marker as
   * {@linkcode gap} writes it (its time the period's end, to the second),
   * then `From:` and `To:` (or `Stopped:`) to the millisecond. A reader
   * that knows only the marker's first fields still reads the count; one
   * that knows these tells it from the same loss marked again in a later
   * history dump, which has no `From:`.
   */
  blindPeriod(
    dropped: number,
    fromMs: number,
    toMs: number,
    stopped: boolean,
  ): void {
    if (
      !this.#reserve(
        GAP_START.length + UTC_SECOND_LENGTH + DROPPED.length +
          MAX_U64_DIGITS + FROM_UNKNOWN.length + UTC_MILLIS_LENGTH +
          STOPPED.length + UTC_MILLIS_LENGTH + 1,
      )
    ) return;
    const buf = this.#chunk;
    this.#putBytes(GAP_START);
    this.#pos = writeUtcSecond(buf, this.#pos, toMs);
    this.#putBytes(DROPPED);
    this.#pos = writeUint(buf, this.#pos, dropped);
    if (fromMs === fromMs) {
      this.#putBytes(FROM);
      this.#pos = writeUtcMillis(buf, this.#pos, fromMs);
    } else this.#putBytes(FROM_UNKNOWN);
    this.#putBytes(stopped ? STOPPED : TO);
    this.#pos = writeUtcMillis(buf, this.#pos, toMs);
    buf[this.#pos++] = NEWLINE;
  }

  /**
   * Undefined while fewer than half the chunks wait on the disk; otherwise
   * a promise that resolves when the pump has caught up (or failed: a
   * failing disk then drops rows rather than stalling the source forever).
   */
  ready(): Promise<void> | undefined {
    if (this.#closed || !this.#backlogged()) return undefined;
    this.#startPump();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Hands everything formatted so far to the pump. Never waits. */
  flush(): void {
    if (this.#closed) return;
    this.#queueCurrent();
    this.#startPump();
  }

  /**
   * Writes every pending byte, fsyncs and closes the file. Rejects (after
   * closing) if the data could not all be written; the message says how
   * much was lost, and the rows not written are counted as dropped.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    clearInterval(this.#timer);
    while (this.#pump) await this.#pump;
    // Write what is left, then fsync; stop at the first failure.
    this.#queueCurrent();
    this.#syncWanted = true;
    await this.#drain();
    this.#wake();
    this.#file.close();
    // Rows still waiting are lost now. Counted as dropped, so that the
    // counter says what the file lacks: every row is in the file, whole,
    // or counted here (or earlier, when no chunk was free for it).
    this.#droppedRows += this.#rowsUnwritten();
    const pending = this.stats.pendingBytes;
    if (pending > 0 || this.#droppedRows > 0) {
      throw new Error(
        `Cannot finish events log ${this.path}: ${pending} bytes unwritten, ${this.#droppedRows} rows dropped` +
          (this.#lastError ? ` (${this.#lastError.message})` : ""),
      );
    }
  }

  #marker(
    kind: Uint8Array,
    unixMs: number,
    label: Uint8Array,
    name: Uint8Array,
  ): void {
    if (
      !this.#reserve(
        kind.length + UTC_SECOND_LENGTH + label.length + name.length,
      )
    ) return;
    this.#putBytes(kind);
    this.#pos = writeUtcSecond(this.#chunk, this.#pos, unixMs);
    this.#putBytes(label);
    this.#putBytes(name);
  }

  #put(bytes: Uint8Array): void {
    if (this.#reserve(bytes.length)) this.#putBytes(bytes);
  }

  #putBytes(bytes: Uint8Array): void {
    this.#chunk.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /**
   * Makes room for `bytes` in the current chunk, handing it off and taking
   * a spare if needed. False when every chunk is waiting on the disk.
   */
  #reserve(bytes: number): boolean {
    const need = this.#lostRows > 0 ? bytes + LOST_MARKER_BYTES : bytes;
    if (this.#pos + need > this.#chunkBytes) {
      if (!this.#handOff()) return false;
      this.#startPump();
    }
    if (this.#lostRows > 0) {
      // Room is back: say in the log how many rows it could not keep.
      this.#putBytes(GAP_START);
      this.#pos = writeUtcSecond(this.#chunk, this.#pos, Date.now());
      this.#putBytes(LOST);
      this.#pos = writeUint(this.#chunk, this.#pos, this.#lostRows);
      this.#chunk[this.#pos++] = NEWLINE;
      this.#lostRows = 0;
    }
    return true;
  }

  // Queues what the current chunk holds beyond what is already queued.
  #queueCurrent(): void {
    if (this.#pos === this.#queuedTo) return;
    this.#enqueue(this.#chunk, this.#queuedTo, this.#pos, false);
    this.#queuedTo = this.#pos;
  }

  #enqueue(
    chunk: Uint8Array,
    start: number,
    end: number,
    release: boolean,
  ): void {
    this.#queue.push(chunk);
    this.#queueStarts.push(start);
    this.#queueEnds.push(end);
    this.#queueReleases.push(release);
  }

  // More than half the chunks are waiting on the disk.
  #backlogged(): boolean {
    return this.#chunks - this.#spare.length > this.#maxChunks / 2;
  }

  // Queues the rest of the full current chunk (the pump frees it once
  // written) and takes a spare one; false if none is left.
  #handOff(): boolean {
    let next = this.#spare.pop();
    if (next === undefined) {
      if (this.#chunks >= this.#maxChunks) return false;
      // Only when the disk is behind: a chunk, not a per-sample allocation.
      next = new Uint8Array(this.#chunkBytes);
      this.#chunks++;
    }
    this.#enqueue(this.#chunk, this.#queuedTo, this.#pos, true);
    this.#chunk = next;
    this.#pos = 0;
    this.#queuedTo = 0;
    return true;
  }

  #startPump(): void {
    if (
      this.#pump ||
      (this.#queue.length === 0 && !this.#syncWanted && !this.#reopenWanted)
    ) return;
    this.#pump = this.#drain().finally(() => {
      this.#pump = null;
      // Chunks queued while the last write was finishing; a failing disk
      // waits for the next flush instead of spinning.
      if (this.#queue.length > 0 && this.#lastError === null) this.#startPump();
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const chunk = this.#queue[0];
        // Segments that continue each other in one chunk (flushes between
        // two turns of the pump) go out in one write.
        while (
          this.#queue.length > 1 && this.#queue[1] === chunk &&
          this.#queueStarts[1] === this.#queueEnds[0]
        ) {
          this.#queueEnds[0] = this.#queueEnds[1];
          this.#queueReleases[0] = this.#queueReleases[1];
          this.#queue.splice(1, 1);
          this.#queueStarts.splice(1, 1);
          this.#queueEnds.splice(1, 1);
          this.#queueReleases.splice(1, 1);
        }
        const start = this.#queueStarts[0];
        const end = this.#queueEnds[0];
        while (start + this.#headWritten < end) {
          const n = await this.#file.write(
            chunk.subarray(start + this.#headWritten, end),
          );
          this.#headWritten += n;
          this.#fileBytes += n;
          // Whole lines only: a short write's cut row is counted once the
          // rest of it is written, or taken out again (#cutToWholeLine),
          // so the counter never has to go back.
          let whole = this.#headWritten;
          while (
            whole > this.#headCounted && chunk[start + whole - 1] !== NEWLINE
          ) {
            whole--;
          }
          this.#bytesWritten += whole - this.#headCounted;
          this.#headCounted = whole;
        }
        this.#headWritten = 0;
        this.#headCounted = 0;
        this.#queue.shift();
        this.#queueStarts.shift();
        this.#queueEnds.shift();
        if (this.#queueReleases.shift()) this.#spare.push(chunk);
        if (!this.#backlogged()) this.#wake();
        // Segments end on line boundaries: a rotation never splits a row.
        if (this.#maxBytes > 0 && this.#fileBytes >= this.#maxBytes) {
          await this.#rotate();
        }
      }
      if (this.#syncWanted) {
        this.#syncWanted = false;
        await this.#file.sync();
      }
      this.#lastError = null;
      if (this.#failing) {
        this.#failing = false;
        this.#warn?.(
          `events log ${this.path}: writing again (${this.#writeErrors} write errors, ${this.#droppedRows} rows dropped so far)`,
        );
      }
      // Switch files only once what was queued before the request is in
      // the old one (the queue is empty here).
      if (this.#reopenWanted) {
        this.#reopenWanted = false;
        if (await this.#switchFile()) this.#reopens++;
      }
    } catch (error) {
      // Keep the unwritten chunk at the head of the queue; the next flush
      // (at the latest the one-second timer) retries it.
      this.#writeErrors++;
      this.#lastError = error instanceof Error
        ? error
        : new Error(String(error));
      this.#failing = true;
      await this.#cutToWholeLine();
      const now = Date.now();
      if (now - this.#lastWarnMs >= WARN_INTERVAL_MS) {
        this.#lastWarnMs = now;
        this.#warn?.(
          `events log ${this.path}: cannot write (${this.#lastError.message}); ${this.#writeErrors} write errors, ${this.stats.pendingBytes} bytes waiting, ${this.#droppedRows} rows dropped so far; sampling goes on and writes are retried every second`,
        );
      }
      this.#wake();
    }
  }

  // Shifts PATH.k to PATH.k+1 (dropping the oldest), PATH to PATH.1, and
  // switches to a fresh PATH. A failure is warned about and writing goes
  // on in the current file, so rows are never lost to a rotation.
  //
  // PATH always names a file this writer has locked: the fresh file is
  // created and locked under a hidden name first, the old one gets its
  // second name PATH.1 by a hard link, and a rename puts the fresh one at
  // PATH in one step. A rename of PATH to PATH.1 first would leave a moment
  // with no PATH, in which a second agent could create and lock one.
  async #rotate(): Promise<void> {
    const next = join(dirname(this.path), `.${basename(this.path)}.rotating`);
    let file: Deno.FsFile | undefined;
    try {
      // A crash mid-rotation may have left one; only the lock holder
      // rotates PATH, so it is no one else's.
      await removeIfExists(next);
      file = await Deno.open(next, { append: true, createNew: true });
      if (!await file.tryLock(true)) throw new Error(`${next} is locked`);
      for (let k = this.#keep - 1; k >= 1; k--) {
        await renameIfExists(`${this.path}.${k}`, `${this.path}.${k + 1}`);
      }
      await removeIfExists(`${this.path}.1`); // still there when keep is 1
      await Deno.link(this.path, `${this.path}.1`);
      await Deno.rename(next, this.path);
    } catch (error) {
      file?.close();
      await removeIfExists(next).catch(() => {});
      this.#fileBytes = 0; // try again after another maxBytes, not at once
      this.#warn?.(
        `events log ${this.path}: cannot rotate (${
          errorMessage(error)
        }); still writing to it`,
      );
      return;
    }
    await this.#useFile(file);
    this.#rotations++;
  }

  // The reopen itself: open the path afresh and switch to it unless it is
  // still the open file.
  async #switchFile(): Promise<boolean> {
    let next: Deno.FsFile | null;
    try {
      next = await openFile(this.path, await this.#file.stat());
    } catch (error) {
      this.#warn?.(
        `${errorMessage(error)}; still writing to the file open before`,
      );
      return false;
    }
    if (next === null) return false;
    await this.#useFile(next);
    return true;
  }

  // Syncs and closes the old file (releasing its lock) and queues a header
  // block at the front of the new one.
  async #useFile(next: Deno.FsFile): Promise<void> {
    const old = this.#file;
    this.#file = next;
    this.#fileBytes = (await next.stat()).size;
    try {
      await old.sync();
    } catch {
      // The old file's data was written; a failed sync is not worth
      // keeping the new file waiting.
    }
    old.close();
    this.#queue.unshift(this.#header);
    this.#queueStarts.unshift(0);
    this.#queueEnds.unshift(this.#header.length);
    this.#queueReleases.unshift(false);
  }

  /**
   * After a write failed part-way through a row, takes that row's head
   * back out of the file (ftruncate), so the file ends with a whole line.
   *
   * At a file size limit or on a full disk, a write is cut short at the
   * last byte that fits, and the next one fails (EFBIG, ENOSPC). The row
   * stays queued and is retried whole. The head is cut back out, rather
   * than left in the file with the row counted as not written, because a
   * reader of the file cannot tell a cut row from a whole one when the cut
   * falls after a digit: `1000, 98765` cut to `1000, 98`
   * reads as a row with a value that was never sampled. Only whole lines
   * in the file, and `bytesWritten` (which counts whole lines only) equal
   * to what it holds, are what an operator comparing the file with the
   * counters expects. If the limit is lifted later, the retry appends the
   * row whole.
   */
  async #cutToWholeLine(): Promise<void> {
    if (this.#queue.length === 0) return;
    const cut = this.#headWritten - this.#headCounted;
    if (cut === 0) return;
    try {
      // This writer holds the file's lock and appends: its last bytes are
      // the cut row's head. Shrinking never meets the size limit.
      const size = (await this.#file.stat()).size;
      await this.#file.truncate(size - cut);
    } catch {
      // The file keeps the head; a later retry appends the rest of the
      // row after it, and close counts the row as dropped if none does.
      return;
    }
    this.#headWritten = this.#headCounted;
    this.#fileBytes -= cut;
  }

  /**
   * Rows in what is still queued (the header block aside): lines that
   * start with a digit. Markers start with `<<`, the column-name row with
   * a letter, and names cannot hold a newline, so no other line does. A
   * row whose head was left in the file, cut, counts too.
   */
  #rowsUnwritten(): number {
    let rows = 0;
    for (let i = 0; i < this.#queue.length; i++) {
      const chunk = this.#queue[i];
      if (chunk === this.#header) continue;
      const first = this.#queueStarts[i];
      const end = this.#queueEnds[i];
      let at = first;
      // A row whose head was left in the file, cut, starts here.
      if (i === 0) at += this.#headCounted;
      while (at < end) {
        if (chunk[at] >= DIGIT_0 && chunk[at] <= DIGIT_9) rows++;
        const newline = chunk.indexOf(NEWLINE, at);
        if (newline < 0) break;
        at = newline + 1;
      }
    }
    return rows;
  }

  #wake(): void {
    for (const resolve of this.#waiters.splice(0)) resolve();
  }
}

/** Times {@linkcode openFile} tries again when the path changed under it. */
const OPEN_ATTEMPTS = 3;

/**
 * Opens `path` for appending, creating it and its directory, and takes an
 * exclusive lock on it. Null when `path` is the file `held` describes (the
 * one this writer has open and locked: a second lock on it would fail).
 * Throws, with the log named, when `path` is not a regular file or another
 * writer holds the lock.
 */
async function openFile(
  path: string,
  held?: Deno.FileInfo,
): Promise<Deno.FsFile | null> {
  const refuse = (reason: string, cause?: unknown) =>
    new Error(
      `Cannot open events log ${path}: ${reason}`,
      cause === undefined ? undefined : { cause },
    );
  // Deno's messages name the syscall; the operator needs the log's name.
  const io = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (error) {
      throw refuse(errorMessage(error), error);
    }
  };
  for (let attempt = 1;; attempt++) {
    await io(() => Deno.mkdir(dirname(path), { recursive: true }));
    // Deno has no O_NOFOLLOW: look first, so that a link, a FIFO (whose
    // open would wait for a reader) or a device is never opened.
    const before = await io(() => lstatIfExists(path));
    if (before !== null && !before.isFile) throw refuse(notRegular(before));
    const file = await io(() =>
      Deno.open(path, { append: true, create: true })
    );
    let keep = false;
    try {
      // What was opened, and whether the path still names it: it may have
      // been swapped for a link or another file since the look above.
      const opened = await io(() => file.stat());
      if (!opened.isFile) throw refuse(notRegular(opened));
      if (held !== undefined && sameFile(opened, held)) return null;
      if (!await io(() => file.tryLock(true))) {
        throw refuse("another dpu-traceback is writing it");
      }
      // Locked; but the holder may have rotated it away meanwhile, leaving
      // us the lock of a file that the path no longer names.
      const after = await io(() => lstatIfExists(path));
      if (after !== null && after.isFile && sameFile(after, opened)) {
        keep = true;
        return file;
      }
      if (attempt >= OPEN_ATTEMPTS) {
        throw refuse(
          after === null || after.isFile
            ? `it was replaced while being opened, ${OPEN_ATTEMPTS} times`
            : `${notRegular(after)} (it was replaced while being opened)`,
        );
      }
    } finally {
      if (!keep) file.close();
    }
  }
}

/** Why `info` cannot be an events log, as the end of a sentence. */
function notRegular(info: Deno.FileInfo): string {
  return `it is ${fileKind(info)}, not a regular file`;
}

async function lstatIfExists(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function removeIfExists(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

async function renameIfExists(from: string, to: string): Promise<void> {
  try {
    await Deno.rename(from, to);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * A peak as a `<<Peak>>` line gives it: the shortest decimal that reads back
 * as the same number, `/s` after a rate, `unknown` for NaN.
 */
export function formatLogPeak(peak: number, perSecond: boolean): string {
  if (Number.isNaN(peak)) return PEAK_UNKNOWN;
  return perSecond ? `${peak}/s` : String(peak);
}
