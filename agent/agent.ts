/**
 * A running agent: every configured monitor with its collector and events
 * log, started together and stopped together.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import type { AgentConfig, MonitorConfig } from "../config/types.ts";
import { EventJournal } from "../events/event_journal.ts";
import { EventsLog } from "../events/log.ts";
import { EventTally } from "./tally.ts";
import { WindowAggregator } from "../metrics/aggregate.ts";
import type { ServedMonitor } from "../metrics/agent_metrics.ts";
import { Monitor, type TransitionListener } from "../rules/monitor.ts";
import { sharedRingBuffer, sharedRingCapacity } from "../rules/shared_ring.ts";
import type { Collector } from "../collectors/collector.ts";
import { createCollector, describeDevice } from "../collectors/create.ts";
import { KernelCollector } from "../collectors/kernel/collector.ts";
import {
  NvmlCollector,
  nvmlLibraryDirs,
} from "../collectors/nvml/collector.ts";
import {
  describeNicGpus,
  type GpuListing,
  type ListedGpu,
  nicFunction,
  type NicGpus,
  nicGpus,
} from "../collectors/nic_gpus.ts";

/** One monitor of a running agent and what feeds and records it. */
export interface AgentMonitor extends ServedMonitor {
  /** The live monitor, fed by the collector on this thread. */
  readonly monitor: Monitor;
  /** The live aggregator, fed by the monitor. */
  readonly aggregator: WindowAggregator;
  /** The source feeding the monitor; the agent runs and closes it. */
  readonly collector: Collector;
  /** The monitor's events.log; the agent reopens it on SIGHUP and closes it. */
  readonly log: EventsLog;
}

/**
 * The monitors of a run once their sources are open and before their logs
 * are: what the threads that read the agent need to start.
 */
export interface OpenedSources {
  /**
   * The monitors that run, in configuration order (a GPU monitor made
   * concrete from the GPUs NVML listed, one that is off left out), with
   * their sources; as {@linkcode Agent.monitors} will hold them.
   */
  readonly monitors: readonly {
    readonly config: MonitorConfig;
    readonly collector: Collector;
    /** For a NIC monitor on a PCIe function, the GPUs behind it. */
    readonly nicGpus?: NicGpus;
    /** For a GPU monitor, the shared copy of its ring. */
    readonly sharedRing?: SharedArrayBuffer;
  }[];
  /** The event journal, as {@linkcode Agent.journal} will be. */
  readonly journal: EventJournal;
}

