/**
 * A hand-fed agent for metrics tests: real monitors, aggregators and events
 * logs, with samples written by the test at exact times and values.
 *
 * @module
 */

import type { Collector } from "../collectors/collector.ts";
import { PollStats } from "../collectors/poll_stats.ts";
import type { MonitorConfig } from "../config/types.ts";
import { EventsLog } from "../events/log.ts";
import { Monitor } from "../rules/monitor.ts";
import { writeRecord } from "../rules/rules_test_util.ts";
import { AgentMetrics, type ServedMonitor } from "./agent_metrics.ts";
import { WindowAggregator } from "./aggregate.ts";

/** A collector that never runs: the test feeds the monitor itself. */
export class FedCollector implements Collector {
  readonly source = "sim";
  readonly pollStats: PollStats = new PollStats();
  run(): Promise<void> {
    return Promise.resolve();
  }
}

/** One monitor config with columns `rx` (counter) and `lat` (gauge). */
export function nicConfig(eventLog: string): MonitorConfig {
  return {
    name: "nic",
    source: "sim",
    samplePeriodNs: 1_000_000,
    depth: 2,
    columns: [
      { name: "rx", dataId: "0x0000000000000001", kind: "counter" },
      { name: "lat", dataId: "0x0000000000000002", kind: "gauge" },
    ],
    rules: [
      {
        name: 'lat "high"',
        column: 1,
        comparisonType: "gt",
        comparisonValue: 500n,
      },
      {
        name: "rx\\total",
        column: 0,
        comparisonType: "gt",
        comparisonValue: 2_000_000n,
      },
    ],
    eventLog,
    seed: 1,
  };
}

/**
 * {@linkcode nicConfig} with two signal rules after its reference rules:
 * `lat rising` (value of lat above 600 for 10 s, so it waits long) and
 * `rx rate` (rate of rx over 2 ms above 5000/s, clear at 4000/s; severity
 * critical, a summary).
 */
export function mixedConfig(eventLog: string): MonitorConfig {
  const nic = nicConfig(eventLog);
  return {
    ...nic,
    rules: [
      ...nic.rules,
      {
        name: "lat rising",
        signal: "value",
        column: 1,
        windowNs: 0,
        direction: "above",
        threshold: 600n,
        clear: 600n,
        forNs: 10_000_000_000,
        keepFiringForNs: 0,
      },
      {
        name: "rx rate",
        signal: "rate",
        column: 0,
        windowNs: 2_000_000,
        direction: "above",
        threshold: 5000,
        clear: 4000,
        forNs: 0,
        keepFiringForNs: 0,
        severity: "critical",
        summary: "rx moves",
      },
    ],
  };
}

/** A monitor of an agent, fed by hand. */
export interface FedMonitor {
  readonly agentMonitor: ServedMonitor;
  readonly metrics: AgentMetrics;
  /** Commits one sample at `tsNs` with values `rx`, `lat`. */
  feed(tsNs: bigint, rx: bigint, lat: bigint): void;
  close(): Promise<void>;
}

/** Opens a real events log in a temp dir and wires one `nic` monitor. */
export async function fedMonitor(
  windowNs: number,
  config: (eventLog: string) => MonitorConfig = nicConfig,
): Promise<FedMonitor> {
  const dir = await Deno.makeTempDir();
  const m = config(`${dir}/events.log`);
  const log = await EventsLog.open({
    path: m.eventLog,
    version: "test",
    device: "sim",
    depth: m.depth,
    samplePeriodNs: m.samplePeriodNs,
    columns: m.columns,
    rules: m.rules,
  });
  const aggregator = new WindowAggregator({ columns: m.columns, windowNs });
  const monitor = new Monitor(m, log, { observer: aggregator });
  const agentMonitor: ServedMonitor = {
    config: m,
    monitor,
    collector: new FedCollector(),
    log,
    aggregator,
    status: { state: "running" },
  };
  const metrics = new AgentMetrics([agentMonitor], {
    version: "0.1.0",
    startMs: 1_700_000_000_000,
    windowNs,
  });
  return {
    agentMonitor,
    metrics,
    feed(tsNs, rx, lat) {
      writeRecord(monitor.words, monitor.claim(), tsNs, [rx, lat]);
      monitor.commit();
    },
    async close() {
      await log.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
