/**
 * `/metrics`: the agent's aggregates, rule states and health in the
 * Prometheus text format or OpenMetrics.
 *
 * A scrape reads only the last completed window and a few counters, so its
 * cost depends on the configuration (columns, rules), never on the sample
 * rate. Every label value comes from the configuration (monitor, column and
 * rule names) or from a fixed set (source kinds, error names): nothing from
 * a request becomes a label.
 *
 * @module
 */

import process from "node:process";
import {
  INTERVAL_BOUNDS_S,
  LATENESS_BOUNDS_S,
  type PollStats,
} from "../collectors/poll_stats.ts";
import { READ_BOUNDS_S } from "../collectors/read_stats.ts";
import { configuredDevice } from "../config/device.ts";
import {
  type ColumnConfig,
  DEFAULT_SEVERITY,
  isReferenceRule,
  type RuleConfig,
} from "../config/types.ts";
import type { AgentMetrics, MonitorView } from "../metrics/agent_metrics.ts";
import type { AlertCounters } from "../metrics/alert_stats.ts";
import {
  type ExpositionFormat,
  ExpositionWriter,
  formatLabels,
  type MetricType,
} from "./exposition.ts";

const P = "dpu_traceback_";

interface MonitorLabels {
  readonly monitor: string;
  readonly info: string;
  readonly columns: readonly string[];
  readonly rules: readonly string[];
  readonly ruleInfo: readonly string[];
  /** One label set per device that can go down on its own (GPUs). */
  readonly devices: readonly string[];
}

/**
 * Renders an agent's metrics. Label sets are rendered once, here, so a
 * scrape only concatenates.
 *
 * @example
 * ```ts ignore
 * const renderer = new MetricsRenderer(metrics);
 * const body = renderer.render("prometheus", Date.now());
 * ```
 */
export class MetricsRenderer {
  readonly #metrics: AgentMetrics;
  readonly #labels: readonly MonitorLabels[];
  readonly #buildLabels: string;
  readonly #topologyLabels: string;
  /** `poll_errors` label sets by monitor index and error name. */
  readonly #errorLabels = new Map<string, string>();
  readonly #alerts: AlertCounters | undefined;
  /** `{alertmanager="..."}` per Alertmanager. */
  readonly #alertmanagerLabels: readonly string[];

