/**
 * `/api/v1/snapshot`: the same aggregates as `/metrics`, as one JSON
 * document for scripts and dashboards that do not speak Prometheus.
 *
 * @module
 */

import type { AgentMetrics } from "../metrics/agent_metrics.ts";
import { configuredDevice } from "../config/device.ts";
import {
  type ColumnConfig,
  DEFAULT_SEVERITY,
  isReferenceRule,
  type RuleConfig,
} from "../config/types.ts";

/** A number, or null where it does not apply or is not known (NaN). */
export type Reading = number | null;

/** One column of the last completed window. */
export type ColumnSnapshot =
  | {
    readonly name: string;
    readonly kind: "counter";
    /** Increase per second over the window. */
    readonly rate: Reading;
    readonly rate_min: Reading;
    readonly rate_max: Reading;
    readonly rate_mean: Reading;
    /** Increase over the window (float: exact below 2^53). */
    readonly increase: Reading;
    readonly resets: Reading;
    /** The device counter's value at the window's end. */
    readonly last: Reading;
  }
  | {
    readonly name: string;
    readonly kind: "gauge";
    readonly last: Reading;
    readonly min: Reading;
    readonly max: Reading;
    readonly mean: Reading;
  };

/**
 * One rule: its definition (a reference rule's comparison, or a signal
 * rule's signal and condition, in the same terms as `rule_info`'s labels)
 * and its state.
 */
export interface RuleSnapshot {
  readonly name: string;
  /** The column the rule reads (for a ratio, the numerator). */
  readonly column: string;
  /** As configured; `warning` when the configuration says nothing. */
  readonly severity: string;
  /** The configured one-line summary; absent when none is. */
  readonly summary?: string;
  /** The configured runbook URL; absent when none is. */
  readonly runbook_url?: string;
  /** Reference rules only: the short type (`dt_gt`). */
  readonly comparison_type?: string;
  /** Reference rules only: the exact u64 threshold, as decimal text. */
  readonly comparison_value?: string;
  /** Signal rules only: `value`, `increase`, `rate` or `ratio`; so are the fields to `keep_firing_for_seconds`. */
  readonly signal?: string;
  /** The window of `rate` and `ratio`, seconds; null for the others. */
  readonly window_seconds?: number | null;
  /** A ratio's denominator column; null for the others. */
  readonly denominator?: string | null;
  /** `above` or `below`. */
  readonly direction?: string;
  /**
   * The threshold and clear level as text: exact u64 decimal for `value`
   * and `increase`, JavaScript's shortest round-trip form for `rate` (per
   * second) and `ratio`.
   */
  readonly threshold?: string;
  readonly clear?: string;
  /** `for`, seconds; null when the rule starts on M of N. */
  readonly for_seconds?: number | null;
  /** M of N; null when the rule starts on `for`. */
  readonly m_of_n?: { readonly m: number; readonly n: number } | null;
  readonly keep_firing_for_seconds?: number;
  readonly active: boolean;
  /** The raise condition holds on the newest sample but the event has not started. */
  readonly pending: boolean;
  readonly activations: number;
  readonly active_seconds: number;
  /** ISO-8601 time of the last start or end; null if it never started. */
  readonly last_transition: string | null;
  /**
   * The peak of the current event, else of the last one (highest for
   * rules that fire high, lowest for rules that fire low); null before
   * the first event.
   */
  readonly peak: Reading;
}

/** One monitor. */
export interface MonitorSnapshot {
  readonly name: string;
  readonly source: string;
  readonly device: string | null;
  readonly up: boolean;
  /** Why the source is not up; null when it is. */
  readonly problem: string | null;
  readonly data_age_seconds: number;
  readonly samples: number;
  readonly lost_samples: number;
  readonly events: number;
  readonly active_rules: number;
  readonly ring: { readonly samples: number; readonly capacity: number };
  readonly poll: {
    readonly polls: number;
    readonly lateness_max_seconds: number;
    readonly lateness_mean_seconds: Reading;
    readonly errors: Readonly<Record<string, number>>;
    readonly buffer_fill: number;
    readonly buffer_fill_max: number;
    /** Samples taken a period or more late (not lost). */
    readonly late_samples: number;
  } | null;
  /** Read times, for sources that time their reads (the kernel source). */
  readonly read: {
    readonly reads: number;
    readonly last_seconds: number;
    readonly max_seconds: number;
    readonly mean_seconds: Reading;
    readonly slow_reads: number;
  } | null;
  readonly events_log: {
    readonly path: string;
    readonly written_bytes: number;
    readonly write_errors: number;
    readonly dropped_rows: number;
    readonly pending_bytes: number;
  };
  /** The last completed window; null before the first completes. */
  readonly window: {
    readonly sequence: number;
    readonly start: string;
    readonly end: string;
    readonly samples: number;
    readonly span_seconds: number;
    readonly columns: readonly ColumnSnapshot[];
  } | null;
  readonly rules: readonly RuleSnapshot[];
}

/** The whole document. */
export interface AgentSnapshot {
  readonly agent: {
    readonly version: string;
    readonly deno: string;
    readonly started: string;
    readonly ready: boolean;
    readonly window_seconds: number;
  };
  /**
   * The topology labels, by name (those of `dpu_traceback_topology_info`);
   * `{}` when none are configured.
   */
  readonly topology: Readonly<Record<string, string>>;
  readonly monitors: readonly MonitorSnapshot[];
}

