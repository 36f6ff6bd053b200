/**
 * One request and its response, without the socket: the head is parsed
 * (and refused, when it breaks a limit) by endpoint/http1.ts, handed to
 * the one handler, and its answer framed with the headers every response
 * carries and, when the client takes it, the body's gzipped form. The
 * server (endpoint/server.ts) does the rest: connections, deadlines,
 * writing.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { acceptsGzip, type Answer, textAnswer } from "./answer.ts";
import {
  headerField,
  type HeadLimits,
  parseRequestHead,
  type RequestHead,
  responseHead,
} from "./http1.ts";

/**
 * Answers one parsed request (a GET or HEAD within every limit). `client`
 * is the connection's remote address, for bounds kept per client.
 */
export type Handler = (
  request: RequestHead,
  client?: Deno.Addr,
) => Answer | Promise<Answer>;

/** What frames every response. */
export interface ExchangeOptions {
  /** Bounds on the request head. */
  readonly limits: HeadLimits;
  /** Extra headers on every response (web config `http_server_config.headers`). */
  readonly headers?: ReadonlyMap<string, string>;
  /** Told when the handler throws (one line); the client gets a 500. */
  readonly onError?: (message: string) => void;
  /** Whether every connection closes after its response (the server is stopping). */
  readonly stopping?: () => boolean;
}

/** A response ready to write, and whether the connection closes after it. */
export interface Reply {
  /** The head, then the body when there is one. */
  readonly bytes: readonly Uint8Array[];
  /** Whether the connection must close once it is written. */
  readonly close: boolean;
}

/**
 * The response to the request head `bytes` (as endpoint/http1.ts delimits
 * it) from `handler`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textAnswer } from "./answer.ts";
 * import { exchange } from "./exchange.ts";
 *
 * const limits = { maxHeaders: 100, maxTargetBytes: 2048 };
 * const head = (text: string) => new TextEncoder().encode(text);
 * const text = (reply: { bytes: readonly Uint8Array[] }) =>
 *   reply.bytes.map((b) => new TextDecoder().decode(b)).join("");
 *
 * const hello = await exchange(
 *   head("GET /hi HTTP/1.1\r\nHost: a\r\n\r\n"),
 *   (request) => textAnswer(200, `hello from ${request.path}`),
 *   { limits },
 * );
 * assert.equal(hello.close, false);
 * assert.match(text(hello), /^HTTP\/1\.1 200 OK\r\n/);
 * assert.match(text(hello), /\r\nx-content-type-options: nosniff\r\n/);
 * assert.ok(text(hello).endsWith("\r\n\r\nhello from /hi\n"));
 *
 * // Refused before the handler runs, and the connection closes.
 * const post = await exchange(
 *   head("POST /hi HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n"),
 *   () => { throw new Error("not reached"); },
 *   { limits },
 * );
 * assert.equal(post.close, true);
 * assert.match(text(post), /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
 * assert.match(text(post), /\r\nallow: GET, HEAD\r\n/);
 * ```
 */
export async function exchange(
  bytes: Uint8Array,
  handler: Handler,
  options: ExchangeOptions,
  client?: Deno.Addr,
): Promise<Reply> {
  const parsed = parseRequestHead(bytes, options.limits);
  if (!parsed.ok) {
    const { status, message, headers } = parsed.problem;
    return frame(textAnswer(status, message, headers), undefined, {
      close: true,
      headers: options.headers,
    });
  }
  const request = parsed.head;
  let answer: Answer;
  try {
    answer = await handler(request, client);
  } catch (error) {
    // The path is the client's: quoted, so it cannot start a log line.
    options.onError?.(
      `metrics endpoint: ${JSON.stringify(request.path)}: ${
        errorMessage(error).split("\n")[0]
      }`,
    );
    answer = textAnswer(500, "internal error");
  }
  return frame(answer, request, {
    close: request.close || (options.stopping?.() ?? false),
    headers: options.headers,
  });
}

/**
 * `answer` as bytes to write: its content type and headers, then the
 * headers every response carries (`cache-control: no-store`,
 * `x-content-type-options: nosniff`, the web config's), the gzipped body
 * when `request` takes gzip and the body has a gzipped form, and for HEAD
 * the length a GET would get without its bytes. Without a request (a
 * refusal before one was read), the connection closes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textAnswer } from "./answer.ts";
 * import { frame } from "./exchange.ts";
 *
 * const busy = frame(textAnswer(503, "too many connections"), undefined, {
 *   close: true,
 *   headers: new Map([["strict-transport-security", "max-age=31536000"]]),
 * });
 * const text = new TextDecoder().decode(busy.bytes[0]);
 * assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
 * assert.match(text, /\r\nstrict-transport-security: max-age=31536000\r\n/);
 * assert.match(text, /\r\nconnection: close\r\n/);
 * ```
 */
export function frame(
  answer: Answer,
  request: RequestHead | undefined,
  options: {
    readonly close: boolean;
    readonly headers?: ReadonlyMap<string, string>;
  },
): Reply {
  const { status, body } = answer;
  // Field names are case-insensitive: one spelling, so that a web config's
  // `X-Content-Type-Options` replaces ours instead of going out twice.
  const headers = new Map<string, string>([["content-type", body.type]]);
  for (const [name, value] of Object.entries(answer.headers ?? {})) {
    headers.set(name.toLowerCase(), value);
  }
  headers.set("cache-control", "no-store");
  headers.set("x-content-type-options", "nosniff");
  for (const [name, value] of options.headers ?? []) {
    headers.set(name.toLowerCase(), value);
  }

  let bytes = body.bytes;
  if (body.compressible) {
    headers.set("vary", "Accept-Encoding");
    if (
      request !== undefined &&
      acceptsGzip(headerField(request, "accept-encoding"))
    ) {
      headers.set("content-encoding", "gzip");
      bytes = body.gzipped()!;
    }
  }
  const bodiless = status < 200 || status === 204 || status === 304;
  if (bodiless) headers.delete("content-type");
  const close = options.close || request === undefined;
  const head = responseHead(status, headers, {
    bodyLength: bodiless ? undefined : bytes.length,
    close,
    date: new Date().toUTCString(),
  });
  const withBody = !bodiless && request?.method !== "HEAD" &&
    bytes.length > 0;
  return { bytes: withBody ? [head, bytes] : [head], close };
}
