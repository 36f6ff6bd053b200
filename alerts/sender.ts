/**
 * The Alertmanager sender, seen from the agent's (sampling) thread: reads
 * the credential files once, then runs the sender in its own Worker
 * (alerts/sender_worker.ts) with only the network access it needs (the
 * Alertmanagers' host:port) and nothing else, restarting it if it dies.
 * The sampler shares only memory with it (the event journal, the
 * published state) and never waits for it.
 *
 * @module
 */

import { describeNicGpus } from "../collectors/nic_gpus.ts";
import type { NicGpus } from "../collectors/pcie_affinity.ts";
import { configuredDevice } from "../config/device.ts";
import { describeRule } from "../config/describe.ts";
import { ruleFactsOf, ruleThreshold } from "../config/rule_description.ts";
import {
  type AlertingConfig,
  DEFAULT_SEVERITY,
  type MonitorConfig,
} from "../config/types.ts";
import { alertmanagerLabel, AlertStats } from "../metrics/alert_stats.ts";
import type { MonitorShape } from "../metrics/shared_state.ts";
import {
  type AlertmanagerCredentials,
  readCredentials,
} from "./alertmanager_client.ts";
import { peakKindOf, peakUnitOf } from "../rules/peak_format.ts";
import type {
  AlertMonitor,
  SenderReply,
  SenderStart,
} from "./sender_worker.ts";
import { SupervisedWorker } from "../base/supervised_worker.ts";
import { DEFAULT_STALL_MS, MIN_STALL_MS } from "../base/heartbeat.ts";

export type { AlertMonitor } from "./sender_worker.ts";

/** What {@linkcode startAlertSender} needs. */
export interface AlertSenderOptions {
  /** The Alertmanagers and the alerts' timing. */
  readonly config: AlertingConfig;
  /** The `instance` label: the configured value or the host name. */
  readonly instance: string;
  /** Topology labels, on every alert. */
  readonly labels: Readonly<Record<string, string>>;
  /** The agent's monitors, in the journal's order ({@linkcode alertMonitors}). */
  readonly monitors: readonly AlertMonitor[];
  /** The event journal's buffer. */
  readonly journalBuffer: SharedArrayBuffer;
  /**
   * The monitors' published state (agent/publication.ts), and its shapes:
   * with it, alerts count events that began and ended between two looks
   * and show the live peak; without it the live peak reads unknown.
   */
  readonly state?: {
    readonly buffer: SharedArrayBuffer;
    readonly shapes: readonly MonitorShape[];
  };
  /** The metrics endpoint's base URL, for `generatorURL`. */
  readonly endpointUrl?: string;
  /** The agent's version, for the `User-Agent`. */
  readonly version: string;
  /**
   * Counters to write ({@linkcode AlertStats.create} with one per
   * Alertmanager), when the endpoint that renders them was started first;
   * made here otherwise.
   */
  readonly statsBuffer?: SharedArrayBuffer;
  /** Where the sender's failures and restarts are told (one line each). */
  readonly onError?: (line: string) => void;
  /**
   * The longest the sender's thread sleeps between two looks, ms; default
   * a third of `stallMs`, and at most that: every look is a heartbeat. The
   * thread looks sooner when the journal changes (an event started or
   * ended: at once) or an alert has something due (a resend, the end of a
   * hold): it never looks on a timer only to find nothing new.
   */
  readonly maxLookMs?: number;
  /** First delay before restarting a failed sender, ms; default 1000. */
  readonly restartMs?: number;
  /**
   * Restart the sender's thread when its looks (its heartbeat, at least
   * every `maxLookMs`) have stopped for this long, ms; default 10000, at
   * least 3000: a thread that
   * is stuck (a loop that never ends) sends nothing, but raises no error
   * either.
   */
  readonly stallMs?: number;
  /** At stop, how long queued alerts may take to go out, ms; default 2000. */
  readonly drainMs?: number;
  /**
   * How long an alert's first send may wait for its event's peak, ms;
   * default PEAK_WAIT_MS (alerts/alert_state.ts). Tests shorten it.
   */
  readonly peakWaitMs?: number;
  /** The worker module; tests substitute their own. */
  readonly workerUrl?: URL;
  /**
   * The Alertmanagers' credentials ({@linkcode readCredentials}), one per
   * Alertmanager in configuration order, when they were read before the
   * agent started (`run` reads them with `check-config`'s function); read
   * here otherwise.
   */
  readonly credentials?: readonly AlertmanagerCredentials[];
}

