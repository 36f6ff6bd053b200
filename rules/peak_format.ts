/**
 * Which way a configured rule's peak reads (its highest or its lowest) and
 * in what unit; base/peak_text.ts writes it.
 *
 * @module
 */

import { isReferenceRule, type RuleConfig } from "../config/types.ts";
import type { PeakKind, PeakUnit } from "../base/peak_text.ts";

/**
 * Whether the rule configured as `rule` fires low or high.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peakKindOf } from "./peak_format.ts";
 *
 * assert.equal(peakKindOf({ name: "x", column: 0, comparisonType: "dt_lt", comparisonValue: 5n }), "min");
 * ```
 */
export function peakKindOf(rule: RuleConfig): PeakKind {
  const low = isReferenceRule(rule)
    ? rule.comparisonType === "lt" || rule.comparisonType === "dt_lt"
    : rule.direction === "below";
  return low ? "min" : "max";
}

/**
 * The unit of what the rule configured as `rule` measures.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peakUnitOf } from "./peak_format.ts";
 *
 * assert.equal(peakUnitOf({
 *   name: "ECN storm", signal: "rate", column: 0, windowNs: 1_000_000, direction: "above",
 *   threshold: 250_000, clear: 50_000, forNs: 0, keepFiringForNs: 0,
 * }), "/s");
 * ```
 */
export function peakUnitOf(rule: RuleConfig): PeakUnit {
  if (isReferenceRule(rule)) return "";
  return rule.signal === "rate" ? "/s" : rule.signal === "ratio" ? "%" : "";
}