  /** Renders `metrics`, and the Alertmanager sender's `alerts` when alerting is on. */
  constructor(metrics: AgentMetrics, alerts?: AlertCounters) {
    this.#metrics = metrics;
    this.#alerts = alerts;
    this.#alertmanagerLabels = (alerts?.alertmanagers ?? []).map((am) =>
      formatLabels([["alertmanager", am]])
    );
    this.#buildLabels = formatLabels([
      ["version", metrics.info.version],
      ["deno", Deno.version.deno],
    ]);
    this.#topologyLabels = formatLabels(
      Object.entries(metrics.info.topology ?? {}),
    );
    this.#labels = metrics.monitors.map((m): MonitorLabels => {
      const monitor: [string, string] = ["monitor", m.monitor.name];
      return {
        monitor: formatLabels([monitor]),
        info: formatLabels([
          monitor,
          ["source", m.config.source],
          ["device", configuredDevice(m.config) ?? ""],
        ]),
        devices: (m.collector.devices ?? []).map((d) =>
          formatLabels([monitor, ...d.labels])
        ),
        columns: m.config.columns.map((c) =>
          formatLabels([monitor, ["column", c.name]])
        ),
        rules: m.config.rules.map((r) =>
          formatLabels([monitor, ["rule", r.name]])
        ),
        ruleInfo: m.config.rules.map((r) =>
          formatLabels([monitor, ...ruleInfoLabels(r, m.config.columns)])
        ),
      };
    });
  }

  /** The whole exposition in `format`, as of host time `nowMs`. */
  render(format: ExpositionFormat, nowMs: number): string {
    const w = new ExpositionWriter(format);
    this.#agent(w);
    this.#sources(w, nowMs);
    this.#logs(w);
    this.#windows(w);
    this.#rules(w);
    this.#alerting(w);
    return w.finish();
  }

  #agent(w: ExpositionWriter): void {
    const info = this.#metrics.info;
    w.family(`${P}build`, "info", "Agent and runtime versions.")
      .sample(this.#buildLabels, 1);
    // Topology goes on this one series only, never on every series: a
    // query joins it on Prometheus's own instance label, e.g.
    // `rule_active * on(instance) group_left(rail) topology_info`. It is
    // there without labels too, so such joins never lose an agent.
    w.family(
      `${P}topology`,
      "info",
      "Where this DPU sits: the configured topology labels (rack, rail, plane, switch, switch_port, a site's own).",
    ).sample(this.#topologyLabels, 1);
    w.family(
      `${P}metrics_window_seconds`,
      "gauge",
      "Length of the window the column aggregates cover.",
      "seconds",
    ).sample("", info.windowNs / 1e9);
    const cpu = process.cpuUsage();
    w.family(
      "process_cpu_seconds",
      "counter",
      "User and system CPU time spent, in seconds.",
      "seconds",
    ).sample("", (cpu.user + cpu.system) / 1e6);
    w.family(
      "process_resident_memory_bytes",
      "gauge",
      "Resident memory size, in bytes.",
      "bytes",
    ).sample("", Deno.memoryUsage().rss);
    w.family(
      "process_start_time_seconds",
      "gauge",
      "Start time of the process since the Unix epoch, in seconds.",
      "seconds",
    ).sample("", Math.floor(info.startMs / 1000));
  }

  /**
   * One histogram family in seconds with a histogram per monitor;
   * `of` returns undefined for a monitor the family does not apply to.
   */
  #perMonitorHistogram(
    w: ExpositionWriter,
    name: string,
    help: string,
    bounds: readonly number[],
    of: (i: number) => readonly [Float64Array, number] | undefined,
  ): void {
    w.family(`${P}${name}`, "histogram", help, "seconds");
    this.#labels.forEach((l, i) => {
      const h = of(i);
      if (h !== undefined) w.histogram(l.monitor, bounds, h[0], h[1]);
    });
  }

  /**
   * One family with a sample per monitor (`{monitor="..."}`); `value`
   * returns undefined for a monitor the family does not apply to.
   */
  #perMonitor(
    w: ExpositionWriter,
    family: readonly [
      name: string,
      type: MetricType,
      help: string,
      unit?: string,
    ],
    value: (i: number) => number | undefined,
  ): void {
    const [name, type, help, unit] = family;
    w.family(`${P}${name}`, type, help, unit);
    this.#labels.forEach((l, i) => {
      const v = value(i);
      if (v !== undefined) w.sample(l.monitor, v);
    });
  }

  #sources(w: ExpositionWriter, nowMs: number): void {
    const metrics = this.#metrics;
    const monitors = metrics.monitors.map((m) => m.monitor);
    const polls = metrics.monitors.map((m) => m.collector.pollStats);
    w.family(
      `${P}monitor`,
      "info",
      "Each configured monitor, its source kind and device or input.",
    );
    this.#labels.forEach((l) => w.sample(l.info, 1));
    const per = this.#perMonitor.bind(this, w);
    per(
      [
        "source_up",
        "gauge",
        "1 when the monitor's source is running and its data is fresh.",
      ],
      (i) => metrics.isUp(i, nowMs) ? 1 : 0,
    );
    w.family(
      `${P}device_up`,
      "gauge",
      "1 while a device of a multi-device source (a GPU) contributes, 0 once it is down (lost, or failing polls in a row).",
    );
    this.#labels.forEach((l, i) => {
      const devices = metrics.monitors[i].collector.devices;
      if (devices === undefined) return;
      l.devices.forEach((labels, d) =>
        w.sample(labels, devices[d].up() ? 1 : 0)
      );
    });
    per(
      [
        "source_data_age_seconds",
        "gauge",
        "Host time since the monitor's source last delivered a sample (100 ms resolution).",
        "seconds",
      ],
      (i) => metrics.freshness.ageMs(i, nowMs) / 1000,
    );
    per(
      ["samples", "counter", "Samples processed by the monitor."],
      (i) => monitors[i].samples,
    );
    per(
      [
        "lost_samples",
        "counter",
        "Samples the source lost: sample_id gaps, device buffer overruns, failed reads, a device gone. A late sample is not lost.",
      ],
      (i) => monitors[i].droppedSamples,
    );
    per(
      [
        "blind_periods",
        "counter",
        "Separate losses the source reported (each written to events.log as a <<Gap>> line).",
      ],
      (i) => monitors[i].blindPeriods,
    );
    per(
      ["events", "counter", "Events started (rule activations)."],
      (i) => monitors[i].events,
    );
    per(
      ["ring_samples", "gauge", "Samples held in the monitor's history ring."],
      (i) => monitors[i].ring.count,
    );
    per(
      [
        "ring_capacity_samples",
        "gauge",
        "Samples the monitor's history ring can hold (twice the depth).",
      ],
      (i) => monitors[i].ring.capacity,
    );

    const polled = (
      of: (stats: PollStats) => readonly [Float64Array, number],
    ) =>
    (i: number) => polls[i] === undefined ? undefined : of(polls[i]);
    this.#perMonitorHistogram(
      w,
      "poll_lateness_seconds",
      "How long after it was due each poll of the source ran.",
      LATENESS_BOUNDS_S,
      polled((s) => [s.latenessCounts, s.latenessSumS]),
    );
    per(
      [
        "poll_lateness_max_seconds",
        "gauge",
        "The latest any poll of the source has run since start.",
        "seconds",
      ],
      (i) => polls[i]?.latenessMaxS,
    );
    per(
      [
        "source_period_seconds",
        "gauge",
        "The sample period the monitor's source was asked for.",
        "seconds",
      ],
      (i) =>
        polls[i] === undefined
          ? undefined
          : metrics.monitors[i].config.samplePeriodNs / 1e9,
    );
    this.#perMonitorHistogram(
      w,
      "source_interval_seconds",
      "Time between consecutive samples of the source: the period it achieved.",
      INTERVAL_BOUNDS_S,
      polled((s) => [s.intervalCounts, s.intervalSumS]),
    );
    per(
      [
        "source_late_samples",
        "counter",
        "Samples taken a period or more after they were due (a busy host, slow reads). A source that reads counters on demand loses nothing by it: the sample has its true time.",
      ],
      (i) => polls[i]?.lateSamples,
    );
    w.family(
      `${P}poll_errors`,
      "counter",
      "Failed polls of the source, by the source's error name.",
    );
    monitors.forEach((m, i) => {
      // Error names come from the source's fixed set, so this stays small;
      // each label set is rendered once, like the others.
      for (const [name, count] of polls[i]?.errors ?? []) {
        const key = `${i}\n${name}`;
        let labels = this.#errorLabels.get(key);
        if (labels === undefined) {
          labels = formatLabels([["monitor", m.name], ["error", name]]);
          this.#errorLabels.set(key, labels);
        }
        w.sample(labels, count);
      }
    });
    per(
      [
        "source_buffer_fill_ratio",
        "gauge",
        "How full the device's sample buffer was at the last poll (1 = samples are being lost).",
        "ratio",
      ],
      (i) => polls[i]?.bufferFill,
    );
    per(
      [
        "source_buffer_fill_max_ratio",
        "gauge",
        "The fullest the device's sample buffer has been at a poll since start: the peak a scrape of the last poll misses.",
        "ratio",
      ],
      (i) => polls[i]?.bufferFillMax,
    );
    this.#reads(w);
  }

  /** Read times, for the sources that time their reads (the kernel source). */
  #reads(w: ExpositionWriter): void {
    const reads = this.#metrics.monitors.map((m) => m.collector.readStats);
    const per = this.#perMonitor.bind(this, w);
    this.#perMonitorHistogram(
      w,
      "source_read_seconds",
      "How long each sample's reads of the device took (the sample's timestamp is taken right after them).",
      READ_BOUNDS_S,
      (i) => reads[i] && [reads[i].readCounts, reads[i].readSumS],
    );
    per(
      [
        "source_read_last_seconds",
        "gauge",
        "How long the last sample's reads of the device took.",
        "seconds",
      ],
      (i) => reads[i]?.readLastS,
    );
    per(
      [
        "source_read_max_seconds",
        "gauge",
        "The longest any sample's reads of the device have taken since start.",
        "seconds",
      ],
      (i) => reads[i]?.readMaxS,
    );
    per(
      [
        "source_slow_reads",
        "counter",
        "Samples whose reads took longer than the sample period: the source cannot keep up and loses samples.",
      ],
      (i) => reads[i]?.slowReads,
    );
  }

  #logs(w: ExpositionWriter): void {
    const stats = this.#metrics.monitors.map((m) => m.log.stats);
    const per = this.#perMonitor.bind(this, w);
    per(
      [
        "events_log_written_bytes",
        "counter",
        "Bytes written to the monitor's events log.",
      ],
      (i) => stats[i].bytesWritten,
    );
    per(
      [
        "events_log_write_errors",
        "counter",
        "Failed writes to the monitor's events log (e.g. disk full).",
      ],
      (i) => stats[i].writeErrors,
    );
    per(
      [
        "events_log_dropped_rows",
        "counter",
        "Rows left out of the events log because the disk stayed behind.",
      ],
      (i) => stats[i].droppedRows,
    );
    per(
      [
        "events_log_pending_bytes",
        "gauge",
        "Bytes waiting to be written to the monitor's events log.",
        "bytes",
      ],
      (i) => stats[i].pendingBytes,
    );
  }

  #windows(w: ExpositionWriter): void {
    const monitors = this.#metrics.monitors;
    const labels = this.#labels;
    // A monitor appears in the column families once its first window has
    // completed: before that there is nothing true to say.
    const done = monitors.map((m) => m.aggregator.completed);
    const kinds = monitors.map((m) => m.config.columns.map((c) => c.kind));
    const per = this.#perMonitor.bind(this, w);
    per(
      ["window_samples", "gauge", "Samples in the last completed window."],
      (i) => done[i].sequence > 0 ? done[i].samples : undefined,
    );
    per(
      [
        "window_end_timestamp_seconds",
        "gauge",
        "End of the last completed window (sample clock), seconds since the Unix epoch.",
        "seconds",
      ],
      (i) => done[i].sequence > 0 ? done[i].endNs / 1e9 : undefined,
    );

    const column = (
      name: string,
      type: "counter" | "gauge",
      help: string,
      kind: "counter" | "gauge",
      values: (i: number) => Float64Array,
    ) => {
      w.family(`${P}${name}`, type, help);
      labels.forEach((l, i) => {
        if (done[i].sequence === 0) return;
        const v = values(i);
        for (let k = 0; k < l.columns.length; k++) {
          if (kinds[i][k] === kind) w.sample(l.columns[k], v[k]);
        }
      });
    };
    column(
      "column_rate",
      "gauge",
      "Counter columns: increase per second over the last window.",
      "counter",
      (i) => done[i].rate,
    );
    column(
      "column_rate_min",
      "gauge",
      "Counter columns: the lowest sample-to-sample rate per second in the last window.",
      "counter",
      (i) => done[i].rateMin,
    );
    column(
      "column_rate_max",
      "gauge",
      "Counter columns: the highest sample-to-sample rate per second in the last window (the burst a scrape would miss).",
      "counter",
      (i) => done[i].rateMax,
    );
    column(
      "column_rate_mean",
      "gauge",
      "Counter columns: the mean of the sample-to-sample rates per second in the last window.",
      "counter",
      (i) => done[i].rateMean,
    );
    column(
      "column",
      "counter",
      "Counter columns: the device counter's value at the end of the last window.",
      "counter",
      (i) => done[i].last,
    );
    column(
      "column_resets",
      "counter",
      "Counter columns: times the device counter went backwards.",
      "counter",
      (i) => done[i].resetsTotal,
    );
    column(
      "column_value",
      "gauge",
      "Gauge columns: the last value in the last window.",
      "gauge",
      (i) => done[i].last,
    );
    column(
      "column_min",
      "gauge",
      "Gauge columns: the lowest value in the last window.",
      "gauge",
      (i) => done[i].min,
    );
    column(
      "column_max",
      "gauge",
      "Gauge columns: the highest value in the last window.",
      "gauge",
      (i) => done[i].max,
    );
    column(
      "column_mean",
      "gauge",
      "Gauge columns: the mean value in the last window.",
      "gauge",
      (i) => done[i].mean,
    );
    w.family(
      `${P}column_refresh_seconds`,
      "gauge",
      "How often the column's value changes, when it changes regularly: a counter the driver refreshes on its own timer, or one that moves every sample. Absent until known.",
      "seconds",
    );
    labels.forEach((l, i) => {
      if (done[i].sequence === 0) return;
      const refresh = done[i].refresh;
      for (let k = 0; k < l.columns.length; k++) {
        if (refresh[k] === refresh[k]) w.sample(l.columns[k], refresh[k]);
      }
    });
  }

  #rules(w: ExpositionWriter): void {
    const monitors = this.#metrics.monitors;
    const labels = this.#labels;
    // One sample per rule of every monitor, in configuration order.
    const perRule = (value: (monitor: MonitorView, rule: number) => number) =>
      labels.forEach((l, i) =>
        l.rules.forEach((s, j) => w.sample(s, value(monitors[i].monitor, j)))
      );
    w.family(
      `${P}rule`,
      "info",
      "Each configured rule: its column, severity and definition (comparison type and value, or a signal rule's signal, window, direction, threshold, clear level, for or M of N, keep_firing_for).",
    );
    labels.forEach((l) => l.ruleInfo.forEach((s) => w.sample(s, 1)));
    w.family(`${P}rule_active`, "gauge", "1 while the rule's event is active.");
    perRule((m, j) => m.rules[j].active ? 1 : 0);
    w.family(
      `${P}rule_pending`,
      "gauge",
      "1 while the rule's raise condition holds on the newest sample but its event has not started (its for, M of N or hysteresis not yet met).",
    );
    perRule((m, j) => m.rules[j].pending ? 1 : 0);
    w.family(
      `${P}rule_last_event_peak`,
      "gauge",
      "Peak of the rule's current event, else of its last one: the highest value of what the rule compares for rules that fire high (above, gt, dt_gt, inc_gt), the lowest for rules that fire low (below, lt, dt_lt); NaN before the first event.",
    );
    perRule((m, j) => m.rules[j].peak);
    w.family(
      `${P}rule_activations`,
      "counter",
      "Times the rule became active (events started).",
    );
    perRule((m, j) => m.rules[j].activations);
    w.family(
      `${P}rule_active_seconds`,
      "counter",
      "Time the rule has spent active, in seconds.",
      "seconds",
    );
    perRule((m, j) => m.ruleActiveMs(j) / 1000);
    w.family(
      `${P}rule_last_transition_timestamp_seconds`,
      "gauge",
      "When the rule last started or ended, seconds since the Unix epoch (0: never).",
      "seconds",
    );
    perRule((m, j) => {
      const at = m.ruleChangedAtMs(j);
      return Number.isNaN(at) ? 0 : at / 1000;
    });
  }

  /** The Alertmanager sender's counters; nothing when alerting is off. */
  #alerting(w: ExpositionWriter): void {
    const alerts = this.#alerts;
    if (alerts === undefined) return;
    const counts = this.#alertmanagerLabels.map((_, i) => alerts.stats.read(i));
    const each = (value: (i: number) => number) =>
      this.#alertmanagerLabels.forEach((l, i) => w.sample(l, value(i)));
    w.family(
      `${P}alerts_sent`,
      "counter",
      "Alerts the Alertmanager accepted.",
    );
    each((i) => counts[i].sent);
    w.family(
      `${P}alerts_failed`,
      "counter",
      "Alerts of failed pushes to the Alertmanager, every alert of the push at each try, as Prometheus counts them (a 400 counts the whole push, though Alertmanager keeps the push's valid alerts): refused (4xx, not retried) or failed (5xx, 429, network error, timeout; retried with backoff).",
    );
    each((i) => counts[i].failed);
    w.family(
      `${P}alerts_dropped`,
      "counter",
      "Alerts for the Alertmanager given up before they could be sent: pushed out of its full queue, or still queued in a sender's thread that failed.",
    );
    each((i) => counts[i].dropped);
    w.family(
      `${P}alerts_queue_length`,
      "gauge",
      "Alerts waiting to be pushed to the Alertmanager.",
    );
    each((i) => counts[i].queueLength);
    w.family(
      `${P}alertmanager_last_success_timestamp_seconds`,
      "gauge",
      "When a push to the Alertmanager last succeeded, seconds since the Unix epoch (0: never).",
      "seconds",
    );
    each((i) => counts[i].lastSuccessMs / 1000);
  }
}

