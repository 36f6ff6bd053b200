/**
 * dpu-traceback as a library: load a configuration, run samples through a
 * {@linkcode Monitor} (the sample ring and the rules) from a collector or
 * by hand, write the traceback history to events.log with
 * {@linkcode EventsLog}, and read events.log files back with
 * {@linkcode readReview} to filter the events, export them or print one
 * event's traceback. The agent that the CLI in main.ts runs (its threads,
 * the metrics endpoint, alerting) is built from these pieces and is not
 * part of this API.
 *
 * @example A monitor from a configuration, its events.log, read back
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   EVENT_END,
 *   EVENT_START,
 *   EventsLog,
 *   filterEvents,
 *   formatCsv,
 *   formatJson,
 *   GAP,
 *   PEAK,
 *   HEADER_PREFIX,
 *   matchesFilter,
 *   Monitor,
 *   parseConfig,
 *   parseU64,
 *   readReview,
 *   resolveInputs,
 *   writeTraceback,
 * } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const config = parseConfig(
 *   `monitors:
 *   - name: nic
 *     source: sim
 *     depth: 2
 *     event_log: ${dir}/nic-events.log
 *     columns: [{ name: rx_discards, data_id: "0x1020000300000000" }]
 *     rules: [{ name: discards, column: rx_discards, comparison_type: gt, comparison_value: 5 }]
 * `,
 *   "config.yaml",
 * );
 * const nic = config.monitors[0];
 * const log = await EventsLog.open({ ...nic, path: nic.eventLog, version: "my-tool 1.0", device: "sim" });
 * const monitor = new Monitor(nic, log);
 * // Six samples 100 µs apart from 2026-11-21T14:50:00Z, 3 lost before the fifth.
 * const t0 = 1_795_272_600_000_000_000n;
 * for (const [i, discards] of [0, 0, 9, 9, 0, 0].entries()) {
 *   if (i === 4) monitor.gap(3);
 *   const at = monitor.claim(); // the record: timestamp, then each column, as u64 (lo, hi)
 *   parseU64(String(t0 + BigInt(i) * 100_000n), monitor.words, at);
 *   parseU64(String(discards), monitor.words, at + 2);
 *   monitor.commit();
 * }
 * await log.close();
 * assert.equal(monitor.events, 1);
 * const lines = (await Deno.readTextFile(nic.eventLog)).split("\n");
 * assert.equal(lines[0], `${HEADER_PREFIX} my-tool 1.0`);
 * assert.deepEqual(lines.slice(-12).map((l) => l.replace(/Time: \S+,/, "Time: T,")), [
 *   "timestamp, rx_discards",
 *   "1795272600000000000, 0",
 *   "1795272600000100000, 0",
 *   "1795272600000200000, 9",
 *   "1795272600000300000, 9", // the second sample above 5 (depth 2) starts the event
 *   `${EVENT_START} Time: T, Rule: "discards"`,
 *   `${GAP} Time: T, Dropped samples: 3`,
 *   "1795272600000400000, 0",
 *   "1795272600000500000, 0", // the second at or below 5 ends it
 *   `${PEAK} Rule: "discards", Peak: 9`, // the rule's peak over the event
 *   `${EVENT_END} Time: T, Rule: "discards"`,
 *   "",
 * ]);
 *
 * const review = await readReview(await resolveInputs([dir]));
 * assert.equal(review.events.length, 1);
 * const event = review.events.at(0)!;
 * assert.equal(event.monitor, "nic");
 * assert.equal(event.rule, "discards");
 * assert.equal(event.state, "ended");
 * assert.deepEqual(event.start, { sec: 1_795_272_600, ns: 300_000 });
 * assert.equal(event.rulePeak, 9); // from the <<Peak>> line
 * assert.equal(event.columnPeak, "9");
 * assert.equal(event.droppedSamples, 3);
 *
 * const byRule = (rule: string) =>
 *   filterEvents(review.events, (e) => matchesFilter(e, { rules: [rule], monitors: [] }));
 * assert.equal(byRule("DISCARD").length, 1); // any case, part of the name
 * assert.equal(byRule("ecn").length, 0);
 * assert.equal(JSON.parse(formatJson(review.events, review.files)).events[0].end, "2026-11-21T14:50:00.000500Z");
 * assert.match(formatCsv(review.events).split("\n")[1], /^1,nic,discards,rx_discards,greater_than,5,/);
 *
 * let traceback = "";
 * await writeTraceback(event, review.events.length, "csv", async (text) => {
 *   traceback += text;
 * });
 * assert.deepEqual(traceback.split("\n").slice(0, 2), [
 *   "time,offset_s,rx_discards value,rx_discards rate/sample (/s),rx_discards",
 *   "2026-11-21T14:50:00.000000000Z,-0.000300,0,,0",
 * ]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

// Configuration: load or parse either form into one validated shape.
export { loadConfig, parseConfig } from "./config/load.ts";
export type { LoadConfigOptions, ParseConfigOptions } from "./config/load.ts";
export { isReferenceRule } from "./config/types.ts";
export type {
  AgentConfig,
  AlertingConfig,
  AlertmanagerConfig,
  ColumnConfig,
  ColumnKind,
  ComparisonType,
  Direction,
  GpuMode,
  MonitorColumn,
  MonitorConfig,
  ReferenceRuleConfig,
  RuleConfig,
  RuleLabels,
  SignalKind,
  SignalRuleConfig,
  SourceKind,
} from "./config/types.ts";

// Monitors and rules: the ring, the rule types, the Monitor, its sinks, u64s.
export { Monitor } from "./rules/monitor.ts";
export type {
  MonitorHooks,
  MonitorOptions,
  SampleObserver,
  TransitionListener,
} from "./rules/monitor.ts";
export { SampleRing } from "./rules/ring.ts";
export { createRule } from "./rules/monitor_rule.ts";
export type { MonitorRule } from "./rules/monitor_rule.ts";
export { ReferenceRule } from "./rules/reference_rule.ts";
export { SignalRule } from "./rules/signal_rule.ts";
export type { SampleSink } from "./rules/sample_sink.ts";
export type { EventSink } from "./rules/event_sink.ts";
export { formatU64, parseU64 } from "./base/u64.ts";

// Collectors: the sample sources a monitor is fed from.
export { createCollector } from "./collectors/create.ts";
export type { CollectorContext } from "./collectors/create.ts";
export type { Collector, SourceDevice } from "./collectors/collector.ts";
export { PollStats } from "./collectors/poll_stats.ts";
export { ReadStats } from "./collectors/read_stats.ts";
export { SimCollector } from "./collectors/sim.ts";
export type { SimOptions } from "./collectors/sim.ts";
export { ReplayCollector } from "./collectors/replay.ts";
export type { ReplayOptions } from "./collectors/replay.ts";
export { DocaCollector } from "./collectors/doca.ts";
export type { DocaOptions } from "./collectors/doca.ts";
export { NvmlCollector, nvmlLibraryDirs } from "./collectors/nvml/collector.ts";
export type {
  NvmlCollectorOptions,
  NvmlOpened,
} from "./collectors/nvml/collector.ts";
export type { GpuInfo } from "./collectors/nvml/gpu_list.ts";

// The events.log writer, and the words opening its header and marker lines.
export { EventsLog } from "./events/log.ts";
export type { EventsLogOptions, EventsLogStats } from "./events/log.ts";
export {
  formatColumnNames,
  formatHeader,
  HEADER_PREFIX,
} from "./events/header.ts";
export type { HeaderOptions } from "./events/header.ts";
export { EVENT_END, EVENT_START, GAP, PEAK } from "./events/markers.ts";

// The review reader: find logs, read events back, filter, traceback, export.
export { resolveInputs } from "./review/files.ts";
export type { LogFamily } from "./review/files.ts";
export { readReview } from "./review/read.ts";
export type { FileSummary, ReadOptions, ReviewLog } from "./review/read.ts";
export type { BlindPeriod } from "./review/blind_periods.ts";
export type {
  EventChart,
  EventList,
  EventState,
  Instant,
  ReviewEvent,
  WindowLocation,
} from "./review/event.ts";
export type { HeaderSignal, RuleKind } from "./review/header.ts";
export type { TimeFormat } from "./review/reference_time.ts";
export type { ChartSeries } from "./review/window.ts";
export { filterEvents } from "./review/event_store.ts";
export { matchesFilter } from "./review/filters.ts";
export type { EventFilter } from "./review/filters.ts";
export type { TimePoint } from "./base/time_point.ts";
export { writeTraceback } from "./review/traceback.ts";
export type {
  TracebackFormat,
  TracebackOptions,
  Write,
} from "./review/traceback.ts";
export { parseSliceBound, SliceError } from "./review/slice.ts";
export type { Slice, SliceBound } from "./review/slice.ts";
export { formatCsv, formatJson } from "./review/export.ts";
