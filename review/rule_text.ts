/**
 * What a rule is, in one line, as the review's traceback and HTML report
 * state it: config/rule_description.ts's description, the very line
 * check-config prints for the rule, made from the log's header. A log read
 * without its configuration still says what fired and why.
 *
 * @module
 */

import type { ReviewEvent } from "./event.ts";
import type { HeaderSignal } from "./header.ts";
import { ruleDescription, type RuleFacts } from "../config/rule_description.ts";
import type { ComparisonType } from "../config/types.ts";

const COMPARISON_TYPES: readonly string[] = [
  "gt",
  "lt",
  "dt_gt",
  "dt_lt",
  "inc_gt",
];

/**
 * The rule of `e` in words (config/rule_description.ts); a rule whose type
 * or condition this reader cannot read shows the header's own words:
 * `"r": rate over 1000ns 5 on rx`. Undefined when the log's header does
 * not describe the rule.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleText } from "./rule_text.ts";
 *
 * assert.equal(
 *   ruleText({
 *     rule: "busy", kind: "gt", typeName: "greater_than", threshold: "5",
 *     column: "rx", depth: 1024,
 *   }),
 *   '"busy": gt rx > 5 for 1024 samples in a row',
 * );
 * assert.equal(
 *   ruleText({
 *     rule: "ECN storm",
 *     kind: "rate",
 *     typeName: "rate over 1000000ns",
 *     threshold: "1000000",
 *     column: "ecn",
 *     signal: {
 *       signal: "rate", windowNs: 1_000_000, direction: "above",
 *       threshold: "1000000", clear: "200000", forNs: 500_000,
 *       keepFiringForNs: 10_000_000, severity: "critical",
 *     },
 *   }),
 *   '"ECN storm" (critical): starts when the rate of ecn over 1 ms stays above ' +
 *     "1000000/s for 500 µs; ends when it stays at or below 200000/s for 10 ms",
 * );
 * assert.equal(ruleText({ rule: "r" }), undefined);
 * ```
 */
export function ruleText(
  e: Pick<
    ReviewEvent,
    "rule" | "kind" | "typeName" | "threshold" | "column" | "signal" | "depth"
  >,
): string | undefined {
  const facts = ruleFacts(e);
  if (facts !== undefined) return ruleDescription(facts);
  if (e.typeName === undefined) return undefined;
  // A type this reader does not know, or a signal rule whose condition
  // it cannot read (no threshold then): the header's words, unguessed.
  const threshold = e.threshold ? ` ${e.threshold}` : "";
  return `${JSON.stringify(e.rule)}: ${e.typeName}${threshold} on ${
    e.column ?? "?"
  }`;
}

/**
 * The rule of `e` as config/rule_description.ts takes it, from what the
 * header says: the reference's types with the header's depth (H when it
 * has none), a signal rule with its severity and figures as printed (an
 * exact u64 for `value` and `increase`, a float for `rate` and `ratio`).
 * Undefined when the header does not say enough to describe it.
 */
function ruleFacts(
  e: Pick<
    ReviewEvent,
    "rule" | "kind" | "typeName" | "threshold" | "column" | "signal" | "depth"
  >,
): RuleFacts | undefined {
  const column = e.column ?? "?";
  if (e.signal !== undefined) return signalFacts(e.rule, column, e.signal);
  if (
    e.kind === undefined || !COMPARISON_TYPES.includes(e.kind) ||
    e.threshold === undefined || !/^[0-9]+$/.test(e.threshold)
  ) {
    return undefined;
  }
  return {
    name: e.rule,
    column,
    comparisonType: e.kind as ComparisonType,
    comparisonValue: e.threshold,
    ...(e.depth === undefined ? {} : { depth: e.depth }),
  };
}

function signalFacts(
  name: string,
  column: string,
  s: HeaderSignal,
): RuleFacts | undefined {
  const exact = s.signal === "value" || s.signal === "increase";
  const figure = (text: string): number | bigint | undefined => {
    if (exact) return /^[0-9]+$/.test(text) ? BigInt(text) : undefined;
    const x = Number(text);
    return text.trim() !== "" && Number.isFinite(x) ? x : undefined;
  };
  const threshold = figure(s.threshold);
  const clear = figure(s.clear);
  if (threshold === undefined || clear === undefined) return undefined;
  const denominator = s.denominator ?? s.denominatorDataId;
  return {
    name,
    ...(s.severity === undefined ? {} : { severity: s.severity }),
    column,
    signal: s.signal,
    ...(denominator === undefined ? {} : { denominator }),
    windowNs: s.windowNs,
    direction: s.direction,
    threshold,
    clear,
    forNs: s.forNs,
    ...(s.mOfN === undefined ? {} : { mOfN: s.mOfN }),
    keepFiringForNs: s.keepFiringForNs,
  };
}