/**
 * The labels of a rule's `rule_info` series after `monitor`: its name
 * and column, its definition (`comparison_type` and `comparison_value`
 * for the reference's types; for a signal rule `signal`,
 * `window_seconds` (rate, ratio), `denominator` (ratio), `direction`,
 * `threshold`, `clear`, `for_seconds` or `m_of_n`, and
 * `keep_firing_for_seconds`), then `severity`, and `summary` and
 * `runbook_url` when configured (so a Prometheus alert can template
 * them): at most 15 labels with `monitor`. Values come from the
 * configuration only; u64 thresholds are exact decimal text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ruleInfoLabels } from "./render.ts";
 *
 * assert.deepEqual(
 *   ruleInfoLabels({
 *     name: "ECN storm", signal: "rate", column: 0, windowNs: 1_000_000,
 *     direction: "above", threshold: 1_000_000, clear: 200_000,
 *     forNs: 500_000, keepFiringForNs: 10_000_000, severity: "critical",
 *   }, [{ name: "ecn", dataId: "0x1080000400000000" }]),
 *   [
 *     ["rule", "ECN storm"], ["column", "ecn"], ["signal", "rate"],
 *     ["window_seconds", "0.001"], ["direction", "above"],
 *     ["threshold", "1000000"], ["clear", "200000"], ["for_seconds", "0.0005"],
 *     ["keep_firing_for_seconds", "0.01"], ["severity", "critical"],
 *   ],
 * );
 * ```
 */
