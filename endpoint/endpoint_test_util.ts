/**
 * A real server on loopback for a test, asked in raw HTTP/1.1 so that a
 * test can send what fetch would not (a GET announcing a body, a 17 KiB
 * header) and see the bytes the server wrote, read back as a Response.
 *
 * @module
 */

import type { Handler } from "./exchange.ts";
import { findHeadEnd } from "./http1.ts";
import {
  type MetricsServer,
  serveMetrics,
  type ServeOptions,
} from "./server.ts";

/** A server for one test, shut down by `await using`. */
export interface TestEndpoint extends AsyncDisposable {
  /** The server. */
  readonly server: MetricsServer;
  /**
   * Sends `init.method` (default GET) of `path` with `init.headers` (and
   * `init.body`'s length and bytes, when given) on a new connection that
   * closes after the response; resolves the response as written.
   */
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** Serves `handler` on 127.0.0.1, a free port, with `options`. */
export function testEndpoint(
  handler: Handler,
  options: Partial<ServeOptions> = {},
): TestEndpoint {
  const server = serveMetrics(handler, { listen: "127.0.0.1:0", ...options });
  return {
    server,
    request: (path, init = {}) => rawRequest(server.port, path, init),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const encoder = new TextEncoder();

async function rawRequest(
  port: number,
  path: string,
  init: RequestInit,
): Promise<Response> {
  const method = init.method ?? "GET";
  const body = init.body === undefined || init.body === null
    ? undefined
    : encoder.encode(String(init.body));
  let head =
    `${method} ${path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n`;
  for (const [name, value] of new Headers(init.headers)) {
    head += `${name}: ${value}\r\n`;
  }
  if (body !== undefined) head += `content-length: ${body.length}\r\n`;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(`${head}\r\n`));
    if (body !== undefined) await conn.write(body).catch(() => 0);
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    while (true) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    return parseResponse(concat(chunks), method === "HEAD");
  } finally {
    try {
      conn.close();
    } catch {
      // Closed by the server already.
    }
  }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return all;
}

/** The one response in `bytes`, its framing checked. */
function parseResponse(bytes: Uint8Array, head: boolean): Response {
  const end = findHeadEnd(bytes, 0, bytes.length);
  if (end < 0) throw new Error(`no response head in ${bytes.length} bytes`);
  const lines = String.fromCharCode(...bytes.subarray(0, end - 4)).split(
    "\r\n",
  );
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]);
  if (status === null) throw new Error(`bad status line ${lines[0]}`);
  const headers = new Headers();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const body = bytes.subarray(end);
  const length = headers.get("content-length");
  const expected = head || length === null ? 0 : Number(length);
  if (body.length !== expected) {
    throw new Error(
      `the body is ${body.length} bytes, content-length says ${length}`,
    );
  }
  const code = Number(status[1]);
  const bodiless = code < 200 || code === 204 || code === 304;
  return new Response(bodiless ? null : body.slice(), {
    status: code,
    headers,
  });
}
