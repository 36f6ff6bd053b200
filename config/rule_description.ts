/**
 * A rule in words, one line: the one description check-config prints for
 * each configured rule and review (table, traceback, HTML report) prints
 * for the rule of an event it read from a log's header. Both hand over
 * the same plain {@linkcode RuleFacts}, so a rule reads the same before it
 * is deployed and after it fired.
 *
 * @module
 */

import { formatDuration } from "../base/units.ts";
import { measureText, type PeakUnit } from "../base/peak_text.ts";
import {
  type ComparisonType,
  DEFAULT_SEVERITY,
  type Direction,
  isReferenceRule,
  type MonitorConfig,
  type RuleConfig,
  type SignalKind,
} from "./types.ts";

/** What any rule's description says: its name, severity and column. */
interface CommonFacts {
  /** The rule's name, quoted in the description. */
  readonly name: string;
  /** Shown after the name in parentheses; none when undefined. */
  readonly severity?: string;
  /** The rule's column by name (for a ratio, the numerator). */
  readonly column: string;
}

/** One of the reference's rule types, as a description needs it. */
export interface ReferenceRuleFacts extends CommonFacts {
  readonly comparisonType: ComparisonType;
  /** The threshold, exact: a u64 or its decimal digits. */
  readonly comparisonValue: bigint | string;
  /** The monitor's history depth H; undefined when not known. */
  readonly depth?: number;
}

/** A signal rule, as a description needs it. */
export interface SignalRuleFacts extends CommonFacts {
  readonly signal: SignalKind;
  /** A ratio's denominator column by name. */
  readonly denominator?: string;
  /** The window of `rate` and `ratio`, ns. */
  readonly windowNs: number;
  readonly direction: Direction;
  /** In the signal's own units: a count, per second for `rate`, a fraction for `ratio`. */
  readonly threshold: number | bigint;
  readonly clear: number | bigint;
  /** `for`, ns; ignored with M of N. */
  readonly forNs: number;
  readonly mOfN?: { readonly m: number; readonly n: number };
  /** `keep_firing_for`, ns. */
  readonly keepFiringForNs: number;
}

/**
 * A rule as {@linkcode ruleDescription} takes it: plain values with the
 * columns already named, from a configuration ({@linkcode ruleFactsOf})
 * or from a log's header (review/rule_text.ts).
 */
export type RuleFacts = ReferenceRuleFacts | SignalRuleFacts;

/**
 * The relation each reference type tests, in the operator's words. H is
 * the depth. `inc_gt` matches once the counter has risen by at least the
 * value (the reference's `cur >= target`), hence `>=` despite its name.
 */
const CONDITION: Readonly<
  Record<ComparisonType, (column: string, value: string, h: string) => string>
> = {
  gt: (c, v, h) => `${c} > ${v} for ${h} samples in a row`,
  lt: (c, v, h) => `${c} < ${v} for ${h} samples in a row`,
  dt_gt: (c, v, h) => `${c} rises by > ${v} over ${h} samples`,
  dt_lt: (c, v, h) => `${c} rises by < ${v} over ${h} samples`,
  inc_gt: (c, v) => `${c} rises by >= ${v} from one sample to the next`,
};

/**
 * The unit a signal's figures read in: per second for a rate, a
 * percentage for a ratio, a plain count otherwise.
 */
function unitOf(signal: SignalKind): PeakUnit {
  return signal === "rate" ? "/s" : signal === "ratio" ? "%" : "";
}

/**
 * `rule` in one line: its quoted name, its severity in parentheses when
 * given, then what it tests. A reference rule reads as its type and
 * condition (`"busy": gt rx > 5 for 1024 samples in a row`); a signal
 * rule as when it starts and when it ends. Thresholds read as the signal
 * reads (base/peak_text.ts's measureText, exact): a count for `value` and
 * `increase`, per second for `rate`, a percentage for `ratio`; durations
 * as configured (base/units.ts's formatDuration, exact).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleDescription } from "./rule_description.ts";
 *
 * assert.equal(
 *   ruleDescription({ name: "busy", column: "rx", comparisonType: "gt", comparisonValue: 5n, depth: 2 }),
 *   '"busy": gt rx > 5 for 2 samples in a row',
 * );
 * assert.equal(
 *   ruleDescription({
 *     name: "ECN storm", severity: "critical", column: "ecn", signal: "rate",
 *     windowNs: 1_000_000, direction: "above", threshold: 1_000_000, clear: 200_000,
 *     forNs: 500_000, keepFiringForNs: 10_000_000,
 *   }),
 *   '"ECN storm" (critical): starts when the rate of ecn over 1 ms stays above ' +
 *     "1000000/s for 500 µs; ends when it stays at or below 200000/s for 10 ms",
 * );
 * ```
 */
export function ruleDescription(rule: RuleFacts): string {
  const head = `${JSON.stringify(rule.name)}${
    rule.severity === undefined ? "" : ` (${rule.severity})`
  }: `;
  if ("comparisonType" in rule) {
    const condition = CONDITION[rule.comparisonType](
      rule.column,
      String(rule.comparisonValue),
      rule.depth === undefined ? "H" : String(rule.depth),
    );
    return `${head}${rule.comparisonType} ${condition}`;
  }
  return head + signalCondition(rule);
}

