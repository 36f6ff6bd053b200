/**
 * The short human summary printed by `dpu-traceback check-config FILE`, so
 * an operator can confirm what the agent understood (which form, which
 * monitor writes where, and each rule spelled out) before deploying.
 *
 * @module
 */

import { formatBytes, formatDuration } from "../base/units.ts";
import { ringBytes } from "./ring_budget.ts";
import { LISTEN_OFF } from "./values.ts";
import {
  type AgentConfig,
  type ComparisonType,
  DEFAULT_SEVERITY,
  isReferenceRule,
  type MonitorConfig,
  type RuleConfig,
  type SignalRuleConfig,
} from "./types.ts";

/** A configured duration in ns, exactly, as check-config prints one. */
function duration(ns: number): string {
  return formatDuration(ns / 1e9, { exact: true });
}

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

/**
 * Summarizes a configuration in a few lines: the form and listen address,
 * the instance, topology labels and alerting where configured (with the
 * labels file's labels when `options` has them), then per monitor its source, period, depth and ring size, log path,
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
 *   sample period 100 µs (10 kHz), depth 1024 samples, ring 2048 samples (32 KiB)
 *   event log events.log
 *   columns (1):
 *     [0] rx 0x0000000000000001
 *   rules (1):
 *     "busy": gt rx > 5 for 1024 samples in a row`,
 * );
 * ```
 */
export function describeConfig(
  config: AgentConfig,
  options: DescribeOptions = {},
): string {
  const count = config.monitors.length;
  const lines = [
    `${config.file}: ${config.form} form, ${count} monitor${
      count === 1 ? "" : "s"
    }, ${describeEndpoint(config)}${
      config.forceOwnership ? ", force ownership" : ""
    }`,
  ];
  lines.push(...describeTopology(config, options.fileLabels));
  lines.push(...describeAlerting(config));
  // A GPU monitor that cannot start is left out and the others run; with
  // no other monitor, the run fails (agent/agent.ts).
  const gpuOff = config.monitors.some((m) => m.source !== "nvml")
    ? "else off and the other monitors run"
    : "else off and the run fails (no other monitor)";
  for (const monitor of config.monitors) {
    lines.push(...describeMonitor(monitor, {
      ...options,
      gpuOff,
      auto: monitor.name === options.addedByGpuAuto,
    }));
  }
  return lines.join("\n");
}

/** What {@linkcode describeConfig} may add to what the configuration says. */
export interface DescribeOptions {
  /**
   * The labels read from the configuration's labels file (check-config
   * reads it), to list them; without it the file is only named.
   */
  readonly fileLabels?: Readonly<Record<string, string>>;
  /**
   * What check-config found of NVML on this host, for the GPU monitors'
   * lines (`found /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1`, `not found
   * in ...`); without it they say only when a GPU monitor runs.
   */
  readonly nvmlHere?: string;
  /** The name of the monitor `gpu: auto` added (withAutoGpuMonitor), to say so. */
  readonly addedByGpuAuto?: string;
}

/** `name="value", ...` for a summary line. */
function formatLabelList(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(", ");
}

/**
 * The instance and topology lines; none when the configuration sets
 * none of them (a reference-form file never does).
 */
function describeTopology(
  config: AgentConfig,
  fileLabels: Readonly<Record<string, string>> | undefined,
): string[] {
  const lines: string[] = [];
  if (config.instance !== undefined) {
    lines.push(`instance ${JSON.stringify(config.instance)} on alerts`);
  } else if (config.alerting !== undefined) {
    lines.push("instance on alerts: the host name");
  }
  const count = Object.keys(config.labels).length;
  if (count > 0) {
    lines.push(
      `topology labels (${count}): ${formatLabelList(config.labels)}`,
    );
  }
  if (config.labelsFile !== undefined) {
    const read = fileLabels === undefined
      ? ""
      : Object.keys(fileLabels).length === 0
      ? ": no labels"
      : `: ${formatLabelList(fileLabels)}`;
    lines.push(
      `labels file ${config.labelsFile}${read} (read at start; labels: win)`,
    );
  }
  return lines;
}

