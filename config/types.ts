/**
 * The validated, normalized shape of an agent configuration. Both input
 * forms (the reference app's JSON and our YAML/JSON with several monitors)
 * load into this one shape; nothing downstream knows which form it came from.
 *
 * @module
 */

/** The five rule types, in their short spelling. */
export type ComparisonType = "gt" | "lt" | "dt_gt" | "dt_lt" | "inc_gt";

/** Where a monitor's samples come from. */
export type SourceKind = "doca" | "sim" | "replay" | "nvml" | "kernel";

/**
 * Whether the agent adds a GPU monitor by itself: `auto` adds one (every
 * reading of every GPU NVML finds) when a monitor reads a NIC (source doca)
 * and no monitor reads NVML; `off` never does.
 */
export type GpuMode = "auto" | "off";

/**
 * How the metrics endpoint aggregates a column: a `counter` only grows
 * (modulo 2^64) and is reported as rates; a `gauge` is a level (a latency,
 * a temperature), reported as min/max/mean. Rules do not care.
 */
export type ColumnKind = "counter" | "gauge";

/** One sampled value: its operator-facing name and where the source reads it. */
export interface ColumnConfig {
  /** Column name as written in events.log and replay CSV headers. */
  readonly name: string;
  /**
   * What the source reads, as events.log's header shows it: for diag
   * sources (doca, and sim and replay, which stand in for it) the 64-bit
   * data ID, `0x` followed by 16 lowercase hex digits; for NVML, `nvml`
   * and the GPU column (`nvml gpu0.temperature`).
   */
  readonly dataId: string;
}

/** A monitor's column: what the source reads and how metrics treat it. */
export interface MonitorColumn extends ColumnConfig {
  /** Counter unless the config says gauge. */
  readonly kind: ColumnKind;
}

/**
 * What a rule's event says about itself, on alerts and on the metrics
 * endpoint. Loaded configurations always carry a severity; a rule built in
 * code without one reads as {@linkcode DEFAULT_SEVERITY}.
 */
export interface RuleLabels {
  /**
   * How urgent the rule's events are: a lowercase token (`critical`,
   * `warning`, `info` or a site's own) that alert routing matches on.
   */
  readonly severity?: string;
  /** One line an operator reads first when the rule fires. */
  readonly summary?: string;
  /**
   * The rule's runbook, an http(s) URL: the `runbook_url` annotation of
   * its pushed alerts and a label of its `rule_info` series.
   */
  readonly runbookUrl?: string;
}

/** The severity of a rule that names none. */
export const DEFAULT_SEVERITY = "warning";

/** One reference-application rule (one of the five types) over one column. */
export interface ReferenceRuleConfig extends RuleLabels {
  /**
   * Operator-facing name, unique within its monitor: events.log markers
   * (`Rule: "..."`) and the `rule` label of metrics carry it, so two rules
   * of one name could not be told apart.
   */
  readonly name: string;
  /** Index into {@linkcode MonitorConfig.columns} (0-based, timestamp excluded). */
  readonly column: number;
  /**
   * What the rule tests each sample: the value above (`gt`) or below
   * (`lt`) {@linkcode comparisonValue} for `depth` samples in a row; its
   * rise over `depth` samples above (`dt_gt`) or below (`dt_lt`) it; or a
   * rise of at least it since the last match (`inc_gt`).
   */
  readonly comparisonType: ComparisonType;
  /** Exact unsigned 64-bit threshold, 0 <= value < 2^64. */
  readonly comparisonValue: bigint;
}

/**
 * What a signal rule looks at each sample (docs/spec/signal-rules.md §1): the
 * column's `value`, its `increase` since the previous sample, its `rate`
 * per second over a window, or the `ratio` of two columns' increases over
 * a window.
 */
export type SignalKind = "value" | "increase" | "rate" | "ratio";

/** Whether a signal rule is raised by its signal going above or below the threshold. */
export type Direction = "above" | "below";

/**
 * A rule in the operator's terms (docs/spec/signal-rules.md): a signal above or
 * below a threshold, with an optional clear level, `for` or M of N to
 * start, and `keep_firing_for` to end.
 */
