/**
 * Serves the endpoint's handler over HTTP/1.1, plain or TLS, on a `HOST:PORT`
 * listen address, within fixed bounds: connections open (in all and per
 * client), TLS handshakes in progress (in all and per client), time to
 * send a request head, idle time between requests, time to answer, and
 * bytes of a request head. A client over a bound is refused at once (503
 * or 429, then closed) or cut off; running out of file descriptors is
 * reported and waited out, never fatal. Nothing here needs the main
 * thread: it runs as well in a Worker.
 *
 * The bounds are shared fairly: when every place (or every handshake
 * place) is taken, a newcomer whose client would still hold fewer than
 * the busiest client once in takes the place of one of the busiest
 * client's connections that waits for a handshake or request head, or
 * else idles between requests (never one being answered); out of file
 * descriptors, the same ones of the busiest clients are closed first, a
 * client's only connection last. So a flood from a few addresses cannot
 * lock out a scraper that opens a connection per scrape (as Prometheus
 * does when its interval exceeds the idle timeout), nor one that keeps
 * its connection; only many distinct clients can fill the endpoint.
 *
 * Why not Deno.serve: in Deno 2.9.6 it has no connection cap, no header,
 * idle or handshake timeout, and an EMFILE on accept is thrown where no one
 * can catch it, ending the process. Why not node:http: its listener in
 * Deno 2.9.6 stops accepting for good after one EMFILE (the process lives
 * on, deaf), and feeding it connections accepted elsewhere relies on
 * internals. So this module accepts with `Deno.listen`, which reports
 * EMFILE as a rejected `accept()` and keeps working, and hands each
 * complete request head to endpoint/exchange.ts, which parses it, checks
 * the request's limits and asks the one handler; TLS is node:tls over the
 * accepted connection (endpoint/transport.ts says why not `Deno.listenTls`).
 *
 * Memory is bounded by the limits: at most `maxConnections` connections,
 * each holding one head buffer (`maxHeadBytes`), TLS state when serving
 * HTTPS, and while it is being written one copy of its response. Measured
 * with the defaults and full head buffers: about 70 KiB a connection
 * plain, 185 KiB with TLS, so 256 connections took 17 or 46 MiB (the
 * default is 128), plus at most that many times the largest response; docs/metrics.md ("Limits") has the
 * figures.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { textAnswer } from "./answer.ts";
import { clientKey } from "./client_key.ts";
import {
  exchange,
  type ExchangeOptions,
  frame,
  type Handler,
} from "./exchange.ts";
import { findHeadEnd, leadingEmptyLines } from "./http1.ts";
import {
  plainTransport,
  type TlsContext,
  tlsContext,
  TlsTransport,
  type Transport,
} from "./transport.ts";

/** Bounds on connections; every field has a default. */
export interface ServerLimitOptions {
  /**
   * Connections open at once. At it, a newcomer whose client would still
   * hold fewer than the busiest client once in takes the place of one of
   * the busiest client's connections that waits or idles (never one being
   * answered); otherwise 503 and close. Default 128: a few Prometheus
   * servers need a few connections, and the bench's 1000-connection flood
   * peaked at 209 MB resident with 256 allowed, 184 MB with 128 (30 s).
   */
  readonly maxConnections?: number;
  /**
   * Connections open at once from one client (IPv4 address, IPv6 /64);
   * over it, 429 and close. Default 32.
   */
  readonly maxConnectionsPerClient?: number;
  /**
   * TLS handshakes in progress at once. At it, a newcomer whose client
   * would still have fewer in progress than the busiest client once in
   * takes the place of the busiest client's oldest; otherwise closed.
   * Default 32.
   */
  readonly maxHandshakes?: number;
  /** TLS handshakes in progress at once from one client; over it, closed. Default 4. */
  readonly maxHandshakesPerClient?: number;
  /** Time for a TLS handshake, ms. Default 5000. */
  readonly handshakeTimeoutMs?: number;
  /**
   * Time to send a complete request head, ms, from the connection's start
   * (after TLS) or from the first byte of a later request; then 408 and
   * close. Default 5000.
   */
  readonly headerTimeoutMs?: number;
  /** Time a kept-alive connection may wait for its next request, ms. Default 20000. */
  readonly idleTimeoutMs?: number;
  /**
   * Time from a complete head to the last byte of its response handed to
   * the system, ms; then the connection is closed. Default 10000.
   */
  readonly requestTimeoutMs?: number;
  /** Bytes of a request head (request line and headers); over it, 431. Default 16384. */
  readonly maxHeadBytes?: number;
  /** Header fields in a request head; over it, 431. Default 100. */
  readonly maxHeaders?: number;
  /** Bytes of a request target (path and query); over it, 414. Default 2048. */
  readonly maxTargetBytes?: number;
  /**
   * Requests being answered at once for one client (IPv4 address, IPv6
   * /64), one per connection at most; over it, 429 and close. Default 8:
   * what a client can make the endpoint hold (responses being written,
   * authentication checks) stays a few responses, whatever its
   * connections.
   */
  readonly maxRequestsPerClient?: number;
  /** At most one line per kind of trouble (EMFILE, cap reached ...) this often, ms. Default 10000. */
  readonly reportIntervalMs?: number;
}

