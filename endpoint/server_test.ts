/**
 * The endpoint's server under attack, on loopback only (127.0.0.x source
 * addresses stand for distinct clients): each test is bounded in
 * connections (a hundred or so) and time (a few seconds), with limits
 * scaled down so that they are reached quickly.
 *
 * @module
 */

import assert from "node:assert/strict";
import net from "node:net";
import { Body, textAnswer } from "./answer.ts";
import type { Handler } from "./exchange.ts";
import {
  type MetricsServer,
  serveMetrics,
  type ServeOptions,
  type ServerLimitOptions,
} from "./server.ts";
import { selfSignedCert } from "../tests/tls_cert.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A server for one test, shut down by `await using`; a shutdown that takes
 * over 5 s fails the test instead of hanging it.
 */
function serve(
  handler: Handler,
  options: Partial<ServeOptions> = {},
): MetricsServer & AsyncDisposable {
  const server = serveMetrics(handler, { listen: "127.0.0.1:0", ...options });
  return {
    ...server,
    async [Symbol.asyncDispose]() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), 5000);
      });
      const done = await Promise.race([server.shutdown(), late]);
      clearTimeout(timer);
      if (done === "late") throw new Error("shutdown took over 5 s");
    },
  };
}

/** A raw TCP client, closed by `using`. */
async function connect(port: number): Promise<Deno.TcpConn & Disposable> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  return Object.assign(conn, {
    [Symbol.dispose]() {
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    },
  });
}

/**
 * Reads until the server closes the connection or `ms` pass: what arrived
 * (its first 64 KiB as text, and its length), whether it closed, and when
 * (ms after the call).
 */
async function readUntilClosed(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; bytes: number; closed: boolean; atMs: number }> {
  const start = performance.now();
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(64 * 1024);
  let bytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  let closed = false;
  try {
    while (true) {
      const n = await Promise.race([conn.read(buf), late]);
      if (n === "late") break;
      if (n === null) {
        closed = true;
        break;
      }
      if (bytes < buf.length) chunks.push(buf.slice(0, n));
      bytes += n;
    }
  } catch {
    closed = true; // reset
  } finally {
    clearTimeout(timer);
  }
  const text = chunks.map((c) => decoder.decode(c)).join("");
  return { text, bytes, closed, atMs: performance.now() - start };
}

/** Reads one response to a request sent with `connection: close`. */
async function request(port: number, head: string): Promise<string> {
  using conn = await connect(port);
  await conn.write(encoder.encode(head));
  return (await readUntilClosed(conn, 3000)).text;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A TCP client from `localAddress` (127.0.0.x, so that the server counts
 * it as another client), destroyed by `using`. node:net, because only it
 * can bind a chosen source address in Deno 2.9.6.
 */
class Peer implements Disposable {
  /** What arrived, as text. */
  text = "";
  /** Whether the server closed (or reset) the connection. */
  closed = false;
  readonly #socket: net.Socket;
  #wake = () => {};

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Uint8Array) => {
      this.text += decoder.decode(chunk);
      this.#wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.#wake();
    });
    socket.on("error", () => {});
  }

  /** Connects to `port` on 127.0.0.1 from `localAddress`. */
  static open(port: number, localAddress: string): Promise<Peer> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port, localAddress });
      const peer = new Peer(socket);
      socket.once("connect", () => resolve(peer));
      socket.once("error", reject);
    });
  }

  send(text: string): void {
    this.#socket.write(text);
  }

  /** Waits until `done()` holds or `ms` pass; resolves whether it held. */
  async until(done: () => boolean, ms: number): Promise<boolean> {
    const end = performance.now() + ms;
    while (!done()) {
      const left = end - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return true;
  }

  [Symbol.dispose](): void {
    this.#socket.destroy();
  }
}

/** Waits until `done()` holds; throws naming `what` after `ms`. */
async function eventually(done: () => boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!done()) {
    if (performance.now() > end) throw new Error(`${what}: not in ${ms} ms`);
    await sleep(10);
  }
}

