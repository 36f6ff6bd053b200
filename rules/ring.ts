/**
 * The sample ring: a fixed number of records in one preallocated
 * `ArrayBuffer`, each record a timestamp and one u64 per column, stored as
 * little-endian (lo, hi) uint32 pairs.
 *
 * A ring may also keep a copy of itself in a `SharedArrayBuffer` laid out
 * by rules/shared_ring.ts, for a reader on another thread (the endpoint's,
 * drawing an event's page from the GPU monitor's recent readings): each
 * record is copied there as it is published, under a sequence word, so
 * that the reader never sees a torn record and the writer never waits.
 *
 * @module
 */

import { sharedRingViews } from "./shared_ring.ts";

/**
 * Fixed-capacity ring of sample records. Appending overwrites the oldest
 * record once full; nothing allocates after construction.
 *
 * @example Append a record and read it back
 * ```ts
 * import assert from "node:assert/strict";
 * import { SampleRing } from "./ring.ts";
 *
 * const ring = new SampleRing(1, 4); // one column, four records
 * for (const value of [40, 41, 42, 43, 44]) {
 *   const at = ring.claim();
 *   ring.words[at] = value * 1000; // timestamp, low half
 *   ring.words[at + 2] = value; // column 0, low half
 * }
 * assert.equal(ring.count, 4); // full: 40 was overwritten by 44
 * assert.equal(ring.words[ring.offsetBack(0) + 2], 44); // newest
 * assert.equal(ring.words[ring.offsetBack(3) + 2], 41); // oldest kept
 * ```
 *
 * @example Samples lost between two records
 * ```ts
 * import assert from "node:assert/strict";
 * import { SampleRing } from "./ring.ts";
 *
 * const ring = new SampleRing(1, 4);
 * ring.claim();
 * ring.loss(3); // the source lost three samples here
 * ring.claim();
 * ring.claim();
 * assert.equal(ring.lossBack, 1); // the record before the newest follows it
 * assert.equal(ring.lostBefore(1), 3);
 * assert.equal(ring.lostBefore(0), 0);
 * ```
 */
export class SampleRing {
  /** All records, back to back: `stride` words each. */
  readonly words: Uint32Array;
  /** Words per record: 2 for the timestamp plus 2 per column. */
  readonly stride: number;
  /** Value columns per record (timestamp excluded). */
  readonly columns: number;
  /** Records the ring holds at most. */
  readonly capacity: number;
  #head = -1; // index of the newest record
  #count = 0;
  // Samples the source lost before each record (0 for most), and those
  // reported since the newest record, which the next one will carry.
  readonly #lost: Float64Array;
  #pendingLoss = 0;
  // Records from the newest back to the newest one that follows a loss,
  // saturating at capacity (no such record in the ring). A small integer,
  // so the per-sample path never boxes it.
  #lossBack: number;
  // The shared copy, when there is one: records and their sequence words,
  // and where the newest went (the copy may hold fewer records).
  readonly #mirror: Uint32Array | undefined;
  readonly #sequence: Int32Array | undefined;
  readonly #mirrorCapacity: number = 0;
  #mirrorHead = -1;

  /**
   * Allocates room for `capacity` records of `columns` values each; with
   * `shared` (from `sharedRingBuffer(columns, n)`, rules/shared_ring.ts),
   * also copies each record there as {@linkcode publish} completes it,
   * the newest `n` kept.
   */
  constructor(columns: number, capacity: number, shared?: SharedArrayBuffer) {
    if (!Number.isInteger(columns) || columns < 1) {
      throw new RangeError(
        `Cannot create ring: columns must be an integer >= 1, got ${columns}`,
      );
    }
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `Cannot create ring: capacity must be an integer >= 1, got ${capacity}`,
      );
    }
    this.columns = columns;
    this.capacity = capacity;
    this.stride = 2 * (columns + 1);
    this.words = new Uint32Array(new ArrayBuffer(4 * this.stride * capacity));
    this.#lost = new Float64Array(capacity);
    this.#lossBack = capacity;
    if (shared !== undefined) {
      const views = sharedRingViews(shared, columns);
      this.#mirror = views.words;
      this.#sequence = views.sequence;
      this.#mirrorCapacity = views.capacity;
    }
  }

  /** Records stored, saturating at {@linkcode capacity}. */
  get count(): number {
    return this.#count;
  }

  /**
   * Advances the head and returns the word offset of the new record, which
   * the caller fills. The previous content of that slot is the oldest
   * record once the ring is full.
   */
  claim(): number {
    const head = this.#head + 1 === this.capacity ? 0 : this.#head + 1;
    this.#head = head;
    if (this.#count < this.capacity) this.#count++;
    const lost = this.#pendingLoss;
    this.#lost[head] = lost;
    if (lost > 0) {
      this.#pendingLoss = 0;
      this.#lossBack = 0;
    } else if (this.#lossBack < this.capacity) this.#lossBack++;
    return head * this.stride;
  }

  /**
   * Copies the newest record, now complete, into the shared copy's next
   * slot (nothing without one): the slot's sequence word odd, every word,
   * then even again, each an `Atomics.store`, so a reader that loads the
   * sequence word before and after its copy knows whether it copied one
   * record whole. The monitor calls it once per record, when the
   * collector commits it; it neither allocates nor waits.
   */
  publish(): void {
    const mirror = this.#mirror;
    const sequence = this.#sequence;
    if (mirror === undefined || sequence === undefined || this.#head < 0) {
      return;
    }
    const to = this.#mirrorHead + 1 === this.#mirrorCapacity
      ? 0
      : this.#mirrorHead + 1;
    this.#mirrorHead = to;
    const stride = this.stride;
    const from = this.#head * stride;
    const at = to * stride;
    // Odd, whatever it was, while the words change.
    const s = sequence[to] | 1;
    Atomics.store(sequence, to, s);
    const words = this.words;
    for (let w = 0; w < stride; w++) {
      Atomics.store(mirror, at + w, words[from + w]);
    }
    Atomics.store(sequence, to, s + 1 === 0x80000000 ? 2 : s + 1);
  }

  /**
   * Notes that the source lost `samples` samples after the newest record:
   * the next record claimed is not the newest one's neighbour.
   */
  loss(samples: number): void {
    if (samples > 0) this.#pendingLoss += samples;
  }

  /**
   * How many places before the newest the newest record that follows a
   * loss is (0: the newest follows one); {@linkcode capacity} or more when
   * no record in the ring does. A window from the record `back` places
   * before the newest up to the newest spans a loss exactly when `back`
   * is greater than this.
   */
  get lossBack(): number {
    return this.#lossBack;
  }

  /**
   * Samples the source lost just before the record `back` places before
   * the newest (0 when it follows its predecessor directly). The caller
   * keeps `back < count`.
   */
  lostBefore(back: number): number {
    let index = this.#head - back;
    if (index < 0) index += this.capacity;
    return this.#lost[index];
  }

  /**
   * Word offset of the record `back` places before the newest (0 = newest).
   * The caller keeps `back < count`.
   */
  offsetBack(back: number): number {
    let index = this.#head - back;
    if (index < 0) index += this.capacity;
    return index * this.stride;
  }

  /**
   * Forgets every record (the storage is kept). A reader of the shared
   * copy still sees the records published before: they are samples that
   * were taken.
   */
  clear(): void {
    this.#head = -1;
    this.#count = 0;
    this.#pendingLoss = 0;
    this.#lossBack = this.capacity;
  }
}
