/**
 * The shapes of the three kinds of configuration text: the reference app's
 * rules JSON, our agent form, and a `--data-ids` file. Every object is
 * strict (an unknown key such as `comparision_type` is an error), and every
 * leaf goes through a parser from `values.ts`, so these schemas check shape
 * and single values only; cross-references (a rule's column, unique names)
 * are checked in `normalize.ts`.
 *
 * @module
 */

import { z } from "zod";
import { unknownKeyProblem } from "./errors.ts";
import { MAX_MONITORS, MAX_RULES } from "./limits.ts";
import { parseName } from "./names.ts";
import {
  MAX_COLUMNS,
  parseBoolean,
  parseColumnKind,
  parseComparisonType,
  type Parsed,
  parseDataId,
  parseEventLogKeep,
  parseEventLogMaxBytes,
  parseGpuColumnName,
  parseGpuMode,
  parseInteger,
  parseListen,
  parseMetricsWindow,
  parseMonitorName,
  parsePositiveInteger,
  parseSamplePeriod,
  parseSource,
  parseText,
  parseU64,
} from "./values.ts";

/**
 * A leaf schema from a value parser. The problem's kind travels in the
 * issue's `params` so the error can be a `TypeError` or a `RangeError`.
 */
function leaf<T>(parse: (value: unknown) => Parsed<T>) {
  return z.unknown().transform((input, ctx): T => {
    const parsed = parse(input);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({
      code: "custom",
      message: parsed.problem,
      params: { kind: parsed.kind },
    });
    return z.NEVER;
  });
}

/**
 * A strict object whose unknown-key message lists the known keys and
 * suggests a near spelling (from the known keys and `suggestAlso`).
 */
function strict<T extends z.core.$ZodLooseShape>(
  shape: T,
  suggestAlso: readonly string[] = [],
) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") {
        return unknownKeyProblem(issue.keys[0], known, suggestAlso);
      }
      if (issue.code === "invalid_type") {
        return "must be an object (keys and values)";
      }
      return undefined;
    },
  });
}

/** A list with a count range; counts out of range are `RangeError`s. */
function list<T extends z.core.SomeType>(
  item: T,
  [one, many]: readonly [string, string],
  min = 0,
  max = Infinity,
) {
  let schema = z.array(item, {
    error: (issue) =>
      issue.code === "invalid_type" ? "must be a list" : undefined,
  });
  if (min > 0) {
    schema = schema.min(min, {
      error: `must list at least ${min} ${min === 1 ? one : many}`,
    });
  }
  if (max < Infinity) {
    schema = schema.max(max, { error: `must list at most ${max} ${many}` });
  }
  return schema;
}

const ENTRIES = ["entry", "entries"] as const;
const RULES = ["rule", "rules"] as const;

/** One sampled counter, `{name, data_id}`, in every form. */
export const columnSchema = strict({
  name: leaf(parseName),
  data_id: leaf(parseDataId),
});

/** 1 to {@linkcode MAX_COLUMNS} columns. */
export const columnsSchema = list(columnSchema, ENTRIES, 1, MAX_COLUMNS);

/** An agent-form column, which may say how it is aggregated. */
export const agentColumnSchema = strict({
  name: leaf(parseName),
  data_id: leaf(parseDataId),
  kind: leaf(parseColumnKind).optional(),
});

/** 1 to {@linkcode MAX_COLUMNS} agent-form columns. */
export const agentColumnsSchema = list(
  agentColumnSchema,
  ENTRIES,
  1,
  MAX_COLUMNS,
);

/** A reference-form rule: always names its counter by data ID. */
export const referenceRuleSchema = strict({
  name: leaf(parseName),
  data_id: leaf(parseDataId),
  comparison_type: leaf(parseComparisonType),
  comparison_value: leaf(parseU64),
});

/** The reference app's rules JSON, accepted verbatim. */
export const referenceSchema = strict({
  diag_sample_period_ns: leaf(parseSamplePeriod).optional(),
  // Bounded with the columns, by ring memory (normalize.ts).
  sample_history_depth: leaf(parsePositiveInteger).optional(),
  "data-ids": columnsSchema.optional(),
  rules: list(referenceRuleSchema, RULES, 0, MAX_RULES).optional(),
}, ["monitors"]);

/**
 * An agent-form rule: names its counter by `column` (a column name) or by
 * `data_id`; exactly one is checked in `normalize.ts`.
 */
export const agentRuleSchema = strict({
  name: leaf(parseName),
  column: leaf(parseName).optional(),
  data_id: leaf(parseDataId).optional(),
  comparison_type: leaf(parseComparisonType),
  comparison_value: leaf(parseU64),
});

/** One monitor in the agent form; `columns` may be spelled `data-ids`. */
export const monitorSchema = strict({
  name: leaf(parseMonitorName),
  source: leaf(parseSource).optional(),
  device: leaf(parseText).optional(),
  sample_period_ns: leaf(parseSamplePeriod).optional(),
  // Bounded with the columns, by ring memory (normalize.ts).
  depth: leaf(parsePositiveInteger).optional(),
  event_log: leaf(parseText).optional(),
  input: leaf(parseText).optional(),
  seed: leaf(parseInteger).optional(),
  columns: agentColumnsSchema.optional(),
  "data-ids": agentColumnsSchema.optional(),
  // A GPU monitor (source nvml) names its columns this way instead.
  readings: list(leaf(parseGpuColumnName), ENTRIES, 1, MAX_COLUMNS)
    .optional(),
  rules: list(agentRuleSchema, RULES, 0, MAX_RULES).optional(),
});

/** Our agent form: global settings and a list of monitors. */
export const agentSchema = strict({
  listen: leaf(parseListen).optional(),
  metrics_window_s: leaf(parseMetricsWindow).optional(),
  event_log_max_bytes: leaf(parseEventLogMaxBytes).optional(),
  event_log_keep: leaf(parseEventLogKeep).optional(),
  web_config_file: leaf(parseText).optional(),
  force_ownership: leaf(parseBoolean).optional(),
  doca_lib_dir: leaf(parseText).optional(),
  nvml_lib_dir: leaf(parseText).optional(),
  gpu: leaf(parseGpuMode).optional(),
  device: leaf(parseText).optional(),
  monitors: list(monitorSchema, ["monitor", "monitors"], 1, MAX_MONITORS),
});

/** A `--data-ids` file written as an object with a `data-ids` list. */
export const dataIdsObjectSchema = strict({ "data-ids": columnsSchema });

/** The validated reference form. */
export type ReferenceDocument = z.output<typeof referenceSchema>;
/** The validated agent form. */
export type AgentDocument = z.output<typeof agentSchema>;
/** One validated agent-form monitor. */
export type MonitorDocument = z.output<typeof monitorSchema>;
/** One validated `{name, data_id}` entry, `kind` where the form allows it. */
export type ColumnDocument =
  & z.output<typeof columnSchema>
  & Partial<Pick<z.output<typeof agentColumnSchema>, "kind">>;
