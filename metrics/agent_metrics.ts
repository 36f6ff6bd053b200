/**
 * What the metrics endpoint knows about a running agent: its monitors (with
 * their aggregators, logs and sources), when each last delivered data, and
 * whether the agent is ready. Renderers read it; nothing here touches a
 * ring or a device.
 *
 * @module
 */

import type { Collector, SourceStatus } from "../collectors/collector.ts";
import type { NicGpus } from "../collectors/pcie_affinity.ts";
import type { MonitorConfig } from "../config/types.ts";
import type { EventsLog } from "../events/log.ts";
import type { Monitor } from "../rules/monitor.ts";
import type { MonitorRule } from "../rules/monitor_rule.ts";
import type { WindowAggregator } from "./aggregate.ts";
import { type DataFreshness, Freshness } from "./freshness.ts";
import { formatDuration } from "../base/units.ts";

/**
 * What the endpoint reads of a running monitor: a live
 * {@linkcode Monitor} is one, and so is the endpoint thread's view of what
 * the sampling thread published.
 */
export type MonitorView =
  & Pick<
    Monitor,
    | "name"
    | "samples"
    | "droppedSamples"
    | "blindPeriods"
    | "events"
    | "activeRules"
    | "ruleChangedAtMs"
  >
  & {
    /** How full the ring is. */
    readonly ring: { readonly count: number; readonly capacity: number };
    /** Each rule's state, in configuration order. */
    readonly rules: readonly Pick<
      MonitorRule,
      "active" | "activations" | "pending" | "peak"
    >[];
    /** Milliseconds rule `i` has been active in all, up to now. */
    ruleActiveMs(i: number): number;
  };

/**
 * What the endpoint reads of one monitor: its configuration, rule states,
 * source health, log statistics and windowed aggregates. A running
 * agent's monitors are these; the endpoint never holds the agent itself.
 */
export interface ServedMonitor {
  /**
   * The monitor's configuration: its source and device (labels), column
   * names and kinds, rules, and sample period (which sets when its data
   * counts as stale).
   */
  readonly config: MonitorConfig;
  /** The running monitor: sample and event counts, each rule's state. */
  readonly monitor: MonitorView;
  /**
   * The source's poll-loop health, its read times and the devices it
   * found, if it has them.
   */
  readonly collector: Pick<Collector, "pollStats" | "readStats" | "devices">;
  /** The events log's path and writer counters. */
  readonly log: Pick<EventsLog, "path" | "stats">;
  /** Windowed aggregates of every sample: the last completed window. */
  readonly aggregator: Pick<WindowAggregator, "completed">;
  /**
   * Where the source's run stands; read live, so the agent updates this
   * object in place rather than replacing it.
   */
  readonly status: SourceStatus;
  /**
   * For a NIC monitor on a PCIe function (the kernel and DOCA sources),
   * the GPUs behind it, worked out once at start
   * (collectors/nic_gpus.ts): the closest with their `nvidia-smi topo`
   * class, or why none. Absent for any other monitor. What alerts, the
   * events API and the event page name as "the GPUs behind this NIC".
   */
  readonly nicGpus?: NicGpus;
  /**
   * For a GPU monitor, the shared copy of its ring (rules/shared_ring.ts):
   * its recent readings, which a NIC event's page charts from the
   * endpoint's thread. Absent for any other monitor.
   */
  readonly sharedRing?: SharedArrayBuffer;
}

/** The agent-wide facts the endpoint reports. */
export interface AgentInfo {
  /** Agent version, as `--version` prints it (e.g. `0.1.0`). */
  readonly version: string;
  /** Host time the agent started, Unix ms. */
  readonly startMs: number;
  /** Aggregation window, ns. */
  readonly windowNs: number;
  /**
   * The topology labels (config/topology.ts), sorted by name: the labels
   * of `dpu_traceback_topology_info`; none when absent.
   */
  readonly topology?: Readonly<Record<string, string>>;
}

/** Whether the agent is ready, and if not, why (one line per monitor). */
export interface Readiness {
  /** True when every monitor's source is running and its data is fresh. */
  readonly ready: boolean;
  /**
   * One line per monitor that is not up, e.g. `nic: no data for 12.100 s`;
   * empty when ready.
   */
  readonly problems: readonly string[];
}

/**
 * Data older than this many sample periods means the source is stale,
 * but never less than {@linkcode MIN_STALE_MS}: sources are drained every
 * few ms and freshness is checked every 100 ms.
 */
export const STALE_PERIODS = 10;
/** The least data age that counts as stale, ms. */
export const MIN_STALE_MS = 1000;

