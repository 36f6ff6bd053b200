/**
 * A sample ring another thread can read while the sampler writes it: the
 * GPU monitor's recent readings, which the endpoint's thread charts on a
 * NIC event's page. The writer (rules/ring.ts, on the sampling thread)
 * never waits and never allocates for a reader; a reader never sees a
 * torn record.
 *
 * The buffer holds a copy of the ring's records, laid out as
 * rules/ring.ts lays them out, then one sequence word per record. The
 * sampler fills its own ring as ever; when a record is complete
 * (`SampleRing.publish`) it makes the record's sequence word odd, copies
 * the record's words, and makes the word even again, every access an
 * `Atomics.store`. A reader loads the word, copies the record with
 * `Atomics.load`, and loads the word again: a record whose word was odd,
 * or changed, was being written meanwhile, and is copied again (a few
 * times) or left out. Every shared access being an `Atomics` operation,
 * they are ordered on every CPU (plain accesses to shared memory may be
 * reordered, on Arm in particular). A word of 0: never written.
 *
 * @module
 */

import { toNumberU64 } from "../base/u64.ts";

/**
 * Bytes a shared copy may take at most: 8 MiB, the last 2 min of 64 GPUs'
 * every reading at 1 s twice over. A ring deeper than that (its depth is
 * for its rules) shares its newest records only, so the copy costs the
 * sampler little memory and a page's read of it stays short.
 */
export const MAX_SHARED_RING_BYTES = 8 * 1024 * 1024;

/**
 * Records a shared copy of a ring of `records` records of `columns`
 * values keeps: all of them, or as many of the newest as
 * {@linkcode MAX_SHARED_RING_BYTES} holds (at least one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedRingCapacity } from "./shared_ring.ts";
 *
 * assert.equal(sharedRingCapacity(152, 120), 120); // 8 GPUs, every reading, default depth
 * assert.equal(sharedRingCapacity(152, 1_000_000), 6831);
 * ```
 */
export function sharedRingCapacity(columns: number, records: number): number {
  return Math.max(
    1,
    Math.min(
      records,
      Math.floor(MAX_SHARED_RING_BYTES / sharedRingBytes(columns, 1)),
    ),
  );
}

/** Bytes a shared ring of `capacity` records of `columns` values takes. */
export function sharedRingBytes(columns: number, capacity: number): number {
  return 4 * (2 * (columns + 1) + 1) * capacity;
}

/**
 * A zeroed buffer for a shared copy of `capacity` records of `columns`
 * values: give it to `new SampleRing(columns, records, buffer)` on the
 * writing thread (its newest `capacity` records are copied there; see
 * {@linkcode sharedRingCapacity}) and `new SharedRingReader(buffer,
 * columns)` on a reading one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SampleRing } from "./ring.ts";
 * import { SharedRingReader, sharedRingBuffer } from "./shared_ring.ts";
 *
 * const buffer = sharedRingBuffer(1, 4);
 * const ring = new SampleRing(1, 4, buffer);
 * const at = ring.claim();
 * ring.words[at] = 1000; // timestamp, ns
 * ring.words[at + 2] = 42; // column 0
 * ring.publish();
 * const records = new SharedRingReader(buffer, 1).read();
 * assert.equal(records.count, 1);
 * assert.equal(records.words[2], 42);
 * ```
 */
export function sharedRingBuffer(
  columns: number,
  capacity: number,
): SharedArrayBuffer {
  return new SharedArrayBuffer(sharedRingBytes(columns, capacity));
}

/**
 * The record words and sequence words of a shared ring over `buffer`, and
 * how many records it holds; for rules/ring.ts and the reader. Throws a
 * RangeError when `buffer` is no whole number of records of `columns`.
 */
export function sharedRingViews(
  buffer: SharedArrayBuffer,
  columns: number,
): {
  readonly words: Uint32Array;
  readonly sequence: Int32Array;
  readonly capacity: number;
} {
  const perRecord = sharedRingBytes(columns, 1);
  if (buffer.byteLength === 0 || buffer.byteLength % perRecord !== 0) {
    throw new RangeError(
      `Cannot share ring: ${buffer.byteLength} bytes is no whole number of ${columns}-column records`,
    );
  }
  const capacity = buffer.byteLength / perRecord;
  const stride = 2 * (columns + 1);
  return {
    capacity,
    words: new Uint32Array(buffer, 0, stride * capacity),
    sequence: new Int32Array(buffer, 4 * stride * capacity, capacity),
  };
}

