/**
 * Attack clients for bench/flood.ts, one mode per process (so that their
 * CPU is not the agent's, and bench/flood.ts can give them their own file
 * descriptor limit). Each runs for `--seconds`, then prints one JSON line
 * of counts on stdout and exits. Sockets are node:net's, because only
 * node:net can bind a chosen source address (127.0.0.x) in Deno 2.9.6.
 *
 * ```sh
 * deno run -A bench/flood_clients.ts --mode keepalive --port 9477 \
 *   --count 1000 --addrs 127.0.0.16,127.0.0.17 --seconds 15
 * ```
 *
 * Modes (every slot reconnects `--reconnect-ms` after the server closes
 * its connection, so the pressure lasts the whole run):
 *
 * - `keepalive`: `--count` HTTP/1.1 keep-alive connections, each sending
 *   `GET /metrics` (Prometheus' Accept and Accept-Encoding) as soon as the
 *   last answer is in.
 * - `auth`: the same, with basic auth as `--auth-user` and a wrong
 *   password, a different one in every request (a brute force: no two
 *   requests can share one bcrypt check).
 * - `idle`: `--count` connections that send nothing.
 * - `slowloris`: `--count` connections sending a request line and then one
 *   header byte every `--interval-ms`, never finishing the head.
 * - `tls-abandon`: `--count` connections that start a TLS handshake and
 *   abandon it: half send a whole ClientHello and then nothing (the server
 *   does its half of the key exchange and waits), half send 10 bytes of it.
 * - `tls-complete`: `--count` loops that complete a TLS handshake and close
 *   at once, again and again.
 *
 * @module
 */

import net from "node:net";
import tls from "node:tls";
import { parseArgs } from "node:util";

/** The modes this script runs. */
export const MODES = [
  "keepalive",
  "auth",
  "idle",
  "slowloris",
  "tls-abandon",
  "tls-complete",
] as const;
/** One of {@linkcode MODES}. */
export type Mode = typeof MODES[number];

/** What one client process did, printed as one JSON line at its end. */
export interface ClientStats {
  mode: Mode;
  /** Slots (connections kept going at once, or handshake loops). */
  count: number;
  addrs: string[];
  /** Connection attempts. */
  connects: number;
  /** Attempts that connected. */
  connected: number;
  /** Failed attempts by error code (ECONNREFUSED, EADDRNOTAVAIL ...). */
  connectErrors: Record<string, number>;
  /** Connections the server closed (or reset) while the client held them. */
  closedByServer: number;
  /** Responses by status code (refusals and 408s included). */
  responses: Record<string, number>;
  /** Requests sent (keepalive, auth). */
  requests: number;
  /** TLS handshakes completed (tls-complete). */
  handshakes: number;
  /** Most connections open at once in this process. */
  maxOpen: number;
  /** Connections open when the run ended. */
  openAtEnd: number;
  /** Connection attempts still in progress when the run ended. */
  connectingAtEnd: number;
  /** Seconds until `count` connections were open at once (never: null). */
  rampS: number | null;
  /** How long the server let connections live, ms (slowloris, tls-abandon, idle). */
  lifetimeMs: { count: number; max: number; median: number | null };
  /** Errors on established connections, by code. */
  socketErrors: Record<string, number>;
  seconds: number;
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    mode: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string" },
    count: { type: "string", default: "100" },
    addrs: { type: "string", default: "127.0.0.1" },
    seconds: { type: "string", default: "15" },
    "reconnect-ms": { type: "string", default: "100" },
    "interval-ms": { type: "string", default: "2000" },
    "max-pending": { type: "string", default: "512" },
    "auth-user": { type: "string" },
  },
});

const MODE = values.mode as Mode;
if (!MODES.includes(MODE)) {
  console.error(`--mode must be one of ${MODES.join(", ")}`);
  Deno.exit(2);
}
const HOST = values.host;
const PORT = Number(values.port);
const COUNT = Number(values.count);
const ADDRS = values.addrs.split(",");
const SECONDS = Number(values.seconds);
const RECONNECT_MS = Number(values["reconnect-ms"]);
const INTERVAL_MS = Number(values["interval-ms"]);
const MAX_PENDING = Number(values["max-pending"]);
const encoder = new TextEncoder();
const REQUEST_HEAD = `GET /metrics HTTP/1.1\r\nHost: ${HOST}:${PORT}\r\n` +
  "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n" +
  "Accept-Encoding: gzip\r\nUser-Agent: flood\r\n";
const PLAIN_REQUEST = encoder.encode(REQUEST_HEAD + "\r\n");
let guesses = 0;
/**
 * The next request: in auth mode each carries a password never sent
 * before (a brute force), so no two share one bcrypt check.
 */
function request(): Uint8Array {
  if (values["auth-user"] === undefined) return PLAIN_REQUEST;
  const credentials = `${values["auth-user"]}:guess-${Deno.pid}-${guesses++}`;
  return encoder.encode(
    `${REQUEST_HEAD}Authorization: Basic ${btoa(credentials)}\r\n\r\n`,
  );
}

