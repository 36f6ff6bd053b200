/**
 * The Alertmanager sender's thread: a Worker that sleeps until the event
 * journal changes (an event started or ended), an alert has something due
 * (a resend, the end of a hold) or its heartbeat is due, then looks at the
 * journal (and the published rule state, when the endpoint publishes it),
 * turns what it sees into alerts, and pushes them to every Alertmanager.
 * Everything a remote party can slow down (connections, TLS, retries) runs
 * here; the sampling thread only writes the journal.
 *
 * Messages: the agent posts one {@linkcode SenderStart}, then
 * `{ type: "stop" }`; the worker answers {@linkcode SenderReply}s.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import type { AlertingConfig } from "../config/types.ts";
import { EventJournal } from "../events/event_journal.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import { openEventPeak } from "../metrics/open_event_peak.ts";
import { type MonitorShape, PublishedState } from "../metrics/shared_state.ts";
import { type PostableAlert, RuleAlert } from "./alert_state.ts";
import type { PeakKind, PeakUnit } from "../base/peak_text.ts";
import {
  AlertmanagerClient,
  type AlertmanagerCredentials,
} from "./alertmanager_client.ts";

/**
 * The shortest time between two looks, ms: journal changes closer together
 * than this are taken in one look.
 */
export const MIN_LOOK_GAP_MS = 10;

/** One monitor as its alerts describe it. */
export interface AlertMonitor {
  /** The monitor's name. */
  readonly name: string;
  /** Its configured device, else its source kind: the `device` label. */
  readonly device: string;
  /** Its events log's path. */
  readonly eventLog: string;
  /**
   * A NIC monitor's closest GPUs in one line (collectors/nic_gpus.ts'
   * describeNicGpus), or why none: the `gpus` annotation.
   */
  readonly gpus?: string;
  /** Its rules, in configuration order (the journal's rule indexes). */
  readonly rules: readonly {
    readonly name: string;
    readonly severity: string;
    readonly summary?: string;
    readonly peakKind?: PeakKind;
    readonly peakUnit?: PeakUnit;
    /** The rule in words, as check-config prints it (config/describe.ts). */
    readonly description?: string;
    /** What its events cross (config/rule_description.ts's ruleThreshold). */
    readonly threshold?: string;
    /** Its runbook's URL. */
    readonly runbookUrl?: string;
  }[];
}

/** What the sender's thread is started with. */
export interface SenderStart {
  /** The message's kind. */
  readonly type: "start";
  /** The Alertmanagers and the alerts' timing. */
  readonly alerting: AlertingConfig;
  /** Per Alertmanager, what was read from its files. */
  readonly credentials: readonly AlertmanagerCredentials[];
  /** The `instance` label. */
  readonly instance: string;
  /** Topology labels, on every alert. */
  readonly labels: Readonly<Record<string, string>>;
  /** The agent's monitors, in the journal's order. */
  readonly monitors: readonly AlertMonitor[];
  /** The {@linkcode EventJournal}'s buffer. */
  readonly journal: SharedArrayBuffer;
  /** The published state and its shapes, for activations and live peaks. */
  readonly state?: {
    readonly buffer: SharedArrayBuffer;
    readonly shapes: readonly MonitorShape[];
  };
  /** The {@linkcode AlertStats} buffer. */
  readonly stats: SharedArrayBuffer;
  /**
   * Word 0 (Int32) moves on every look: the agent's watchdog restarts a
   * thread whose looks stopped (base/heartbeat.ts). {@linkcode maxLookMs}
   * keeps it moving while nothing happens.
   */
  readonly heartbeat: SharedArrayBuffer;
  /** The metrics endpoint's base URL, for `generatorURL`. */
  readonly endpointUrl?: string;
  /** The agent's version, for the `User-Agent`. */
  readonly version: string;
  /**
   * The longest sleep between two looks, ms: the heartbeat's period when
   * nothing happens (at most a third of the watchdog's stall time). A
   * journal change or an alert's due time wakes the thread sooner.
   */
  readonly maxLookMs: number;
  /** At stop, how long the queues may take to drain, ms. */
  readonly drainMs: number;
  /**
   * How long an alert's first send may wait for its event's peak, ms;
   * PEAK_WAIT_MS (alerts/alert_state.ts) when not given.
   */
  readonly peakWaitMs?: number;
}

/** What the sender's thread tells the agent. */
export type SenderReply =
  | { readonly type: "error"; readonly line: string }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "closed" };

/** The running sender, as {@linkcode runSender} returns it. */
export interface RunningSender {
  /**
   * One look now (tests call it; the thread's own loop does otherwise, at
   * each wake). `final`: an alert still waiting for its peak goes out.
   */
  tick(nowMs?: number, final?: boolean): void;
  /**
   * Stops the loop, looks once more (what is due goes out), lets the
   * queues drain (at most drainMs), stops.
   */
  stop(): Promise<void>;
}

/**
 * Runs the sender described by `start` until stopped. Exported for tests;
 * the worker runs it on its first message.
 */