/** What {@linkcode serveMetrics} needs. */
export interface ServeOptions {
  /** `HOST:PORT`; IPv6 hosts in brackets; port 0 picks a free port. */
  readonly listen: string;
  /** PEM certificate chain and key: serve HTTPS. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Told of trouble (connections, a handler that threw), one line each, rate-limited. */
  readonly onError?: (message: string) => void;
  /** Bounds on connections and request heads. */
  readonly limits?: ServerLimitOptions;
  /** Extra headers on every response (web config `http_server_config.headers`). */
  readonly headers?: ReadonlyMap<string, string>;
}

/** A running endpoint. */
export interface MetricsServer {
  /** Where it listens, e.g. `http://127.0.0.1:9477/`. */
  readonly url: string;
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /**
   * Stops accepting, closes connections that have no request in flight,
   * lets requests in flight finish (each within `requestTimeoutMs`), and
   * resolves once every connection is closed.
   */
  shutdown(): Promise<void>;
}

/** Splits `HOST:PORT` (IPv6 hosts in brackets) into its parts. */
export function splitListen(
  listen: string,
): { hostname: string; port: number } {
  const colon = listen.lastIndexOf(":");
  let hostname = listen.slice(0, colon);
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    hostname = hostname.slice(1, -1);
  }
  return { hostname, port: Number(listen.slice(colon + 1)) };
}

const DEFAULTS: Required<ServerLimitOptions> = {
  maxConnections: 128,
  maxConnectionsPerClient: 32,
  maxHandshakes: 32,
  maxHandshakesPerClient: 4,
  handshakeTimeoutMs: 5000,
  headerTimeoutMs: 5000,
  idleTimeoutMs: 20_000,
  requestTimeoutMs: 10_000,
  maxHeadBytes: 16 * 1024,
  maxHeaders: 100,
  maxTargetBytes: 2048,
  maxRequestsPerClient: 8,
  reportIntervalMs: 10_000,
};

/**
 * The limits `options` asks for, defaults filled in. Throws a one-line
 * RangeError naming a limit that is not a positive integer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serverLimits } from "./server.ts";
 *
 * assert.equal(serverLimits({}).maxConnections, 128);
 * assert.equal(serverLimits({ maxConnections: 8 }).maxConnections, 8);
 * assert.throws(() => serverLimits({ idleTimeoutMs: 0 }), RangeError);
 * ```
 */
export function serverLimits(
  options: ServerLimitOptions = {},
): Required<ServerLimitOptions> {
  const limits = { ...DEFAULTS };
  for (const name of Object.keys(DEFAULTS) as (keyof ServerLimitOptions)[]) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(
        `Server limit ${name} must be a positive integer, not ${value}`,
      );
    }
    limits[name] = value;
  }
  return limits;
}