export interface SignalRuleConfig extends RuleLabels {
  /** Operator-facing name, unique within its monitor, as for reference rules. */
  readonly name: string;
  /** What is computed from the column(s) each sample. */
  readonly signal: SignalKind;
  /** The column the signal reads; for `ratio`, the numerator. */
  readonly column: number;
  /** For `ratio` only: the column whose increase divides. */
  readonly denominator?: number;
  /** For `rate` and `ratio`: the window W in nanoseconds (> 0); 0 otherwise. */
  readonly windowNs: number;
  /** `above`: raised when signal > threshold; `below`: when signal < threshold. */
  readonly direction: Direction;
  /**
   * T: an exact u64 (`bigint`) for `value` and `increase`, a float64
   * (`number`, per second for `rate`) for `rate` and `ratio`.
   */
  readonly threshold: bigint | number;
  /**
   * Tc, the clear level, of the same type as {@linkcode threshold}: at or
   * below it (`above`) or at or above it (`below`) the rule may end.
   * Equal to the threshold when the configuration gives none.
   */
  readonly clear: bigint | number;
  /** F: how long the raise condition must hold to start, ns (0: at once). */
  readonly forNs: number;
  /**
   * Instead of `for`: start when the raise condition held on at least `m`
   * of the last `n` samples (1 <= m <= n <= 2 x depth).
   */
  readonly mOfN?: { readonly m: number; readonly n: number };
  /** K: how long the clear condition must hold to end, ns (0: at once). */
  readonly keepFiringForNs: number;
}

/** Either kind of rule; `"signal" in rule` tells them apart. */
export type RuleConfig = ReferenceRuleConfig | SignalRuleConfig;

/**
 * Whether `rule` is one of the reference application's five types.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { isReferenceRule } from "./types.ts";
 *
 * assert.equal(isReferenceRule({ name: "r", column: 0, comparisonType: "gt", comparisonValue: 5n }), true);
 * ```
 */
export function isReferenceRule(rule: RuleConfig): rule is ReferenceRuleConfig {
  return "comparisonType" in rule;
}

/** One monitor: a source, its ring, its rules and its events log. */
export interface MonitorConfig {
  /**
   * Unique monitor name (1 to 64 letters, digits, `_`, `.`, `-`): the
   * `monitor` label of its metrics and part of derived file names.
   */
  readonly name: string;
  /** Where samples come from: the DOCA diag device, the simulator, a CSV replay or NVML. */
  readonly source: SourceKind;
  /** Device for hardware sources (PCIe address, IB device or interface name). */
  readonly device?: string;
  /** Requested sample period in nanoseconds (>= 1). */
  readonly samplePeriodNs: number;
  /** History depth in samples (>= 1); the ring holds twice this many. */
  readonly depth: number;
  /**
   * The sampled values, in record and events.log column order (the
   * timestamp column is implicit and not listed).
   */
  readonly columns: readonly MonitorColumn[];
  /** Rules evaluated on every sample, in this order; may be empty. */
  readonly rules: readonly RuleConfig[];
  /** Path of this monitor's events log. */
  readonly eventLog: string;
  /** CSV capture for the replay source. */
  readonly input?: string;
  /** Seed of the simulator's pseudo-random generator. */
  readonly seed: number;
}

