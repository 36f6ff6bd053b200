/**
 * What a rule is, in one line, as the review's traceback and HTML report
 * state it. It comes from the log's header, so a log read without its
 * configuration still says what fired and why.
 *
 * @module
 */

import type { ReviewEvent } from "./event.ts";
import type { HeaderSignal } from "./header.ts";
import { formatDuration } from "../base/units.ts";

/**
 * The rule of `e` in words: `differential_greater_than 100 on rx` for the
 * reference's types; for a signal rule its signal, threshold, clear level,
 * `for` or M of N, `keep_firing_for` and severity. Undefined when the
 * log's header does not describe the rule.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleText } from "./rule_text.ts";
 *
 * assert.equal(
 *   ruleText({ typeName: "greater_than", threshold: "5", column: "rx" }),
 *   "greater_than 5 on rx",
 * );
 * assert.equal(
 *   ruleText({
 *     typeName: "rate over 1000000ns",
 *     threshold: "1000000",
 *     column: "ecn",
 *     signal: {
 *       signal: "rate", windowNs: 1_000_000, direction: "above",
 *       threshold: "1000000", clear: "200000", forNs: 500_000,
 *       keepFiringForNs: 10_000_000, severity: "critical",
 *     },
 *   }),
 *   "rate of ecn over 1 ms above 1000000/s, clear at or below 200000/s, " +
 *     "for 500 µs, keep firing for 10 ms, severity critical",
 * );
 * assert.equal(ruleText({}), undefined);
 * ```
 */
export function ruleText(
  e: Pick<ReviewEvent, "typeName" | "threshold" | "column" | "signal">,
): string | undefined {
  if (e.signal !== undefined) return signalText(e.signal, e.column ?? "?");
  if (e.typeName === undefined) return undefined;
  // A signal rule whose condition this reader cannot read has no threshold.
  const threshold = e.threshold ? ` ${e.threshold}` : "";
  return `${e.typeName}${threshold} on ${e.column ?? "?"}`;
}

function signalText(s: HeaderSignal, column: string): string {
  const unit = s.signal === "rate" ? "/s" : "";
  const over = s.windowNs > 0 ? ` over ${duration(s.windowNs)}` : "";
  const what = s.signal === "ratio"
    ? `ratio of ${column} to ${s.denominator ?? s.denominatorDataId ?? "?"}`
    : `${s.signal} of ${column}`;
  const parts = [`${what}${over} ${s.direction} ${s.threshold}${unit}`];
  if (s.clear !== s.threshold) {
    const side = s.direction === "above" ? "at or below" : "at or above";
    parts.push(`clear ${side} ${s.clear}${unit}`);
  }
  if (s.mOfN !== undefined) {
    parts.push(`${s.mOfN.m} of ${s.mOfN.n} samples`);
  } else if (s.forNs > 0) parts.push(`for ${duration(s.forNs)}`);
  if (s.keepFiringForNs > 0) {
    parts.push(`keep firing for ${duration(s.keepFiringForNs)}`);
  }
  if (s.severity !== undefined) parts.push(`severity ${s.severity}`);
  return parts.join(", ");
}

function duration(ns: number): string {
  return formatDuration(ns / 1e9);
}
