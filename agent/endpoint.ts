/**
 * The metrics endpoint, seen from the agent's (sampling) thread: it runs
 * the server in its own Worker (endpoint/worker.ts), and the Alertmanager
 * sender beside it when alerting is on, restarting the thread if it dies
 * or gets stuck. It serves the monitors' state as the sampling thread
 * publishes it (agent/publication.ts). Nothing the endpoint or the sender
 * does can delay a sample: the threads share only memory the sampler
 * writes without waiting.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import type { Logger } from "../logging/logger.ts";
import type { AgentInfo } from "../metrics/agent_metrics.ts";
import type { MonitorShape } from "../metrics/shared_state.ts";
import { splitListen } from "../endpoint/server.ts";
import type { WebConfig } from "../endpoint/web_config.ts";
import type { EndpointReply, EndpointStart } from "../endpoint/worker.ts";
import { linkableUrl } from "../endpoint/linkable_url.ts";
import type { EventJournal } from "../events/event_journal.ts";
import { SupervisedWorker } from "../base/supervised_worker.ts";
import {
  type AlertSenderOptions,
  type PreparedSender,
  prepareSender,
} from "../alerts/sender.ts";

/** How the endpoint runs. */
export interface EndpointOptions {
  /** `HOST:PORT`; port 0 picks a free port. */
  readonly listen: string;
  /** TLS, basic auth and headers, when configured. */
  readonly web?: WebConfig;
  /** Agent-wide facts the endpoint reports. */
  readonly info: AgentInfo;
  /** Where the endpoint's failures and restarts are told. */
  readonly log: Logger;
  /** First delay before restarting a failed endpoint, ms; default 1000. */
  readonly restartMs?: number;
  /**
   * Restart the endpoint's thread when its heartbeat (once a second) has not
   * moved for this long, ms; default 10000, at least 3000: a thread that is stuck (a loop,
   * a wedged accept) serves nothing, but raises no error either.
   */
  readonly stallMs?: number;
  /** The worker module; tests substitute their own. */
  readonly workerUrl?: URL;
  /**
   * The agent's event journal: the endpoint serves `/api/v1/events` from
   * its shared buffer. Without it those paths are 404s.
   */
  readonly journal?: EventJournal;
  /**
   * The Alertmanager sender, to run on the endpoint's thread; its counters
   * are rendered. Its credential files are read before the thread starts
   * (a file that cannot be read fails the start); its `stallMs` is the
   * endpoint's.
   */
  readonly sender?: Omit<
    AlertSenderOptions,
    "onError" | "restartMs" | "workerUrl" | "stallMs"
  >;
}

/**
 * What the endpoint's thread may do: listen on `listen` (until it does),
 * reach the Alertmanagers' `hosts` (when it runs the sender), and read
 * (its modules and the bcrypt worker's, when run from source; the
 * compiled binary grants no read beyond /etc/dpu-traceback, the log
 * directory and the device libraries); nothing else. The `process_*`
 * metrics need no permission.
 */
function endpointPermissions(
  listen: string,
  hosts: readonly string[],
): Deno.PermissionOptionsObject {
  return {
    net: [listen, ...hosts],
    read: "inherit",
    sys: false,
    env: false,
    write: false,
    ffi: false,
    run: false,
    import: false,
  };
}

/** Longest wait for the endpoint to finish in-flight requests at shutdown. */
const SHUTDOWN_GRACE_MS = 2000;
/** Beyond the sender's drain, the longest wait for the thread at shutdown. */
const STOP_GRACE_MS = 1000;

/**
 * A running endpoint on its own thread.
 *
 * @example
 * ```ts ignore
 * const publication = publishMonitors(agent.monitors, { startMs, log });
 * const endpoint = await Endpoint.start(publication, { listen: "127.0.0.1:9477", info, log });
 * log.info(`metrics on ${endpoint.url}`);
 * await endpoint.shutdown();
 * publication.stop();
 * ```
 */
export class Endpoint {
  /** Where it listens, e.g. `http://127.0.0.1:9477/`. */
  readonly url: string;
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Times the endpoint's thread failed and was restarted. */
  get restarts(): number {
    return this.#thread.restarts;
  }

  readonly #thread: SupervisedWorker;
  readonly #graceMs: number;