const reading = (x: number): Reading => Number.isFinite(x) ? x : null;

/** A rule's definition fields of {@linkcode RuleSnapshot}. */
function definition(
  rule: RuleConfig,
  columns: readonly ColumnConfig[],
): Partial<RuleSnapshot> {
  if (isReferenceRule(rule)) {
    return {
      comparison_type: rule.comparisonType,
      comparison_value: rule.comparisonValue.toString(),
    };
  }
  const windowed = rule.signal === "rate" || rule.signal === "ratio";
  return {
    signal: rule.signal,
    window_seconds: windowed ? rule.windowNs / 1e9 : null,
    denominator: rule.signal === "ratio" && rule.denominator !== undefined
      ? columns[rule.denominator].name
      : null,
    direction: rule.direction,
    threshold: String(rule.threshold),
    clear: String(rule.clear),
    for_seconds: rule.mOfN === undefined ? rule.forNs / 1e9 : null,
    m_of_n: rule.mOfN === undefined ? null : { m: rule.mOfN.m, n: rule.mOfN.n },
    keep_firing_for_seconds: rule.keepFiringForNs / 1e9,
  };
}
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Builds the snapshot document as of host time `nowMs`.
 *
 * @example
 * ```ts ignore
 * const body = JSON.stringify(buildSnapshot(metrics, Date.now()));
 * ```
 */
export function buildSnapshot(
  metrics: AgentMetrics,
  nowMs: number,
): AgentSnapshot {
  const monitors = metrics.monitors.map((m, i): MonitorSnapshot => {
    const { config, monitor, collector, log } = m;
    const stats = collector.pollStats;
    const reads = collector.readStats;
    const logStats = log.stats;
    const w = m.aggregator.completed;
    const problem = metrics.problemOf(i, nowMs);
    return {
      name: monitor.name,
      source: config.source,
      device: configuredDevice(config) ?? null,
      up: problem === undefined,
      problem: problem ?? null,
      data_age_seconds: metrics.freshness.ageMs(i, nowMs) / 1000,
      samples: monitor.samples,
      lost_samples: monitor.droppedSamples,
      events: monitor.events,
      active_rules: monitor.activeRules,
      ring: { samples: monitor.ring.count, capacity: monitor.ring.capacity },
      poll: stats === undefined ? null : {
        polls: stats.polls,
        lateness_max_seconds: stats.latenessMaxS,
        lateness_mean_seconds: stats.polls > 0
          ? stats.latenessSumS / stats.polls
          : null,
        errors: Object.fromEntries(stats.errors),
        buffer_fill: stats.bufferFill,
        buffer_fill_max: stats.bufferFillMax,
        late_samples: stats.lateSamples,
      },
      read: reads === undefined ? null : {
        reads: reads.reads,
        last_seconds: reads.readLastS,
        max_seconds: reads.readMaxS,
        mean_seconds: reads.reads > 0 ? reads.readSumS / reads.reads : null,
        slow_reads: reads.slowReads,
      },
      events_log: {
        path: log.path,
        written_bytes: logStats.bytesWritten,
        write_errors: logStats.writeErrors,
        dropped_rows: logStats.droppedRows,
        pending_bytes: logStats.pendingBytes,
      },
      window: w.sequence === 0 ? null : {
        sequence: w.sequence,
        start: iso(w.startNs / 1e6),
        end: iso(w.endNs / 1e6),
        samples: w.samples,
        span_seconds: w.spanNs / 1e9,
        columns: config.columns.map((c, k): ColumnSnapshot =>
          c.kind === "counter"
            ? {
              name: c.name,
              kind: "counter",
              rate: reading(w.rate[k]),
              rate_min: reading(w.rateMin[k]),
              rate_max: reading(w.rateMax[k]),
              rate_mean: reading(w.rateMean[k]),
              increase: reading(w.increase[k]),
              resets: reading(w.resetsTotal[k]),
              last: reading(w.last[k]),
            }
            : {
              name: c.name,
              kind: "gauge",
              last: reading(w.last[k]),
              min: reading(w.min[k]),
              max: reading(w.max[k]),
              mean: reading(w.mean[k]),
            }
        ),
      },
      rules: config.rules.map((r, j): RuleSnapshot => {
        const changed = monitor.ruleChangedAtMs(j);
        const rule = monitor.rules[j];
        return {
          name: r.name,
          column: config.columns[r.column].name,
          severity: r.severity ?? DEFAULT_SEVERITY,
          ...(r.summary === undefined ? {} : { summary: r.summary }),
          ...(r.runbookUrl === undefined ? {} : { runbook_url: r.runbookUrl }),
          ...definition(r, config.columns),
          active: rule.active,
          pending: rule.pending,
          activations: rule.activations,
          active_seconds: monitor.ruleActiveMs(j) / 1000,
          last_transition: Number.isNaN(changed) ? null : iso(changed),
          peak: reading(rule.peak),
        };
      }),
    };
  });
  return {
    agent: {
      version: metrics.info.version,
      deno: Deno.version.deno,
      started: iso(metrics.info.startMs),
      ready: monitors.every((m) => m.up),
      window_seconds: metrics.info.windowNs / 1e9,
    },
    topology: metrics.info.topology ?? {},
    monitors,
  };
}