/**
 * Starts serving `handler`. Throws a one-line Error naming the address when it
 * cannot listen (in use, not an address of this host, no permission) or
 * the TLS certificate and key are unusable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveMetrics } from "./server.ts";
 *
 * import { textAnswer } from "./answer.ts";
 *
 * const server = serveMetrics(
 *   (request) => textAnswer(200, `you asked for ${request.path}`),
 *   { listen: "127.0.0.1:0", limits: { maxConnections: 64 } },
 * );
 * const res = await fetch(`${server.url}metrics`);
 * assert.equal(await res.text(), "you asked for /metrics\n");
 * await server.shutdown();
 * ```
 */
export function serveMetrics(
  handler: Handler,
  options: ServeOptions,
): MetricsServer {
  const limits = serverLimits(options.limits);
  const { hostname, port } = splitListen(options.listen);
  let context: TlsContext | undefined;
  if (options.tls !== undefined) {
    try {
      context = tlsContext(options.tls.cert, options.tls.key);
    } catch (error) {
      throw new Error(
        `Cannot serve metrics on ${options.listen}: the TLS certificate or key: ${
          oneLine(error)
        }`,
        { cause: error },
      );
    }
  }
  let listener: Deno.Listener;
  try {
    listener = Deno.listen({ hostname, port, transport: "tcp" });
  } catch (error) {
    throw new Error(
      `Cannot serve metrics on ${options.listen}: ${listenProblem(error)}`,
      { cause: error },
    );
  }
  const addr = listener.addr as Deno.NetAddr;
  const host = addr.hostname.includes(":")
    ? `[${addr.hostname}]`
    : addr.hostname;
  const origin = `${context ? "https" : "http"}://${host}:${addr.port}`;
  const server = new Server(handler, listener, {
    limits,
    context,
    headers: options.headers,
    onError: options.onError,
  });
  return {
    url: `${origin}/`,
    port: addr.port,
    shutdown: () => server.shutdown(),
  };
}

function listenProblem(error: unknown): string {
  if (error instanceof Deno.errors.AddrInUse) {
    return "the address is in use (another dpu-traceback or exporter? choose one with --listen HOST:PORT, or --listen off)";
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return "not an address of this host (--listen takes a local address)";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied (ports below 1024 need root)";
  }
  return oneLine(error);
}

function oneLine(error: unknown): string {
  return errorMessage(error).split("\n")[0];
}

/** Whether an accept failed for want of file descriptors (EMFILE, ENFILE). */
function outOfDescriptors(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EMFILE" || code === "ENFILE" ||
    /os error 2[34]\)|too many open files/i.test(errorMessage(error));
}

/** Refusals being written at once; past it, refused connections are just closed. */
const MAX_REFUSING = 64;
/** Longest a refusal or a last word (408, 431 ...) may take to write, ms. */
const LAST_WORD_MS = 1000;
/** Longest wait between accepts while out of file descriptors, ms. */
const MAX_BACKOFF_MS = 1000;
/** Bodies up to this size go out in one write with their head. */
const ONE_WRITE_BYTES = 64 * 1024;
/**
 * Out of file descriptors, connections closed at each failed accept: this
 * share of those open, at least SHED_MIN.
 */
const SHED_SHARE = 1 / 8;
const SHED_MIN = 4;

/** Where a connection is in its life; decides what a deadline or shutdown does. */
type Phase = "handshake" | "head" | "idle" | "request";

/** One accepted connection: its transport, phase and deadline. */
class Connection {
  phase: Phase;
  /** When it entered its phase (`performance.now()`). */
  since = performance.now();
  /** Whether bytes of the current request head have arrived. */
  started = false;
  /** Whether it counts as a TLS handshake in progress. */
  handshaking = false;
  readonly transport: Transport;
  readonly remoteAddr: Deno.Addr;
  /** Its client's key (endpoint/client_key.ts). */
  readonly client: string;
  /** Rejects what {@linkcode until} waits for once the connection ends. */
  readonly #waiting = new Set<(reason: Error) => void>();
  #isEnded = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastWord: Promise<void> | undefined;

