/**
 * Pushes alerts to one Alertmanager (API v2, `POST <url>/api/v2/alerts`)
 * the way a well-behaved Prometheus does: batches of at most 64, a bounded
 * queue holding the newest state of each alert, retries with exponential
 * backoff and jitter for what may succeed later (5xx, 429, network errors,
 * timeouts), none for what never will (other 4xx). A 429 or 503 with a
 * `Retry-After` (an Alertmanager behind a proxy sends one) is retried when
 * it says, at most the longest backoff later. Each Alertmanager has its
 * own client, so one that is down or slow delays no other.
 *
 * @module
 */

import { readConfigText } from "../config/read_text.ts";
import { errorMessage } from "../base/error_message.ts";
import { RateLimitedLines } from "../base/rate_limited_lines.ts";
import { terminalSafe } from "../base/terminal_text.ts";
import { formatDuration } from "../base/units.ts";
import type { AlertmanagerConfig } from "../config/types.ts";
import { alertmanagerLabel, type AlertStats } from "../metrics/alert_stats.ts";
import type { PostableAlert } from "./alert_state.ts";

/** What a client sends with each push, read from files once at start. */
export interface AlertmanagerCredentials {
  /** The `Authorization` header (basic or bearer), if any. */
  readonly authorization?: string;
  /** CA certificates (PEM) to verify the server with. */
  readonly caCerts?: readonly string[];
  /** Client certificate chain (PEM), for mutual TLS. */
  readonly cert?: string;
  /** Its private key (PEM). */
  readonly key?: string;
}

/**
 * Reads the files `config` names (password, bearer token, CA, client
 * certificate and key) and checks them. `run` calls it before the agent
 * starts and `check-config` calls it too, so what one accepts the other
 * does. Rejects with one line naming the file and never quoting it:
 * config/read_text.ts's errors for a file that cannot be read (missing,
 * not a regular file, too large, not UTF-8), a TypeError for a setting
 * this client cannot honour or a secret that is no header value.
 *
 * @example No files: nothing to read
 * ```ts
 * import assert from "node:assert/strict";
 * import { readCredentials } from "./alertmanager_client.ts";
 *
 * assert.deepEqual(await readCredentials({ url: "http://am:9093", timeoutMs: 1000 }), {});
 * ```
 */
export async function readCredentials(
  config: AlertmanagerConfig,
): Promise<AlertmanagerCredentials> {
  const label = alertmanagerLabel(config.url);
  // As every file the operator names (config/read_text.ts): a regular
  // file only, bounded, so a token path naming a FIFO, /dev/zero or a log
  // neither hangs nor fills memory at start, and no message quotes it.
  const read = (file: string, what: string) =>
    readConfigText(file, {
      prefix: `Cannot read the ${what} of Alertmanager ${label} from ${file}`,
    });
  const out: {
    authorization?: string;
    caCerts?: string[];
    cert?: string;
    key?: string;
  } = {};
  const url = new URL(config.url);
  if (config.basicAuth !== undefined) {
    const { username, passwordFile } = config.basicAuth;
    // As Prometheus does: surrounding white space (the file's newline) is not part of it.
    const password = (await read(passwordFile, "password")).trim();
    out.authorization = basic(username, password);
  } else if (config.bearerTokenFile !== undefined) {
    const token = (await read(config.bearerTokenFile, "bearer token")).trim();
    if (token === "") {
      throw new Error(
        `Cannot use the bearer token of Alertmanager ${label}: ${config.bearerTokenFile} is empty`,
      );
    }
    out.authorization = `Bearer ${token}`;
  } else if (url.username !== "" || url.password !== "") {
    // fetch refuses URLs with credentials: send them as basic auth.
    out.authorization = basic(
      decodeURIComponent(url.username),
      decodeURIComponent(url.password),
    );
  }
  if (out.authorization !== undefined) {
    // A header value with a line break or a non-Latin-1 character fails in
    // the sender's thread, and the error text would carry the secret into
    // the log, once per restart: refuse it here, naming only the file.
    if (!HEADER_VALUE.test(out.authorization)) {
      const source = config.basicAuth?.passwordFile ??
        config.bearerTokenFile ?? "the URL's user info";
      throw new TypeError(
        `Cannot use the credentials of Alertmanager ${label} from ${source}: they contain a line break, a control character or a character outside Latin-1`,
      );
    }
    if (
      config.bearerTokenFile !== undefined &&
      !BEARER_TOKEN.test(out.authorization.slice("Bearer ".length))
    ) {
      throw new TypeError(
        `Cannot use the bearer token of Alertmanager ${label} from ${config.bearerTokenFile}: a token is one line of letters, digits and -._~+/ (RFC 6750)`,
      );
    }
  }
  const tls = config.tls;
  if (tls?.caFile !== undefined) {
    out.caCerts = [await read(tls.caFile, "CA certificates")];
  }
  if (tls?.certFile !== undefined || tls?.keyFile !== undefined) {
    if (tls.certFile === undefined || tls.keyFile === undefined) {
      throw new TypeError(
        `Cannot push to Alertmanager ${label}: tls.cert_file and tls.key_file go together`,
      );
    }
    out.cert = await read(tls.certFile, "client certificate");
    out.key = await read(tls.keyFile, "client key");
  }
  if (out.caCerts !== undefined || out.cert !== undefined) {
    // A certificate or key that does not parse fails here, at start, with
    // one line, rather than in the sender's thread on every restart.
    try {
      Deno.createHttpClient({
        ...(out.caCerts === undefined ? {} : { caCerts: out.caCerts }),
        ...(out.cert === undefined ? {} : { cert: out.cert, key: out.key! }),
      }).close();
    } catch (error) {
      const files = [tls?.caFile, tls?.certFile, tls?.keyFile].filter((f) =>
        f !== undefined
      ).join(", ");
      throw new TypeError(
        `Cannot use the TLS files of Alertmanager ${label} (${files}): ${
          errorMessage(error).split("\n")[0]
        }`,
      );
    }
  }
  return out;
}