/** The alerting lines: the timing, then one line per Alertmanager. */
function describeAlerting(config: AgentConfig): string[] {
  const alerting = config.alerting;
  if (alerting === undefined) return [];
  const n = alerting.alertmanagers.length;
  const resend = alerting.resendIntervalMs * 1e6;
  return [
    `alerting: ${n} Alertmanager${n === 1 ? "" : "s"}, resent every ${
      duration(resend)
    } while firing (ends ${duration(4 * resend)} ahead), held ${
      duration(alerting.holdMs * 1e6)
    } after an event ends`,
    ...alerting.alertmanagers.map((am) => {
      const parts = [`timeout ${duration(am.timeoutMs * 1e6)}`];
      if (am.tls !== undefined) {
        const tls = [
          ...(am.tls.caFile === undefined ? [] : [`CA ${am.tls.caFile}`]),
          ...(am.tls.certFile === undefined
            ? []
            : [`client certificate ${am.tls.certFile}`]),
        ];
        parts.push(tls.length === 0 ? "TLS" : `TLS (${tls.join(", ")})`);
      }
      if (am.basicAuth !== undefined) {
        parts.push(
          `basic auth as ${
            JSON.stringify(am.basicAuth.username)
          }, password from ${am.basicAuth.passwordFile}`,
        );
      }
      if (am.bearerTokenFile !== undefined) {
        parts.push(`bearer token from ${am.bearerTokenFile}`);
      }
      return `  ${am.url}: ${parts.join(", ")}`;
    }),
  ];
}

function describeEndpoint(config: AgentConfig): string {
  if (config.listen === LISTEN_OFF) return "no metrics endpoint";
  const window = `${duration(config.metricsWindowNs)} windows`;
  return config.webConfigFile === undefined
    ? `metrics on ${config.listen} (${window})`
    : `metrics on ${config.listen} (${window}, web config ${config.webConfigFile})`;
}