/** A whole agent configuration. */
export interface AgentConfig {
  /** File the configuration was loaded from (for messages). */
  readonly file: string;
  /** `reference` for the reference app's JSON, `agent` for our form. */
  readonly form: "reference" | "agent";
  /** Metrics endpoint address, `HOST:PORT`, or `off` for none. */
  readonly listen: string;
  /** Rotate each events log at this size, bytes (0: never). */
  readonly eventLogMaxBytes: number;
  /** Rotated events logs kept per monitor (`PATH.1` .. `PATH.<keep>`). */
  readonly eventLogKeep: number;
  /** Length of the metrics aggregation window, in nanoseconds. */
  readonly metricsWindowNs: number;
  /**
   * Exporter-toolkit web configuration (TLS, basic auth) for the metrics
   * endpoint; plain HTTP without it.
   */
  readonly webConfigFile?: string;
  /** Take the diag context over from another owner. */
  readonly forceOwnership: boolean;
  /** Directory to load the DOCA libraries from, before the standard ones. */
  readonly docaLibDir?: string;
  /** Directory to load libnvidia-ml.so.1 from, before the standard ones. */
  readonly nvmlLibDir?: string;
  /** Whether a GPU monitor is added when none is configured. */
  readonly gpu: GpuMode;
  /**
   * The monitors, in configuration order: at least one (a reference-form
   * file yields one, named `nic`). The GPU monitor that `gpu: auto`
   * stands for is not listed until `withAutoGpuMonitor` adds it.
   */
  readonly monitors: readonly MonitorConfig[];
  /**
   * The `instance` label of this agent's alerts and topology series: the
   * configured value, else the host name (filled in when the agent starts).
   */
  readonly instance?: string;
  /**
   * Topology labels (`rack`, `rail`, `plane`, `switch`, `switch_port`, a
   * site's own): on every alert and on the one `dpu_traceback_topology_info`
   * series, never on other series. Those of {@linkcode labelsFile} are
   * merged in when the agent starts; these win.
   */
  readonly labels: Readonly<Record<string, string>>;
  /** A DOCA Platform Framework labels file (`level_labels.ini` style). */
  readonly labelsFile?: string;
  /** Where and how events are pushed as alerts; none when absent. */
  readonly alerting?: AlertingConfig;
}

/** One Alertmanager the agent pushes alerts to (API v2). */
export interface AlertmanagerConfig {
  /**
   * Base URL (`https://am-1.example:9093`, or with a path prefix such as
   * `http://host/alertmanager`); alerts go to `<url>/api/v2/alerts`.
   */
  readonly url: string;
  /** How long one push may take, ms. */
  readonly timeoutMs: number;
  /** TLS settings for an `https` URL. */
  readonly tls?: {
    /** CA bundle (PEM) to verify the server with, instead of the system's. */
    readonly caFile?: string;
    /** Client certificate (PEM), for mutual TLS; with keyFile. */
    readonly certFile?: string;
    /** Client key (PEM); with certFile. */
    readonly keyFile?: string;
  };
  /** HTTP basic auth; the password is read from a file. */
  readonly basicAuth?: {
    readonly username: string;
    readonly passwordFile: string;
  };
  /** A bearer token read from a file (exclusive with basicAuth). */
  readonly bearerTokenFile?: string;
}

/** How events become alerts. */
export interface AlertingConfig {
  /** Every Alertmanager gets every alert (an HA pair gets both). */
  readonly alertmanagers: readonly AlertmanagerConfig[];
  /**
   * How often a firing alert is sent again, ms (default 30 s); its
   * `endsAt` is 4 times this ahead, so an agent that goes away resolves.
   */
  readonly resendIntervalMs: number;
  /**
   * How long an alert stays firing after its rule's last event ended, ms
   * (default 5 min): a burst of milliseconds still reaches a person, and a
   * flapping rule gives one alert counting its events.
   */
  readonly holdMs: number;
}

/** Defaults shared by both configuration forms. */
export const DEFAULTS = {
  samplePeriodNs: 100_000,
  depth: 1024,
  eventLog: "events.log",
  listen: "0.0.0.0:9477",
  metricsWindowNs: 10_000_000_000,
  // A day of a busy monitor's events; 5 files in all stay well within a
  // DPU's flash, and logrotate (if installed) usually acts first.
  eventLogMaxBytes: 256 * 1024 * 1024,
  eventLogKeep: 4,
  seed: 1,
  gpu: "auto",
  /** A GPU monitor's period: NVML refreshes most readings about once a second. */
  gpuSamplePeriodNs: 1_000_000_000,
  /** A GPU monitor's depth: a minute of history at the default period. */
  gpuDepth: 60,
  /** A kernel monitor's period: a few ms is what the kernel's counters hold up to. */
  kernelSamplePeriodNs: 10_000_000,
  /** A kernel monitor's depth: a second of history at the default period. */
  kernelDepth: 100,
  /** Alerts: resent this often while firing (Prometheus's own default is 1 min; faster here). */
  alertResendIntervalMs: 30_000,
  /** Alerts: kept firing this long after the rule's last event ended. */
  alertHoldMs: 300_000,
  /** Alerts: one push's timeout. */
  alertTimeoutMs: 10_000,
} as const;
