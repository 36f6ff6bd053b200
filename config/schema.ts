/**
 * The shapes of the three kinds of configuration text as zod schemas: the
 * reference app's rules JSON, our agent form, and a `--data-ids` file.
 * Every object is strict (an unknown key such as `comparision_type` is an
 * error naming the key meant), a monitor is told apart by its `source`,
 * whose sample period must be one the source can deliver, and rules are
 * in rule_schema.ts. What crosses entries (a rule's columns, unique names,
 * rings that fit in memory) is checked in `normalize.ts`.
 *
 * @module
 */

import { z } from "zod";
import { alertingSchema } from "./alerting.ts";
import { formatDuration } from "../base/units.ts";
import {
  MAX_COLUMNS,
  MAX_MONITORS,
  MAX_RULES,
  SAMPLE_PERIODS,
} from "./limits.ts";
import { printableName } from "./names.ts";
import { list, strict } from "./objects.ts";
import { agentRule, referenceRule } from "./rule_schema.ts";
import { instance, topologyLabels } from "./topology_labels.ts";
import type { SourceKind } from "./types.ts";
import {
  dataId,
  didYouMean,
  eventLogKeep,
  eventLogMaxBytes,
  gpuColumnName,
  gpuMode,
  integer,
  kernelCounter,
  listen,
  metricsWindow,
  monitorName,
  text,
} from "./values.ts";

const ENTRIES = ["entry", "entries"] as const;
const RULES = ["rule", "rules"] as const;
const SOURCES = Object.keys(SAMPLE_PERIODS) as SourceKind[];

/** One sampled counter, `{name, data_id}`. */
const column = strict({ name: printableName, data_id: dataId });

/** 1 to {@linkcode MAX_COLUMNS} columns, as the reference form and `--data-ids` give them. */
const columns = list(column, ENTRIES, 1, MAX_COLUMNS);

/** An agent-form column, which may say how it is aggregated. */
const agentColumns = list(
  strict({
    name: printableName,
    data_id: dataId,
    kind: z.enum(["counter", "gauge"]).optional(),
  }),
  ENTRIES,
  1,
  MAX_COLUMNS,
);

/**
 * A sample period in ns that `source` can deliver (see
 * {@linkcode SAMPLE_PERIODS}).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { samplePeriod } from "./schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(samplePeriod("doca"), 100), {
 *   ok: false,
 *   problem: "must be between 10000 and 1000000000 for source doca (10 µs to 1 s)",
 *   kind: "range",
 * });
 * ```
 */
export function samplePeriod(source: SourceKind): z.ZodType<number> {
  const [min, max] = SAMPLE_PERIODS[source];
  return integer(
    min,
    max,
    `must be between ${min} and ${max} for source ${source} (${
      formatDuration(min / 1e9, { exact: true })
    } to ${formatDuration(max / 1e9, { exact: true })})`,
  );
}

/** What every monitor may say, whatever its source. */
function common(source: SourceKind) {
  return {
    name: monitorName,
    sample_period_ns: samplePeriod(source).optional(),
    // Bounded with the columns, by ring memory (normalize.ts).
    depth: integer(1).optional(),
    event_log: text.optional(),
    seed: integer().optional(),
    rules: list(agentRule, RULES, 0, MAX_RULES).optional(),
  };
}

/** A monitor reading a NIC's counters (or standing in for one). */
function nicMonitor(source: "doca" | "sim" | "replay") {
  return strict({
    ...common(source),
    source: source === "doca"
      ? z.literal("doca").optional()
      : z.literal(source),
    device: text.optional(),
    input: text.optional(),
    columns: agentColumns.optional(),
    "data-ids": agentColumns.optional(),
  }, {
    refuse: {
      readings:
        "is for GPU monitors (source nvml); this monitor names its counters with columns",
    },
  }).check((ctx) => {
    const m = ctx.value;
    if ((m.columns === undefined) !== (m["data-ids"] === undefined)) return;
    ctx.issues.push(
      m.columns === undefined
        ? {
          code: "custom",
          message:
            "is required (a list of {name, data_id}; data-ids is accepted too)",
          path: ["columns"],
          input: undefined,
        }
        : {
          code: "custom",
          message:
            "repeats columns (data-ids is another name for it); keep one of the two",
          path: ["data-ids"],
          input: m["data-ids"],
        },
    );
  });
}

const NOT_FOR_GPU =
  "is not for GPU monitors (source nvml); name GPU columns in readings (e.g. gpu*.temperature)";

/** A GPU monitor: every GPU NVML finds, the readings named. */
/**
 * A NIC read through the Linux kernel: netdev and ethtool statistics, RDMA
 * hw_counters and port counters (docs/spec/kernel-counters.md).
 */