/** What a signal rule watches, and its raise and clear conditions, in words. */
function signalParts(
  rule: SignalRuleFacts,
): { signal: string; raise: string; clear: string } {
  const unit = unitOf(rule.signal);
  const figure = (x: number | bigint) => measureText(x, unit, { exact: true });
  const window = formatDuration(rule.windowNs / 1e9, { exact: true });
  const signal = {
    value: `the value of ${rule.column}`,
    increase: `the increase of ${rule.column} per sample`,
    rate: `the rate of ${rule.column} over ${window}`,
    ratio: `the ratio of ${rule.column} to ${
      rule.denominator ?? "?"
    } over ${window}`,
  }[rule.signal];
  const raise = `${rule.direction} ${figure(rule.threshold)}`;
  const clear = `${
    rule.direction === "above" ? "at or below" : "at or above"
  } ${figure(rule.clear)}`;
  return { signal, raise, clear };
}

/**
 * What an event of `rule` crossed, in one clause for an alert's first
 * lines: the measure with its window and the threshold, and for a signal
 * rule its clear level (`the rate of ecn over 1 ms above 1000000/s,
 * clear at or below 200000/s`); for a reference rule its condition,
 * which names its depth (`rx rises by > 5 over 1024 samples`). Figures
 * as {@linkcode ruleDescription} writes them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleThreshold } from "./rule_description.ts";
 *
 * assert.equal(
 *   ruleThreshold({
 *     name: "ECN storm", column: "ecn", signal: "rate", windowNs: 1_000_000, direction: "above",
 *     threshold: 1_000_000, clear: 200_000, forNs: 0, keepFiringForNs: 0,
 *   }),
 *   "the rate of ecn over 1 ms above 1000000/s, clear at or below 200000/s",
 * );
 * assert.equal(
 *   ruleThreshold({ name: "r", column: "rx", comparisonType: "dt_gt", comparisonValue: 5n, depth: 1024 }),
 *   "rx rises by > 5 over 1024 samples",
 * );
 * ```
 */
export function ruleThreshold(rule: RuleFacts): string {
  if ("comparisonType" in rule) {
    return CONDITION[rule.comparisonType](
      rule.column,
      String(rule.comparisonValue),
      rule.depth === undefined ? "H" : String(rule.depth),
    );
  }
  const { signal, raise, clear } = signalParts(rule);
  return `${signal} ${raise}, clear ${clear}`;
}

/** When a signal rule starts and when it ends. */
function signalCondition(rule: SignalRuleFacts): string {
  const duration = (ns: number) => formatDuration(ns / 1e9, { exact: true });
  const { signal, raise, clear } = signalParts(rule);
  let starts: string;
  let ends: string;
  if (rule.mOfN !== undefined) {
    const { m, n } = rule.mOfN;
    starts = `is ${raise} on at least ${m} of the last ${n} samples`;
    ends = `${clear} and ${raise} on fewer than ${m} of the last ${n} samples`;
  } else {
    starts = rule.forNs > 0
      ? `stays ${raise} for ${duration(rule.forNs)}`
      : `goes ${raise}`;
    ends = clear;
  }
  ends = rule.keepFiringForNs > 0
    ? `stays ${ends} for ${duration(rule.keepFiringForNs)}`
    : `is ${ends}`;
  return `starts when ${signal} ${starts}; ends when it ${ends}`;
}

/**
 * The facts of the rule configured as `rule` in `monitor`: its columns by
 * name (`column N` for an index the monitor lacks), a signal rule's
 * severity always (the default when none is configured), a reference
 * rule's only when it is not the default (the reference has none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleDescription, ruleFactsOf } from "./rule_description.ts";
 *
 * const monitor = {
 *   depth: 2,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" as const }],
 * };
 * assert.equal(
 *   ruleDescription(ruleFactsOf({
 *     name: "busy now", signal: "value", column: 0, windowNs: 0, direction: "above",
 *     threshold: 5n, clear: 5n, forNs: 0, keepFiringForNs: 0, severity: "info",
 *   }, monitor)),
 *   '"busy now" (info): starts when the value of rx goes above 5; ends when it is at or below 5',
 * );
 * ```
 */
export function ruleFactsOf(
  rule: RuleConfig,
  monitor: Pick<MonitorConfig, "columns"> & { readonly depth?: number },
): RuleFacts {
  const columnName = (index: number) =>
    monitor.columns[index]?.name ?? `column ${index}`;
  if (isReferenceRule(rule)) {
    const severity = rule.severity ?? DEFAULT_SEVERITY;
    return {
      name: rule.name,
      ...(severity === DEFAULT_SEVERITY ? {} : { severity }),
      column: columnName(rule.column),
      comparisonType: rule.comparisonType,
      comparisonValue: rule.comparisonValue,
      ...(monitor.depth === undefined ? {} : { depth: monitor.depth }),
    };
  }
  return {
    name: rule.name,
    severity: rule.severity ?? DEFAULT_SEVERITY,
    column: columnName(rule.column),
    signal: rule.signal,
    ...(rule.denominator === undefined
      ? {}
      : { denominator: columnName(rule.denominator) }),
    windowNs: rule.windowNs,
    direction: rule.direction,
    threshold: rule.threshold,
    clear: rule.clear,
    forNs: rule.forNs,
    ...(rule.mOfN === undefined ? {} : { mOfN: rule.mOfN }),
    keepFiringForNs: rule.keepFiringForNs,
  };
}