/** A running sender. */
export interface AlertSender {
  /** Its counters ({@linkcode AlertStats}), for the metrics endpoint. */
  readonly stats: SharedArrayBuffer;
  /** The `alertmanager` label of each Alertmanager, in configuration order. */
  readonly alertmanagers: readonly string[];
  /** Times the sender's thread failed and was restarted. */
  readonly restarts: number;
  /**
   * Sends what is due, lets the queues drain (at most drainMs) and stops; a
   * stuck thread is ended after drainMs + 1 s. Never throws.
   */
  stop(): Promise<void>;
}

/** Longest wait for the sender's thread at stop, beyond the drain. */
const STOP_GRACE_MS = 1000;

/**
 * The monitors as alerts describe them, from their configurations (in the
 * agent's order): each rule with the one-line description check-config
 * prints for it, for the alert's `rule` annotation, what its events cross
 * (threshold, window, clear level) for the description's first lines,
 * and its runbook when it has one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertMonitors } from "./sender.ts";
 *
 * const [nic] = alertMonitors([{
 *   name: "nic", source: "sim", samplePeriodNs: 100_000, depth: 8, seed: 1,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" }],
 *   rules: [{
 *     name: "rx high", column: 0, comparisonType: "gt", comparisonValue: 5n,
 *     runbookUrl: "https://wiki.example.com/rx",
 *   }],
 *   eventLog: "events.log",
 * }]);
 * assert.deepEqual(nic, {
 *   name: "nic", device: "sim", eventLog: "events.log",
 *   rules: [{
 *     name: "rx high", severity: "warning", runbookUrl: "https://wiki.example.com/rx",
 *     peakKind: "max", peakUnit: "",
 *     description: '"rx high": gt rx > 5 for 8 samples in a row',
 *     threshold: "rx > 5 for 8 samples in a row",
 *   }],
 * });
 * ```
 */
export function alertMonitors(
  monitors: readonly MonitorConfig[],
  nicGpus: readonly (NicGpus | undefined)[] = [],
): AlertMonitor[] {
  return monitors.map((m, i) => ({
    name: m.name,
    device: configuredDevice(m) ?? m.source,
    eventLog: m.eventLog,
    ...(nicGpus[i] === undefined ? {} : { gpus: describeNicGpus(nicGpus[i]) }),
    rules: m.rules.map((r) => ({
      name: r.name,
      severity: r.severity ?? DEFAULT_SEVERITY,
      ...(r.summary === undefined ? {} : { summary: r.summary }),
      ...(r.runbookUrl === undefined ? {} : { runbookUrl: r.runbookUrl }),
      peakKind: peakKindOf(r),
      peakUnit: peakUnitOf(r),
      description: describeRule(r, m),
      threshold: ruleThreshold(ruleFactsOf(r, m)),
    })),
  }));
}

/**
 * The network the sender's thread may use: each Alertmanager's
 * `host:port`, nothing more.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertmanagerHosts } from "./sender.ts";
 *
 * assert.deepEqual(
 *   alertmanagerHosts({
 *     alertmanagers: [
 *       { url: "https://am-1.example", timeoutMs: 1000 },
 *       { url: "http://u:p@10.0.0.2:9093/am", timeoutMs: 1000 },
 *     ],
 *     resendIntervalMs: 30_000,
 *     holdMs: 300_000,
 *   }),
 *   ["am-1.example:443", "10.0.0.2:9093"],
 * );
 * ```
 */
export function alertmanagerHosts(config: AlertingConfig): string[] {
  const hosts = config.alertmanagers.map((am) => {
    const url = new URL(am.url);
    const port = url.port !== ""
      ? url.port
      : url.protocol === "https:"
      ? "443"
      : "80";
    return `${url.hostname}:${port}`;
  });
  return [...new Set(hosts)];
}

/** A sender ready to run on a thread: what {@linkcode prepareSender} makes. */
export interface PreparedSender {
  /** The thread's start message (its heartbeat is the thread's). */
  readonly start: SenderStart;
  /** The network the thread needs: each Alertmanager's `host:port`. */
  readonly hosts: readonly string[];
  /** Its counters' buffer ({@linkcode AlertStats}). */
  readonly stats: SharedArrayBuffer;
  /** The `alertmanager` label of each Alertmanager, in configuration order. */
  readonly alertmanagers: readonly string[];
  /** The watchdog's stall time for the thread it runs on, ms. */
  readonly stallMs: number;
}

