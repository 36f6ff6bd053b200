/**
 * Rules as zod schemas. A rule of our form is one of five shapes, each a
 * strict object: a reference rule (`comparison_type`, `comparison_value`)
 * or a signal rule watching one `value`, `increase`, `rate` or `ratio`. A
 * key of another kind is refused naming that kind, so a rule that mixes
 * them is told which key does not belong: the one foreign to the shape the
 * rule is closest to (see `issueError` in errors.ts). Thresholds are read
 * by the signal's own grammar (thresholds.ts); which columns a rule names
 * exist, and whether its window and M of N fit the monitor's ring, is
 * checked in normalize.ts.
 *
 * @module
 */

import { z } from "zod";
import { CLOSEST_SHAPE } from "./errors.ts";
import { parseDuration, parseWindow } from "./durations.ts";
import { type MOfN, parseFor } from "./m_of_n.ts";
import { printableName } from "./names.ts";
import { strict } from "./objects.ts";
import { runbookUrl, severity, summary } from "./rule_labels.ts";
import { parseThreshold } from "./thresholds.ts";
import {
  type ComparisonType,
  DEFAULT_SEVERITY,
  type Direction,
  type ReferenceRuleConfig,
  type SignalKind,
  type SignalRuleConfig,
} from "./types.ts";
import { bad, comparisonType, dataId, grammar, u64 } from "./values.ts";
import { SIGNAL_KEYS } from "./signal_keys.ts";

export { SIGNAL_KEYS };

/** Keys only a signal rule has, besides its signal key. */
const SIGNAL_ONLY_KEYS = [
  "to",
  "window",
  "above",
  "below",
  "clear",
  "for",
  "keep_firing_for",
] as const;

/** Words operators reach for in a rule, and what to write instead. */
const RULE_ALIASES = {
  threshold: "above or below (the threshold)",
  column_name: '"column"',
  type: '"comparison_type"',
  description: '"summary"',
  runbook: '"runbook_url"',
};

/**
 * A reference rule as validated, its counter still a column name or a data
 * ID (normalize.ts resolves it to the column's index).
 */
export type ReferenceRuleDocument =
  & Omit<ReferenceRuleConfig, "column">
  & { readonly column?: string; readonly dataId?: string };

/**
 * A signal rule as validated, its columns still names (`to` names a
 * ratio's denominator); whether its window and M of N fit the monitor's
 * ring is checked in normalize.ts.
 */
export type SignalRuleDocument =
  & Omit<SignalRuleConfig, "column" | "denominator">
  & { readonly column: string; readonly to?: string };

/** Either kind of agent-form rule; `"signal" in rule` tells them apart. */
export type AgentRuleDocument = ReferenceRuleDocument | SignalRuleDocument;

/**
 * `severity`, the default where none is given, and `summary` and
 * `runbook_url` if given.
 */
function labels(
  rule: { severity?: string; summary?: string; runbook_url?: string },
): { severity: string; summary?: string; runbookUrl?: string } {
  return {
    severity: rule.severity ?? DEFAULT_SEVERITY,
    ...(rule.summary === undefined ? {} : { summary: rule.summary }),
    ...(rule.runbook_url === undefined ? {} : { runbookUrl: rule.runbook_url }),
  };
}

const FOREIGN_REFERENCE =
  "is a signal rule key, but this is a reference rule (it has comparison_type or comparison_value); write it as one kind of rule or the other";

/**
 * A reference-form rule: always names its counter by data ID.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceRule } from "./rule_schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(
 *   parseValue(referenceRule, { name: "r", data_id: "0x1", comparison_type: "greater_than", comparison_value: 5 }),
 *   {
 *     ok: true,
 *     value: { name: "r", dataId: "0x0000000000000001", comparisonType: "gt", comparisonValue: 5n, severity: "warning" },
 *   },
 * );
 * ```
 */
export const referenceRule: z.ZodType<ReferenceRuleDocument> = strict({
  name: printableName,
  data_id: dataId,
  comparison_type: comparisonType,
  comparison_value: u64,
}).transform(referenceDocument);

