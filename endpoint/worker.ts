/**
 * The endpoint's thread: a Worker that serves `/metrics` and the JSON API
 * from what the sampling thread publishes (metrics/shared_state.ts) and,
 * when alerting is on, runs the Alertmanager sender (alerts/sender_worker.ts)
 * beside the server. Everything a remote party can drive (connections,
 * TLS, auth, rendering, Alertmanagers that are slow or down) runs here, on
 * one event loop and heap of its own; the sampler never waits for it, and
 * when it throws the agent's thread sees an error event, not a crash. (V8
 * running out of memory ends the whole process, thread or not: the
 * server's bounds and the sender's queues are what keep memory in check.)
 *
 * Why one thread for both: each isolate costs memory (about 11 to 16 MB
 * resident), and neither part needs the other's thread to be free: the
 * server answers from memory, the sender sleeps until the journal changes,
 * and both wait on sockets without blocking.
 *
 * Messages: the agent posts one {@linkcode EndpointStart}, then
 * `{ type: "shutdown" }`; the worker answers {@linkcode EndpointReply}s.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { formatDuration } from "../base/units.ts";
import { EventJournal } from "../events/event_journal.ts";
import { Logger, type LogLevel } from "../logging/logger.ts";
import { type AgentInfo, AgentMetrics } from "../metrics/agent_metrics.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import { BasicAuthVerifier } from "./basic_auth.ts";
import { endpointRoutes } from "./routes.ts";
import { type MetricsServer, serveMetrics } from "./server.ts";
import { type MonitorShape, PublishedState } from "../metrics/shared_state.ts";
import type { WebConfig } from "./web_config.ts";
import { RateLimitedLines } from "../base/rate_limited_lines.ts";
import { linkableUrl } from "./linkable_url.ts";
import {
  type RunningSender,
  runSender,
  type SenderStart,
} from "../alerts/sender_worker.ts";

/** What the endpoint's thread is started with. */
export interface EndpointStart {
  readonly type: "start";
  /** The state the sampling thread publishes. */
  readonly buffer: SharedArrayBuffer;
  /**
   * One Int32 this thread bumps while it runs: at each of the sender's
   * looks when it runs the sender (at least every `maxLookMs`), else
   * every second.
   */
  readonly heartbeat: SharedArrayBuffer;
  /** Its layout: the monitors as the publisher shaped them. */
  readonly shapes: readonly MonitorShape[];
  /** Agent-wide facts. */
  readonly info: AgentInfo;
  /** `HOST:PORT`. */
  readonly listen: string;
  /** TLS, basic auth and headers, when configured. */
  readonly web?: WebConfig;
  /** The agent's log level and whether it writes for journald. */
  readonly log: { readonly level: LogLevel; readonly journald: boolean };
  /** The event journal's shared buffer, for `/api/v1/events`. */
  readonly journal?: SharedArrayBuffer;
  /** The Alertmanager sender's counters and whose they are, when alerting is on. */
  readonly alerts?: {
    readonly alertmanagers: readonly string[];
    readonly stats: SharedArrayBuffer;
  };
  /**
   * The Alertmanager sender to run once the server listens (its heartbeat
   * is this thread's). Its alerts link to the endpoint, by the instance's
   * name when the endpoint listens on every address.
   */
  readonly sender?: SenderStart;
  /**
   * A restart of a thread that listened before: when the address cannot be
   * had again and the sender runs here, the sender starts anyway and the
   * thread keeps trying the address, instead of failing (alerts must not
   * wait for a port).
   */
  readonly restarted?: boolean;
}

/** What the endpoint's thread tells the agent. */
export type EndpointReply =
  | { readonly type: "listening"; readonly url: string; readonly port: number }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "error"; readonly line: string }
  | { readonly type: "closed" };

/** How often the endpoint's thread shows it is alive, ms. */
const HEARTBEAT_MS = 1000;

/** Refresh the copy of the shared state at most this often, ms. */
const REFRESH_MS = 5;

/** First and longest wait between tries of an address that was taken, ms. */
const RELISTEN_MS = 1000;
const MAX_RELISTEN_MS = 60_000;

/** The worker's global scope, as far as this module uses it. */
interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: EndpointReply): void;
  close(): void;
}

/**
 * Serves the endpoint described by `start` until shutdown. Exported for
 * tests; the worker runs it on its first message.
 */