/**
 * Reads the Alertmanagers' credential files once, unless they were read
 * already (rejecting with a one-line error naming a file that cannot be
 * read: the thread gets no file access) and checks the timing: all a thread needs to run the
 * sender, its own ({@linkcode startAlertSender}) or the endpoint's
 * (agent/endpoint.ts).
 */
export async function prepareSender(
  options: Omit<AlertSenderOptions, "onError" | "restartMs" | "workerUrl">,
  heartbeat: SharedArrayBuffer,
): Promise<PreparedSender> {
  const config = options.config;
  const credentials = options.credentials ??
    await Promise.all(config.alertmanagers.map(readCredentials));
  if (credentials.length !== config.alertmanagers.length) {
    throw new RangeError(
      `Cannot start the Alertmanager sender: it has credentials for ${credentials.length} Alertmanagers, the configuration has ${config.alertmanagers.length}`,
    );
  }
  const stats = options.statsBuffer === undefined
    ? AlertStats.create(config.alertmanagers.length)
    : new AlertStats(options.statsBuffer);
  if (stats.count !== config.alertmanagers.length) {
    throw new RangeError(
      `Cannot start the Alertmanager sender: its counters are for ${stats.count} Alertmanagers, the configuration has ${config.alertmanagers.length}`,
    );
  }
  const stallMs = Math.max(MIN_STALL_MS, options.stallMs ?? DEFAULT_STALL_MS);
  const maxLookMs = options.maxLookMs ?? Math.floor(stallMs / 3);
  if (!(maxLookMs > 0 && maxLookMs <= stallMs / 3)) {
    throw new RangeError(
      `Cannot start the Alertmanager sender: maxLookMs must be above 0 and at most a third of stallMs (${stallMs} ms), got ${maxLookMs}`,
    );
  }
  return {
    start: {
      type: "start",
      alerting: config,
      credentials,
      instance: options.instance,
      labels: options.labels,
      monitors: options.monitors,
      journal: options.journalBuffer,
      // Only what can cross to the thread (a publication also has stop()).
      state: options.state === undefined
        ? undefined
        : { buffer: options.state.buffer, shapes: options.state.shapes },
      stats: stats.buffer,
      heartbeat,
      endpointUrl: options.endpointUrl,
      version: options.version,
      maxLookMs,
      drainMs: options.drainMs ?? 2000,
      ...(options.peakWaitMs === undefined
        ? {}
        : { peakWaitMs: options.peakWaitMs }),
    },
    hosts: alertmanagerHosts(config),
    stats: stats.buffer,
    alertmanagers: config.alertmanagers.map((am) => alertmanagerLabel(am.url)),
    stallMs,
  };
}

/**
 * Reads the Alertmanagers' credential files (rejecting with a one-line
 * error naming a file that cannot be read) and starts the sender on a
 * thread of its own: for an agent without the endpoint, whose thread
 * otherwise runs the sender too.
 *
 * @example
 * ```ts ignore
 * const sender = await startAlertSender({
 *   config: agentConfig.alerting!, instance: "dpu-7", labels: agentConfig.labels,
 *   monitors: alertMonitors(agentConfig.monitors), journalBuffer: journal.buffer,
 *   version: VERSION, onError: (line) => log.error(line),
 * });
 * await sender.stop();
 * ```
 */
export async function startAlertSender(
  options: AlertSenderOptions,
): Promise<AlertSender> {
  const heartbeat = new SharedArrayBuffer(4);
  const { start, hosts, stats, alertmanagers, stallMs } = await prepareSender(
    options,
    heartbeat,
  );
  const permissions: Deno.PermissionOptionsObject = {
    net: [...hosts],
    read: false,
    write: false,
    env: false,
    sys: false,
    ffi: false,
    run: false,
    import: false,
  };
  const url = options.workerUrl ??
    new URL("./sender_worker.ts", import.meta.url);
  const onError = options.onError ?? (() => {});
  const spawn = () => {
    const worker = new Worker(url, { type: "module", deno: { permissions } });
    worker.postMessage(start);
    return worker;
  };
  const thread = new SupervisedWorker(spawn(), {
    name: "Alertmanager sender",
    spawn,
    restartMs: options.restartMs ?? 1000,
    onError,
    heartbeat: { beats: new Int32Array(heartbeat), stallMs },
    onReply: (reply) => {
      const r = reply as SenderReply;
      if (r.type === "error") onError(r.line);
    },
  });

  return {
    stats,
    alertmanagers,
    get restarts() {
      return thread.restarts;
    },
    stop() {
      return thread.stop({ type: "stop" }, start.drainMs + STOP_GRACE_MS);
    },
  };
}