/** A reference rule's keys as validated, as a {@linkcode ReferenceRuleDocument}. */
function referenceDocument(rule: {
  name: string;
  column?: string;
  data_id?: string;
  comparison_type: ComparisonType;
  comparison_value: bigint;
  severity?: string;
  summary?: string;
  runbook_url?: string;
}): ReferenceRuleDocument {
  return {
    name: rule.name,
    ...(rule.column === undefined ? {} : { column: rule.column }),
    ...(rule.data_id === undefined ? {} : { dataId: rule.data_id }),
    comparisonType: rule.comparison_type,
    comparisonValue: rule.comparison_value,
    ...labels(rule),
  };
}

/** An agent-form reference rule, by `column` or by `data_id`. */
const agentReferenceRule = strict({
  name: printableName,
  column: printableName.optional(),
  data_id: dataId.optional(),
  comparison_type: comparisonType,
  comparison_value: u64,
  severity: severity.optional(),
  summary: summary.optional(),
  runbook_url: runbookUrl.optional(),
}, {
  aliases: RULE_ALIASES,
  refuse: Object.fromEntries(
    [...SIGNAL_KEYS, ...SIGNAL_ONLY_KEYS].map((k) => [k, FOREIGN_REFERENCE]),
  ),
}).check((ctx) => {
  const rule = ctx.value;
  if ((rule.column === undefined) !== (rule.data_id === undefined)) return;
  ctx.issues.push({
    code: "custom",
    message: "must name its counter with exactly one of column or data_id",
    input: rule,
  });
}).transform(referenceDocument);

/** The largest increase that is not a counter reset: 2^63 - 1. */
const MAX_INCREASE = (1n << 63n) - 1n;
/** The largest u64. */
const MAX_U64 = (1n << 64n) - 1n;

/** Why a threshold no sample can cross could never start a rule, if so. */
function neverHolds(
  signal: SignalKind,
  direction: Direction,
  t: bigint | number,
): string | undefined {
  if (direction === "below" && (t === 0n || t === 0)) {
    return `can never hold: a ${signal} is never below 0`;
  }
  if (direction === "above" && signal === "value" && t === MAX_U64) {
    return "can never hold: no 64-bit value is above it";
  }
  if (direction === "above" && signal === "increase" && t >= MAX_INCREASE) {
    return "can never hold: an increase of 2^63 or more is a counter reset, not an increase";
  }
  return undefined;
}

/**
 * The shape of a signal rule watching `signal`: its own keys, the keys of
 * other kinds refused saying why, `to` and `window` where the signal
 * needs them, and one of above and below on the right side of `clear`.
 */