/** Records copied out of a shared ring, oldest first. */
export interface RingRecords {
  /** Records copied. */
  readonly count: number;
  /** Their words, `stride` each, as the ring lays them out. */
  readonly words: Uint32Array;
  /** Words per record. */
  readonly stride: number;
  /** Records left out because the writer rewrote them during every copy. */
  readonly dropped: number;
}

/** Copies of one record tried before it is left out. */
const TRIES = 3;

/**
 * Reads a shared ring from any thread, without locks: see the module's
 * doc for the protocol. {@linkcode begin}, {@linkcode copy} and
 * {@linkcode settled} are its steps, exposed so tests can interleave a
 * writer between them; {@linkcode read} is what callers use.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SampleRing } from "./ring.ts";
 * import { SharedRingReader, sharedRingBuffer } from "./shared_ring.ts";
 *
 * const buffer = sharedRingBuffer(1, 2);
 * const ring = new SampleRing(1, 2, buffer);
 * const reader = new SharedRingReader(buffer, 1);
 * const at = ring.claim(); // claimed, not yet published: not readable
 * assert.equal(reader.begin(at / ring.stride), -1);
 * ring.publish();
 * assert.equal(reader.begin(at / ring.stride), 2);
 * ```
 */
export class SharedRingReader {
  /** Value columns per record. */
  readonly columns: number;
  /** Records the ring holds at most. */
  readonly capacity: number;
  /** Words per record. */
  readonly stride: number;
  readonly #words: Uint32Array;
  readonly #sequence: Int32Array;

  /** A reader of the shared ring in `buffer`, of `columns` values a record. */
  constructor(buffer: SharedArrayBuffer, columns: number) {
    const views = sharedRingViews(buffer, columns);
    this.columns = columns;
    this.capacity = views.capacity;
    this.stride = 2 * (columns + 1);
    this.#words = views.words;
    this.#sequence = views.sequence;
  }

  /**
   * The sequence of the record in `slot` when it holds a published record
   * (even, not 0); -1 when it is being written or was never written.
   */
  begin(slot: number): number {
    const s = Atomics.load(this.#sequence, slot);
    return s === 0 || (s & 1) === 1 ? -1 : s;
  }

  /** Copies the record in `slot` to `into` at word `at`. */
  copy(slot: number, into: Uint32Array, at: number): void {
    const from = slot * this.stride;
    const words = this.#words;
    for (let w = 0; w < this.stride; w++) {
      into[at + w] = Atomics.load(words, from + w);
    }
  }

  /** Whether the record in `slot` is still the one {@linkcode begin} saw as `sequence`. */
  settled(slot: number, sequence: number): boolean {
    return Atomics.load(this.#sequence, slot) === sequence;
  }

  /** Every published record, each copied whole, oldest first. */
  read(): RingRecords {
    const stride = this.stride;
    const copied = new Uint32Array(stride * this.capacity);
    let count = 0;
    let dropped = 0;
    for (let slot = 0; slot < this.capacity; slot++) {
      let ok = false;
      let written = false;
      for (let t = 0; t < TRIES && !ok; t++) {
        const s = this.begin(slot);
        if (s < 0) {
          // Never written, or being written (the oldest record going).
          if (Atomics.load(this.#sequence, slot) === 0) break;
          written = true;
          continue;
        }
        written = true;
        this.copy(slot, copied, count * stride);
        ok = this.settled(slot, s);
      }
      if (ok) count++;
      else if (written) dropped++;
    }
    // The writer goes round the ring: order by time, not slot.
    const order = Array.from({ length: count }, (_, k) => k);
    const time = (k: number) =>
      toNumberU64(copied[k * stride], copied[k * stride + 1]);
    order.sort((a, b) => time(a) - time(b));
    const words = new Uint32Array(stride * count);
    order.forEach((k, i) =>
      words.set(copied.subarray(k * stride, (k + 1) * stride), i * stride)
    );
    return { count, words, stride, dropped };
  }
}