  constructor(
    transport: Transport,
    remoteAddr: Deno.Addr,
    client: string,
    phase: Phase,
  ) {
    this.transport = transport;
    this.remoteAddr = remoteAddr;
    this.client = client;
    this.phase = phase;
  }

  /** Moves on to `phase`, from now. */
  enter(phase: Phase): void {
    this.phase = phase;
    this.since = performance.now();
  }

  /** Whether the connection is closed or saying its last word. */
  get isEnded(): boolean {
    return this.#isEnded;
  }

  /** Runs `onExpire` after `ms` unless another deadline replaces this one. */
  deadline(ms: number, onExpire: () => void): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(onExpire, ms);
  }

  /** `promise`, or a rejection as soon as the connection ends. */
  until<T>(promise: Promise<T>): Promise<T> {
    promise.catch(() => {});
    if (this.#isEnded) return Promise.reject(new Error("connection closed"));
    // Not Promise.race with a promise that settles only at the end: each
    // race would leave a reaction on it, holding its result (a response
    // body) for as long as the connection lives.
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject);
      promise.then(resolve, reject).finally(() => this.#waiting.delete(reject));
    });
  }

  /**
   * Ends the exchange: writes `bytes` (a refusal, a 408) and closes within
   * LAST_WORD_MS whatever the client does. Resolves once closed.
   */
  lastWord(bytes: Uint8Array): Promise<void> {
    if (this.#lastWord === undefined) {
      // Waits end now, so that nothing else is read or written meanwhile.
      this.#stop();
      this.#lastWord = new Promise<void>((resolve) => {
        // Resolved by the timer too: a TLS write whose callback never comes
        // after destroy() must not hold the connection's place for good.
        const timer = setTimeout(() => {
          this.transport.close();
          resolve();
        }, LAST_WORD_MS);
        this.transport.write(bytes).catch(() => {}).finally(() => {
          clearTimeout(timer);
          this.transport.close();
          resolve();
        });
      });
    }
    return this.#lastWord;
  }

  /** Closes now, or once the last word being written is out. */
  finish(): Promise<void> {
    if (this.#lastWord !== undefined) return this.#lastWord;
    this.close();
    return Promise.resolve();
  }

  /** Closes now, unless a last word is being written (it closes after). */
  close(): void {
    if (this.#lastWord !== undefined) return;
    this.#stop();
    this.transport.close();
  }

  #stop(): void {
    clearTimeout(this.#timer);
    this.#isEnded = true;
    const reason = new Error("connection closed");
    for (const reject of this.#waiting) reject(reason);
    this.#waiting.clear();
  }
}

/**
 * How cheaply `c` can be closed to make room, lowest first: in a TLS
 * handshake 0, waiting for a request head 1, idle between requests 2;
 * undefined while a request is being answered or once it is ending.
 */
function closingRank(c: Connection): number | undefined {
  if (c.isEnded) return undefined;
  switch (c.phase) {
    case "handshake":
      return 0;
    case "head":
      return 1;
    case "idle":
      return 2;
    default:
      return undefined;
  }
}

/** A client's connections, in the order they came, and its handshakes. */
interface ClientEntry {
  readonly key: string;
  readonly connections: Set<Connection>;
  /** Of them, those in a TLS handshake. */
  handshakes: number;
}

/** Whether `a` is cheaper to close than `b` (both closable): by closingRank, then the older in its phase. */
function cheaper(a: Connection, b: Connection): boolean {
  const ra = closingRank(a)!;
  const rb = closingRank(b)!;
  return ra < rb || (ra === rb && a.since < b.since);
}

/** Of `entry`'s connections, the cheapest to close (see {@linkcode cheaper}). */
function cheapest(entry: ClientEntry): Connection | undefined {
  let best: Connection | undefined;
  for (const c of entry.connections) {
    if (closingRank(c) === undefined) continue;
    if (best === undefined || cheaper(c, best)) best = c;
  }
  return best;
}

/** `entry`'s oldest TLS handshake in progress (connections are in the order they came). */
function oldestHandshake(entry: ClientEntry): Connection | undefined {
  for (const c of entry.connections) {
    if (c.handshaking && !c.isEnded) return c;
  }
  return undefined;
}

/** A connection to close to make room, and its client. */
interface Eviction {
  readonly victim: Connection;
  readonly from: ClientEntry;
}

interface ServerOptions {
  readonly limits: Required<ServerLimitOptions>;
  readonly context?: TlsContext;
  readonly headers?: ReadonlyMap<string, string>;
  readonly onError?: (message: string) => void;
}

/** The accept loop, the bounds, and the HTTP/1.1 exchange on each connection. */
class Server {
  readonly #handler: Handler;
  readonly #listener: Deno.Listener;
  readonly #limits: Required<ServerLimitOptions>;
  readonly #context: TlsContext | undefined;
  readonly #exchange: ExchangeOptions;
  readonly #onError: ((message: string) => void) | undefined;
  readonly #open = new Set<Connection>();
  readonly #clients = new Map<string, ClientEntry>();
  readonly #reports = new Map<string, { at: number; more: number }>();
  readonly #accepting: Promise<void>;
  #handshakes = 0;
  #refusing = 0;
  #stopping = false;
  #backoff:
    | { timer: ReturnType<typeof setTimeout>; wake: () => void }
    | undefined;
  #drained: (() => void) | undefined;

  constructor(
    handler: Handler,
    listener: Deno.Listener,
    options: ServerOptions,
  ) {
    this.#handler = handler;
    this.#listener = listener;
    this.#limits = options.limits;
    this.#context = options.context;
    this.#exchange = {
      limits: options.limits,
      headers: options.headers,
      // Each one: the caller's lines are rate-limited already.
      onError: (line) => this.#onError?.(line),
      stopping: () => this.#stopping,
    };
    this.#onError = options.onError;
    this.#accepting = this.#acceptLoop();
  }

  async shutdown(): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      try {
        this.#listener.close();
      } catch {
        // Already closed.
      }
      if (this.#backoff !== undefined) {
        clearTimeout(this.#backoff.timer);
        this.#backoff.wake();
      }
      // Requests in flight finish (their responses say `connection:
      // close`); every other connection has nothing to lose.
      for (const c of this.#open) if (c.phase !== "request") c.close();
    }
    await this.#accepting;
    if (this.#open.size > 0 || this.#refusing > 0) {
      await new Promise<void>((resolve) => this.#drained = resolve);
    }
  }

  async #acceptLoop(): Promise<void> {
    let backoffMs = 0;
    while (!this.#stopping) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
        backoffMs = 0;
      } catch (error) {
        if (this.#stopping || error instanceof Deno.errors.BadResource) return;
        if (outOfDescriptors(error)) {
          const open = this.#open.size;
          const closed = this.#shed(
            Math.max(SHED_MIN, Math.ceil(open * SHED_SHARE)),
          );
          this.#report(
            "descriptors",
            `metrics endpoint: out of file descriptors (${
              oneLine(error)
            }); not accepting for now, ${open} connections open, ${closed} waiting or idle ones of the busiest clients closed`,
          );
          backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(10, backoffMs * 2));
        } else {
          // ECONNABORTED and the like: one connection's trouble.
          this.#report("accept", `metrics endpoint: accept: ${oneLine(error)}`);
          backoffMs = 10;
        }
        await new Promise<void>((wake) => {
          this.#backoff = { timer: setTimeout(wake, backoffMs), wake };
        });
        this.#backoff = undefined;
        continue;
      }
      this.#admit(conn);
    }
  }

  /**
   * Takes `conn` on, or refuses it at once when a bound is reached and no
   * busier client's connection can make room for it.
   */
  #admit(conn: Deno.Conn): void {
    const limits = this.#limits;
    const client = clientKey(conn.remoteAddr);
    const mine = this.#clients.get(client)?.connections.size ?? 0;
    let room: Eviction | undefined;
    if (this.#open.size >= limits.maxConnections) {
      if (mine < limits.maxConnectionsPerClient) {
        room = this.#victim((e) => e.connections.size, mine, cheapest);
      }
      if (room === undefined) {
        this.#report(
          "connections",
          `metrics endpoint: ${this.#open.size} connections open (the limit); refusing more`,
        );
        this.#refuse(conn, client, 503, "too many connections");
        return;
      }
    }
    if (mine >= limits.maxConnectionsPerClient) {
      this.#report(
        "client connections",
        `metrics endpoint: ${mine} connections open from ${client} (the limit); refusing more from it`,
      );
      this.#refuse(conn, client, 429, "too many connections from this client");
      return;
    }
    let handshakeRoom: Eviction | undefined;
    if (this.#context !== undefined) {
      const handshaking = this.#clients.get(client)?.handshakes ?? 0;
      if (handshaking >= limits.maxHandshakesPerClient) {
        this.#report(
          "client handshakes",
          `metrics endpoint: ${handshaking} TLS handshakes in progress from ${client} (the limit); refusing more from it`,
        );
        close(conn);
        return;
      }
      const freed = room?.victim.handshaking ? 1 : 0;
      if (this.#handshakes - freed >= limits.maxHandshakes) {
        handshakeRoom = this.#victim(
          (e) => e.handshakes,
          handshaking,
          oldestHandshake,
        );
        if (handshakeRoom === undefined) {
          this.#report(
            "handshakes",
            `metrics endpoint: ${this.#handshakes} TLS handshakes in progress (the limit); refusing more`,
          );
          close(conn);
          return;
        }
      }
    }
    if (room !== undefined) {
      this.#report(
        "connections making room",
        `metrics endpoint: ${this.#open.size} connections open (the limit); closing one of the ${room.from.connections.size} of ${room.from.key} (waiting or idle) to let ${client} in`,
      );
      this.#evict(room.victim);
    }
    if (handshakeRoom !== undefined) {
      this.#report(
        "handshakes making room",
        `metrics endpoint: ${this.#handshakes} TLS handshakes in progress (the limit); closing the oldest of the ${handshakeRoom.from.handshakes} of ${handshakeRoom.from.key} to let ${client} in`,
      );
      this.#evict(handshakeRoom.victim);
    }

    let entry = this.#clients.get(client);
    if (entry === undefined) {
      entry = { key: client, connections: new Set(), handshakes: 0 };
      this.#clients.set(client, entry);
    }
    let c: Connection;
    if (this.#context !== undefined) {
      const transport = new TlsTransport(conn, this.#context);
      c = new Connection(transport, conn.remoteAddr, client, "handshake");
      c.handshaking = true;
      this.#handshakes++;
      entry.handshakes++;
    } else {
      c = new Connection(plainTransport(conn), conn.remoteAddr, client, "head");
    }
    this.#open.add(c);
    entry.connections.add(c);
    this.#serve(c).catch(() => {
      // Resets, timeouts, TLS failures: the client's business, not the
      // operator's (and a flood of them must not flood the log).
    }).then(() => c.finish()).finally(() => {
      this.#forget(c);
      this.#maybeDrained();
    });
  }

  /**
   * A connection to close so that a client holding `mine` (connections,
   * or handshakes: `held` counts them) can have one more: one that `pick`
   * chooses from the client holding the most, when that is at least 2 and
   * more than `mine + 1` (the newcomer's client would then still hold
   * fewer). Of clients holding as many, the one whose pick is cheapest to
   * close (closingRank, then the oldest); when none has one (all being
   * answered), those holding the next most, and so on. Cost: a pass over
   * the clients, a sort of the busy ones, the connections of the busiest.
   */
  #victim(
    held: (entry: ClientEntry) => number,
    mine: number,
    pick: (entry: ClientEntry) => Connection | undefined,
  ): Eviction | undefined {
    const least = Math.max(2, mine + 2);
    const busy: ClientEntry[] = [];
    for (const entry of this.#clients.values()) {
      if (held(entry) >= least) busy.push(entry);
    }
    busy.sort((a, b) => held(b) - held(a));
    let best: Eviction | undefined;
    for (let i = 0; i < busy.length; i++) {
      const from = busy[i];
      const victim = pick(from);
      if (
        victim !== undefined &&
        (best === undefined || cheaper(victim, best.victim))
      ) {
        best = { victim, from };
      }
      const next = busy[i + 1];
      if (
        best !== undefined && (next === undefined || held(next) < held(from))
      ) {
        return best;
      }
    }
    return best;
  }

  /**
   * Closes up to `count` connections to give file descriptors back, those
   * of the clients holding the most first; of a client's, those waiting
   * for a handshake or a request head, then idle ones, oldest first;
   * never one being answered. A client's only connection comes last.
   * Returns how many it closed.
   */
  #shed(count: number): number {
    const candidates: { c: Connection; held: number; rank: number }[] = [];
    for (const entry of this.#clients.values()) {
      for (const c of entry.connections) {
        const rank = closingRank(c);
        if (rank !== undefined) {
          candidates.push({ c, held: entry.connections.size, rank });
        }
      }
    }
    candidates.sort((a, b) =>
      b.held - a.held || a.rank - b.rank || a.c.since - b.c.since
    );
    const victims = candidates.slice(0, count);
    for (const { c } of victims) this.#evict(c);
    return victims.length;
  }

  /** Closes `c` now and stops counting it, so that its place is free at once. */
  #evict(c: Connection): void {
    c.close();
    this.#forget(c);
  }

  /** Stops counting `c` (idempotent). */
  #forget(c: Connection): void {
    if (!this.#open.delete(c)) return;
    this.#handshakeOver(c);
    const entry = this.#clients.get(c.client);
    entry?.connections.delete(c);
    if (entry?.connections.size === 0) this.#clients.delete(c.client);
  }

  /** Stops counting `c` as a handshake in progress (idempotent). */
  #handshakeOver(c: Connection): void {
    if (!c.handshaking) return;
    c.handshaking = false;
    this.#handshakes--;
    const entry = this.#clients.get(c.client);
    if (entry !== undefined) entry.handshakes--;
  }

  /**
   * Answers `status` and closes, without reading: cheap, and bounded by
   * MAX_REFUSING (past it, or for TLS, where a plaintext answer would be
   * noise, the connection is just closed).
   */
  #refuse(
    conn: Deno.Conn,
    client: string,
    status: number,
    message: string,
  ): void {
    if (this.#context !== undefined || this.#refusing >= MAX_REFUSING) {
      close(conn);
      return;
    }
    this.#refusing++;
    const c = new Connection(
      plainTransport(conn),
      conn.remoteAddr,
      client,
      "request",
    );
    c.lastWord(this.#refusal(status, message, { "retry-after": "1" }))
      .finally(() => {
        this.#refusing--;
        this.#maybeDrained();
      });
  }

  #maybeDrained(): void {
    if (this.#stopping && this.#open.size === 0 && this.#refusing === 0) {
      this.#drained?.();
    }
  }

  async #serve(c: Connection): Promise<void> {
    const limits = this.#limits;
    if (c.transport instanceof TlsTransport) {
      try {
        c.deadline(limits.handshakeTimeoutMs, () => c.close());
        await c.until(c.transport.secured);
      } finally {
        this.#handshakeOver(c);
      }
      c.enter("head");
    }
    const buf = new Uint8Array(limits.maxHeadBytes);
    let length = 0;
    c.deadline(limits.headerTimeoutMs, () => this.#headTimedOut(c));
    while (true) {
      // Read until a whole head is in; empty lines before it are skipped
      // (RFC 9112 2.2), also when pipelined behind the last request.
      const skipped = leadingEmptyLines(buf, length);
      buf.copyWithin(0, skipped, length);
      length -= skipped;
      let end = findHeadEnd(buf, 0, length);
      while (end < 0) {
        if (length === buf.length) {
          await c.lastWord(this.#refusal(431, "request head too large"));
          return;
        }
        const n = await c.until(c.transport.read(buf.subarray(length)));
        if (n === null) return;
        if (c.phase === "idle") {
          // The next request has begun: it gets the head timeout from now.
          c.enter("head");
          c.deadline(limits.headerTimeoutMs, () => this.#headTimedOut(c));
        }
        c.started = true;
        const from = length;
        length += n;
        const blank = leadingEmptyLines(buf, length);
        if (blank > 0) {
          buf.copyWithin(0, blank, length);
          length -= blank;
        }
        end = findHeadEnd(buf, Math.max(0, from - blank), length);
      }

      const head = buf.slice(0, end);
      // What follows the head is the next (pipelined) request's start.
      buf.copyWithin(0, end, length);
      length -= end;
      const entry = this.#clients.get(c.client);
      let answering = 0;
      for (const other of entry?.connections ?? []) {
        if (other.phase === "request") answering++;
      }
      if (answering >= limits.maxRequestsPerClient) {
        this.#report(
          "client requests",
          `metrics endpoint: ${answering} requests from ${c.client} being answered (the limit); refusing more from it`,
        );
        await c.lastWord(this.#refusal(
          429,
          "too many requests in flight from this client",
          { "retry-after": "1" },
        ));
        return;
      }
      c.enter("request");
      c.deadline(limits.requestTimeoutMs, () => c.close());
      const reply = await c.until(
        exchange(head, this.#handler, this.#exchange, c.remoteAddr),
      );
      await this.#write(c, reply.bytes);
      if (reply.close || this.#stopping) return;

      // Pipelined bytes already in: the next head's time starts now.
      // Otherwise the connection idles until the next request begins.
      if (length > 0) {
        c.enter("head");
        c.started = true;
        c.deadline(limits.headerTimeoutMs, () => this.#headTimedOut(c));
      } else {
        c.enter("idle");
        c.started = false;
        c.deadline(limits.idleTimeoutMs, () => c.close());
      }
    }
  }

  /** A head that took too long: 408 if the client sent part of it, else just close. */
  #headTimedOut(c: Connection): void {
    if (c.started) {
      c.lastWord(this.#refusal(408, "request head timeout")).catch(() => {});
    } else {
      c.close();
    }
  }

  /** A one-line refusal, framed like every response, ending the connection. */
  #refusal(
    status: number,
    message: string,
    headers?: Record<string, string>,
  ): Uint8Array {
    const reply = frame(textAnswer(status, message, headers), undefined, {
      close: true,
      headers: this.#exchange.headers,
    });
    return concat(reply.bytes);
  }

  /** Writes a response: in one write when it is small, else head then body. */
  async #write(c: Connection, parts: readonly Uint8Array[]): Promise<void> {
    const size = parts.reduce((sum, part) => sum + part.length, 0);
    if (size <= ONE_WRITE_BYTES) {
      await c.until(c.transport.write(concat(parts)));
      return;
    }
    for (const part of parts) await c.until(c.transport.write(part));
  }

  /** Tells the operator of `kind` of trouble at most once per interval. */
  #report(kind: string, message: string): void {
    if (this.#onError === undefined) return;
    const now = performance.now();
    const last = this.#reports.get(kind);
    if (last !== undefined && now - last.at < this.#limits.reportIntervalMs) {
      last.more++;
      return;
    }
    const more = last?.more ?? 0;
    this.#reports.set(kind, { at: now, more: 0 });
    this.#onError(
      more > 0
        ? `${message} (${more} more like it since the last report)`
        : message,
    );
  }
}

/** Closes an accepted connection nobody will serve. */
function close(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** `parts` in one buffer (no copy when there is one part). */
function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const all = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}
