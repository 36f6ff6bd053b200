/**
 * The Alertmanager sender's thread: a Worker that looks at the event
 * journal (and the published rule state, when the endpoint publishes it)
 * every 50 ms, turns what it sees into alerts, and pushes them to every
 * Alertmanager. Everything a remote party can slow down (connections,
 * TLS, retries) runs here; the sampling thread only writes the journal.
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
import type { PeakKind, PeakUnit } from "../rules/peak_format.ts";
import {
  AlertmanagerClient,
  type AlertmanagerCredentials,
} from "./alertmanager_client.ts";

/** One monitor as its alerts describe it. */
export interface AlertMonitor {
  /** The monitor's name. */
  readonly name: string;
  /** Its configured device, else its source kind: the `device` label. */
  readonly device: string;
  /** Its events log's path. */
  readonly eventLog: string;
  /** Its rules, in configuration order (the journal's rule indexes). */
  readonly rules: readonly {
    readonly name: string;
    readonly severity: string;
    readonly summary?: string;
    readonly peakKind?: PeakKind;
    readonly peakUnit?: PeakUnit;
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
   * thread whose looks stopped (base/heartbeat.ts).
   */
  readonly heartbeat: SharedArrayBuffer;
  /** The metrics endpoint's base URL, for `generatorURL`. */
  readonly endpointUrl?: string;
  /** The agent's version, for the `User-Agent`. */
  readonly version: string;
  /** How often to look, ms. */
  readonly tickMs: number;
  /** At stop, how long the queues may take to drain, ms. */
  readonly drainMs: number;
}

/** What the sender's thread tells the agent. */
export type SenderReply =
  | { readonly type: "error"; readonly line: string }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "closed" };

/** The running sender, as {@linkcode runSender} returns it. */
export interface RunningSender {
  /** One look now (tests call it; the timer does otherwise). */
  tick(nowMs?: number): void;
  /** Looks once more, lets the queues drain (at most drainMs), stops. */
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
        peakKind: r.peakKind,
        peakUnit: r.peakUnit,
      }, settings)
    )
  );
  const tick = (nowMs = Date.now()) => {
    Atomics.add(beats, 0, 1);
    state?.refresh();
    const due: PostableAlert[] = [];
    for (let m = 0; m < alerts.length; m++) {
      const published = state?.monitors[m]?.monitor;
      const rules = published?.rules;
      for (let r = 0; r < alerts[m].length; r++) {
        const open = journal.open(m, r);
        const alert = alerts[m][r].tick({
          open,
          last: journal.last(m, r),
          activations: rules?.[r]?.activations ?? NaN,
          livePeak: open === undefined || published === undefined
            ? NaN
            : openEventPeak(published, r, open.startMs),
        }, nowMs);
        if (alert !== undefined) due.push(alert);
      }
    }
    if (due.length > 0) { for (const client of clients) client.send(due); }
  };
  const timer = setInterval(() => {
    try {
      tick();
    } catch (error) {
      post({ type: "failed", message: errorMessage(error) });
    }
  }, start.tickMs);
  tick();
  return {
    tick,
    async stop() {
      clearInterval(timer);
      tick();
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
