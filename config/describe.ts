/**
 * The short human summary printed by `dpu-traceback check-config FILE`, so
 * an operator can confirm what the agent understood (which form, which
 * monitor writes where, and each rule spelled out) before deploying.
 *
 * @module
 */

import { docaCounterName } from "./doca_counters.ts";
import { formatBytes, formatDuration } from "../base/units.ts";
import { ringBytes } from "./ring_budget.ts";
import { ruleDescription, ruleFactsOf } from "./rule_description.ts";
import { LISTEN_OFF } from "./values.ts";
import type { AgentConfig, MonitorConfig, RuleConfig } from "./types.ts";

/** A configured duration in ns, exactly, as check-config prints one. */
function duration(ns: number): string {
  return formatDuration(ns / 1e9, { exact: true });
}

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
        knownName(m.source, c.dataId)
      }${c.kind === "gauge" ? " (gauge)" : ""}`
    ),
    `  rules (${m.rules.length}):${m.rules.length === 0 ? " none" : ""}`,
    ...m.rules.flatMap((r) => [
      `    ${describeRule(r, m)}`,
      ...(r.summary === undefined
        ? []
        : [`      summary: ${JSON.stringify(r.summary)}`]),
      ...(r.runbookUrl === undefined ? [] : [`      runbook: ${r.runbookUrl}`]),
    ]),
  ];
  return lines;
}

/**
 * One rule on one line, as check-config prints it and review states the
 * rule of an event (config/rule_description.ts, which says how it reads).
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
  return ruleDescription(ruleFactsOf(rule, monitor));
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

/** ` (rx_bytes{port=0})` after a DOCA data ID the agent knows by name. */
function knownName(source: string, dataId: string): string {
  if (source === "kernel" || source === "nvml") return "";
  const name = docaCounterName(dataId);
  return name === undefined ? "" : ` (${name})`;
}
