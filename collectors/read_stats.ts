/**
 * How long a source's reads take: each sample's read time, its largest, a
 * histogram of them, and the samples whose reads took longer than the
 * sample period (the source cannot keep up). Sources that time their
 * reads (the kernel source) record into it; the metrics endpoint reads it.
 *
 * @module
 */

/**
 * Upper bounds (seconds) of the read-time histogram's buckets. Reading a
 * few dozen sysfs files takes tens of µs; a port counter query or a
 * firmware-backed ethtool read can take a millisecond; past the default
 * 10 ms period the source falls behind.
 */
export const READ_BOUNDS_S: readonly number[] = [
  0.00001,
  0.000025,
  0.00005,
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.1,
];

/**
 * Read-time counters of one source. Recording allocates nothing (the
 * histogram is preallocated, every figure is a number), so it runs on
 * every sample.
 *
 * @example Two samples' reads at a 10 ms period, one of them too slow
 * ```ts
 * import assert from "node:assert/strict";
 * import { READ_SLOTS, ReadStats } from "./read_stats.ts";
 *
 * const stats = new ReadStats(10);
 * assert.equal(stats.record(0.02), false); // 20 µs: within the period
 * assert.equal(stats.record(12), true); // 12 ms: longer than the period
 * assert.equal(stats.reads, 2);
 * assert.equal(stats.slowReads, 1);
 * assert.equal(stats.readLastS, 0.012);
 * assert.equal(stats.readMaxS, 0.012);
 *
 * // Another thread's copy, through shared memory.
 * const slots = new Float64Array(READ_SLOTS);
 * stats.save(slots, 0);
 * const copy = new ReadStats(10);
 * copy.load(slots, 0);
 * assert.deepEqual([copy.reads, copy.slowReads], [2, 1]);
 * ```
 */
export class ReadStats {
  /** The sample period, seconds: reads longer than this are slow. */
  readonly periodS: number;
  /** Samples whose reads were timed. */
  reads = 0;
  /** Sum of every sample's read time, seconds. */
  readSumS = 0;
  /** The last sample's read time, seconds. */
  readLastS = 0;
  /** The longest any sample's reads took, seconds. */
  readMaxS = 0;
  /** Samples whose reads took longer than the sample period. */
  slowReads = 0;
  /**
   * Samples per read-time bucket (not cumulative): entry `i` counts reads
   * of at most `READ_BOUNDS_S[i]` and more than the bound before; the last
   * entry counts those over the largest bound.
   */
  readonly readCounts: Float64Array = new Float64Array(
    READ_BOUNDS_S.length + 1,
  );

  /** Times the reads of a source sampling every `periodMs` milliseconds. */
  constructor(periodMs: number) {
    this.periodS = periodMs / 1000;
  }

  /**
   * Counts one sample whose reads took `readMs` milliseconds (negative
   * values, from a clock that stepped back, count as 0). Returns whether
   * they took longer than the sample period.
   */
  record(readMs: number): boolean {
    const read = readMs > 0 ? readMs / 1000 : 0;
    this.reads++;
    this.readSumS += read;
    this.readLastS = read;
    if (read > this.readMaxS) this.readMaxS = read;
    const bounds = READ_BOUNDS_S;
    let i = 0;
    while (i < bounds.length && read > bounds[i]) i++;
    this.readCounts[i]++;
    if (read <= this.periodS) return false;
    this.slowReads++;
    return true;
  }

  /**
   * Writes every figure into `slots` from `at` ({@linkcode READ_SLOTS} of
   * them): for another thread to {@linkcode load}.
   */
  save(slots: Float64Array, at: number): void {
    slots[at] = this.reads;
    slots[at + 1] = this.readSumS;
    slots[at + 2] = this.readLastS;
    slots[at + 3] = this.readMaxS;
    slots[at + 4] = this.slowReads;
    slots.set(this.readCounts, at + 5);
  }

  /** Reads what {@linkcode save} wrote at `at`. */
  load(slots: Float64Array, at: number): void {
    this.reads = slots[at];
    this.readSumS = slots[at + 1];
    this.readLastS = slots[at + 2];
    this.readMaxS = slots[at + 3];
    this.slowReads = slots[at + 4];
    this.readCounts.set(
      slots.subarray(at + 5, at + 5 + this.readCounts.length),
    );
  }
}

/** Slots {@linkcode ReadStats.save} writes. */
export const READ_SLOTS = 5 + READ_BOUNDS_S.length + 1;
