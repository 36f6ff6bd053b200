/**
 * `/api/v1/snapshot`: the same aggregates as `/metrics`, as one JSON
 * document for scripts and dashboards that do not speak Prometheus.
 *
 * @module
 */

import type { AgentMetrics } from "./agent_metrics.ts";
import { configuredDevice } from "../config/device.ts";

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

/** One rule's state. */
export interface RuleSnapshot {
  readonly name: string;
  readonly column: string;
  readonly comparison_type: string;
  /** Exact u64 threshold, as decimal text. */
  readonly comparison_value: string;
  readonly active: boolean;
  readonly activations: number;
  readonly active_seconds: number;
  /** ISO-8601 time of the last start or end; null if it never started. */
  readonly last_transition: string | null;
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
  readonly monitors: readonly MonitorSnapshot[];
}

const reading = (x: number): Reading => Number.isFinite(x) ? x : null;
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
        return {
          name: r.name,
          column: config.columns[r.column].name,
          comparison_type: r.comparisonType,
          comparison_value: r.comparisonValue.toString(),
          active: monitor.rules[j].active,
          activations: monitor.rules[j].activations,
          active_seconds: monitor.ruleActiveMs(j) / 1000,
          last_transition: Number.isNaN(changed) ? null : iso(changed),
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
    monitors,
  };
}