export function ruleInfoLabels(
  rule: RuleConfig,
  columns: readonly ColumnConfig[],
): [string, string][] {
  const labels: [string, string][] = [
    ["rule", rule.name],
    ["column", columns[rule.column].name],
  ];
  if (isReferenceRule(rule)) {
    labels.push(
      ["comparison_type", rule.comparisonType],
      ["comparison_value", rule.comparisonValue.toString()],
    );
  } else {
    labels.push(["signal", rule.signal]);
    if (rule.signal === "rate" || rule.signal === "ratio") {
      labels.push(["window_seconds", String(rule.windowNs / 1e9)]);
    }
    if (rule.signal === "ratio" && rule.denominator !== undefined) {
      labels.push(["denominator", columns[rule.denominator].name]);
    }
    labels.push(
      ["direction", rule.direction],
      ["threshold", String(rule.threshold)],
      ["clear", String(rule.clear)],
      rule.mOfN === undefined
        ? ["for_seconds", String(rule.forNs / 1e9)]
        : ["m_of_n", `${rule.mOfN.m} of ${rule.mOfN.n}`],
      ["keep_firing_for_seconds", String(rule.keepFiringForNs / 1e9)],
    );
  }
  labels.push(["severity", rule.severity ?? DEFAULT_SEVERITY]);
  if (rule.summary !== undefined) labels.push(["summary", rule.summary]);
  if (rule.runbookUrl !== undefined) {
    labels.push(["runbook_url", rule.runbookUrl]);
  }
  return labels;
}
