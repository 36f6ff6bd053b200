/**
 * The shapes of the three kinds of configuration text: the reference app's
 * rules JSON, our agent form, and a `--data-ids` file. Every object is
 * strict (an unknown key such as `comparision_type` is an error), and every
 * leaf goes through a parser (`values.ts`, `names.ts`, `durations.ts`,
 * `thresholds.ts`, `m_of_n.ts`, `rule_labels.ts`), so these schemas check
 * shape, single values and which keys of a rule go together;
 * cross-references (a rule's columns, unique names) and what depends on a
 * monitor's ring are checked in `normalize.ts`.
 *
 * @module
 */

import { z } from "zod";
import { formatValue, type ProblemKind, unknownKeyProblem } from "./errors.ts";
import { parseDuration, parseWindow } from "./durations.ts";
import { type MOfN, parseFor } from "./m_of_n.ts";
import { parseSeverity, parseSummary } from "./rule_labels.ts";
import { parseThreshold } from "./thresholds.ts";
import type { ComparisonType, Direction, SignalKind } from "./types.ts";
import { MAX_ALERTMANAGERS, MAX_MONITORS, MAX_RULES } from "./limits.ts";
import {
  parseAlertmanagerUrl,
  parseAlertTimeout,
  parseAuthUsername,
  parseHold,
  parseResendInterval,
} from "./alerting.ts";
import { checkTopologyLabels, parseInstance } from "./topology_labels.ts";
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
 * suggests a near spelling (from the known keys and `suggestAlso`). A key
 * in `refused` (one that is known but cannot be honoured) gets its own
 * message instead.
 */
function strict<T extends z.core.$ZodLooseShape>(
  shape: T,
  suggestAlso: readonly string[] = [],
  refused: Readonly<Record<string, string>> = {},
) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") {
        const key = issue.keys[0];
        if (Object.hasOwn(refused, key)) return refused[key];
        return unknownKeyProblem(key, known, suggestAlso);
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

/** The keys that make a rule a signal rule, each naming the column it watches. */
export const SIGNAL_KEYS: readonly SignalKind[] = [
  "value",
  "increase",
  "rate",
  "ratio",
];

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

/** A rule of one of the five reference types, as validated. */
export interface ReferenceRuleDocument {
  /** The rule's name. */
  readonly name: string;
  /** Its counter by column name (agent form only). */
  readonly column?: string;
  /** Its counter by data ID. */
  readonly data_id?: string;
  /** The rule type, in its short spelling. */
  readonly comparison_type: ComparisonType;
  /** The exact threshold. */
  readonly comparison_value: bigint;
  /** As configured, if at all (agent form only). */
  readonly severity?: string;
  /** As configured, if at all (agent form only). */
  readonly summary?: string;
}

/**
 * A signal rule as validated: every value parsed, keys checked to fit
 * together; its columns are still names, and whether its window and M of
 * N fit the monitor's ring is checked in normalize.ts.
 */
export interface SignalRuleDocument {
  /** The rule's name. */
  readonly name: string;
  /** Which of {@linkcode SIGNAL_KEYS} the rule has. */
  readonly signal: SignalKind;
  /** The column that key names (for `ratio`, the numerator). */
  readonly column: string;
  /** For `ratio`: the column `to` names. */
  readonly to?: string;
  /** `window` in ns (rate and ratio); 0 for value and increase. */
  readonly windowNs: number;
  /** Which of `above` and `below` the rule has. */
  readonly direction: Direction;
  /** T: bigint for value and increase, number for rate and ratio. */
  readonly threshold: bigint | number;
  /** Tc: `clear`, or T when not given. */
  readonly clear: bigint | number;
  /** `for` as a duration, ns (0 when not given or when it is M of N). */
  readonly forNs: number;
  /** `for` as M of N. */
  readonly mOfN?: MOfN;
  /** `keep_firing_for`, ns (0 when not given). */
  readonly keepFiringForNs: number;
  /** As configured, if at all. */
  readonly severity?: string;
  /** As configured, if at all. */
  readonly summary?: string;
}