const kernelMonitor = strict({
  ...common("kernel"),
  source: z.literal("kernel"),
  device: text.optional(),
  columns: list(
    strict({
      name: printableName,
      data_id: kernelCounter,
      kind: z.enum(["counter", "gauge"]).optional(),
    }),
    ENTRIES,
    1,
    MAX_COLUMNS,
  ),
}, {
  refuse: {
    readings:
      "is for GPU monitors (source nvml); this monitor names its counters with columns",
    input: "is for source replay; a kernel monitor reads its device",
  },
});

const gpuMonitor = strict({
  ...common("nvml"),
  source: z.literal("nvml"),
  readings: list(gpuColumnName, ENTRIES, 1, MAX_COLUMNS).optional(),
}, {
  refuse: {
    columns: NOT_FOR_GPU,
    "data-ids": NOT_FOR_GPU,
    input: NOT_FOR_GPU,
    device:
      "is for NIC monitors; a GPU monitor (source nvml) reads every GPU NVML finds",
  },
});

/**
 * One monitor in the agent form, by its source (`doca` when none is
 * given); `columns` may be spelled `data-ids`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { monitorSchema } from "./schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * const nic = { name: "nic", sample_period_ns: 100, columns: [{ name: "rx", data_id: "0x1" }] };
 * assert.equal(parseValue(monitorSchema, nic).ok, false); // 100 ns is no period a NIC delivers
 * assert.deepEqual(parseValue(monitorSchema, { ...nic, source: "dpdk" }), {
 *   ok: false,
 *   problem: "must be one of doca, sim, replay, nvml, kernel",
 *   kind: "type",
 * });
 * ```
 */
export const monitorSchema = z.discriminatedUnion("source", [
  nicMonitor("doca"),
  nicMonitor("sim"),
  nicMonitor("replay"),
  kernelMonitor,
  gpuMonitor,
], {
  error: (iss) => {
    if (iss.code === "invalid_union") {
      const source = (iss.input as { source?: unknown } | undefined)?.source;
      return `must be one of ${SOURCES.join(", ")}${
        didYouMean(source, SOURCES)
      }`;
    }
    return iss.input === undefined
      ? undefined
      : "must be an object (keys and values)";
  },
});

/**
 * Our agent form: global settings and a list of monitors.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentSchema } from "./schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(agentSchema, { monitors: [] }), {
 *   ok: false,
 *   problem: "must list at least 1 monitor",
 *   kind: "range",
 * });
 * ```
 */
export const agentSchema = strict({
  instance: instance.optional(),
  labels: topologyLabels.optional(),
  labels_file: text.optional(),
  alerting: alertingSchema.optional(),
  listen: listen.optional(),
  metrics_window_s: metricsWindow.optional(),
  event_log_max_bytes: eventLogMaxBytes.optional(),
  event_log_keep: eventLogKeep.optional(),
  web_config_file: text.optional(),
  force_ownership: z.boolean().optional(),
  doca_lib_dir: text.optional(),
  nvml_lib_dir: text.optional(),
  gpu: gpuMode.optional(),
  device: text.optional(),
  monitors: list(monitorSchema, ["monitor", "monitors"], 1, MAX_MONITORS),
}, { aliases: { monitor: '"monitors"' } });

/**
 * The reference app's rules JSON, accepted verbatim.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { referenceSchema } from "./schema.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(referenceSchema, { sample_history_depth: 1024 }), {
 *   ok: true,
 *   value: { sample_history_depth: 1024 },
 * });
 * assert.equal(parseValue(referenceSchema, { diag_sample_period_ns: 100 }).ok, false);
 * ```
 */
export const referenceSchema = strict({
  diag_sample_period_ns: samplePeriod("doca").optional(),
  // Bounded with the columns, by ring memory (normalize.ts).
  sample_history_depth: integer(1).optional(),
  "data-ids": columns.optional(),
  rules: list(referenceRule, RULES, 0, MAX_RULES).optional(),
}, { aliases: { monitors: '"monitors" (our form, with monitors: [...])' } });

/** A `--data-ids` file written as a list of columns. */
export const columnsSchema = columns;

/** A `--data-ids` file written as an object with a `data-ids` list. */
export const dataIdsObjectSchema = strict({ "data-ids": columns });

/** The validated reference form. */
export type ReferenceDocument = z.output<typeof referenceSchema>;
/** The validated agent form. */
export type AgentDocument = z.output<typeof agentSchema>;
/** One validated agent-form monitor. */
export type MonitorDocument = z.output<typeof monitorSchema>;
/** One validated `{name, data_id}` entry, `kind` where the form allows it. */
export type ColumnDocument = z.output<typeof agentColumns>[number];
