/**
 * A sampling thread's loop: it sleeps to absolute deadlines and samples,
 * never passing through an event loop or a timer. A wake-up that comes
 * late is a late sample, taken at once; the deadlines that passed
 * meanwhile are skipped, not made up, and the next one stays on the grid
 * the first sample set, so lateness never accumulates into drift.
 *
 * @module
 */

/** The monotonic clock and the sleep a {@linkcode sampleOnDeadlines} loop uses. */
export interface DeadlineClock {
  /** Monotonic time, ns. */
  now(): number;
  /** Blocks the thread until monotonic time `ns` (returns at once when past). */
  sleepUntil(ns: number): void;
}

/** Options of {@linkcode sampleOnDeadlines}. */
export interface DeadlineLoopOptions {
  /** Time between samples, ns (positive). */
  readonly periodNs: number;
  readonly clock: DeadlineClock;
  /** Checked after every wake-up: true ends the loop. */
  readonly stopped: () => boolean;
  /** One sample, `lateNs` (0 or more) after its deadline. A throw ends the loop. */
  readonly sample: (lateNs: number) => void;
  /**
   * The longest one sleep lasts, ns (default {@linkcode STOP_CHECK_NS}): a
   * long period is slept in pieces so that a stop is seen within this.
   */
  readonly maxSleepNs?: number;
}

/** How soon a stop is seen during a long period: 100 ms. */
export const STOP_CHECK_NS = 100_000_000;

/**
 * Samples at once, then at every later deadline on the period's grid,
 * until `stopped()` says so after a wake-up. Blocks the calling thread.
 *
 * @example A wake-up 25 ms late at a 10 ms period: one late sample, then back on the grid
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleOnDeadlines } from "./sampler_loop.ts";
 *
 * let t = 0;
 * const late: number[] = [];
 * sampleOnDeadlines({
 *   periodNs: 10,
 *   clock: {
 *     now: () => t,
 *     // The second sleep oversleeps by 25 ns (a busy host).
 *     sleepUntil: (ns) => (t = late.length === 2 ? ns + 25 : ns),
 *   },
 *   stopped: () => late.length === 4,
 *   sample: (lateNs) => late.push(lateNs),
 * });
 * assert.deepEqual(late, [0, 0, 25, 0]); // at 0, 10, 45 (due 20), then 50
 * ```
 */
export function sampleOnDeadlines(options: DeadlineLoopOptions): void {
  const { periodNs, clock, stopped, sample } = options;
  const maxSleep = options.maxSleepNs ?? STOP_CHECK_NS;
  let due = clock.now();
  let now = due;
  while (true) {
    if (now >= due) {
      const late = now - due;
      sample(late);
      // Deadlines that passed while late are skipped: the next is the
      // first one still ahead on the grid.
      due += periodNs * (1 + Math.floor(late / periodNs));
    }
    clock.sleepUntil(
      periodNs <= maxSleep ? due : Math.min(due, clock.now() + maxSleep),
    );
    if (stopped()) return;
    now = clock.now();
  }
}