export async function serveEndpoint(
  start: EndpointStart,
  post: (reply: EndpointReply) => void,
): Promise<{ shutdown(): Promise<void> } | undefined> {
  const log = new Logger({
    program: "dpu-traceback",
    level: start.log.level,
    journald: start.log.journald,
  });
  // A flood of broken connections must not become a flood of log lines.
  const lines = new RateLimitedLines((line) => log.error(line), {
    about: "metrics endpoint",
  });
  const state = new PublishedState(start.buffer, start.shapes);
  state.refresh();
  const metrics = new AgentMetrics(state.monitors, start.info, state.freshness);
  const web = start.web;
  const auth = web !== undefined && web.basicAuthUsers.size > 0
    ? new BasicAuthVerifier(web.basicAuthUsers)
    : undefined;
  const routes = endpointRoutes(metrics, {
    auth,
    journal: start.journal === undefined
      ? undefined
      : new EventJournal(start.journal),
    alerts: start.alerts === undefined ? undefined : {
      alertmanagers: start.alerts.alertmanagers,
      stats: new AlertStats(start.alerts.stats),
    },
  });
  let refreshedAt = -Infinity;
  const listen = () =>
    serveMetrics((request, client) => {
      const now = performance.now();
      if (now - refreshedAt >= REFRESH_MS) {
        state.refresh();
        refreshedAt = now;
      }
      return routes(request, client);
    }, {
      listen: start.listen,
      tls: web?.tls,
      headers: web?.headers,
      onError: (m) => lines.write(m),
    });
  // With the socket bound, give the permission to listen back: what is
  // left is the Alertmanagers' host:port, when the sender runs here.
  const bound = () =>
    Deno.permissions.revoke({ name: "net", host: start.listen });
  let server: MetricsServer | undefined;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let stopping = false;
  try {
    server = listen();
  } catch (error) {
    if (!start.restarted || start.sender === undefined) {
      auth?.[Symbol.dispose]();
      post({ type: "failed", message: errorMessage(error) });
      return undefined;
    }
    // Taken since the last thread listened (another process, an address
    // gone with its interface): the alerts go on while this thread tries.
    let waitMs = RELISTEN_MS;
    const later = (problem: unknown) => {
      lines.write(
        `metrics endpoint: ${
          errorMessage(problem).split("\n")[0]
        }; trying again in ${
          formatDuration(waitMs / 1000, { exact: true })
        } (alerts go on)`,
      );
      relisten = setTimeout(retry, waitMs);
      waitMs = Math.min(MAX_RELISTEN_MS, waitMs * 2);
    };
    const retry = async () => {
      if (stopping) return;
      try {
        server = listen();
      } catch (problem) {
        return later(problem);
      }
      await bound();
      lines.write(`metrics endpoint: listening again on ${server.url}`);
    };
    later(error);
  }
  if (server !== undefined) {
    await bound();
    post({ type: "listening", url: server.url, port: server.port });
  }
  // Proof of life for the agent's watchdog: a stuck loop stops beating.
  // The sender beats at each look, which its loop makes at least every
  // maxLookMs: a wedged sender is seen as well as a wedged thread.
  let sender: RunningSender | undefined;
  let beating: ReturnType<typeof setInterval> | undefined;
  if (start.sender !== undefined) {
    try {
      sender = runSender({
        ...start.sender,
        heartbeat: start.heartbeat,
        endpointUrl: start.sender.endpointUrl ??
          linkableUrl(server!.url, start.sender.instance),
      }, post);
    } catch (error) {
      post({ type: "failed", message: errorMessage(error) });
    }
  } else {
    const beats = new Int32Array(start.heartbeat);
    beating = setInterval(() => Atomics.add(beats, 0, 1), HEARTBEAT_MS);
  }
  return {
    async shutdown() {
      stopping = true;
      clearInterval(beating);
      clearTimeout(relisten);
      await Promise.all([sender?.stop(), server?.shutdown()]);
      auth?.[Symbol.dispose]();
      lines.flush();
    },
  };
}

if (
  typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
    "undefined"
) {
  const scope = globalThis as unknown as WorkerScope;
  let running: Promise<{ shutdown(): Promise<void> } | undefined> | undefined;
  scope.onmessage = async (event: MessageEvent) => {
    const message = event.data as EndpointStart | { type: "shutdown" };
    if (message.type === "start" && running === undefined) {
      running = serveEndpoint(message, (reply) => scope.postMessage(reply));
    } else if (message.type === "shutdown") {
      await (await running)?.shutdown();
      scope.postMessage({ type: "closed" });
      scope.close();
    }
  };
}
