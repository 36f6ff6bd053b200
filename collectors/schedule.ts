/**
 * The poll loop of a source that polls on a timer (the simulator): due
 * times, not timer ticks, set the schedule, so a late
 * timer is measured against when it was due and does not drift.
 *
 * @module
 */

/** Options of {@linkcode pollOnSchedule}. */
export interface ScheduleOptions {
  /** Time between polls, ms (positive). */
  readonly periodMs: number;
  /** Ends the loop between polls; the promise then resolves. */
  readonly signal: AbortSignal;
  /**
   * One poll, `lateMs` after it was due (0 or more). Its throw ends the
   * loop and rejects the promise. It covers the periods that passed while
   * it was late (`floor(lateMs / periodMs)`): the next poll is due at the
   * first period boundary still ahead.
   */
  readonly poll: (lateMs: number) => void;
  /** A monotonic clock in ms. Default `performance.now`. */
  readonly now?: () => number;
  /**
   * Waits `ms` (0 or more) in place of a timer; a rejection ends the loop
   * and rejects the promise. Default: `setTimeout`. Deno's timers do not
   * keep 1 ms (bench/wakeup.ts: a 1 ms `setTimeout` chain woke 451 to 474
   * times a second on the test VM), so a source that must keep a short
   * period samples on a thread of its own instead (collectors/sampler_loop.ts).
   */
  readonly wait?: (ms: number) => Promise<unknown>;
}

/**
 * Polls at once, then every `periodMs` on a due-time schedule, until
 * `signal` aborts (resolves) or a poll throws (rejects).
 *
 * @example Two polls on time, then stopped
 * ```ts
 * import assert from "node:assert/strict";
 * import { pollOnSchedule } from "./schedule.ts";
 *
 * const stop = new AbortController();
 * const lateness: number[] = [];
 * await pollOnSchedule({
 *   periodMs: 1,
 *   signal: stop.signal,
 *   now: () => 0, // a clock that never moves: every poll is on time
 *   poll: (late) => {
 *     lateness.push(late);
 *     if (lateness.length === 2) stop.abort();
 *   },
 * });
 * assert.deepEqual(lateness, [0, 0]);
 * ```
 */
export function pollOnSchedule(options: ScheduleOptions): Promise<void> {
  const { periodMs, signal, poll, wait } = options;
  const now = options.now ?? (() => performance.now());
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false; // a wait still under way when stopped ends there
    let due = now();
    const stop = () => {
      stopped = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      stop();
      resolve();
    };
    const fail = (error: unknown) => {
      if (stopped) return;
      stop();
      reject(error);
    };
    const tick = () => {
      if (stopped) return;
      const late = Math.max(0, now() - due);
      try {
        poll(late);
      } catch (error) {
        stop();
        return reject(error);
      }
      if (signal.aborted) return; // the poll stopped the loop
      // Timers drift; due times do not. A late poll covered the periods
      // that passed meanwhile: the next is due at the next boundary.
      due += periodMs * (1 + Math.floor(late / periodMs));
      const ms = Math.max(0, due - now());
      if (wait === undefined) timer = setTimeout(tick, ms);
      else wait(ms).then(tick, fail);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    tick();
  });
}