export function runSender(
  start: SenderStart,
  post: (reply: SenderReply) => void,
): RunningSender {
  const journal = new EventJournal(start.journal);
  const state = start.state === undefined
    ? undefined
    : new PublishedState(start.state.buffer, start.state.shapes);
  const stats = new AlertStats(start.stats);
  // A thread that failed (or was stuck) took its queues with it: its queue
  // lengths are no longer true, and its alerts will never be sent. Told
  // once here; the alerts still active are sent again by the first look.
  const lost = stats.takeOver();
  const beats = new Int32Array(start.heartbeat);
  const clients = start.alerting.alertmanagers.map((config, index) =>
    new AlertmanagerClient(config, {
      stats,
      index,
      version: start.version,
      credentials: start.credentials[index],
      // An Alertmanager back after an outage must see the alerts again
      // within one resend interval, as after a quick restart: the retry
      // delay never grows past it (nor past the client's own 30 s).
      maxBackoffMs: Math.min(30_000, start.alerting.resendIntervalMs),
      onError: (line) => post({ type: "error", line }),
    })
  );
  lost.forEach((n, i) => {
    if (n === 0) return;
    const alerts = n === 1 ? "1 alert" : `${n} alerts`;
    post({
      type: "error",
      line: `Alertmanager ${
        clients[i].label
      }: ${alerts} queued by the sender's failed thread lost (counted as dropped)`,
    });
  });
  const settings = {
    instance: start.instance,
    labels: start.labels,
    endpointUrl: start.endpointUrl,
    resendIntervalMs: start.alerting.resendIntervalMs,
    holdMs: start.alerting.holdMs,
    peakWaitMs: start.peakWaitMs,
  };
  const alerts = start.monitors.map((m) =>
    m.rules.map((r) =>
      new RuleAlert({
        monitor: m.name,
        device: m.device,
        rule: r.name,
        severity: r.severity,
        summary: r.summary,
        eventLog: m.eventLog,
        ...(m.gpus === undefined ? {} : { gpus: m.gpus }),
        peakKind: r.peakKind,
        peakUnit: r.peakUnit,
        description: r.description,
        threshold: r.threshold,
        runbookUrl: r.runbookUrl,
      }, settings)
    )
  );
  const tick = (nowMs = Date.now(), final = false) => {
    Atomics.add(beats, 0, 1);
    state?.refresh();
    const publishedAtMs = state === undefined ? NaN : state.publishedAtMs;
    const due: PostableAlert[] = [];
    for (let m = 0; m < alerts.length; m++) {
      const published = state?.monitors[m]?.monitor;
      const rules = published?.rules;
      for (let r = 0; r < alerts[m].length; r++) {
        const open = journal.open(m, r);
        const alert = alerts[m][r].tick(
          {
            open,
            last: journal.last(m, r),
            activations: rules?.[r]?.activations ?? NaN,
            livePeak: open === undefined || published === undefined
              ? NaN
              : openEventPeak(published, r, open.startMs),
            livePeakAtMs: publishedAtMs,
          },
          nowMs,
          final,
        );
        if (alert !== undefined) due.push(alert);
      }
    }
    if (due.length > 0) { for (const client of clients) client.send(due); }
  };
  // The loop: look, then sleep until the journal changes, the earliest
  // alert is due, or the heartbeat is (maxLookMs), whichever comes first.
  // The change count is read before each look: a change during the look
  // makes the next wait return at once.
  let seen = journal.changes;
  let lookedAt = -Infinity;
  const look = () => {
    seen = journal.changes;
    lookedAt = performance.now();
    tick();
  };
  const nextDueMs = (nowMs: number) => {
    let due = nowMs + start.maxLookMs;
    for (const rules of alerts) {
      for (const alert of rules) due = Math.min(due, alert.nextDueMs(nowMs));
    }
    return due;
  };
  let stopping = false;
  let pause:
    | { timer: ReturnType<typeof setTimeout>; resolve: () => void }
    | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      pause = { timer: setTimeout(resolve, ms), resolve };
    });
  const loop = async () => {
    while (!stopping) {
      const nowMs = Date.now();
      await journal.changed(seen, Math.ceil(nextDueMs(nowMs) - nowMs));
      if (stopping) return;
      // A rule flapping at every sample changes the journal thousands of
      // times a second: its changes are taken together, one look at most
      // every MIN_LOOK_GAP_MS (the activations count the bursts between).
      const gap = lookedAt + MIN_LOOK_GAP_MS - performance.now();
      if (gap > 0) await sleep(gap);
      pause = undefined;
      if (stopping) return;
      try {
        look();
      } catch (error) {
        post({ type: "failed", message: errorMessage(error) });
        return; // the supervisor ends this thread and starts another
      }
    }
  };
  look();
  const looping = loop();
  return {
    tick,
    async stop() {
      stopping = true;
      if (pause !== undefined) {
        clearTimeout(pause.timer);
        pause.resolve();
      }
      journal.wakeReaders(); // ends the loop's wait
      await looping;
      // An alert still waiting for its event's peak goes out with what is
      // known: the page must not be lost to a stop.
      tick(Date.now(), true);
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(clients.map((c) => c.idle())),
        new Promise((resolve) => grace = setTimeout(resolve, start.drainMs)),
      ]);
      clearTimeout(grace);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/** The worker's global scope, as far as this module uses it. */
interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: SenderReply): void;
  close(): void;
}

if (
  typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
    "undefined"
) {
  const scope = globalThis as unknown as WorkerScope;
  let running: RunningSender | undefined;
  scope.onmessage = async (event: MessageEvent) => {
    const message = event.data as SenderStart | { type: "stop" };
    if (message.type === "start" && running === undefined) {
      try {
        running = runSender(message, (reply) => scope.postMessage(reply));
      } catch (error) {
        scope.postMessage({ type: "failed", message: errorMessage(error) });
      }
    } else if (message.type === "stop") {
      await running?.stop();
      scope.postMessage({ type: "closed" });
      scope.close();
    }
  };
}