/** What an HTTP header value may hold: visible Latin-1, spaces and tabs. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** RFC 6750's b64token. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** The most of an Alertmanager's error answer read, bytes. */
const MAX_ERROR_BODY = 4096;

function basic(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/** How a client behaves; every field but the first three has a default. */
export interface AlertmanagerClientOptions {
  /** Where its counters go. */
  readonly stats: AlertStats;
  /** Its index in {@linkcode AlertmanagerClientOptions.stats}. */
  readonly index: number;
  /** The agent's version, for the `User-Agent`. */
  readonly version: string;
  /** From {@linkcode readCredentials}; none by default. */
  readonly credentials?: AlertmanagerCredentials;
  /** Alerts waiting at most (default 1000); the oldest go first. */
  readonly queueLimit?: number;
  /** Alerts per push at most (default 64). */
  readonly batchSize?: number;
  /** First retry delay, ms (default 500), doubling per failure. */
  readonly backoffMs?: number;
  /** Longest retry delay, ms (default 30000). */
  readonly maxBackoffMs?: number;
  /** Random numbers in [0, 1) for the jitter; Math.random by default. */
  readonly random?: () => number;
  /**
   * Told of a failure when pushes start failing, and of refusals: at most
   * {@linkcode REFUSAL_LINES} a minute, then how many more there were.
   */
  readonly onError?: (line: string) => void;
  /** The clock those refusal lines are counted by, ms; performance.now by default. */
  readonly now?: () => number;
}

/**
 * Refusal lines told per minute at most. Each push refused is one line, and
 * an Alertmanager that refuses what it is sent (a bad label, a proxy's 403)
 * refuses it again at every resend, for every batch: 34 lines in 12 s. The
 * first few say what is wrong; the rest are counted.
 */
export const REFUSAL_LINES = 5;

type Outcome =
  | { readonly kind: "sent" }
  | { readonly kind: "refused"; readonly message: string }
  | {
    readonly kind: "retry";
    readonly message: string;
    readonly afterMs?: number;
  };

/**
 * A queue and a push loop for one Alertmanager. {@linkcode send} never
 * waits: it queues, and the loop pushes on its own time.
 *
 * @example One alert to an Alertmanager (a stand-in here)
 * ```ts
 * import assert from "node:assert/strict";
 * import { AlertmanagerClient } from "./alertmanager_client.ts";
 * import { AlertStats } from "../metrics/alert_stats.ts";
 *
 * const bodies: unknown[] = [];
 * const am = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
 *   bodies.push(await req.json());
 *   return new Response(null, { status: 200 });
 * });
 * const stats = AlertStats.create(1);
 * const client = new AlertmanagerClient(
 *   { url: `http://127.0.0.1:${am.addr.port}`, timeoutMs: 1000 },
 *   { stats, index: 0, version: "0.1.0" },
 * );
 * const alert = {
 *   labels: { alertname: "drops", instance: "dpu-1" },
 *   annotations: { summary: "Packets dropped" },
 *   startsAt: "2026-01-01T00:00:00.000Z",
 *   endsAt: "2026-01-01T00:02:00.000Z",
 * };
 * client.send([alert]);
 * await client.idle();
 * await client.close();
 * await am.shutdown();
 * assert.deepEqual(bodies, [[alert]]);
 * assert.equal(stats.read(0).sent, 1);
 * ```
 */
export class AlertmanagerClient {
  /** The URL without credentials: the `alertmanager` label. */
  readonly label: string;
  readonly #config: AlertmanagerConfig;
  readonly #endpoint: string;
  readonly #headers: Headers;
  readonly #http: Deno.HttpClient | undefined;
  readonly #stats: AlertStats;
  readonly #index: number;
  readonly #limit: number;
  readonly #batch: number;
  readonly #backoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #random: () => number;
  readonly #onError: (line: string) => void;
  readonly #refusals: RateLimitedLines;
  /** Newest state of each alert by its labels, oldest first. */
  readonly #queue = new Map<string, PostableAlert>();
  readonly #closing = new AbortController();
  #delayMs: number;
  #failing = false;
  #loop: Promise<void> | undefined;

  /** A client for `config`; it pushes nothing until {@linkcode send}. */
  constructor(config: AlertmanagerConfig, options: AlertmanagerClientOptions) {
    this.label = alertmanagerLabel(config.url);
    this.#config = config;
    const url = new URL(config.url);
    url.username = "";
    url.password = "";
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/api/v2/alerts`;
    this.#endpoint = url.href;
    const credentials = options.credentials ?? {};
    this.#headers = new Headers({
      "Content-Type": "application/json",
      "User-Agent": `dpu-traceback/${options.version}`,
    });
    if (credentials.authorization !== undefined) {
      this.#headers.set("Authorization", credentials.authorization);
    }
    const tls = {
      ...(credentials.caCerts === undefined
        ? {}
        : { caCerts: [...credentials.caCerts] }),
    };
    this.#http = credentials.cert !== undefined && credentials.key !== undefined
      ? Deno.createHttpClient({
        ...tls,
        cert: credentials.cert,
        key: credentials.key,
      })
      : credentials.caCerts !== undefined
      ? Deno.createHttpClient(tls)
      : undefined;
    this.#stats = options.stats;
    this.#index = options.index;
    this.#limit = options.queueLimit ?? 1000;
    this.#batch = options.batchSize ?? 64;
    this.#backoffMs = options.backoffMs ?? 500;
    this.#maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.#delayMs = this.#backoffMs;
    this.#random = options.random ?? Math.random;
    this.#onError = options.onError ?? (() => {});
    this.#refusals = new RateLimitedLines(this.#onError, {
      about: `Alertmanager ${this.label}`,
      burst: REFUSAL_LINES,
      intervalMs: 60_000,
      now: options.now,
    });
  }

  /** Alerts waiting to be pushed. */
  get queueLength(): number {
    return this.#queue.size;
  }

  /**
   * Queues `alerts`. A queued alert with the same labels is replaced by
   * the newer (only the newest state matters); when the queue is full the
   * oldest are dropped and counted.
   */
  send(alerts: readonly PostableAlert[]): void {
    if (this.#closing.signal.aborted) return;
    for (const alert of alerts) {
      const key = labelsKey(alert.labels);
      this.#queue.delete(key);
      this.#queue.set(key, alert);
    }
    let dropped = 0;
    for (const key of this.#queue.keys()) {
      if (this.#queue.size <= this.#limit) break;
      this.#queue.delete(key);
      dropped++;
    }
    if (dropped > 0) this.#stats.addDropped(this.#index, dropped);
    this.#stats.setQueueLength(this.#index, this.#queue.size);
    this.#loop ??= this.#run().finally(() => this.#loop = undefined);
  }

  /** Resolves when the queue is empty and no push is in flight (for tests). */
  async idle(): Promise<void> {
    while (this.#loop !== undefined) await this.#loop;
  }

  /** Stops: aborts a push in flight and any wait; queued alerts are lost. */
  async close(): Promise<void> {
    this.#closing.abort();
    await this.#loop;
    this.#http?.close();
    // Refusals held back are counted before the client goes.
    this.#refusals.flush();
  }

  async #run(): Promise<void> {
    const signal = this.#closing.signal;
    while (!signal.aborted && this.#queue.size > 0) {
      const batch = [...this.#queue].slice(0, this.#batch);
      const outcome = await this.#push(batch.map(([, a]) => a));
      if (signal.aborted) return;
      if (outcome.kind === "retry") {
        this.#stats.addFailed(this.#index, batch.length);
        // A Retry-After may lengthen the wait, never shorten it: a proxy
        // answering "Retry-After: 0" must not turn retries into a loop.
        const delay = Math.min(
          this.#maxBackoffMs,
          Math.max(
            outcome.afterMs ?? 0,
            this.#delayMs * (0.75 + 0.5 * this.#random()),
          ),
        );
        this.#delayMs = Math.min(this.#maxBackoffMs, this.#delayMs * 2);
        if (!this.#failing) {
          this.#onError(
            `Alertmanager ${this.label}: ${outcome.message}; retrying with backoff (alerts wait in a queue of at most ${this.#limit})`,
          );
        }
        this.#failing = true;
        await sleep(delay, signal);
        continue;
      }
      this.#delayMs = this.#backoffMs;
      this.#failing = false;
      // An alert updated during the push is sent again; the rest are done.
      for (const [key, alert] of batch) {
        if (this.#queue.get(key) === alert) this.#queue.delete(key);
      }
      if (outcome.kind === "sent") {
        this.#stats.addSent(this.#index, batch.length);
        this.#stats.setLastSuccess(this.#index, Date.now());
      } else {
        this.#stats.addFailed(this.#index, batch.length);
        this.#refusals.write(
          `Alertmanager ${this.label} refused ${batch.length} alert(s), not retried: ${outcome.message}`,
        );
      }
      this.#stats.setQueueLength(this.#index, this.#queue.size);
    }
  }

  async #push(alerts: readonly PostableAlert[]): Promise<Outcome> {
    const timeoutMs = this.#config.timeoutMs;
    let response: Response;
    try {
      response = await fetch(this.#endpoint, {
        method: "POST",
        headers: this.#headers,
        body: JSON.stringify(alerts),
        signal: AbortSignal.any([
          this.#closing.signal,
          AbortSignal.timeout(timeoutMs),
        ]),
        // A redirect elsewhere would meet the thread's net permission
        // (only the Alertmanagers) with a misleading error: say it.
        redirect: "manual",
        ...(this.#http === undefined ? {} : { client: this.#http }),
      });
      if (response.ok) {
        await response.body?.cancel();
        return { kind: "sent" };
      }
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const to = terminalSafe(
          (response.headers.get("location") ?? "").slice(0, 200),
        );
        return {
          kind: "refused",
          message:
            `HTTP ${response.status}: redirects to ${to}; configure that URL instead`,
        };
      }
      // Only the start of the answer: a body without end must not fill
      // the process's memory (the sampler's too).
      const text = terminalSafe(
        (await readStart(response, MAX_ERROR_BODY)).trim().split("\n")[0]
          .slice(0, 200),
      );
      const message = `HTTP ${response.status}${text === "" ? "" : ` ${text}`}`;
      if (response.status === 429 || response.status === 503) {
        return { kind: "retry", message, afterMs: retryAfterMs(response) };
      }
      if (response.status >= 400 && response.status < 500) {
        return { kind: "refused", message };
      }
      return { kind: "retry", message };
    } catch (error) {
      const timedOut = error instanceof DOMException &&
        error.name === "TimeoutError";
      return {
        kind: "retry",
        message: timedOut
          ? `no answer within ${
            formatDuration(timeoutMs / 1000, { exact: true })
          }`
          : causes(error),
      };
    }
  }
}

/**
 * An error's message with its causes' (fetch says only "fetch failed";
 * why is in the cause), on one line.
 */
function causes(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 4; depth++) {
    parts.push(errorMessage(e).split("\n")[0]);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ");
}

/**
 * A `Retry-After` (delay-seconds, or an HTTP date in the IMF-fixdate form
 * RFC 9110 requires senders to use) as ms from now; undefined when absent
 * or anything else (`Date.parse` alone would read "1.5" as a date in 2001).
 */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("Retry-After")?.trim();
  if (value === undefined) return undefined;
  if (/^\d{1,9}$/.test(value)) return Number(value) * 1000;
  if (!IMF_FIXDATE.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function labelsKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.entries(labels).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/** The first `max` bytes of `response`'s body as text; the rest is not read. */
async function readStart(response: Response, max: number): Promise<string> {
  const body = response.body;
  if (body === null) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(size, max));
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, all.length - at);
    all.set(part, at);
    at += part.length;
    if (at === all.length) break;
  }
  return new TextDecoder().decode(all);
}
