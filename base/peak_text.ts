/**
 * How a rule's peak (and anything else it measures) reads, wherever the
 * agent shows one: the closing table, review, the events API and the
 * alerts. One formatter, so they never disagree.
 *
 * @module
 */

/** `min` for a rule that fires low (lt, dt_lt, `below`): its peak is its lowest. */
export type PeakKind = "max" | "min";

/**
 * `/s` for a `rate` rule, whose measure is per second; `%` for a `ratio`
 * rule, shown as a percentage as check-config shows its threshold; empty
 * otherwise.
 */
export type PeakUnit = "" | "/s" | "%";

/**
 * A measure `x` in `unit`: integers exact, other values to 6 significant
 * digits, a ratio as a percentage; `-` when unknown (NaN).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { measureText } from "./peak_text.ts";
 *
 * assert.equal(measureText(312_004, "/s"), "312004/s");
 * assert.equal(measureText(0.0415486, "%"), "4.15486 %");
 * assert.equal(measureText(NaN, ""), "-");
 * ```
 */
export function measureText(x: number, unit: PeakUnit): string {
  if (Number.isNaN(x)) return "-";
  const percent = unit === "%";
  const shown = percent ? x * 100 : x;
  const value = Number.isInteger(shown)
    ? String(shown)
    : String(Number(shown.toPrecision(6)));
  return `${value}${percent ? " %" : unit}`;
}

/**
 * The PEAK cell: `-` without one; integers exact, other values to 6
 * significant digits; `min` before the peak of a rule that fires low,
 * `/s` after a rate's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peakCell } from "./peak_text.ts";
 *
 * assert.equal(peakCell({ peak: 2_500_000, peakKind: "max", peakUnit: "/s" }), "2500000/s");
 * assert.equal(peakCell({ peak: 0.00123456789, peakKind: "max", peakUnit: "" }), "0.00123457");
 * assert.equal(peakCell({ peak: 19600, peakKind: "min", peakUnit: "" }), "min 19600");
 * assert.equal(peakCell({ peak: NaN, peakKind: "max", peakUnit: "" }), "-");
 * assert.equal(peakCell({ peak: 0.0415486, peakKind: "max", peakUnit: "%" }), "4.15486 %");
 * ```
 */
export function peakCell(
  e: {
    readonly peak: number;
    readonly peakKind: PeakKind;
    readonly peakUnit: PeakUnit;
  },
): string {
  if (Number.isNaN(e.peak)) return "-";
  return `${e.peakKind === "min" ? "min " : ""}${
    measureText(e.peak, e.peakUnit)
  }`;
}