/** 127.0.0.`from` ... 127.0.0.`to`. */
function loopbacks(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `127.0.0.${from + i}`);
}

Deno.test("serves the app over HTTP/1.1 with keep-alive, HEAD and the client's address", async () => {
  const seen: string[] = [];
  await using server = serve((request, client) => {
    const addr = client as Deno.NetAddr;
    seen.push(`${request.method} ${request.path} ${addr.hostname}`);
    return textAnswer(200, "hello", { "x-test": "1" });
  });
  using conn = await connect(server.port);
  // Two requests on one connection, the second pipelined behind the first.
  await conn.write(encoder.encode(
    "GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  ));
  const { text, closed } = await readUntilClosed(conn, 2000);
  assert.ok(closed);
  const responses = text.split(/(?=HTTP\/1\.1 )/);
  assert.equal(responses.length, 2);
  assert.match(responses[0], /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(responses[0], /\r\nx-test: 1\r\n/);
  assert.match(responses[0], /\r\ncontent-length: 6\r\n/);
  assert.ok(responses[0].endsWith("\r\n\r\nhello\n"));
  assert.doesNotMatch(responses[0], /connection: close/);
  // HEAD: no body; the connection closes as asked.
  assert.ok(responses[1].endsWith("\r\nconnection: close\r\n\r\n"));
  assert.deepEqual(seen, ["GET /a 127.0.0.1", "HEAD /b 127.0.0.1"]);
  // And fetch, as a scraper would.
  const res = await fetch(`${server.url}metrics`);
  assert.equal(await res.text(), "hello\n");
});

Deno.test("connections over the cap are answered 503 at once, and a scraper is served once they go", async () => {
  await using server = serve(() => textAnswer(200, "ok"), {
    limits: { maxConnections: 4 },
  });
  // Four connections that never send a request hold every place.
  const holders = await Promise.all(
    Array.from({ length: 4 }, () => connect(server.port)),
  );
  await sleep(100);
  const extras = await Promise.all(
    Array.from({ length: 3 }, () => connect(server.port)),
  );
  try {
    for (const extra of extras) {
      const { text, closed, atMs } = await readUntilClosed(extra, 1000);
      assert.ok(closed, "an extra connection was left open");
      assert.ok(atMs < 500, `refused after ${atMs} ms`);
      assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
      assert.match(text, /\r\nretry-after: 1\r\n/);
    }
  } finally {
    for (const conn of [...holders, ...extras]) conn[Symbol.dispose]();
  }
  await sleep(100);
  const text = await request(
    server.port,
    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  );
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nok\n$/);
});

Deno.test("one client cannot hold more than maxConnectionsPerClient connections: 429", async () => {
  await using server = serve(() => textAnswer(200, "ok"), {
    limits: { maxConnectionsPerClient: 2 },
  });
  using a = await connect(server.port);
  using b = await connect(server.port);
  await sleep(100);
  using c = await connect(server.port);
  const { text, closed } = await readUntilClosed(c, 1000);
  assert.ok(closed);
  assert.match(text, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
  // The first two are still served.
  await a.write(
    encoder.encode("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
  );
  assert.match((await readUntilClosed(a, 1000)).text, /^HTTP\/1\.1 200 OK/);
  b[Symbol.dispose]();
});

Deno.test("a full endpoint lets a new client in by closing a waiting connection of a busier one, never one being answered", async () => {
  const waiting: (() => void)[] = [];
  await using server = serve(async (request) => {
    if (request.path === "/slow") {
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    return textAnswer(200, "ok");
  }, { limits: { maxConnections: 32 } });
  const port = server.port;
  const ok = /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nok\n$/;
  // 16 addresses hold two connections each, the cap: 127.0.0.10 two
  // requests in flight, then 127.0.0.18 .. 25 two kept alive and idle
  // after a request each, then 127.0.0.11 .. 17 two silent ones each.
  // Silent and idle ones come back 100 ms after the server closes them, as
  // a flood's would.
  const peers = new Set<Peer>();
  const closed = { silent: 0, idle: 0, refused: 0 };
  let ready = 0;
  let stopping = false;
  const hold = async (addr: string, kind: "silent" | "idle") => {
    let first = true;
    while (!stopping) {
      let peer: Peer;
      try {
        peer = await Peer.open(port, addr);
      } catch {
        await sleep(100);
        continue;
      }
      if (stopping) {
        peer[Symbol.dispose]();
        break;
      }
      peers.add(peer);
      if (kind === "idle") peer.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      if (first) {
        await peer.until(() => kind === "silent" || ok.test(peer.text), 2000);
        ready++;
        first = false;
      }
      await peer.until(() => peer.closed, 30_000);
      peers.delete(peer);
      if (stopping) break;
      if (/^HTTP\/1\.1 503 /.test(peer.text)) closed.refused++;
      else closed[kind]++;
      await sleep(100);
    }
  };
  const inFlight = await Promise.all(
    [0, 1].map(() => Peer.open(port, "127.0.0.10")),
  );
  for (const peer of inFlight) {
    peer.send("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  const slots: Promise<void>[] = [];
  try {
    await eventually(() => waiting.length === 2, 2000, "requests in flight");
    for (const addr of loopbacks(18, 25)) {
      slots.push(hold(addr, "idle"), hold(addr, "idle"));
    }
    await eventually(() => ready === 16, 5000, "idle connections");
    for (const addr of loopbacks(11, 17)) {
      slots.push(hold(addr, "silent"), hold(addr, "silent"));
    }
    await eventually(() => ready === 30, 5000, "connections to the cap");
    await sleep(200);
    // Full: a third connection from a client with two is refused.
    using third = await Peer.open(port, "127.0.0.11");
    assert.ok(await third.until(() => third.closed, 1000));
    assert.match(third.text, /^HTTP\/1\.1 503 /);
    // A scraper opening a connection per scrape from 127.0.0.2 is served.
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      using scraper = await Peer.open(port, "127.0.0.2");
      scraper.send(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      assert.ok(await scraper.until(() => scraper.closed, 3000));
      const ms = performance.now() - start;
      assert.match(scraper.text, ok, `scrape ${i}`);
      assert.ok(ms < 1500, `scrape ${i} took ${ms} ms`);
      await sleep(300);
    }
    // Room was made by closing silent connections: of the busiest clients
    // (two each), one waiting for a head goes before an idle one, and a
    // request in flight never.
    assert.ok(closed.silent >= 1, JSON.stringify(closed));
    assert.equal(closed.idle, 0, JSON.stringify(closed));
    waiting.splice(0).forEach((release) => release());
    for (const peer of inFlight) {
      assert.ok(await peer.until(() => peer.closed, 2000));
      assert.match(peer.text, ok);
    }
  } finally {
    stopping = true;
    waiting.splice(0).forEach((release) => release());
    for (const peer of [...inFlight, ...peers]) peer[Symbol.dispose]();
    await Promise.all(slots);
  }
});

Deno.test("slowloris: a head sent one byte a second is cut off at the header timeout, and so is a silent client", async () => {
  await using server = serve(() => textAnswer(200, "ok"), {
    limits: { headerTimeoutMs: 2000 },
  });
  using slow = await connect(server.port);
  using silent = await connect(server.port);
  const head = encoder.encode("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaa");
  let sent = 0;
  const trickle = (async () => {
    try {
      while (sent < head.length) {
        await slow.write(head.subarray(sent, sent + 1));
        sent++;
        await sleep(1000);
      }
    } catch {
      // Cut off: what this test waits for.
    }
  })();
  const [cut, quiet] = await Promise.all([
    readUntilClosed(slow, 4500),
    readUntilClosed(silent, 4500),
  ]);
  assert.ok(cut.closed, "the slow client was never cut off");
  assert.ok(cut.atMs > 1900 && cut.atMs < 3000, `cut after ${cut.atMs} ms`);
  assert.ok(sent >= 2, "bytes kept coming until the cut");
  assert.match(cut.text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.ok(quiet.closed, "the silent client was never cut off");
  assert.ok(quiet.atMs > 1900 && quiet.atMs < 3000);
  assert.equal(quiet.text, "");
  slow[Symbol.dispose]();
  await trickle;
});

Deno.test("a kept-alive connection is closed after idleTimeoutMs without a request", async () => {
  await using server = serve(() => textAnswer(200, "ok"), {
    limits: { idleTimeoutMs: 1000 },
  });
  using conn = await connect(server.port);
  await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  const buf = new Uint8Array(1024);
  const n = await conn.read(buf);
  assert.match(decoder.decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 OK/);
  const { closed, atMs } = await readUntilClosed(conn, 3000);
  assert.ok(closed, "the idle connection was never closed");
  assert.ok(atMs > 900 && atMs < 2000, `closed after ${atMs} ms`);
});

Deno.test("a client that does not read its response is cut off at the request timeout", async () => {
  // More than the kernel's socket buffers hold, so the write must wait.
  const body = new Uint8Array(64 * 1024 * 1024);
  await using server = serve(
    () => ({ status: 200, body: new Body(body, "application/octet-stream") }),
    {
      limits: { requestTimeoutMs: 1000 },
    },
  );
  using conn = await connect(server.port);
  await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  await sleep(2000); // not reading
  const { bytes, closed } = await readUntilClosed(conn, 3000);
  assert.ok(closed, "the connection was never cut off");
  assert.ok(bytes < body.length, `all ${bytes} bytes were sent`);
});

Deno.test("requests in flight: 429 for one client over maxRequestsPerClient, another client unaffected, places given back", async () => {
  const waiting: (() => void)[] = [];
  await using server = serve(async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return textAnswer(200, "ok");
  }, { limits: { maxRequestsPerClient: 2 } });
  const head = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const from = async (address: string) => {
    const peer = await Peer.open(server.port, address);
    peer.send(head);
    return peer;
  };
  const held = [await from("127.0.0.1"), await from("127.0.0.1")];
  await eventually(() => waiting.length === 2, 3000, "two requests held");
  using third = await from("127.0.0.1");
  assert.ok(await third.until(() => third.closed, 3000), "not closed");
  assert.match(third.text, /^HTTP\/1\.1 429 /);
  assert.match(third.text, /\r\nretry-after: 1\r\n/);
  // Another client is not affected.
  using other = await from("127.0.0.2");
  await eventually(() => waiting.length === 3, 3000, "the other client held");
  waiting.splice(0).forEach((release) => release());
  for (const peer of [...held, other]) {
    assert.ok(await peer.until(() => peer.closed, 3000), "not answered");
    assert.match(peer.text, /^HTTP\/1\.1 200 /);
    peer[Symbol.dispose]();
  }
  // Places are given back once requests finish.
  using again = await from("127.0.0.1");
  await eventually(() => waiting.length === 1, 3000, "held again");
  waiting.splice(0).forEach((release) => release());
  assert.ok(await again.until(() => again.closed, 3000), "not answered");
  assert.match(again.text, /^HTTP\/1\.1 200 /);
});

Deno.test("requests in flight in all are bounded by connections: one request each, maxConnections in all, then 503", async () => {
  const waiting: (() => void)[] = [];
  await using server = serve(async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return textAnswer(200, "ok");
  }, { limits: { maxConnections: 2, maxRequestsPerClient: 5 } });
  const head = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const first = [request(server.port, head), request(server.port, head)];
  await eventually(() => waiting.length === 2, 3000, "two requests held");
  assert.match(await request(server.port, head), /^HTTP\/1\.1 503 /);
  waiting.splice(0).forEach((release) => release());
  for (const text of await Promise.all(first)) {
    assert.match(text, /^HTTP\/1\.1 200 /);
  }
});

Deno.test("shutdown lets a request in flight finish, closes idle connections, then resolves", async () => {
  let release = () => {};
  const server = serveMetrics(async () => {
    await new Promise<void>((resolve) => release = resolve);
    return textAnswer(200, "late");
  }, { listen: "127.0.0.1:0" });
  using idle = await connect(server.port);
  using busy = await connect(server.port);
  await busy.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  await sleep(100);
  const stopped = server.shutdown();
  const idleEnd = await readUntilClosed(idle, 1000);
  assert.ok(idleEnd.closed);
  assert.equal(idleEnd.text, "");
  release();
  const { text, closed } = await readUntilClosed(busy, 1000);
  assert.ok(closed);
  assert.match(text, /\r\nconnection: close\r\n\r\nlate\n$/);
  await stopped;
  await assert.rejects(
    Deno.connect({ hostname: "127.0.0.1", port: server.port }),
  );
});

/** A child process serving with 64 file descriptors, its port and its stderr. */
async function childWithFewDescriptors(
  dir: string,
  limits: ServerLimitOptions = {},
) {
  const script = `${dir}/serve.ts`;
  const server = new URL("./server.ts", import.meta.url).href;
  const answer = new URL("./answer.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    // The signal listener first: Deno 2.9.6 sets up its signal handling
    // on first use, and panics if no descriptor is free then (a flood
    // right after start-up hit it).
    `import { serveMetrics } from ${JSON.stringify(server)};
import { textAnswer } from ${JSON.stringify(answer)};
Deno.addSignalListener("SIGTERM", () => Deno.exit(143));
const s = serveMetrics(() => textAnswer(200, "alive"), {
  listen: "127.0.0.1:0",
  onError: (m) => console.error(m),
  limits: ${JSON.stringify(limits)},
});
console.log(s.port);
`,
  );
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'ulimit -n 64 && exec "$0" run --no-prompt --allow-net=127.0.0.1 --allow-read "$1"',
      Deno.execPath(),
      script,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the child ended before listening");
    out += value;
  }
  return { child, stdout: reader, port: Number(out.trim()) };
}

Deno.test("running out of file descriptors never ends the process: it reports once, waits, and serves on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "server_test_" });
  const { child, stdout, port } = await childWithFewDescriptors(dir);
  let ended = false;
  const status = child.status.then((s) => {
    ended = true;
    return s;
  });
  let answer = "";
  try {
    // Far more connections than the child has descriptors for.
    const flood: Deno.Conn[] = [];
    for (let i = 0; i < 120 && !ended; i++) {
      try {
        flood.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break; // refused: the child is gone
      }
    }
    await sleep(1000);
    for (const conn of flood) conn.close();
    await sleep(500);
    if (!ended) {
      answer = await (await fetch(`http://127.0.0.1:${port}/`)).text();
    }
  } finally {
    if (!ended) child.kill("SIGTERM");
    await status;
    await stdout.cancel();
  }
  const stderr = await new Response(child.stderr).text();
  await Deno.remove(dir, { recursive: true });
  assert.equal(answer, "alive\n", `the child did not serve on:\n${stderr}`);
  const reports = stderr.split("\n").filter((line) =>
    line.includes("out of file descriptors")
  );
  assert.equal(reports.length, 1, stderr);
});

Deno.test("out of file descriptors, a kept-alive scraper is served on while silent connections from another address flood", async () => {
  const dir = await Deno.makeTempDir({ prefix: "server_test_" });
  // One address may take every descriptor: nothing but EMFILE stops it.
  const { child, stdout, port } = await childWithFewDescriptors(dir, {
    maxConnectionsPerClient: 256,
  });
  let ended = false;
  const status = child.status.then((s) => {
    ended = true;
    return s;
  });
  const alive = (text: string) => text.split("alive\n").length - 1;
  const scrapes: (number | string)[] = [];
  const open = new Set<Deno.Conn>();
  let stopping = false;
  // 100 connections from 127.0.0.1 that send nothing, each back 20 ms
  // after the child closes it.
  const flood = async () => {
    const buf = new Uint8Array(1024);
    while (!stopping && !ended) {
      let conn: Deno.Conn;
      try {
        conn = await Deno.connect({ hostname: "127.0.0.1", port });
      } catch {
        await sleep(20);
        continue;
      }
      if (stopping) {
        conn.close();
        break;
      }
      open.add(conn);
      try {
        while (await conn.read(buf) !== null) {
          // Nothing comes.
        }
      } catch {
        // Reset, or closed here at the end.
      }
      open.delete(conn);
      try {
        conn.close();
      } catch {
        // Closed at the end.
      }
      await sleep(20);
    }
  };
  const slots: Promise<void>[] = [];
  try {
    // A scraper from 127.0.0.2 on one kept-alive connection.
    using scraper = await Peer.open(port, "127.0.0.2");
    const scrape = async () => {
      const before = alive(scraper.text);
      const start = performance.now();
      scraper.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
      await scraper.until(
        () => alive(scraper.text) > before || scraper.closed,
        1500,
      );
      const ms = performance.now() - start;
      if (scraper.closed) return "closed";
      return alive(scraper.text) > before ? ms : "no answer in 1.5 s";
    };
    scrapes.push(await scrape());
    for (let i = 0; i < 100; i++) slots.push(flood());
    await sleep(1000);
    for (let i = 0; i < 8 && !ended; i++) {
      await sleep(250);
      scrapes.push(await scrape());
    }
  } finally {
    stopping = true;
    for (const conn of open) conn.close();
    await Promise.all(slots);
    if (!ended) child.kill("SIGTERM");
    await status;
    await stdout.cancel();
  }
  const stderr = await new Response(child.stderr).text();
  await Deno.remove(dir, { recursive: true });
  assert.match(stderr, /out of file descriptors/, "no EMFILE: no test");
  assert.equal(scrapes.length, 9, `the child ended:\n${stderr}`);
  assert.ok(
    scrapes.every((s) => typeof s === "number"),
    `scrapes: ${JSON.stringify(scrapes)}`,
  );
});

/** A self-signed certificate for localhost; its files are not kept. */
async function makeCert(): Promise<{ cert: string; key: string }> {
  const dir = await Deno.makeTempDir({ prefix: "server_test_tls_" });
  try {
    const { cert, key } = await selfSignedCert(dir);
    return { cert, key };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const tls = await makeCert();

Deno.test("TLS: handshakes in progress are bounded, a silent client is cut at the handshake timeout, scrapers are served", async () => {
  await using server = serve(() => textAnswer(200, "secure"), {
    tls,
    limits: { maxHandshakes: 2, handshakeTimeoutMs: 1000 },
  });
  // Connect and never send a ClientHello.
  using a = await connect(server.port);
  using b = await connect(server.port);
  await sleep(100);
  using over = await connect(server.port);
  const refused = await readUntilClosed(over, 1000);
  assert.ok(
    refused.closed && refused.atMs < 500,
    "a third handshake was let in",
  );
  const [endA, endB] = await Promise.all([
    readUntilClosed(a, 3000),
    readUntilClosed(b, 3000),
  ]);
  assert.ok(
    endA.closed && endB.closed,
    "a silent TLS client was never cut off",
  );
  assert.ok(endA.atMs < 1500 && endB.atMs < 1500);
  const client = Deno.createHttpClient({ caCerts: [tls.cert] });
  try {
    const res = await fetch(`https://localhost:${server.port}/`, { client });
    assert.equal(await res.text(), "secure\n");
  } finally {
    client.close();
  }
});

Deno.test("TLS: one client has at most 4 handshakes in progress, and a full handshake table makes room for another client", async () => {
  await using server = serve(() => textAnswer(200, "secure"), {
    tls,
    limits: { maxHandshakes: 6, handshakeTimeoutMs: 10_000 },
  });
  const port = server.port;
  // TCP connections that never send a ClientHello: 127.0.0.10 six (two
  // over the default bound of 4 a client), then 127.0.0.11 two.
  const a: Peer[] = [];
  const b: Peer[] = [];
  const get = async () => {
    const client = Deno.createHttpClient({ caCerts: [tls.cert] });
    try {
      const res = await fetch(`https://localhost:${port}/`, {
        client,
        signal: AbortSignal.timeout(3000),
      });
      return await res.text();
    } finally {
      client.close();
    }
  };
  try {
    for (let i = 0; i < 6; i++) {
      a.push(await Peer.open(port, "127.0.0.10"));
      await sleep(50);
    }
    for (let i = 0; i < 2; i++) b.push(await Peer.open(port, "127.0.0.11"));
    for (const over of a.slice(4)) await over.until(() => over.closed, 1000);
    await sleep(100);
    const closed = (peers: Peer[]) => peers.map((p) => p.closed);
    assert.deepEqual(closed(a), [false, false, false, false, true, true]);
    assert.deepEqual(closed(b), [false, false]);
    // Six in progress, the limit: a TLS client from 127.0.0.1 takes the
    // place of 127.0.0.10's oldest.
    assert.equal(await get(), "secure\n");
    await a[0].until(() => a[0].closed, 1000);
    assert.deepEqual(closed(a), [true, false, false, false, true, true]);
    // Again, once 127.0.0.10 has filled the table again.
    a.push(await Peer.open(port, "127.0.0.10"));
    await sleep(100);
    assert.equal(a[6].closed, false);
    assert.equal(await get(), "secure\n");
    await a[1].until(() => a[1].closed, 1000);
    assert.deepEqual(closed(a), [true, true, false, false, true, true, false]);
    assert.deepEqual(closed(b), [false, false]);
  } finally {
    for (const peer of [...a, ...b]) peer[Symbol.dispose]();
  }
});

Deno.test("serves from a Worker with the endpoint's permissions (no env), TLS included, after giving up net", async () => {
  const server = new URL("./server.ts", import.meta.url).href;
  const answer = new URL("./answer.ts", import.meta.url).href;
  const source = `import { serveMetrics } from ${JSON.stringify(server)};
import { textAnswer } from ${JSON.stringify(answer)};
let s;
self.onmessage = async (e) => {
  if (e.data === "stop") { await s.shutdown(); self.postMessage("stopped"); return; }
  s = serveMetrics(() => textAnswer(200, "from a worker"), { listen: "127.0.0.1:0", tls: e.data });
  await Deno.permissions.revoke({ name: "net" });
  self.postMessage(s.port);
};`;
  const url = URL.createObjectURL(
    new Blob([source], { type: "text/javascript" }),
  );
  const worker = new Worker(url, {
    type: "module",
    deno: {
      permissions: {
        net: "inherit",
        read: "inherit",
        sys: "inherit",
        env: false,
        write: false,
        ffi: false,
        run: false,
        import: false,
      },
    },
  });
  const client = Deno.createHttpClient({ caCerts: [tls.cert] });
  try {
    const reply = () =>
      new Promise<unknown>((resolve, reject) => {
        worker.onmessage = (e) => resolve(e.data);
        worker.onerror = (e) => {
          e.preventDefault();
          reject(new Error(e.message));
        };
      });
    const port = reply();
    worker.postMessage(tls);
    const res = await fetch(`https://localhost:${await port}/`, { client });
    assert.equal(await res.text(), "from a worker\n");
    const stopped = reply();
    worker.postMessage("stop");
    assert.equal(await stopped, "stopped");
  } finally {
    client.close();
    worker.terminate();
    URL.revokeObjectURL(url);
  }
});

Deno.test("pipelined requests with empty lines between them are all answered, in order", async () => {
  let n = 0;
  await using server = serve(() => textAnswer(200, `${++n}`));
  const text = await request(
    server.port,
    "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n\r\n" +
      "GET / HTTP/1.1\r\nHost: x\r\n\r\n" +
      "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  );
  const bodies = text.split(/HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\n/).slice(1);
  assert.deepEqual(bodies, ["1\n", "2\n", "3\n"]);
});