const started = performance.now();
const deadline = started + SECONDS * 1000;
let stopping = false;
const open = new Set<net.Socket>();
const lifetimes: number[] = [];

const stats: ClientStats = {
  mode: MODE,
  count: COUNT,
  addrs: ADDRS,
  connects: 0,
  connected: 0,
  connectErrors: {},
  closedByServer: 0,
  responses: {},
  requests: 0,
  handshakes: 0,
  maxOpen: 0,
  openAtEnd: 0,
  connectingAtEnd: 0,
  rampS: null,
  lifetimeMs: { count: 0, max: 0, median: null },
  socketErrors: {},
  seconds: SECONDS,
};

function bump(table: Record<string, number>, key: string): void {
  table[key] = (table[key] ?? 0) + 1;
}

function codeOf(error: unknown): string {
  return (error as { code?: string }).code ?? String(error).slice(0, 60);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// At most MAX_PENDING connects in flight, so a large count ramps up
// instead of overflowing the listen backlog all at once.
let pending = 0;
const waiting: (() => void)[] = [];
async function connectSlot(): Promise<void> {
  while (pending >= MAX_PENDING) {
    await new Promise<void>((r) => waiting.push(r));
  }
  pending++;
}
function releaseSlot(): void {
  pending--;
  waiting.shift()?.();
}

/** Opens a TCP connection from `addr`; undefined when it failed. */
async function connect(addr: string): Promise<net.Socket | undefined> {
  await connectSlot();
  stats.connects++;
  try {
    return await new Promise<net.Socket | undefined>((resolve) => {
      const socket = net.connect({
        host: HOST,
        port: PORT,
        localAddress: addr,
      });
      socket.setNoDelay(true);
      const onError = (error: Error) => {
        bump(stats.connectErrors, codeOf(error));
        socket.destroy();
        resolve(undefined);
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        stats.connected++;
        track(socket);
        resolve(socket);
      });
    });
  } finally {
    releaseSlot();
  }
}

/** Counts `socket` as open until it closes, and errors on it by code. */
function track(socket: net.Socket): void {
  open.add(socket);
  if (open.size > stats.maxOpen) stats.maxOpen = open.size;
  if (stats.rampS === null && open.size >= COUNT) {
    stats.rampS = (performance.now() - started) / 1000;
  }
  const at = performance.now();
  socket.on("error", (error) => bump(stats.socketErrors, codeOf(error)));
  socket.once("close", () => {
    open.delete(socket);
    if (!stopping) {
      stats.closedByServer++;
      lifetimes.push(performance.now() - at);
    }
  });
}

/** The status of an HTTP response head at the start of `text`, if any. */
function statusOf(text: string): string | undefined {
  return /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
}

/**
 * Reads HTTP/1.1 responses off `socket`: `next()` resolves with each
 * response's status and whether the server closes after it, or null once
 * the connection is gone.
 */
