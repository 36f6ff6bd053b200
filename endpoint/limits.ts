/**
 * Request limits for the metrics endpoint: it is read-only, so anything
 * with a body or an unexpected method is refused before any work, and no
 * client can hold more than a few requests at once.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { clientKey } from "./client_key.ts";

/** What the server tells the app about the connection (Hono's `c.env`). */
export interface ConnectionInfo {
  /**
   * The client's address (endpoint/server.ts passes it); requests in flight
   * are counted per client: by IPv4 address, by /64 for IPv6 (as the
   * server counts connections). Absent for `app.request()` without a
   * server: all such requests share one count.
   */
  readonly remoteAddr?: Deno.Addr;
}

/** Bounds on what one request may carry and how many may be in flight. */
export interface RequestLimitOptions {
  /** Total bytes of header names and values; default 8 KiB. */
  readonly maxHeaderBytes?: number;
  /** Bytes of the request URL; default 2 KiB. */
  readonly maxUrlBytes?: number;
  /** Requests in flight from one client (IPv4 address, IPv6 /64); default 8. */
  readonly maxPerClient?: number;
  /** Requests in flight in all; default 128. */
  readonly maxInFlight?: number;
}

const ALLOWED = "GET, HEAD";

/** The text of a refusal: one line, never an echo of the request. */
function refuse(status: number, message: string, headers: HeadersInit = {}) {
  return new Response(`${message}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

/**
 * Refuses, in this order: methods other than GET and HEAD (405), requests
 * with a body (413), oversized URLs (414) or headers (431), and requests
 * over the per-client or total in-flight bound (429, 503).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { requestLimits } from "./limits.ts";
 *
 * const app = new Hono();
 * app.use(requestLimits());
 * app.get("/", (c) => c.text("ok"));
 * const res = await app.request("/", { method: "POST", body: "x" });
 * assert.equal(res.status, 405);
 * ```
 */
export function requestLimits(
  options: RequestLimitOptions = {},
): MiddlewareHandler<{ Bindings: ConnectionInfo }> {
  const maxHeaderBytes = options.maxHeaderBytes ?? 8192;
  const maxUrlBytes = options.maxUrlBytes ?? 2048;
  const maxPerClient = options.maxPerClient ?? 8;
  const maxInFlight = options.maxInFlight ?? 128;
  const perClient = new Map<string, number>();
  let inFlight = 0;

  return async function limitRequests(c, next) {
    const req = c.req.raw;
    if (req.method !== "GET" && req.method !== "HEAD") {
      return refuse(405, "method not allowed: this endpoint is read-only", {
        allow: ALLOWED,
      });
    }
    const length = req.headers.get("content-length");
    if (
      (length !== null && length.trim() !== "0") ||
      req.headers.has("transfer-encoding")
    ) {
      return refuse(413, "request bodies are not accepted");
    }
    if (req.url.length > maxUrlBytes) return refuse(414, "URL too long");
    let headerBytes = 0;
    for (const [name, value] of req.headers) {
      headerBytes += name.length + value.length + 4;
    }
    if (headerBytes > maxHeaderBytes) {
      return refuse(431, "request headers too large");
    }

    const client = clientKey(c.env?.remoteAddr);
    const mine = perClient.get(client) ?? 0;
    if (mine >= maxPerClient) {
      return refuse(429, "too many requests in flight from this client", {
        "retry-after": "1",
      });
    }
    if (inFlight >= maxInFlight) {
      return refuse(503, "too many requests in flight", { "retry-after": "1" });
    }
    perClient.set(client, mine + 1);
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      const left = (perClient.get(client) ?? 1) - 1;
      if (left === 0) perClient.delete(client);
      else perClient.set(client, left);
    }
  };
}