/** Either kind of agent-form rule; `"signal" in rule` tells them apart. */
export type AgentRuleDocument = ReferenceRuleDocument | SignalRuleDocument;

/** Every key an agent-form rule may have, each through its parser. */
const agentRuleKeys = strict({
  name: leaf(parseName),
  column: leaf(parseName).optional(),
  data_id: leaf(parseDataId).optional(),
  comparison_type: leaf(parseComparisonType).optional(),
  comparison_value: leaf(parseU64).optional(),
  value: leaf(parseName).optional(),
  increase: leaf(parseName).optional(),
  rate: leaf(parseName).optional(),
  ratio: leaf(parseName).optional(),
  to: leaf(parseName).optional(),
  window: leaf(parseWindow).optional(),
  // Thresholds are read by the signal's parser once the signal is known.
  above: z.unknown().optional(),
  below: z.unknown().optional(),
  clear: z.unknown().optional(),
  for: leaf(parseFor).optional(),
  keep_firing_for: leaf(parseDuration).optional(),
  severity: leaf(parseSeverity).optional(),
  summary: leaf(parseSummary).optional(),
});

type AgentRuleKeys = z.output<typeof agentRuleKeys>;

/** Reports one problem at `path` (relative to the rule) and gives up. */
function refuse(
  ctx: z.core.$RefinementCtx,
  path: readonly (string | number)[],
  message: string,
  kind: ProblemKind = "type",
): never {
  ctx.addIssue({ code: "custom", message, path: [...path], params: { kind } });
  return z.NEVER;
}

/** `severity` and `summary` where the rule gives them. */
function labels(
  rule: AgentRuleKeys,
): { severity?: string; summary?: string } {
  return {
    ...(rule.severity === undefined ? {} : { severity: rule.severity }),
    ...(rule.summary === undefined ? {} : { summary: rule.summary }),
  };
}

/**
 * Tells a rule's kind from its keys and checks that they fit together: a
 * reference rule has comparison_type and comparison_value and no signal
 * key; a signal rule has one signal key, one of above and below, a window
 * exactly for rate and ratio, and `to` exactly for ratio.
 */