  private constructor(
    first: { worker: Worker; url: string; port: number },
    spawn: () => Worker,
    options: EndpointOptions,
    heartbeat: Int32Array,
    sender: PreparedSender | undefined,
  ) {
    this.url = first.url;
    this.port = first.port;
    this.#graceMs = Math.max(
      SHUTDOWN_GRACE_MS,
      (sender?.start.drainMs ?? 0) + STOP_GRACE_MS,
    );
    const thread = new SupervisedWorker(first.worker, {
      name: sender === undefined
        ? "metrics endpoint"
        : "metrics endpoint and Alertmanager sender",
      spawn,
      restartMs: options.restartMs ?? 1000,
      onError: (line) => options.log.error(line),
      heartbeat: { beats: heartbeat, stallMs: options.stallMs },
      onReply: (reply) => {
        const r = reply as EndpointReply;
        if (r.type === "error") options.log.error(r.line);
      },
    });
    this.#thread = thread;
  }

  /**
   * Starts serving the monitors' `published` state (agent/publication.ts).
   * Resolves once the endpoint listens; rejects with a one-line Error
   * (naming the address) when it cannot, leaving nothing running.
   */
  static async start(
    published: {
      readonly buffer: SharedArrayBuffer;
      readonly shapes: readonly MonitorShape[];
    },
    options: EndpointOptions,
  ): Promise<Endpoint> {
    const { buffer, shapes } = published;
    const heartbeat = new SharedArrayBuffer(4);
    // Read and checked here, before any thread: a credential file that
    // cannot be read fails the start with one line.
    const sender = options.sender === undefined
      ? undefined
      : await prepareSender(
        { ...options.sender, stallMs: options.stallMs },
        heartbeat,
      );
    let start: EndpointStart = {
      type: "start",
      buffer,
      heartbeat,
      shapes,
      info: options.info,
      listen: options.listen,
      web: options.web,
      log: { level: options.log.level, journald: options.log.journald },
      journal: options.journal?.buffer,
      alerts: sender === undefined ? undefined : {
        alertmanagers: sender.alertmanagers,
        stats: sender.stats,
      },
      sender: sender?.start,
    };
    const url = options.workerUrl ??
      new URL("../endpoint/worker.ts", import.meta.url);
    const spawn = () => {
      const worker = new Worker(url, {
        type: "module",
        // Its own permissions, so that what it gives up (net, once
        // listening) it gives up alone: the agent keeps net to restart it.
        // The thread that parses remote input can never write a file, load
        // a library, run a program or read the environment.
        deno: {
          permissions: endpointPermissions(start.listen, sender?.hosts ?? []),
        },
      });
      worker.postMessage(start);
      return worker;
    };
    const worker = spawn();
    try {
      const reply = await firstReply(worker);
      // A restarted endpoint comes back where the first one listened, even
      // when the port was picked by the system.
      const { hostname } = splitListen(options.listen);
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      // Its alerts keep linking here even while a restarted thread waits
      // for the address (endpoint/worker.ts).
      const sent = start.sender;
      start = {
        ...start,
        listen: `${host}:${reply.port}`,
        restarted: true,
        sender: sent === undefined ? undefined : {
          ...sent,
          endpointUrl: sent.endpointUrl ??
            linkableUrl(reply.url, sent.instance),
        },
      };
      return new Endpoint(
        { worker, url: reply.url, port: reply.port },
        spawn,
        options,
        new Int32Array(heartbeat),
        sender,
      );
    } catch (error) {
      worker.terminate();
      throw error;
    }
  }

  /**
   * Lets in-flight requests finish (at most 2 s) and the sender's queues
   * drain (at most its drainMs, when it runs here), and stops the
   * endpoint's thread. Never throws.
   */
  async shutdown(): Promise<void> {
    await this.#thread.stop({ type: "shutdown" }, this.#graceMs);
  }
}

/** The worker's first word: listening, or why not. */
function firstReply(
  worker: Worker,
): Promise<{ url: string; port: number }> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => {
      const reply = event.data as EndpointReply;
      if (reply.type === "listening") resolve(reply);
      else if (reply.type === "failed") reject(new Error(reply.message));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(
        new Error(
          `Cannot start the metrics endpoint: ${
            oneLine(event.message ?? errorMessage(event.error))
          }`,
        ),
      );
    };
  });
}

function oneLine(text: string): string {
  return text.split("\n")[0];
}
