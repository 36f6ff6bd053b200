/**
 * An open event's peak so far, as another thread reads it from the
 * published state. The publication lags the event journal by up to its
 * period (100 ms): just after a rule starts, the published peak may still
 * be the previous event's. Only a publication made at or after this
 * event's start, showing the rule active, holds this event's peak.
 *
 * @module
 */

/**
 * The peak so far of rule `rule`'s open event that started at `startMs`
 * (Unix ms, the journal's), as `view` shows it; NaN when `view` was
 * published before that start or shows the rule idle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openEventPeak } from "./open_event_peak.ts";
 *
 * const view = (active: boolean, changedAtMs: number, peak: number) => ({
 *   rules: [{ active, peak }],
 *   ruleChangedAtMs: () => changedAtMs,
 * });
 * // Published as of the event's start: its peak.
 * assert.equal(openEventPeak(view(true, 5_000, 42), 0, 5_000), 42);
 * // Published before it started (the previous event's peak): unknown.
 * assert.ok(Number.isNaN(openEventPeak(view(true, 1_000, 99), 0, 5_000)));
 * ```
 */
export function openEventPeak(
  view: {
    readonly rules: readonly {
      readonly active: boolean;
      readonly peak: number;
    }[];
    ruleChangedAtMs(rule: number): number;
  },
  rule: number,
  startMs: number,
): number {
  const published = view.rules[rule];
  return published !== undefined && published.active &&
      view.ruleChangedAtMs(rule) >= startMs
    ? published.peak
    : NaN;
}