function ruleDocument(
  rule: AgentRuleKeys,
  ctx: z.core.$RefinementCtx,
): AgentRuleDocument {
  const has = (key: keyof AgentRuleKeys) => rule[key] !== undefined;
  const reference = (["comparison_type", "comparison_value"] as const).filter(
    has,
  );
  const signals = SIGNAL_KEYS.filter(has);
  const signalOnly = SIGNAL_ONLY_KEYS.filter(has);
  if (reference.length > 0) {
    const mixed = [...signals, ...signalOnly][0];
    if (mixed !== undefined) {
      return refuse(
        ctx,
        [mixed],
        `is a signal rule key, but this rule has ${
          reference[0]
        } (a reference rule); write it as one kind of rule or the other`,
      );
    }
    if (rule.comparison_type === undefined) {
      return refuse(ctx, ["comparison_type"], "is required");
    }
    if (rule.comparison_value === undefined) {
      return refuse(ctx, ["comparison_value"], "is required");
    }
    return {
      name: rule.name,
      ...(rule.column === undefined ? {} : { column: rule.column }),
      ...(rule.data_id === undefined ? {} : { data_id: rule.data_id }),
      comparison_type: rule.comparison_type,
      comparison_value: rule.comparison_value,
      ...labels(rule),
    };
  }
  if (signals.length === 0) {
    return refuse(
      ctx,
      [],
      `needs comparison_type (a reference rule) or one of ${
        SIGNAL_KEYS.join(", ")
      } (a signal rule)`,
    );
  }
  const signal = signals[0];
  if (signals.length > 1) {
    return refuse(
      ctx,
      [signals[1]],
      `cannot be given with ${signal}: a signal rule watches one signal`,
    );
  }
  for (const key of ["column", "data_id"] as const) {
    if (has(key)) {
      return refuse(
        ctx,
        [key],
        `is for reference rules; a signal rule names its column in ${signal} (${signal}: <column name>)`,
      );
    }
  }
  const ratio = signal === "ratio";
  if (ratio && rule.to === undefined) {
    return refuse(
      ctx,
      ["to"],
      "is required for a ratio: the column whose increase divides, e.g. to: port_0_rx_packets",
    );
  }
  if (!ratio && rule.to !== undefined) {
    return refuse(
      ctx,
      ["to"],
      "is for ratio rules only (the column that divides)",
    );
  }
  const windowed = ratio || signal === "rate";
  if (windowed && rule.window === undefined) {
    return refuse(
      ctx,
      ["window"],
      `is required for a ${signal}: the time it is taken over, e.g. window: 1ms`,
    );
  }
  if (!windowed && rule.window !== undefined) {
    return refuse(
      ctx,
      ["window"],
      `is for rate and ratio rules; ${
        signal === "value" ? "a value" : "an increase"
      } rule looks at each sample (use rate: for a rate over a window)`,
    );
  }
  if (has("above") === has("below")) {
    return has("above")
      ? refuse(
        ctx,
        ["below"],
        "cannot be given with above: a rule is raised in one direction",
      )
      : refuse(ctx, [], "needs above or below: the threshold it watches for");
  }
  const direction: Direction = has("above") ? "above" : "below";
  const threshold = parseThreshold(signal, rule[direction]);
  if (!threshold.ok) {
    return refuse(ctx, [direction], threshold.problem, threshold.kind);
  }
  let clear = threshold.value;
  if (rule.clear !== undefined) {
    const parsed = parseThreshold(signal, rule.clear);
    if (!parsed.ok) return refuse(ctx, ["clear"], parsed.problem, parsed.kind);
    clear = parsed.value;
    const wrongSide = direction === "above"
      ? clear > threshold.value
      : clear < threshold.value;
    if (wrongSide) {
      return refuse(
        ctx,
        ["clear"],
        `must not be ${direction} the threshold (${direction}: ${
          formatValue(rule[direction])
        }): ${
          direction === "above" ? "an" : "a"
        } ${direction} rule ends once its signal is at or ${
          direction === "above" ? "below" : "above"
        } the clear level`,
        "range",
      );
    }
  }
  const start = rule.for ?? 0;
  return {
    name: rule.name,
    signal,
    column: rule[signal]!,
    ...(ratio ? { to: rule.to } : {}),
    windowNs: rule.window ?? 0,
    direction,
    threshold: threshold.value,
    clear,
    forNs: typeof start === "number" ? start : 0,
    ...(typeof start === "number" ? {} : { mOfN: start }),
    keepFiringForNs: rule.keep_firing_for ?? 0,
    ...labels(rule),
  };
}

/**
 * An agent-form rule of either kind. A reference rule names its counter
 * by `column` (a column name) or by `data_id` (exactly one is checked in
 * `normalize.ts`); a signal rule by its signal key (`rate: <column>`).
 *
 * @example Both kinds
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentRuleSchema } from "./schema.ts";
 *
 * assert.deepEqual(
 *   agentRuleSchema.parse({ name: "ECN storm", rate: "ecn", window: "1ms", above: "1M/s", for: "3 of 5" }),
 *   {
 *     name: "ECN storm", signal: "rate", column: "ecn", windowNs: 1_000_000, direction: "above",
 *     threshold: 1_000_000, clear: 1_000_000, forNs: 0, mOfN: { m: 3, n: 5 }, keepFiringForNs: 0,
 *   },
 * );
 * assert.equal(agentRuleSchema.safeParse({ name: "r", rate: "ecn", comparison_type: "gt" }).success, false);
 * ```
 */
export const agentRuleSchema = agentRuleKeys.transform(ruleDocument);

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

/**
 * Topology labels, `name: value`: names and values checked one by one
 * (topology_labels.ts), each problem at its own key.
 */
export const labelsSchema = z.unknown().transform(
  (input, ctx): Record<string, string> => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return refuse(
        ctx,
        [],
        'must be an object of label names and values, e.g. { rack: r12, rail: "3" }',
      );
    }
    const checked = checkTopologyLabels(input as Record<string, unknown>);
    if (checked.ok) return checked.value;
    const { name, problem, kind } = checked.problem;
    return refuse(ctx, name === undefined ? [] : [name], problem, kind);
  },
);