function responses(socket: net.Socket) {
  let buffer = new Uint8Array(0);
  const ready: { status: string; close: boolean }[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let need = -1; // bytes of the current response (head + body), once known
  const decoder = new TextDecoder("latin1");
  socket.on("data", (chunk: Uint8Array) => {
    const joined = new Uint8Array(buffer.length + chunk.length);
    joined.set(buffer);
    joined.set(chunk, buffer.length);
    buffer = joined;
    for (;;) {
      if (need < 0) {
        let end = -1;
        for (let i = 3; i < buffer.length; i++) {
          if (
            buffer[i] === 10 && buffer[i - 1] === 13 && buffer[i - 2] === 10 &&
            buffer[i - 3] === 13
          ) {
            end = i + 1;
            break;
          }
        }
        if (end < 0) break;
        const head = decoder.decode(buffer.subarray(0, end));
        const length = Number(
          /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? "0",
        );
        need = end + length;
        ready.push({
          status: statusOf(head) ?? "???",
          close: /\r\nconnection:\s*close/i.test(head),
        });
      }
      // The head is counted; its body may still be coming.
      if (buffer.length < need) break;
      buffer = buffer.slice(need);
      need = -1;
      wake?.();
    }
  });
  socket.once("close", () => {
    ended = true;
    wake?.();
  });
  let taken = 0;
  return {
    async next(): Promise<{ status: string; close: boolean } | null> {
      // A response counts once its whole body is in (need < 0 again) or the
      // connection ends.
      while (
        !(taken < ready.length && (need < 0 || taken < ready.length - 1)) &&
        !ended
      ) {
        await new Promise<void>((r) => wake = r);
        wake = undefined;
      }
      if (taken < ready.length) return ready[taken++];
      return null;
    },
  };
}

/** keepalive and auth: request after request on one connection. */
async function hammerSlot(addr: string): Promise<void> {
  while (!stopping) {
    const socket = await connect(addr);
    if (socket === undefined) {
      await sleep(RECONNECT_MS);
      continue;
    }
    const answers = responses(socket);
    while (!stopping && !socket.destroyed) {
      socket.write(request());
      stats.requests++;
      const answer = await answers.next();
      if (answer === null) break;
      bump(stats.responses, answer.status);
      if (answer.close) break;
    }
    socket.destroy();
    if (!stopping) await sleep(RECONNECT_MS);
  }
}

/** idle, slowloris, tls-abandon: hold a connection until the server drops it. */
async function holdSlot(
  addr: string,
  send: (socket: net.Socket) => void,
): Promise<void> {
  while (!stopping) {
    const socket = await connect(addr);
    if (socket === undefined) {
      await sleep(RECONNECT_MS);
      continue;
    }
    let first = true;
    socket.on("data", (chunk: Uint8Array) => {
      if (!first) return;
      first = false;
      const text = new TextDecoder("latin1").decode(chunk.subarray(0, 16));
      bump(
        stats.responses,
        statusOf(text) ?? (chunk[0] === 0x16 ? "tls-server-hello" : "other"),
      );
    });
    send(socket);
    await new Promise<void>((r) => socket.once("close", () => r()));
    if (!stopping) await sleep(RECONNECT_MS);
  }
}

/** A ClientHello as node:tls sends it, captured from a local listener. */
function captureClientHello(): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => {
      let buf = new Uint8Array(0);
      s.on("data", (d: Uint8Array) => {
        const n = new Uint8Array(buf.length + d.length);
        n.set(buf);
        n.set(d, buf.length);
        buf = n;
        if (buf.length < 5) return;
        const length = (buf[3] << 8) | buf[4];
        if (buf.length < 5 + length) return;
        resolve(buf.slice(0, 5 + length));
        s.destroy();
        server.close();
      });
    });
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      const c = tls.connect({
        host: "127.0.0.1",
        port,
        rejectUnauthorized: false,
      });
      c.on("error", () => {});
    });
  });
}

/** tls-complete: handshake, close, again. */
async function handshakeSlot(addr: string): Promise<void> {
  while (!stopping) {
    await connectSlot();
    stats.connects++;
    const ok = await new Promise<boolean>((resolve) => {
      // tls.connect's types lack localAddress: bind through a net socket.
      const tcp = net.connect({ host: HOST, port: PORT, localAddress: addr });
      tcp.on("error", () => {});
      const socket = tls.connect({ socket: tcp, rejectUnauthorized: false });
      socket.once("secureConnect", () => {
        stats.connected++;
        stats.handshakes++;
        socket.destroy();
        tcp.destroy();
        resolve(true);
      });
      socket.once("error", (error) => {
        bump(stats.connectErrors, codeOf(error));
        socket.destroy();
        tcp.destroy();
        resolve(false);
      });
      socket.once("close", () => {
        tcp.destroy();
        resolve(false);
      });
    });
    releaseSlot();
    if (!ok && !stopping) await sleep(RECONNECT_MS);
  }
}

async function main(): Promise<void> {
  let hello: Uint8Array | undefined;
  if (MODE === "tls-abandon") hello = await captureClientHello();
  const slots: Promise<void>[] = [];
  for (let i = 0; i < COUNT; i++) {
    const addr = ADDRS[i % ADDRS.length];
    switch (MODE) {
      case "keepalive":
      case "auth":
        slots.push(hammerSlot(addr));
        break;
      case "idle":
        slots.push(holdSlot(addr, () => {}));
        break;
      case "slowloris":
        slots.push(holdSlot(addr, (socket) => {
          socket.write(
            `GET /metrics HTTP/1.1\r\nHost: ${HOST}\r\nX-Slow: `,
          );
          const timer = setInterval(() => {
            if (socket.destroyed) clearInterval(timer);
            else socket.write("a");
          }, INTERVAL_MS);
          socket.once("close", () => clearInterval(timer));
        }));
        break;
      case "tls-abandon": {
        const whole = i % 2 === 0;
        slots.push(holdSlot(addr, (socket) => {
          socket.write(whole ? hello! : hello!.subarray(0, 10));
        }));
        break;
      }
      case "tls-complete":
        slots.push(handshakeSlot(addr));
        break;
    }
  }
  await sleep(Math.max(0, deadline - performance.now()));
  stopping = true;
  stats.openAtEnd = open.size;
  stats.connectingAtEnd = pending;
  for (const socket of open) socket.destroy();
  const sorted = lifetimes.sort((a, b) => a - b);
  stats.lifetimeMs = {
    count: sorted.length,
    max: Math.round(sorted.at(-1) ?? 0),
    median: sorted.length === 0 ? null : Math.round(sorted[sorted.length >> 1]),
  };
  console.log(JSON.stringify(stats));
  // Slots may still wait on connects or timers; nothing more to count.
  Deno.exit(0);
}

if (import.meta.main) await main();