function signalRule(signal: SignalKind) {
  const ratio = signal === "ratio";
  const windowed = ratio || signal === "rate";
  const threshold = grammar((v) => parseThreshold(signal, v)).optional();
  const refuse: Record<string, string> = {
    column:
      `is for reference rules; a signal rule names its column in ${signal} (${signal}: <column name>)`,
    data_id:
      `is for reference rules; a signal rule names its column in ${signal} (${signal}: <column name>)`,
    comparison_type:
      `is for reference rules, but this is a ${signal} rule (it has ${signal}:); write it as one kind of rule or the other`,
    comparison_value:
      `is for reference rules, but this is a ${signal} rule (it has ${signal}:); write it as one kind of rule or the other`,
  };
  for (const other of SIGNAL_KEYS) {
    if (other !== signal) {
      refuse[other] =
        `cannot be given with ${signal}: a signal rule watches one signal`;
    }
  }
  if (!ratio) refuse.to = "is for ratio rules only (the column that divides)";
  if (!windowed) {
    refuse.window = `is for rate and ratio rules; ${
      signal === "value" ? "a value" : "an increase"
    } rule looks at each sample (use rate: for a rate over a window)`;
  }
  const shape = {
    name: printableName,
    [signal]: printableName,
    ...(ratio
      ? {
        to: z.string({
          error: (iss) =>
            iss.input === undefined
              ? "is required for a ratio: the column whose increase divides, e.g. to: port_0_rx_packets"
              : undefined,
        }).pipe(printableName),
      }
      : {}),
    ...(windowed
      ? {
        window: grammar((v) =>
          v === undefined
            ? bad(
              `is required for a ${signal}: the time it is taken over, e.g. window: 1ms`,
            )
            : parseWindow(v)
        ),
      }
      : {}),
    above: threshold,
    below: threshold,
    clear: threshold,
    for: grammar(parseFor).optional(),
    keep_firing_for: grammar(parseDuration).optional(),
    severity: severity.optional(),
    summary: summary.optional(),
    runbook_url: runbookUrl.optional(),
  };
  type Keys = {
    name: string;
    to?: string;
    window?: number;
    above?: bigint | number;
    below?: bigint | number;
    clear?: bigint | number;
    for?: number | MOfN;
    keep_firing_for?: number;
    severity?: string;
    summary?: string;
    runbook_url?: string;
  } & Record<SignalKind, string>;
  return strict(shape, { aliases: RULE_ALIASES, refuse })
    .check((ctx) => {
      const rule = ctx.value as unknown as Keys;
      const push = (path: string[], message: string, range = false) => {
        ctx.issues.push({
          code: "custom",
          message,
          path,
          input: rule,
          ...(range ? { params: { kind: "range" } } : {}),
        });
      };
      if ((rule.above === undefined) === (rule.below === undefined)) {
        return rule.above === undefined
          ? push([], "needs above or below: the threshold it watches for")
          : push(
            ["below"],
            "cannot be given with above: a rule is raised in one direction",
          );
      }
      const direction: Direction = rule.above === undefined ? "below" : "above";
      const never = neverHolds(signal, direction, rule[direction]!);
      if (never !== undefined) push([direction], never, true);
    })
    .transform((value): SignalRuleDocument => {
      const rule = value as unknown as Keys;
      const direction: Direction = rule.above === undefined ? "below" : "above";
      const threshold = rule[direction]!;
      const start = rule.for ?? 0;
      return {
        name: rule.name,
        signal,
        column: rule[signal],
        ...(ratio ? { to: rule.to } : {}),
        windowNs: rule.window ?? 0,
        direction,
        threshold,
        clear: rule.clear ?? threshold,
        forNs: typeof start === "number" ? start : 0,
        ...(typeof start === "number" ? {} : { mOfN: start }),
        keepFiringForNs: rule.keep_firing_for ?? 0,
        ...labels(rule),
      };
    });
}

const KIND_KEYS = ["comparison_type", "comparison_value", ...SIGNAL_KEYS];

/**
 * An agent-form rule of either kind. A reference rule names its counter
 * by `column` (a column name) or by `data_id`; a signal rule by its signal
 * key (`rate: <column>`). A rule that fits no shape is explained by the
 * one it is closest to.
 *
 * @example Both kinds
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentRule } from "./rule_schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(
 *   parseValue(agentRule, { name: "ECN storm", rate: "ecn", window: "1ms", above: "1M/s", for: "3 of 5" }),
 *   {
 *     ok: true,
 *     value: {
 *       name: "ECN storm", signal: "rate", column: "ecn", windowNs: 1_000_000, direction: "above",
 *       threshold: 1_000_000, clear: 1_000_000, forNs: 0, mOfN: { m: 3, n: 5 }, keepFiringForNs: 0,
 *       severity: "warning",
 *     },
 *   },
 * );
 * assert.deepEqual(parseValue(agentRule, { name: "r", rate: "ecn", window: "1ms", above: 1, comparison_value: 1 }), {
 *   ok: false,
 *   problem: "is for reference rules, but this is a rate rule (it has rate:); write it as one kind of rule or the other",
 *   kind: "type",
 * });
 * ```
 */
export const agentRule: z.ZodType<AgentRuleDocument> = z.looseObject({}, {
  error: (iss) =>
    iss.input === undefined ? undefined : "must be an object (keys and values)",
}).check((ctx) => {
  if (KIND_KEYS.some((key) => ctx.value[key] !== undefined)) return;
  ctx.issues.push({
    code: "custom",
    message: `needs comparison_type (a reference rule) or one of ${
      SIGNAL_KEYS.join(", ")
    } (a signal rule)`,
    input: ctx.value,
  });
}).pipe(
  z.union([
    agentReferenceRule,
    ...SIGNAL_KEYS.map(signalRule),
  ], { error: () => CLOSEST_SHAPE }),
);
