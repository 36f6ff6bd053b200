/**
 * How a rule's peak, its thresholds and anything else it measures read,
 * wherever the agent shows them: check-config, the closing table, review
 * and the alerts. One formatter, so they never disagree.
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

/** How {@linkcode measureText} writes a figure. */
export interface MeasureOptions {
  /**
   * A configured figure (a rule's threshold or clear level), shown
   * exactly: a u64 as its decimal digits, a float in JavaScript's shortest
   * round-trip form, a ratio's percentage without the float noise of the
   * x 100. Without it the figure is a measured one (a peak, a value at a
   * start), to 6 significant digits.
   */
  readonly exact?: boolean;
}

/**
 * A measure `x` in `unit`, the one way the agent writes a value, a rate
 * (`/s`) or a ratio (as a percentage): check-config's thresholds, review's
 * rule lines and PEAK cells, the closing table and the alerts. Integers
 * exact, other measured values to 6 significant digits; `-` when unknown
 * (NaN). No digit grouping, so a figure can be copied into a
 * configuration or a query as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { measureText } from "./peak_text.ts";
 *
 * assert.equal(measureText(312_004, "/s"), "312004/s");
 * assert.equal(measureText(0.0415486, "%"), "4.15486 %");
 * assert.equal(measureText(NaN, ""), "-");
 * assert.equal(measureText(18446744073709551615n, "", { exact: true }), "18446744073709551615");
 * assert.equal(measureText(0.0007, "%", { exact: true }), "0.07 %");
 * assert.equal(measureText(1234567.25, "/s", { exact: true }), "1234567.25/s");
 * ```
 */
export function measureText(
  x: number | bigint,
  unit: PeakUnit,
  options: MeasureOptions = {},
): string {
  if (typeof x === "number" && Number.isNaN(x)) return "-";
  const percent = unit === "%";
  if (options.exact) {
    if (!percent) return `${x}${unit}`;
    const shown = Number(x) * 100;
    // Past 1.8e306 x 100 overflows: show the ratio itself.
    if (!Number.isFinite(shown)) return String(x);
    // toPrecision drops the float noise of x 100 (0.0007 x 100).
    return `${Number(shown.toPrecision(15))} %`;
  }
  const shown = percent ? Number(x) * 100 : Number(x);
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
