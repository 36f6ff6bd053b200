/**
 * dpu-traceback as a library: the configuration loader, the rule engine
 * (ring, rules, monitor), the events.log writer, the sample sources, the
 * metrics endpoint (aggregation, exposition, the Hono app) and the Agent
 * that wires them. The CLI in main.ts is built from these pieces.
 *
 * @example The demo configuration on the simulator for half a second
 * ```ts
 * import assert from "node:assert/strict";
 * import { Agent, loadConfig } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const demo = await loadConfig("deploy/demo.yaml");
 * const config = {
 *   ...demo,
 *   monitors: demo.monitors.map((m) => ({ ...m, eventLog: `${dir}/events.log` })),
 * };
 * const agent = await Agent.open(config, { version: "my-tool 1.0" });
 * await agent.run(AbortSignal.timeout(500));
 * assert.deepEqual(await agent.close(), []);
 * assert.equal(agent.monitors[0].monitor.name, "nic");
 * assert.ok(agent.monitors[0].monitor.samples > 0);
 * assert.match(await Deno.readTextFile(`${dir}/events.log`), /^Telemetry monitor : my-tool 1\.0$/m);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

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
export { DEFAULT_SEVERITY, isReferenceRule } from "./config/types.ts";
export { loadConfig, parseConfig } from "./config/load.ts";
export type { LoadConfigOptions, ParseConfigOptions } from "./config/load.ts";
export { describeConfig } from "./config/describe.ts";
export type { DescribeOptions } from "./config/describe.ts";
export { resolveTopology } from "./config/topology.ts";
export type { Topology } from "./config/topology.ts";
export { parseLabelsFile, readLabelsFile } from "./config/labels_file.ts";
export { GPU_READINGS, parseGpuColumn } from "./config/gpu_readings.ts";
export type { GpuColumnPattern, GpuReading } from "./config/gpu_readings.ts";
export { withAutoGpuMonitor } from "./config/normalize.ts";

export { SampleRing } from "./rules/ring.ts";
export { ReferenceRule } from "./rules/reference_rule.ts";
export { createRule } from "./rules/monitor_rule.ts";
export type { MonitorRule } from "./rules/monitor_rule.ts";
export { SignalRule } from "./rules/signal_rule.ts";
export { Monitor } from "./rules/monitor.ts";
export type {
  MonitorHooks,
  MonitorOptions,
  SampleObserver,
  TransitionListener,
} from "./rules/monitor.ts";
export { formatU64, parseU64 } from "./base/u64.ts";

export type { EventSink } from "./rules/event_sink.ts";
export { EventsLog } from "./events/log.ts";
export type { EventsLogOptions, EventsLogStats } from "./events/log.ts";
export { formatColumnNames, formatHeader } from "./events/header.ts";
export type { HeaderOptions } from "./events/header.ts";
export { EventJournal } from "./events/event_journal.ts";
export type { JournalEvent } from "./events/event_journal.ts";
export { alertmanagerLabel, AlertStats } from "./metrics/alert_stats.ts";
export type {
  AlertCounters,
  AlertmanagerCounts,
} from "./metrics/alert_stats.ts";
export { EventTally, formatEventTable } from "./agent/tally.ts";
export type { EventRecord } from "./agent/tally.ts";

export type {
  Collector,
  SourceDevice,
  SourceState,
  SourceStatus,
} from "./collectors/collector.ts";
export type { SampleSink } from "./rules/sample_sink.ts";
export { NvmlCollector } from "./collectors/nvml/collector.ts";
export type {
  NvmlCollectorOptions,
  NvmlOpened,
} from "./collectors/nvml/collector.ts";
export { expandGpuMonitor } from "./collectors/nvml/gpu_monitor.ts";
export type { ExpandedGpuMonitor } from "./collectors/nvml/gpu_monitor.ts";
export type { GpuColumn } from "./collectors/nvml/readings.ts";
export type { GpuInfo } from "./collectors/nvml/gpu_list.ts";
export { SimCollector } from "./collectors/sim.ts";
export type { SimOptions } from "./collectors/sim.ts";
export { ReplayCollector } from "./collectors/replay.ts";
export type { ReplayOptions } from "./collectors/replay.ts";
export { createCollector } from "./collectors/create.ts";
export type { CollectorContext } from "./collectors/create.ts";
export { PollStats } from "./collectors/poll_stats.ts";
export { Agent } from "./agent/agent.ts";
export { runAgent } from "./agent/run.ts";
export type { RunAgentOptions } from "./agent/run.ts";
export { Logger } from "./logging/logger.ts";
export type { LoggerOptions, LogLevel } from "./logging/logger.ts";
export type { AgentMonitor } from "./agent/agent.ts";

export { WindowAggregator } from "./metrics/aggregate.ts";
export type {
  AggregateColumn,
  WindowAggregatorOptions,
  WindowSnapshot,
} from "./metrics/aggregate.ts";
export {
  ExpositionWriter,
  formatLabels,
  negotiateFormat,
} from "./metrics/exposition.ts";
export type { ExpositionFormat, MetricType } from "./metrics/exposition.ts";
export { AgentMetrics } from "./metrics/agent_metrics.ts";
export type {
  AgentInfo,
  MonitorView,
  Readiness,
  ServedMonitor,
} from "./metrics/agent_metrics.ts";
export type {
  CountsSamples,
  DataFreshness,
  Freshness,
} from "./metrics/freshness.ts";
export { createMetricsApp } from "./metrics/app.ts";
export type { MetricsApp, MetricsAppOptions } from "./metrics/app.ts";
export type { ConnectionInfo, RequestLimitOptions } from "./metrics/limits.ts";
export { serveMetrics } from "./metrics/server.ts";
export type {
  MetricsServer,
  ServeOptions,
  ServerLimitOptions,
} from "./metrics/server.ts";
export { loadWebConfig } from "./metrics/web_config.ts";
export type { WebConfig, WebTls } from "./metrics/web_config.ts";
export { BasicAuthVerifier } from "./metrics/basic_auth.ts";
export type {
  BasicAuthOptions,
  BasicAuthResult,
} from "./metrics/basic_auth.ts";