/**
 * The endpoint's view of one agent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentMetrics, type ServedMonitor } from "./agent_metrics.ts";
 * import { WindowAggregator } from "./aggregate.ts";
 * import { Monitor } from "../rules/monitor.ts";
 * import type { MonitorConfig } from "../config/types.ts";
 *
 * const config: MonitorConfig = {
 *   name: "nic",
 *   source: "sim",
 *   samplePeriodNs: 1_000_000, // 1 ms
 *   depth: 2,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" }],
 *   rules: [],
 *   eventLog: "events.log",
 *   seed: 1,
 * };
 * const aggregator = new WindowAggregator({ columns: config.columns });
 * const noLog = { columnNames() {}, row() {}, eventStart() {}, eventEnd() {}, gap() {} };
 * const monitor = new Monitor(config, noLog, { observer: aggregator });
 * const nic: ServedMonitor = {
 *   config,
 *   monitor,
 *   aggregator,
 *   collector: {},
 *   log: {
 *     path: "events.log",
 *     stats: { bytesWritten: 0, writeErrors: 0, droppedRows: 0, pendingBytes: 0 },
 *   },
 *   status: { state: "running" },
 * };
 * const metrics = new AgentMetrics([nic], { version: "0.1.0", startMs: 0, windowNs: 10e9 });
 *
 * // Times are host Unix ms; the agent started at 0.
 * assert.deepEqual(metrics.readiness(500), {
 *   ready: false,
 *   problems: ["nic: no data yet after 500 ms"],
 * });
 * monitor.claim();
 * monitor.commit(); // one sample
 * metrics.tick(600); // what start() does every 100 ms
 * assert.deepEqual(metrics.readiness(700), { ready: true, problems: [] });
 * // Stale after 10 periods, but never sooner than 1 s.
 * assert.deepEqual(metrics.staleAfterMs, [1000]);
 * assert.deepEqual(metrics.readiness(1700).problems, ["nic: no data for 1.100 s"]);
 * ```
 */
export class AgentMetrics {
  /** The monitors, in configuration order. */
  readonly monitors: readonly ServedMonitor[];
  /** Agent-wide facts. */
  readonly info: AgentInfo;
  /** When each monitor last delivered a sample. */
  readonly freshness: DataFreshness;
  readonly #ticking: Freshness | undefined;
  /** Per monitor: data older than this (ms) is stale. */
  readonly staleAfterMs: readonly number[];

  /**
   * Takes the monitors as served (in configuration order) and the
   * agent-wide facts. Freshness comes from `freshness` when given (the
   * sampling thread measures it); otherwise it is tracked here from
   * {@linkcode start} on.
   */
  constructor(
    monitors: readonly ServedMonitor[],
    info: AgentInfo,
    freshness?: DataFreshness,
  ) {
    this.monitors = monitors;
    this.info = info;
    this.#ticking = freshness === undefined
      ? new Freshness(monitors.map((m) => m.monitor), info.startMs)
      : undefined;
    this.freshness = freshness ?? this.#ticking!;
    this.staleAfterMs = monitors.map((m) =>
      Math.max(MIN_STALE_MS, STALE_PERIODS * m.config.samplePeriodNs / 1e6)
    );
  }

  /**
   * Starts tracking freshness, unless it was given; stop it when the agent
   * stops.
   */
  start(): { stop(): void } {
    return this.#ticking?.start() ?? { stop() {} };
  }

  /**
   * Notes, at host time `nowMs`, which monitors have new samples: what
   * {@linkcode start} does every 100 ms. Does nothing when freshness was
   * given.
   */
  tick(nowMs: number): void {
    this.#ticking?.tick(nowMs);
  }

  /** Whether monitor `i`'s source is running and its data is fresh. */
  isUp(i: number, nowMs: number): boolean {
    return this.problemOf(i, nowMs) === undefined;
  }

  /** Why monitor `i` is not up, or undefined when it is. */
  problemOf(i: number, nowMs: number): string | undefined {
    const m = this.monitors[i];
    const name = m.monitor.name;
    switch (m.status.state) {
      case "idle":
        return `${name}: not started`;
      case "ended":
        return `${name}: source ended`;
      case "failed":
        return `${name}: source failed: ${m.status.error ?? "unknown error"}`;
      case "running":
        break;
    }
    const age = this.freshness.ageMs(i, nowMs);
    if (!this.freshness.hasData(i)) {
      return `${name}: no data yet after ${formatDuration(age / 1000)}`;
    }
    if (age > this.staleAfterMs[i]) {
      return `${name}: no data for ${formatDuration(age / 1000)}`;
    }
    return undefined;
  }

  /** Ready when every configured source is up. */
  readiness(nowMs: number): Readiness {
    const problems: string[] = [];
    for (let i = 0; i < this.monitors.length; i++) {
      const problem = this.problemOf(i, nowMs);
      if (problem !== undefined) problems.push(problem);
    }
    return { ready: problems.length === 0, problems };
  }
}
