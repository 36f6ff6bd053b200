/**
 * The HTTP/1.1 the metrics endpoint speaks (RFC 9112), and no more: a
 * strict parser for request heads and a writer for response heads.
 *
 * Why a parser of our own: the endpoint needs limits that Deno.serve does
 * not offer and that node:http in Deno 2.9.6 cannot keep (its listener
 * stops accepting for good after one EMFILE; see endpoint/server.ts). The
 * endpoint serves GET and HEAD without bodies, so only the head needs
 * parsing: a request that announces a body gets its answer (the app refuses
 * it) and the connection is closed, so its body is never read and can never
 * be taken for the next request (no request smuggling). Anything unusual is
 * refused rather than guessed at: bare LF or CR, obs-fold, whitespace
 * before a colon, control characters, duplicate or malformed
 * Content-Length, a missing or repeated Host.
 *
 * @module
 */

/** A request head that parsed. */
export interface RequestHead {
  /** The method token, as sent (methods are case-sensitive). */
  readonly method: string;
  /** The path and query (origin-form), e.g. `/metrics?x=1`. */
  readonly target: string;
  /** The HTTP version: `1.0` or `1.1`. */
  readonly version: "1.0" | "1.1";
  /** Header fields in order; names lower-cased, values trimmed. */
  readonly headers: readonly (readonly [string, string])[];
  /**
   * The connection must close after the response: the client asked
   * (`Connection: close`), spoke HTTP/1.0, or announced a body that will
   * not be read.
   */
  readonly close: boolean;
}

/** A head that did not parse: the status to answer with, and why. */
export interface HeadProblem {
  /** 400, 405, 431 or 505. */
  readonly status: number;
  /** One line for the response body. */
  readonly message: string;
}

/** Bounds the parser enforces (the byte size is the caller's buffer). */
export interface HeadLimits {
  /** Header fields at most; more is 431. */
  readonly maxHeaders: number;
}

/** What {@linkcode parseRequestHead} makes of a head. */
export type ParsedHead =
  | { readonly ok: true; readonly head: RequestHead }
  | { readonly ok: false; readonly problem: HeadProblem };

const CR = 13;
const LF = 10;

/**
 * Where the head in `buf[0, length)` ends: the index just past its blank
 * line (`\r\n\r\n`), or -1 while it is incomplete. `from` lets a caller
 * that appends bytes resume the search instead of starting over.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findHeadEnd } from "./http1.ts";
 *
 * const bytes = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET");
 * assert.equal(findHeadEnd(bytes, 0, bytes.length), bytes.length - 3);
 * assert.equal(findHeadEnd(bytes, 0, 20), -1);
 * ```
 */
export function findHeadEnd(
  buf: Uint8Array,
  from: number,
  length: number,
): number {
  for (let i = Math.max(0, from - 3); i + 3 < length; i++) {
    if (
      buf[i + 3] === LF && buf[i + 2] === CR && buf[i + 1] === LF &&
      buf[i] === CR
    ) {
      return i + 4;
    }
  }
  return -1;
}

/**
 * How many empty lines (`\r\n`) open `buf[0, length)`: RFC 9112 asks a
 * server to skip them before a request line (some clients send one after a
 * request).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leadingEmptyLines } from "./http1.ts";
 *
 * const bytes = new TextEncoder().encode("\r\n\r\nGET");
 * assert.equal(leadingEmptyLines(bytes, bytes.length), 4);
 * ```
 */
