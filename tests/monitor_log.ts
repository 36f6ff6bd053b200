/**
 * A monitor's events.log as the agent writes it, from a plan of events,
 * through the real writer (events/log.ts): for each run of overlapping
 * events the column-name row and the 2 x depth samples of history, then a
 * row per sample while any rule is active, the start and end markers
 * after their samples' rows, restarts (a fresh header block) and the
 * writer's own size rotation. For the event lookup's tests and benchmark,
 * which need logs of tens of megabytes with events of known times.
 *
 * @module
 */

import { EventsLog } from "../events/log.ts";
import type { ColumnConfig, RuleConfig } from "../config/types.ts";

/** One planned event. */
export interface PlannedEvent {
  /** Index of the rule in {@linkcode MonitorLogPlan.rules}. */
  readonly rule: number;
  /** The start sample's time, ns since the epoch (a multiple of the period after {@linkcode MonitorLogPlan.t0Ns}). */
  readonly startNs: bigint;
  /** Samples after the start sample, the end sample included. */
  readonly samples: number;
  /** No end marker: the agent restarts at its last sample (`restart`) or the log ends (`open`). */
  readonly cut?: "restart" | "open";
  /** The agent starts afresh (a new header block) before this event's run. */
  readonly restartBefore?: boolean;
}

/** What to write. */
export interface MonitorLogPlan {
  readonly path: string;
  /** Monitor name in the header. */
  readonly monitor: string;
  readonly depth: number;
  readonly periodNs: bigint;
  /** Rule names; each watches column 0 (a `gt` rule). */
  readonly rules: readonly string[];
  /** Value columns besides the timestamp (default 3). */
  readonly columns?: number;
  /** In start order. */
  readonly events: readonly PlannedEvent[];
  /** The writer's size rotation (`event_log_max_bytes`); 0: none. */
  readonly maxBytes?: number;
  readonly keep?: number;
}

/** Column 0's value at a sample: a slow ramp, with a spike on every 7919th sample. */
export function valueAt(sample: bigint): bigint {
  return 1000n + (sample % 1000n) + (sample % 7919n === 0n ? 1_000_000n : 0n);
}

/** Writes the plan's log; resolves once the writer has closed it. */
export async function writeMonitorLog(plan: MonitorLogPlan): Promise<void> {
  const n = plan.columns ?? 3;
  const columns: ColumnConfig[] = Array.from({ length: n }, (_, i) => ({
    name: `c${i}`,
    dataId: `0x10200001000000${i.toString(16).padStart(2, "0")}`,
  }));
  const rules: RuleConfig[] = plan.rules.map((name) => ({
    name,
    column: 0,
    comparisonType: "gt",
    comparisonValue: 1500n,
  }));
  const open = () =>
    EventsLog.open({
      path: plan.path,
      version: "dpu-traceback test",
      device: "03:00.0",
      name: plan.monitor,
      depth: plan.depth,
      samplePeriodNs: Number(plan.periodNs),
      columns,
      rules,
      maxBytes: plan.maxBytes,
      keep: plan.keep,
      flushIntervalMs: 60_000,
    });
  let log = await open();
  const words = new Uint32Array(2 * (n + 1));
  const put = (k: number, v: bigint) => {
    words[2 * k] = Number(v & 0xffffffffn);
    words[2 * k + 1] = Number(v >> 32n);
  };
  let written = 0;
  const row = async (t: bigint) => {
    const sample = t / plan.periodNs;
    put(0, t);
    put(1, valueAt(sample));
    for (let c = 2; c <= n; c++) put(c, sample * BigInt(c));
    log.row(words, 0);
    if (++written % 4096 === 0) await log.ready();
  };
  const ms = (t: bigint) => Number(t / 1_000_000n);
  const events = plan.events;
  const history = BigInt(2 * plan.depth - 1) * plan.periodNs;
  for (let k = 0; k < events.length;) {
    // A run: events that overlap the first (or start on its samples).
    if (events[k].restartBefore) {
      await log.close();
      log = await open();
    }
    let end = events[k].startNs + BigInt(events[k].samples) * plan.periodNs;
    let last = k + 1;
    while (last < events.length && events[last].startNs <= end) {
      const e = events[last];
      const e2 = e.startNs + BigInt(e.samples) * plan.periodNs;
      if (e2 > end) end = e2;
      last++;
    }
    const run = events.slice(k, last);
    const start = run[0].startNs;
    log.columnNames();
    for (let t = start - history; t <= start; t += plan.periodNs) await row(t);
    let cut: "restart" | "open" | undefined;
    for (let t = start; t <= end; t += plan.periodNs) {
      if (t > start) await row(t);
      for (const e of run) {
        const eEnd = e.startNs + BigInt(e.samples) * plan.periodNs;
        if (e.startNs === t) log.eventStart(e.rule, ms(t));
        if (eEnd === t) {
          if (e.cut === undefined) {
            log.eventEnd(e.rule, ms(t), Number(valueAt(t / plan.periodNs)));
          } else cut = e.cut;
        }
      }
    }
    if (cut === "restart") {
      await log.close();
      log = await open();
    }
    k = last;
  }
  await log.close();
}