/**
 * Owns the monitors of one agent run.
 *
 * @example Ten simulated samples' worth of time, one rule
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/load.ts";
 * import { Agent } from "./agent.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const config = parseConfig(
 *   `{ "diag_sample_period_ns": 1000000, "sample_history_depth": 10,
 *      "data-ids": [{ "name": "port_0_rx_bytes", "data_id": "0x1020000100000000" }],
 *      "rules": [{ "name": "rx_bytes_moving", "data_id": "0x1020000100000000",
 *                  "comparison_type": "inc_gt", "comparison_value": 0 }] }`,
 *   `${dir}/rules.json`,
 * );
 * const agent = await Agent.open(
 *   {
 *     ...config,
 *     monitors: config.monitors.map((m) => ({ ...m, source: "sim" as const, eventLog: `${dir}/events.log` })),
 *   },
 *   { version: "example 1.0" },
 * );
 * try {
 *   await agent.run(AbortSignal.timeout(200));
 * } finally {
 *   assert.deepEqual(await agent.close(), []);
 * }
 * const [nic] = agent.monitors;
 * assert.equal(nic.status.state, "ended");
 * assert.ok(nic.monitor.samples > 0);
 * assert.equal(agent.tally.events[0].rule, "rx_bytes_moving");
 * // The first event, in the journal the endpoint reads, as the tally saw it.
 * const first = agent.journal.recent().at(-1)!;
 * assert.deepEqual(
 *   [first.id, first.rule, first.startNs, first.startSample],
 *   [1, 0, agent.tally.events[0].startNs, agent.tally.events[0].startSample],
 * );
 * assert.match(await Deno.readTextFile(nic.log.path), /rx_bytes_moving/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class Agent {
  /** Monitors in configuration order. */
  readonly monitors: readonly AgentMonitor[];
  /** Events seen during this run. */
  readonly tally: EventTally;
  /**
   * Recent events in shared memory, monitors indexed as
   * {@linkcode Agent.monitors}: other threads read them over
   * `journal.buffer`.
   */
  readonly journal: EventJournal;

  #warn: ((message: string) => void) | undefined;

  private constructor(
    monitors: AgentMonitor[],
    tally: EventTally,
    journal: EventJournal,
    warn: ((message: string) => void) | undefined,
  ) {
    this.monitors = monitors;
    this.tally = tally;
    this.journal = journal;
    this.#warn = warn;
  }

  /**
   * Creates every collector, awaits `beforeLogs`, then opens every log (a
   * header block each). On failure, closes whatever it opened and
   * rethrows. A GPU monitor that finds no usable NVML or GPU is left out,
   * with one line to `info` (no NVML here) or `warn` (an NVML that does
   * not work).
   */
  static async open(
    config: AgentConfig,
    options: {
      readonly version: string;
      readonly warn?: (message: string) => void;
      readonly info?: (message: string) => void;
      /**
       * What else must start before any log gets a header (the endpoint,
       * the sender): called once the sources are open, with the monitors
       * they make and the journal. If it throws, nothing has been written
       * to any log; what it started is its caller's to stop should a log
       * then fail to open.
       */
      readonly beforeLogs?: (opened: OpenedSources) => Promise<void>;
      /** The tree holding `sys/` (default `/`); tests give a fixture tree. */
      readonly sysfsRoot?: string;
    },
  ): Promise<Agent> {
    const root = options.sysfsRoot;
    // The PCIe function of each NIC monitor, to find the GPUs behind it.
    const nics = new Map<MonitorConfig, string>();
    for (const m of config.monitors) {
      const pci = nicFunction(m, { root });
      if (pci !== undefined) nics.set(m, pci);
    }
    const gpuMonitor = config.monitors.some((m) => m.source === "nvml");
    // Collectors first: a bad source must fail before any log gets a header.
    // GPU monitors open first, all at once: NVML may take seconds to
    // initialize, and a NIC source starts sampling as soon as it is open.
    // With no GPU monitor, NVML is opened only to list the GPUs behind the
    // NICs, at the same time, unless the configuration says gpu: off.
    const [gpus, listed] = await Promise.all([
      Promise.all(
        config.monitors.map((m) =>
          m.source === "nvml"
            ? NvmlCollector.open({
              config: m,
              libDirs: nvmlLibraryDirs(config.nvmlLibDir),
              warn: options.warn,
              info: options.info,
            })
            : undefined
        ),
      ),
      nics.size > 0 && !gpuMonitor && config.gpu !== "off"
        ? NvmlCollector.listGpus({
          libDirs: nvmlLibraryDirs(config.nvmlLibDir),
        })
        : undefined,
    ]);
    const collectors: Collector[] = [];
    // GPU monitors are made concrete once NVML has listed the GPUs.
    const configs: MonitorConfig[] = [];
    try {
      for (const [i, m] of config.monitors.entries()) {
        const opened = gpus[i];
        if (opened !== undefined) {
          if (!opened.ok) {
            const say = opened.level === "info" ? options.info : options.warn;
            say?.(`GPU monitor "${m.name}" is off: ${opened.reason}`);
            continue;
          }
          collectors.push(opened.collector);
          configs.push(opened.config);
          continue;
        }
        collectors.push(
          m.source === "kernel"
            // The device and every counter are looked up in sysfs first.
            ? await KernelCollector.open({
              device: m.device ?? "",
              root,
              columns: m.columns,
              samplePeriodNs: m.samplePeriodNs,
              onFault: options.warn,
              onLate: options.warn,
              onScheduling: options.info,
            })
            : createCollector(m, {
              forceOwnership: config.forceOwnership,
              docaLibDir: config.docaLibDir,
              warn: options.warn,
              info: options.info,
            }),
        );
        configs.push(m);
      }
    } catch (error) {
      // GPU collectors not yet in the list are closed too.
      await closeAll([
        ...collectors,
        ...gpus.flatMap((g) =>
          g?.ok && !collectors.includes(g.collector) ? [g.collector] : []
        ),
      ]);
      throw error;
    }
    if (configs.length === 0) {
      // Only GPU monitors were configured, and none could start.
      throw new Error(
        `Cannot start: no monitor left to run (${config.file} has only GPU monitors, and they are off)`,
      );
    }
    const listing = gpuListing(gpus, listed);
    const behind = configs.map((m) => {
      const pci = nics.get(m);
      return pci === undefined ? undefined : nicGpus(pci, listing, { root });
    });
    for (const [i, found] of behind.entries()) {
      if (found === undefined) continue;
      options.info?.(`monitor "${configs[i].name}": ${describeNicGpus(found)}`);
    }
    // A GPU monitor's ring is copied to shared memory as it samples, for
    // the event pages on the endpoint's thread (a NIC event's page charts
    // the GPUs behind the NIC): once a second, a few hundred words; its
    // newest records only where the ring is deep (rules/shared_ring.ts).
    const rings = configs.map((m) =>
      m.source === "nvml"
        ? sharedRingBuffer(
          m.columns.length,
          sharedRingCapacity(m.columns.length, 2 * m.depth),
        )
        : undefined
    );
    const tally = new EventTally(configs);
    const journal = EventJournal.create(configs.map((m) => m.rules.length));
    const monitors: AgentMonitor[] = [];
    try {
      await options.beforeLogs?.({
        monitors: configs.map((m, i) => ({
          config: m,
          collector: collectors[i],
          ...(behind[i] === undefined ? {} : { nicGpus: behind[i] }),
          ...(rings[i] === undefined ? {} : { sharedRing: rings[i] }),
        })),
        journal,
      });
      for (const [i, m] of configs.entries()) {
        const log = await EventsLog.open({
          path: m.eventLog,
          version: options.version,
          device: describeDevice(m, collectors[i]),
          name: m.name,
          depth: m.depth,
          samplePeriodNs: m.samplePeriodNs,
          columns: m.columns,
          rules: m.rules,
          warn: options.warn,
          maxBytes: config.eventLogMaxBytes,
          keep: config.eventLogKeep,
        });
        const aggregator = new WindowAggregator({
          columns: m.columns,
          windowNs: config.metricsWindowNs,
        });
        const monitor = new Monitor(m, log, {
          onTransition: journaled(tally, journal, i),
          observer: aggregator,
          ...(rings[i] === undefined ? {} : { sharedRing: rings[i] }),
        });
        monitors.push({
          config: m,
          monitor,
          collector: collectors[i],
          log,
          aggregator,
          status: { state: "idle" },
          ...(behind[i] === undefined ? {} : { nicGpus: behind[i] }),
          ...(rings[i] === undefined ? {} : { sharedRing: rings[i] }),
        });
      }
    } catch (error) {
      await closeAll(collectors);
      await Promise.allSettled(monitors.map((m) => m.log.close()));
      throw error;
    }
    return new Agent(monitors, tally, journal, options.warn);
  }

  /**
   * Runs every collector until `signal` aborts or every source has ended.
   * The first collector failure stops the others and is rethrown once they
   * have all returned.
   */
  async run(signal: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) stop.abort();
    let failure: unknown = undefined;
    try {
      await Promise.all(this.monitors.map(async (m) => {
        m.status.state = "running";
        try {
          await m.collector.run(m.monitor, stop.signal);
          m.status.state = "ended";
        } catch (error) {
          m.status.state = "failed";
          m.status.error = errorMessage(error);
          if (m.collector.independent) {
            // A GPU monitor's failure is its own; the NIC goes on.
            this.#warn?.(
              `monitor "${m.config.name}" stopped: ${m.status.error}`,
            );
            return;
          }
          failure ??= error;
          stop.abort();
        }
      }));
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * Writes what is pending, fsyncs and closes every log. Returns the
   * failures (one per log that could not finish); never throws.
   */
  async close(): Promise<Error[]> {
    // Sources first (stop the device), then the logs they fed. A GPU
    // monitor's close never throws and waits at most 5 s on its driver.
    const failures = await closeAll(this.monitors.map((m) => m.collector));
    for (const m of this.monitors) {
      m.monitor.writeOpenPeaks();
      m.monitor.writeOpenBlindPeriod();
    }
    const results = await Promise.allSettled(
      this.monitors.map((m) => m.log.close()),
    );
    return [...failures, ...rejections(results)];
  }
}