export function leadingEmptyLines(buf: Uint8Array, length: number): number {
  let i = 0;
  while (i + 1 < length && buf[i] === CR && buf[i + 1] === LF) i += 2;
  return i;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE =
  /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP\/(\d)\.(\d)$/;
/** Methods `new Request` refuses (CONNECT, TRACE, TRACK) or rewrites. */
const NORMALISED = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
const FORBIDDEN = new Set(["CONNECT", "TRACE", "TRACK"]);

function problem(status: number, message: string): ParsedHead {
  return { ok: false, problem: { status, message } };
}

/**
 * Parses the head `bytes` (everything up to and including its blank line,
 * as {@linkcode findHeadEnd} delimits it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRequestHead } from "./http1.ts";
 *
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * const parsed = parseRequestHead(
 *   bytes("GET /metrics HTTP/1.1\r\nHost: dpu:9477\r\nAccept: text/plain\r\n\r\n"),
 *   { maxHeaders: 100 },
 * );
 * assert.ok(parsed.ok);
 * assert.equal(parsed.head.target, "/metrics");
 * assert.deepEqual(parsed.head.headers[1], ["accept", "text/plain"]);
 * assert.equal(parsed.head.close, false);
 *
 * // A folded header line is refused, never unfolded.
 * const folded = parseRequestHead(
 *   bytes("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n"),
 *   { maxHeaders: 100 },
 * );
 * assert.equal(folded.ok ? 0 : folded.problem.status, 400);
 * ```
 */
export function parseRequestHead(
  bytes: Uint8Array,
  limits: HeadLimits,
): ParsedHead {
  // Bytes to a string one for one (ISO-8859-1), refusing control characters
  // other than HTAB outside line ends: no NUL, no bare CR or LF, no DEL.
  let end = bytes.length;
  if (end >= 4 && bytes[end - 1] === LF) end -= 4; // the blank line
  const codes = new Array<number>(end);
  for (let i = 0; i < end; i++) {
    const b = bytes[i];
    if (b === CR) {
      if (bytes[i + 1] !== LF) return problem(400, "bare CR in request head");
      codes[i] = b;
    } else if (b === LF) {
      if (bytes[i - 1] !== CR) return problem(400, "bare LF in request head");
      codes[i] = b;
    } else if ((b < 0x20 && b !== 9) || b === 0x7f) {
      return problem(400, "control character in request head");
    } else {
      codes[i] = b;
    }
  }
  let text = "";
  for (let i = 0; i < end; i += 4096) {
    text += String.fromCharCode(...codes.slice(i, i + 4096));
  }
  const lines = text.split("\r\n");

  const line = REQUEST_LINE.exec(lines[0]);
  if (line === null) return problem(400, "malformed request line");
  const [, method, rawTarget, major, minor] = line;
  if (major !== "1" || (minor !== "0" && minor !== "1")) {
    return problem(505, "HTTP version not supported (HTTP/1.1 only)");
  }
  const version = minor === "1" ? "1.1" : "1.0";
  // `new Request` would refuse these methods or quietly upper-case them
  // (`get` is not GET); the endpoint is read-only, so they get its 405.
  if (
    FORBIDDEN.has(method.toUpperCase()) ||
    (NORMALISED.has(method.toUpperCase()) && !NORMALISED.has(method))
  ) {
    return problem(405, "method not allowed: this endpoint is read-only");
  }
  const target = originForm(rawTarget);
  if (target === undefined) return problem(400, "malformed request target");

  if (lines.length - 1 > limits.maxHeaders) {
    return problem(431, "too many header fields");
  }
  const headers: [string, string][] = [];
  let hosts = 0;
  let lengths = 0;
  let length = "";
  let chunked = false;
  let close = version === "1.0";
  for (let i = 1; i < lines.length; i++) {
    const field = lines[i];
    const colon = field.indexOf(":");
    // Also refuses obs-fold (a line opening with SP or HTAB): RFC 9112
    // lets a server refuse it rather than unfold it.
    if (colon <= 0) return problem(400, "malformed header field");
    const name = field.slice(0, colon);
    if (!TOKEN.test(name)) return problem(400, "malformed header field name");
    const lower = name.toLowerCase();
    const value = field.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    headers.push([lower, value]);
    if (lower === "host") hosts++;
    else if (lower === "content-length") {
      lengths++;
      length = value;
    } else if (lower === "transfer-encoding") chunked = true;
    else if (lower === "connection") {
      for (const option of value.split(",")) {
        if (option.trim().toLowerCase() === "close") close = true;
      }
    }
  }
  if (version === "1.1" && hosts !== 1) {
    return problem(400, "HTTP/1.1 needs exactly one Host header");
  }
  if (lengths > 1 || (lengths === 1 && !/^\d{1,15}$/.test(length))) {
    return problem(400, "malformed Content-Length");
  }
  // The body is never read, so nothing after it can be trusted to be the
  // next request: close once answered.
  if (chunked || (lengths === 1 && Number(length) !== 0)) close = true;
  return { ok: true, head: { method, target, version, headers, close } };
}

/** The path and query of an origin-form or absolute-form target. */
function originForm(target: string): string | undefined {
  if (target.startsWith("/")) return target;
  // Absolute form (RFC 9112 3.2.2: servers must accept it). Its authority
  // is not used: the app sees the endpoint's own origin.
  const absolute = /^https?:\/\/[^/?#]*(\/[^#]*|\?[^#]*)?$/i.exec(target);
  if (absolute === null) return undefined;
  const rest = absolute[1] ?? "/";
  return rest.startsWith("?") ? `/${rest}` : rest;
}

const REASONS: Readonly<Record<number, string>> = {
  200: "OK",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  414: "URI Too Long",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/** Headers the connection layer sets itself; the app's are dropped. */
const HOP_BY_HOP = new Set([
  "connection",
  "content-length",
  "date",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The bytes of a response head: status line, the app's headers (less the
 * framing ones, which this layer owns), `content-length` when `bodyLength`
 * is given, `date`, and `connection: close` when `close`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { responseHead } from "./http1.ts";
 *
 * const head = responseHead(
 *   404,
 *   new Headers({ "content-type": "text/plain", connection: "upgrade" }),
 *   { bodyLength: 10, close: true, date: "Thu, 01 Jan 1970 00:00:00 GMT" },
 * );
 * assert.equal(
 *   new TextDecoder().decode(head),
 *   "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\n" +
 *     "content-length: 10\r\ndate: Thu, 01 Jan 1970 00:00:00 GMT\r\n" +
 *     "connection: close\r\n\r\n",
 * );
 * ```
 */
export function responseHead(
  status: number,
  headers: Headers,
  options: {
    readonly bodyLength?: number;
    readonly close: boolean;
    readonly date: string;
  },
): Uint8Array {
  let text = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
  // Headers values are ByteStrings with no CR or LF (the Headers class
  // refuses them), so they are written as they are.
  for (const [name, value] of headers) {
    if (!HOP_BY_HOP.has(name)) text += `${name}: ${value}\r\n`;
  }
  if (options.bodyLength !== undefined) {
    text += `content-length: ${options.bodyLength}\r\n`;
  }
  text += `date: ${options.date}\r\n`;
  if (options.close) text += "connection: close\r\n";
  text += "\r\n";
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/**
 * A whole canned response (one line of text), for refusals the connection
 * layer makes before or without the app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cannedResponse } from "./http1.ts";
 *
 * const text = new TextDecoder().decode(
 *   cannedResponse(503, "too many connections", { "retry-after": "1" }),
 * );
 * assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
 * assert.match(text, /\r\nretry-after: 1\r\n/);
 * assert.ok(text.endsWith("\r\n\r\ntoo many connections\n"));
 * ```
 */
export function cannedResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Uint8Array {
  const body = new TextEncoder().encode(`${message}\n`);
  const head = responseHead(
    status,
    new Headers({ "content-type": "text/plain; charset=utf-8", ...headers }),
    { bodyLength: body.length, close: true, date: new Date().toUTCString() },
  );
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}
