/**
 * The short human summary printed by `dpu-traceback check-config FILE`, so
 * an operator can confirm what the agent understood (which form, which
 * monitor writes where, and each rule spelled out) before deploying.
 *
 * @module
 */

import { LISTEN_OFF } from "./values.ts";
import type {
  AgentConfig,
  ComparisonType,
  MonitorConfig,
  RuleConfig,
} from "./types.ts";

/**
 * The relation each rule type tests, for the one-line rule summary. `inc_gt`
 * matches once the counter has risen by at least the value (the reference's
 * `cur >= target`), hence `>=` despite its name.
 */
// What each type compares, in the operator's words; H is the depth.
const CONDITION: Readonly<
  Record<
    ComparisonType,
    (column: string, value: bigint, depth: number) => string
  >
> = {
  gt: (c, v, h) => `${c} > ${v} for ${h} samples in a row`,
  lt: (c, v, h) => `${c} < ${v} for ${h} samples in a row`,
  dt_gt: (c, v, h) => `${c} rises by > ${v} over ${h} samples`,
  dt_lt: (c, v, h) => `${c} rises by < ${v} over ${h} samples`,
  inc_gt: (c, v) => `${c} rises by >= ${v} from one sample to the next`,
};

/** Bytes per ring slot value: u64 stored as two u32 halves. */
const BYTES_PER_VALUE = 8;

/**
 * Summarizes a configuration in a few lines: the form and listen address,
 * then per monitor its source, period, depth and ring size, log path,
 * columns and rules (e.g. `"Rx Bytes/s > 1MeBs": dt_gt port_0_rx_bytes > 1048576`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeConfig } from "./describe.ts";
 * import { parseConfig } from "./load.ts";
 *
 * const text = `{"data-ids": [{"name": "rx", "data_id": "0x1"}],
 *   "rules": [{"name": "busy", "data_id": "0x1", "comparison_type": "gt", "comparison_value": 5}]}`;
 * assert.equal(
 *   describeConfig(parseConfig(text, "rules.json")),
 *   `rules.json: reference form, 1 monitor, metrics on 0.0.0.0:9477 (10 s windows)
 * monitor nic: source doca
 *   sample period 100000 ns (10 kHz), depth 1024 samples, ring 2048 samples (32 KiB)
 *   event log events.log
 *   columns (1):
 *     [0] rx 0x0000000000000001
 *   rules (1):
 *     "busy": gt rx > 5 for 1024 samples in a row`,
 * );
 * ```
 */
export function describeConfig(config: AgentConfig): string {
  const count = config.monitors.length;
  const lines = [
    `${config.file}: ${config.form} form, ${count} monitor${
      count === 1 ? "" : "s"
    }, ${describeEndpoint(config)}${
      config.forceOwnership ? ", force ownership" : ""
    }`,
  ];
  for (const monitor of config.monitors) {
    lines.push(...describeMonitor(monitor));
  }
  return lines.join("\n");
}

function describeEndpoint(config: AgentConfig): string {
  if (config.listen === LISTEN_OFF) return "no metrics endpoint";
  const window = `${config.metricsWindowNs / 1e9} s windows`;
  return config.webConfigFile === undefined
    ? `metrics on ${config.listen} (${window})`
    : `metrics on ${config.listen} (${window}, web config ${config.webConfigFile})`;
}

function describeMonitor(m: MonitorConfig): string[] {
  const slots = m.depth * 2;
  const ringBytes = slots * (m.columns.length + 1) * BYTES_PER_VALUE;
  const details = [
    `source ${m.source}`,
    ...(m.device === undefined ? [] : [`device ${m.device}`]),
    ...(m.input === undefined ? [] : [`input ${m.input}`]),
    ...(m.source === "sim" ? [`seed ${m.seed}`] : []),
    ...(m.source === "nvml" ? ["every GPU NVML finds"] : []),
  ];
  const gpu = m.source === "nvml";
  const lines = [
    `monitor ${m.name}: ${details.join(", ")}`,
    `  sample period ${m.samplePeriodNs} ns (${
      formatRate(1e9 / m.samplePeriodNs)
    }), depth ${m.depth} samples, ring ${slots} samples (${
      formatBytes(ringBytes)
    })`,
    `  event log ${m.eventLog}`,
    gpu
      ? `  columns (${m.columns.length}, each once per GPU it matches; the ring is per GPU column too):`
      : `  columns (${m.columns.length}):`,
    ...m.columns.map((c, i) =>
      `    [${i}] ${c.name}${gpu ? "" : ` ${c.dataId}`}${
        c.kind === "gauge" ? " (gauge)" : ""
      }`
    ),
    `  rules (${m.rules.length}):${m.rules.length === 0 ? " none" : ""}`,
    ...m.rules.map((r) => `    ${describeRule(r, m)}`),
  ];
  return lines;
}

/**
 * One rule on one line, e.g.
 * `"Rx Bytes/s > 1MeBs": dt_gt port_0_rx_bytes rises by > 1048576 over 1024 samples`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRule } from "./describe.ts";
 *
 * const monitor = {
 *   depth: 2,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" as const }],
 * };
 * assert.equal(
 *   describeRule({ name: "busy", column: 0, comparisonType: "gt", comparisonValue: 5n }, monitor),
 *   '"busy": gt rx > 5 for 2 samples in a row',
 * );
 * ```
 */
export function describeRule(
  rule: RuleConfig,
  monitor: Pick<MonitorConfig, "columns" | "depth">,
): string {
  const column = monitor.columns[rule.column]?.name ?? `column ${rule.column}`;
  const condition = CONDITION[rule.comparisonType](
    column,
    rule.comparisonValue,
    monitor.depth,
  );
  return `${JSON.stringify(rule.name)}: ${rule.comparisonType} ${condition}`;
}

function formatRate(hz: number): string {
  if (hz >= 1e6) return `${trim(hz / 1e6)} MHz`;
  if (hz >= 1e3) return `${trim(hz / 1e3)} kHz`;
  return `${trim(hz)} Hz`;
}

function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${trim(value)} ${units[unit]}`;
}

/** At most three significant decimals, without trailing zeros. */
function trim(value: number): string {
  return String(Number(value.toPrecision(3)));
}
