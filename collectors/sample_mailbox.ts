/**
 * The shared memory through which a sampling thread hands its samples to
 * the monitor on the main thread: a ring of records and, per record, how
 * many samples the source lost just before it. One writer, one reader;
 * the written count,
 * stored last with `Atomics.store`, publishes a record. Nothing is
 * allocated per record on either side.
 *
 * The main thread reads in batches. While it is busy the records wait
 * here with their true timestamps, so a busy main thread delays rules and
 * rows but loses nothing until it falls a whole mailbox behind; what it
 * then misses is counted as lost, at the right place.
 *
 * @module
 */

import type { SampleSink } from "../rules/sample_sink.ts";

/**
 * How many records a mailbox of a source sampling every `periodNs` holds:
 * 4 s of samples (a main thread stalled that long loses nothing, up to
 * 65,536 of them) and two of the writer's largest hand-overs (`burst`
 * records at once, as a DOCA poll drains a device ring), as a power of
 * two of at least 64.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mailboxCapacity } from "./sample_mailbox.ts";
 *
 * assert.equal(mailboxCapacity(10_000_000), 512); // 10 ms
 * assert.equal(mailboxCapacity(1_000_000), 4096); // 1 ms
 * assert.equal(mailboxCapacity(1e9), 64); // 1 s
 * // 100 ms from a device ring of 1024 samples, drained a quarter at a time
 * assert.equal(mailboxCapacity(100_000_000, 1024), 4096);
 * ```
 */
export function mailboxCapacity(periodNs: number, burst = 1): number {
  const stall = Math.min(Math.ceil(4e9 / periodNs), 65_536);
  const wanted = stall + 2 * burst;
  let capacity = 64;
  while (capacity < wanted) capacity *= 2;
  return capacity;
}

/**
 * One side's view of a mailbox; the writer's side is a {@linkcode SampleSink}
 * that a collector delivers into as it would into a monitor.
 *
 * @example A record written on one side, drained on the other
 * ```ts
 * import assert from "node:assert/strict";
 * import { SampleMailbox } from "./sample_mailbox.ts";
 *
 * const writer = new SampleMailbox(1, 64);
 * const reader = new SampleMailbox(1, 64, writer.buffer);
 * writer.gap(3);
 * const at = writer.claim();
 * writer.words.set([1000, 0, 7, 0], at);
 * writer.commit();
 *
 * const got: string[] = [];
 * reader.drain({
 *   words: new Uint32Array(4),
 *   columns: 1,
 *   claim: () => 0,
 *   commit: () => got.push("record"),
 *   gap: (n) => got.push(`gap ${n}`),
 * });
 * assert.deepEqual(got, ["gap 3", "record"]);
 * ```
 */
export class SampleMailbox implements SampleSink {
  /** The memory itself, to post to the other side. */
  readonly buffer: SharedArrayBuffer;
  /** Value columns of a record (its timestamp excluded). */
  readonly columns: number;
  /** Records it holds (a power of two). */
  readonly capacity: number;
  /** The records: `2 * (1 + columns)` words each, as a monitor's ring. */
  readonly words: Uint32Array;
  readonly #control: Int32Array;
  /** Per record: the samples the source lost just before it. */
  readonly #lostBefore: Float64Array;
  readonly #recordWords: number;
  /** Writer: samples lost since the last record. */
  #lost = 0;
  /** Reader: records read so far (wraps with the written count). */
  #read = 0;
  /**
   * Writer: records written so far. Only the writer changes the count, so
   * it keeps its own copy rather than load the shared one per record.
   */
  #written: number;

  /**
   * A new mailbox of `capacity` records of `columns` values, or a view of
   * an existing `buffer` (the other side's).
   */
  constructor(columns: number, capacity: number, buffer?: SharedArrayBuffer) {
    // A power of two divides 2^32, so slots stay in step when counts wrap.
    if (capacity <= 0 || (capacity & (capacity - 1)) !== 0) {
      throw new RangeError(
        `Cannot make a sample mailbox: capacity must be a power of two, got ${capacity}`,
      );
    }
    this.columns = columns;
    this.capacity = capacity;
    this.#recordWords = 2 * (1 + columns);
    this.buffer = buffer ??
      new SharedArrayBuffer(
        8 + 8 * capacity + 4 * this.#recordWords * capacity,
      );
    this.#control = new Int32Array(this.buffer, 0, 2);
    this.#lostBefore = new Float64Array(this.buffer, 8, capacity);
    this.words = new Uint32Array(
      this.buffer,
      8 + 8 * capacity,
      this.#recordWords * capacity,
    );
    this.#written = Atomics.load(this.#control, 0);
  }

  /** Writer: the slot of the next record. */
  claim(): number {
    return (this.#written & (this.capacity - 1)) * this.#recordWords;
  }

  /** Writer: publishes the claimed record with the loss before it. */
  commit(): void {
    const n = this.#written;
    this.#lostBefore[n & (this.capacity - 1)] = this.#lost;
    this.#lost = 0;
    this.#written = (n + 1) | 0;
    Atomics.store(this.#control, 0, this.#written);
  }

  /** Writer: `dropped` samples lost before the next record. */
  gap(dropped: number): void {
    this.#lost += dropped;
  }

  /**
   * Reader: delivers every record not yet read into `sink` (a gap first
   * where the source lost samples). Records the writer overwrote before
   * they were read are told to `sink` as lost. Returns the records
   * delivered.
   */
  drain(sink: SampleSink): number {
    const written = Atomics.load(this.#control, 0);
    let behind = (written - this.#read) | 0;
    // The slot after the newest may be being written now: a reader a
    // whole mailbox behind skips what it can no longer trust.
    if (behind > this.capacity - 1) {
      const overwritten = behind - (this.capacity - 1);
      sink.gap(overwritten);
      this.#read = (this.#read + overwritten) | 0;
      behind -= overwritten;
    }
    const words = this.words;
    const size = this.#recordWords;
    for (let k = 0; k < behind; k++) {
      const slot = this.#read & (this.capacity - 1);
      const lost = this.#lostBefore[slot];
      if (lost > 0) sink.gap(lost);
      const at = sink.claim();
      const ring = sink.words;
      const from = slot * size;
      for (let w = 0; w < size; w++) ring[at + w] = words[from + w];
      sink.commit();
      this.#read = (this.#read + 1) | 0;
    }
    return behind;
  }
}