function describeMonitor(
  m: MonitorConfig,
  context: DescribeOptions & {
    readonly gpuOff: string;
    readonly auto: boolean;
  },
): string[] {
  const slots = m.depth * 2;
  const details = [
    `source ${m.source}`,
    ...(m.device === undefined ? [] : [`device ${m.device}`]),
    ...(m.input === undefined ? [] : [`input ${m.input}`]),
    ...(m.source === "sim" ? [`seed ${m.seed}`] : []),
    ...(m.source === "nvml" ? ["every GPU NVML finds"] : []),
    ...(context.auto ? ["added by gpu: auto"] : []),
  ];
  const gpu = m.source === "nvml";
  const lines = [
    `monitor ${m.name}: ${details.join(", ")}`,
    // Whether it runs is decided at start, where the agent runs: say so,
    // and what this host has, rather than list it as if it were sure to.
    ...(gpu
      ? [
        `  on if NVML is found and lists a GPU at start, ${context.gpuOff}${
          context.nvmlHere === undefined
            ? ""
            : `; NVML here: ${context.nvmlHere}`
        }`,
      ]
      : []),
    `  sample period ${duration(m.samplePeriodNs)} (${
      formatRate(1e9 / m.samplePeriodNs)
    }), depth ${m.depth} samples, ring ${slots} samples (${
      formatBytes(ringBytes(m.columns.length, m.depth))
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
    ...m.rules.flatMap((r) => [
      `    ${describeRule(r, m)}`,
      ...(r.summary === undefined
        ? []
        : [`      summary: ${JSON.stringify(r.summary)}`]),
    ]),
  ];
  return lines;
}

/**
 * One rule on one line. A reference rule reads as its type and condition,
 * e.g. `"Rx Bytes/s > 1MeBs": dt_gt port_0_rx_bytes rises by > 1048576
 * over 1024 samples` (with its severity in parentheses after the name
 * when it is not the default); a signal rule as when it starts and ends,
 * with its severity (see {@linkcode describeSignalRule}).
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
 * assert.equal(
 *   describeRule({
 *     name: "busy now", signal: "value", column: 0, windowNs: 0, direction: "above",
 *     threshold: 5n, clear: 5n, forNs: 0, keepFiringForNs: 0, severity: "info",
 *   }, monitor),
 *   '"busy now" (info): starts when the value of rx goes above 5; ends when it is at or below 5',
 * );
 * ```
 */
export function describeRule(
  rule: RuleConfig,
  monitor: Pick<MonitorConfig, "columns" | "depth">,
): string {
  if (!isReferenceRule(rule)) return describeSignalRule(rule, monitor);
  const column = columnName(rule.column, monitor);
  const condition = CONDITION[rule.comparisonType](
    column,
    rule.comparisonValue,
    monitor.depth,
  );
  const severity = rule.severity ?? DEFAULT_SEVERITY;
  const label = severity === DEFAULT_SEVERITY ? "" : ` (${severity})`;
  return `${
    JSON.stringify(rule.name)
  }${label}: ${rule.comparisonType} ${condition}`;
}

/**
 * A signal rule in words: its name and severity, then when it starts and
 * when it ends, e.g. `"ECN storm" (critical): starts when the rate of
 * port_0_rx_ecn_packets over 1 ms stays above 1,000,000/s for 500 µs; ends
 * when it stays at or below 200,000/s for 10 ms`. Thresholds show as the
 * signal reads: counts for `value` and `increase`, per second for `rate`,
 * a percentage for `ratio`.
 *
 * @example M of N on a ratio
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeSignalRule } from "./describe.ts";
 *
 * const monitor = {
 *   columns: [
 *     { name: "drops", dataId: "0x0000000000000001", kind: "counter" as const },
 *     { name: "packets", dataId: "0x0000000000000002", kind: "counter" as const },
 *   ],
 * };
 * assert.equal(
 *   describeSignalRule({
 *     name: "drops", signal: "ratio", column: 0, denominator: 1, windowNs: 1_000_000,
 *     direction: "above", threshold: 0.001, clear: 0.0005, forNs: 0,
 *     mOfN: { m: 3, n: 5 }, keepFiringForNs: 0,
 *   }, monitor),
 *   '"drops" (warning): starts when the ratio of drops to packets over 1 ms is above 0.1 % ' +
 *     "on at least 3 of the last 5 samples; ends when it is at or below 0.05 % " +
 *     "and above 0.1 % on fewer than 3 of the last 5 samples",
 * );
 * ```
 */
export function describeSignalRule(
  rule: SignalRuleConfig,
  monitor: Pick<MonitorConfig, "columns">,
): string {
  const column = columnName(rule.column, monitor);
  const window = duration(rule.windowNs);
  const signal = {
    value: `the value of ${column}`,
    increase: `the increase of ${column} per sample`,
    rate: `the rate of ${column} over ${window}`,
    ratio: `the ratio of ${column} to ${
      columnName(rule.denominator ?? -1, monitor)
    } over ${window}`,
  }[rule.signal];
  const raise = `${rule.direction} ${formatThreshold(rule, rule.threshold)}`;
  const clear = `${
    rule.direction === "above" ? "at or below" : "at or above"
  } ${formatThreshold(rule, rule.clear)}`;
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
  return `${JSON.stringify(rule.name)} (${
    rule.severity ?? DEFAULT_SEVERITY
  }): starts when ${signal} ${starts}; ends when it ${ends}`;
}

function columnName(
  index: number,
  monitor: Pick<MonitorConfig, "columns">,
): string {
  return monitor.columns[index]?.name ?? `column ${index}`;
}

/**
 * A threshold as the rule's signal reads it: a count for `value` and
 * `increase`, per second for `rate`, a percentage for `ratio`; digits in
 * groups of three.
 */
function formatThreshold(
  rule: Pick<SignalRuleConfig, "signal">,
  value: bigint | number,
): string {
  switch (rule.signal) {
    case "rate":
      return `${groupDigits(String(value))}/s`;
    case "ratio": {
      const percent = Number(value) * 100;
      // Past 1.8e306 x 100 overflows: show the ratio itself.
      if (!Number.isFinite(percent)) return String(value);
      // toPrecision drops the float noise of x 100 (0.0007 x 100).
      return `${groupDigits(String(Number(percent.toPrecision(15))))} %`;
    }
    default:
      return groupDigits(String(value));
  }
}

/** `1234567.5` as `1,234,567.5`; exponent forms (1e+21) stay as they are. */
function groupDigits(text: string): string {
  if (/e/i.test(text)) return text;
  const dot = text.indexOf(".");
  const whole = dot === -1 ? text : text.slice(0, dot);
  return whole.replace(/\B(?=(\d{3})+$)/g, ",") +
    (dot === -1 ? "" : text.slice(dot));
}

function formatRate(hz: number): string {
  if (hz >= 1e6) return `${trim(hz / 1e6)} MHz`;
  if (hz >= 1e3) return `${trim(hz / 1e3)} kHz`;
  return `${trim(hz)} Hz`;
}

/** At most three significant decimals, without trailing zeros. */
function trim(value: number): string {
  return String(Number(value.toPrecision(3)));
}
