/**
 * A timer for any delay. setTimeout takes at most 2^31 - 1 ms and fires
 * at once for more, so a run of `--duration 30d` would end as it started.
 *
 * @module
 */

/** The longest delay setTimeout honours, ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `run` once `ms` milliseconds have passed (by the wall clock),
 * chaining timers of at most `maxTimerMs` each. Returns how to cancel it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { longTimeout } from "./long_timeout.ts";
 *
 * const started = Date.now();
 * // Timers of 10 ms at most, chained up to 50 ms.
 * const fired = await new Promise<number>((resolve) => {
 *   longTimeout(() => resolve(Date.now() - started), 50, 10);
 * });
 * assert.ok(fired >= 50);
 * ```
 */
export function longTimeout(
  run: () => void,
  ms: number,
  maxTimerMs: number = MAX_TIMER_MS,
): { clear(): void } {
  let timer: ReturnType<typeof setTimeout>;
  const due = Date.now() + ms;
  const arm = (left: number) => {
    timer = setTimeout(() => {
      const rest = due - Date.now();
      if (rest > 0) arm(rest);
      else run();
    }, Math.min(left, maxTimerMs));
  };
  arm(ms);
  return { clear: () => clearTimeout(timer) };
}
