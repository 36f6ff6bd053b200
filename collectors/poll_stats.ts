/**
 * How a collector's poll loop is doing: polls, how late each one ran, and
 * errors by name. Collectors record into it; the metrics endpoint reads it.
 *
 * @module
 */

/**
 * Upper bounds (seconds) of the lateness histogram's buckets. A poll loop
 * on a quiet machine is late by well under a millisecond; anything past
 * 10 ms risks the device ring, and a second is a stall.
 */
export const LATENESS_BOUNDS_S: readonly number[] = [
  0.0005,
  0.001,
  0.002,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  1,
];

/**
 * Upper bounds (seconds) of the sample-interval histogram's buckets: the
 * achieved period, to set beside the requested one (100 µs for DOCA, 1 to
 * 10 ms for the kernel source, a second for NVML).
 */
export const INTERVAL_BOUNDS_S: readonly number[] = [
  0.0001,
  0.0002,
  0.0005,
  0.001,
  0.002,
  0.005,
  0.01,
  0.015,
  0.02,
  0.05,
  0.1,
  0.5,
  1,
  2,
  5,
];

/** The numbers of a {@linkcode PollStats} before its histograms. */
const SCALARS = 8;

/** Slots {@linkcode PollStats.save} writes. */
export const POLL_SLOTS = SCALARS + LATENESS_BOUNDS_S.length + 1 +
  INTERVAL_BOUNDS_S.length + 1;

/**
 * Counters of one poll loop. Recording allocates nothing (the histogram is
 * preallocated); error names come from a fixed set (the source's status
 * names), so the map stays small.
 *
 * @example Record two polls and an error
 * ```ts
 * import assert from "node:assert/strict";
 * import { INTERVAL_BOUNDS_S, POLL_SLOTS, PollStats } from "./poll_stats.ts";
 *
 * const stats = new PollStats();
 * stats.recordPoll(0.3); // ran 0.3 ms after it was due
 * stats.recordPoll(7);
 * stats.recordError("DOCA_ERROR_AGAIN");
 * stats.recordSampleTime(1_000_000_000); // sample times, ns
 * stats.recordSampleTime(1_010_100_000); // 10.1 ms after the one before
 * assert.equal(stats.intervalCounts[INTERVAL_BOUNDS_S.indexOf(0.015)], 1);
 * assert.equal(stats.polls, 2);
 * assert.equal(stats.latenessMaxS, 0.007);
 * assert.equal(stats.errors.get("DOCA_ERROR_AGAIN"), 1);
 *
 * // Another thread's copy, through shared memory (the error names stay).
 * const slots = new Float64Array(POLL_SLOTS);
 * stats.save(slots, 0);
 * const copy = new PollStats();
 * copy.load(slots, 0);
 * assert.deepEqual([copy.polls, copy.latenessMaxS], [2, 0.007]);
 * ```
 */
export class PollStats {
  /** Polls run. */
  polls = 0;
  /** Sum of every poll's lateness, seconds. */
  latenessSumS = 0;
  /** The largest lateness seen, seconds. */
  latenessMaxS = 0;
  /**
   * Polls per lateness bucket (not cumulative): entry `i` counts polls
   * late by at most `LATENESS_BOUNDS_S[i]` and more than the bound before;
   * the last entry counts those over the largest bound.
   */
  readonly latenessCounts: Float64Array = new Float64Array(
    LATENESS_BOUNDS_S.length + 1,
  );
  /**
   * Samples taken a whole period or more after they were due (a deadline
   * passed with no sample). For a source that reads counters on demand a
   * late sample loses nothing: it has its true timestamp, and the increase
   * since the previous sample is exact.
   */
  lateSamples = 0;
  /**
   * Samples per interval since the previous sample (not cumulative; the
   * last entry counts those over the largest bound), by
   * {@linkcode INTERVAL_BOUNDS_S}: the achieved period.
   */
  readonly intervalCounts: Float64Array = new Float64Array(
    INTERVAL_BOUNDS_S.length + 1,
  );
  /** Sum of every interval counted, seconds. */
  intervalSumS = 0;
  /** Failed polls by the source's error name. */
  readonly errors: Map<string, number> = new Map();
  /**
   * How full the device's buffer was at the last poll (samples drained over
   * what it holds, 0 to 1): near 1 means samples are about to be lost.
   */
  bufferFill = 0;
  /** The fullest the device's buffer has been at a poll, 0 to 1. */
  bufferFillMax = 0;
  /**
   * Polls that found the device's buffer had overflowed (DOCA's SKIPPED):
   * the samples lost are told to the sink as a gap.
   */
  overflows = 0;
  /** The newest sample's time, ns; -1 before the first. */
  #sampleNs = -1;