/**
 * `tls:` of an Alertmanager: a client certificate comes with its key.
 * `server_name` is refused: Deno's HTTP client can only verify the URL's
 * own host name.
 */
const alertmanagerTlsSchema = strict(
  {
    ca_file: leaf(parseText).optional(),
    cert_file: leaf(parseText).optional(),
    key_file: leaf(parseText).optional(),
  },
  [],
  {
    server_name:
      "is not supported: Deno's HTTP client verifies the URL's host name; put that name in the URL (and, if DNS does not resolve it, in /etc/hosts)",
  },
).transform((tls, ctx) => {
  if ((tls.cert_file === undefined) !== (tls.key_file === undefined)) {
    const [given, missing] = tls.cert_file === undefined
      ? ["key_file", "cert_file"]
      : ["cert_file", "key_file"];
    return refuse(
      ctx,
      [missing],
      `is required with ${given}: a client certificate and its key go together`,
    );
  }
  return tls;
});

/** `basic_auth:` of an Alertmanager; the password only ever from a file. */
const basicAuthSchema = strict({
  username: leaf(parseAuthUsername),
  password_file: leaf(parseText).optional(),
  password: z.unknown().optional(),
}).transform((auth, ctx) => {
  if (auth.password !== undefined) {
    return refuse(
      ctx,
      ["password"],
      "is not accepted: put the password in a file only the agent can read and name it in password_file",
    );
  }
  if (auth.password_file === undefined) {
    return refuse(
      ctx,
      ["password_file"],
      "is required: the file the password is read from",
    );
  }
  return { username: auth.username, password_file: auth.password_file };
});

/**
 * One Alertmanager: its base URL and how to reach it. Basic auth and a
 * bearer token exclude each other; `tls` is for an https URL only.
 */
export const alertmanagerSchema = strict({
  url: leaf(parseAlertmanagerUrl),
  timeout: leaf(parseAlertTimeout).optional(),
  tls: alertmanagerTlsSchema.optional(),
  basic_auth: basicAuthSchema.optional(),
  bearer_token_file: leaf(parseText).optional(),
  bearer_token: z.unknown().optional(),
}).transform((am, ctx) => {
  if (am.bearer_token !== undefined) {
    return refuse(
      ctx,
      ["bearer_token"],
      "is not accepted: put the token in a file only the agent can read and name it in bearer_token_file",
    );
  }
  if (am.basic_auth !== undefined && am.bearer_token_file !== undefined) {
    return refuse(
      ctx,
      ["bearer_token_file"],
      "cannot be given with basic_auth: an Alertmanager takes one kind of credentials",
    );
  }
  if (am.tls !== undefined && !am.url.startsWith("https:")) {
    return refuse(
      ctx,
      ["tls"],
      "is for an https URL; this Alertmanager's url is http",
    );
  }
  const { bearer_token: _, ...rest } = am;
  return rest;
});

/** `alerting:`: where events are pushed as alerts, and how often. */
export const alertingSchema = strict({
  alertmanagers: list(
    alertmanagerSchema,
    ["Alertmanager", "Alertmanagers"],
    1,
    MAX_ALERTMANAGERS,
  ),
  resend_interval: leaf(parseResendInterval).optional(),
  hold: leaf(parseHold).optional(),
});

/** Our agent form: global settings and a list of monitors. */
export const agentSchema = strict({
  instance: leaf(parseInstance).optional(),
  labels: labelsSchema.optional(),
  labels_file: leaf(parseText).optional(),
  alerting: alertingSchema.optional(),
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
/** A validated `alerting:` section. */
export type AlertingDocument = z.output<typeof alertingSchema>;
/** One validated agent-form monitor. */
export type MonitorDocument = z.output<typeof monitorSchema>;
/** One validated `{name, data_id}` entry, `kind` where the form allows it. */
export type ColumnDocument =
  & z.output<typeof columnSchema>
  & Partial<Pick<z.output<typeof agentColumnSchema>, "kind">>;