/**
 * The tally's listener, then the journal: the event starts or ends on the
 * ring's newest record (the sample that changed the rule). Runs at
 * transitions only.
 */
function journaled(
  tally: EventTally,
  journal: EventJournal,
  index: number,
): TransitionListener {
  return (monitor, rule, active, unixMs) => {
    tally.listener(monitor, rule, active, unixMs);
    const at = monitor.ring.offsetBack(0);
    if (active) {
      // A loss within the history depth before the start: the event may be
      // the stall's doing (the reference's types compare across it).
      const ring = monitor.ring;
      const back = ring.lossBack;
      const near = back < ring.capacity / 2;
      // A rule's peak is, at its start, what it measured on the start sample.
      journal.started(
        index,
        rule,
        monitor.words,
        at,
        monitor.samples,
        unixMs,
        monitor.rules[rule].peak,
        near ? ring.lostBefore(back) : 0,
        near ? back : -1,
      );
    } else {
      journal.ended(
        index,
        rule,
        monitor.words,
        at,
        monitor.samples,
        monitor.rules[rule].peak,
        unixMs,
      );
    }
  };
}

/** Closes every collector that has something to close; returns the failures. */
async function closeAll(collectors: readonly Collector[]): Promise<Error[]> {
  const results = await Promise.allSettled(
    collectors.map(async (c) => await c.close?.()),
  );
  return rejections(results);
}

function rejections(
  results: readonly PromiseSettledResult<unknown>[],
): Error[] {
  return results.flatMap((r) =>
    r.status === "rejected"
      ? [r.reason instanceof Error ? r.reason : new Error(String(r.reason))]
      : []
  );
}

/**
 * Where the NICs' GPUs are found: the first GPU monitor's NVML list (every
 * GPU it listed, read or not), else the listing NVML gave when opened only
 * for it; else why there is none.
 */
function gpuListing(
  opened: readonly (
    | { readonly ok: true; readonly collector: NvmlCollector }
    | { readonly ok: false; readonly reason: string }
    | undefined
  )[],
  listed:
    | { readonly ok: true; readonly gpus: readonly ListedGpu[] }
    | { readonly ok: false; readonly reason: string }
    | undefined,
): GpuListing {
  const running = opened.find((g) => g?.ok === true);
  if (running?.ok) return { gpus: running.collector.listed };
  const failed = opened.find((g) => g !== undefined);
  if (failed !== undefined && !failed.ok) return { none: failed.reason };
  if (listed === undefined) return { none: "gpu: off, NVML not opened" };
  return listed.ok ? { gpus: listed.gpus } : { none: listed.reason };
}