  /**
   * Counts one poll that ran `lateMs` milliseconds after it was due
   * (negative values, from a timer firing early, count as 0).
   */
  recordPoll(lateMs: number): void {
    const late = lateMs > 0 ? lateMs / 1000 : 0;
    this.polls++;
    this.latenessSumS += late;
    if (late > this.latenessMaxS) this.latenessMaxS = late;
    const bounds = LATENESS_BOUNDS_S;
    let i = 0;
    while (i < bounds.length && late > bounds[i]) i++;
    this.latenessCounts[i]++;
  }

  /** Counts the interval to a sample of time `ns` from the one before. */
  recordSampleTime(ns: number): void {
    const previous = this.#sampleNs;
    this.#sampleNs = ns;
    if (previous < 0) return;
    const interval = ns > previous ? (ns - previous) / 1e9 : 0;
    this.intervalSumS += interval;
    const bounds = INTERVAL_BOUNDS_S;
    let i = 0;
    while (i < bounds.length && interval > bounds[i]) i++;
    this.intervalCounts[i]++;
  }

  /** Notes how many of the device buffer's `capacity` samples a poll drained. */
  recordBatch(samples: number, capacity: number): void {
    const fill = capacity > 0 ? Math.min(1, samples / capacity) : 0;
    this.bufferFill = fill;
    if (fill > this.bufferFillMax) this.bufferFillMax = fill;
  }

  /**
   * Writes every figure but the error names into `slots` from `at`
   * ({@linkcode POLL_SLOTS} of them): for another thread to
   * {@linkcode load}.
   */
  save(slots: Float64Array, at: number): void {
    slots[at] = this.polls;
    slots[at + 1] = this.latenessSumS;
    slots[at + 2] = this.latenessMaxS;
    slots[at + 3] = this.lateSamples;
    slots[at + 4] = this.intervalSumS;
    slots[at + 5] = this.bufferFill;
    slots[at + 6] = this.bufferFillMax;
    slots[at + 7] = this.overflows;
    slots.set(this.latenessCounts, at + SCALARS);
    slots.set(this.intervalCounts, at + SCALARS + this.latenessCounts.length);
  }

  /** Reads what {@linkcode save} wrote at `at`. */
  load(slots: Float64Array, at: number): void {
    this.polls = slots[at];
    this.latenessSumS = slots[at + 1];
    this.latenessMaxS = slots[at + 2];
    this.lateSamples = slots[at + 3];
    this.intervalSumS = slots[at + 4];
    this.bufferFill = slots[at + 5];
    this.bufferFillMax = slots[at + 6];
    this.overflows = slots[at + 7];
    const lateness = at + SCALARS;
    const intervals = lateness + this.latenessCounts.length;
    this.latenessCounts.set(slots.subarray(lateness, intervals));
    this.intervalCounts.set(
      slots.subarray(intervals, intervals + this.intervalCounts.length),
    );
  }

  /** Counts one failed poll under the source's name for the error. */
  recordError(name: string): void {
    this.errors.set(name, (this.errors.get(name) ?? 0) + 1);
  }
}
