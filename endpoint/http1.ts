/**
 * The HTTP/1.1 the metrics endpoint speaks (RFC 9112), and no more: a
 * strict parser for request heads and a writer for responses.
 *
 * Why a parser of our own: the endpoint needs limits that Deno.serve does
 * not offer and that node:http in Deno 2.9.6 cannot keep (its listener
 * stops accepting for good after one EMFILE; see endpoint/server.ts). The
 * endpoint is read-only: GET and HEAD without bodies, so only the head
 * needs parsing, and every request limit is checked here, once, before any
 * handler runs: another method is 405, an announced body 413 (and the
 * connection closes, so the body is never read and can never be taken for
 * the next request: no request smuggling), a long target 414, too many
 * fields 431 (a head larger than the server's buffer is its 431). Anything
 * unusual is refused rather than guessed at: bare LF or CR, obs-fold,
 * whitespace before a colon, control characters, duplicate or malformed
 * Content-Length, a missing or repeated Host.
 *
 * @module
 */

/** A request head that parsed: a GET or HEAD without a body. */
export interface RequestHead {
  /** The method (methods are case-sensitive: `get` is refused). */
  readonly method: "GET" | "HEAD";
  /** The path and query (origin-form), e.g. `/metrics?x=1`. */
  readonly target: string;
  /**
   * The target's path as a URL reads it: dot segments resolved and
   * unreserved characters percent-decoded (RFC 3986 6.2.2), so
   * `/%6detrics` and `/./metrics` are `/metrics`; reserved ones (`%2F`)
   * stay encoded.
   */
  readonly path: string;
  /** The target's query, without its `?` or any fragment; empty when there is none. */
  readonly query: string;
  /** The HTTP version: `1.0` or `1.1`. */
  readonly version: "1.0" | "1.1";
  /** Header fields in order; names lower-cased, values trimmed. */
  readonly headers: readonly (readonly [string, string])[];
  /**
   * The connection must close after the response: the client asked
   * (`Connection: close`) or spoke HTTP/1.0.
   */
  readonly close: boolean;
}

/**
 * A head that is refused: the status to answer with, and why. The
 * connection closes after the answer.
 */
export interface HeadProblem {
  /** 400, 405, 413, 414, 431 or 505. */
  readonly status: number;
  /** One line for the response body. */
  readonly message: string;
  /** Headers the refusal carries (405's `allow`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Bounds the parser enforces (the head's byte size is the caller's buffer). */
export interface HeadLimits {
  /** Header fields at most; more is 431. */
  readonly maxHeaders: number;
  /** Bytes of the request target at most; more is 414. */
  readonly maxTargetBytes: number;
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

function problem(
  status: number,
  message: string,
  headers?: Record<string, string>,
): ParsedHead {
  return { ok: false, problem: { status, message, headers } };
}

/**
 * Parses the head `bytes` (everything up to and including its blank line,
 * as {@linkcode findHeadEnd} delimits it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { headerField, parseRequestHead } from "./http1.ts";
 *
 * const bytes = (text: string) => new TextEncoder().encode(text);
 * const parsed = parseRequestHead(
 *   bytes("GET /metrics?a=1 HTTP/1.1\r\nHost: dpu:9477\r\nAccept: text/plain\r\n\r\n"),
 *   { maxHeaders: 100, maxTargetBytes: 2048 },
 * );
 * assert.ok(parsed.ok);
 * assert.equal(parsed.head.path, "/metrics");
 * assert.equal(parsed.head.query, "a=1");
 * assert.deepEqual(parsed.head.headers[1], ["accept", "text/plain"]);
 * assert.equal(headerField(parsed.head, "Accept"), "text/plain");
 * assert.equal(parsed.head.close, false);
 *
 * // A folded header line is refused, never unfolded.
 * const folded = parseRequestHead(
 *   bytes("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n"),
 *   { maxHeaders: 100, maxTargetBytes: 2048 },
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
  if (method !== "GET" && method !== "HEAD") {
    return problem(405, "method not allowed: this endpoint is read-only", {
      allow: "GET, HEAD",
    });
  }
  const target = originForm(rawTarget);
  if (target === undefined) return problem(400, "malformed request target");
  if (target.length > limits.maxTargetBytes) {
    return problem(414, "request target too long");
  }

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
  if (chunked || (lengths === 1 && Number(length) !== 0)) {
    return problem(413, "request bodies are not accepted");
  }
  let url: URL;
  try {
    // The authority is ours, so a path that looks like one (`//x/y`) stays
    // a path.
    url = new URL(`http://endpoint${target}`);
  } catch {
    return problem(400, "malformed request target");
  }
  const path = url.pathname.replace(/%([0-9A-Fa-f]{2})/g, decodeUnreserved);
  const query = url.search.slice(1);
  return {
    ok: true,
    head: { method, target, path, query, version, headers, close },
  };
}

/**
 * The value of the header field `name` in `head`, its lines joined with
 * `, ` when it came more than once (RFC 9110 5.3); undefined when absent.
 */
export function headerField(
  head: Pick<RequestHead, "headers">,
  name: string,
): string | undefined {
  const lower = name.toLowerCase();
  let value: string | undefined;
  for (const [field, text] of head.headers) {
    if (field === lower) {
      value = value === undefined ? text : `${value}, ${text}`;
    }
  }
  return value;
}

/** The path and query of an origin-form or absolute-form target. */
function originForm(target: string): string | undefined {
  if (target.startsWith("/")) return target;
  // Absolute form (RFC 9112 3.2.2: servers must accept it). Its authority
  // is not used: the routes see the endpoint's own origin.
  const absolute = /^https?:\/\/[^/?#]*([/?#].*)?$/i.exec(target);
  if (absolute === null) return undefined;
  const rest = absolute[1] ?? "/";
  return rest.startsWith("/") ? rest : `/${rest}`;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** `%XX` as its character when that is unreserved, else as it was. */
function decodeUnreserved(escape: string, hex: string): string {
  const char = String.fromCharCode(parseInt(hex, 16));
  return UNRESERVED.test(char) ? char : escape;
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

/** Headers the connection layer sets itself; others' are dropped. */
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
 * The bytes of a response head: status line, `headers` (lower-case names;
 * less the framing ones, which this layer owns), `content-length` when
 * `bodyLength` is given, `date`, and `connection: close` when `close`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { responseHead } from "./http1.ts";
 *
 * const head = responseHead(
 *   404,
 *   [["content-type", "text/plain"], ["connection", "upgrade"]],
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
  headers: Iterable<readonly [string, string]>,
  options: {
    readonly bodyLength?: number;
    readonly close: boolean;
    readonly date: string;
  },
): Uint8Array {
  let text = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
  // Values are ours or the web config's, which refuses control and
  // non-Latin-1 characters, so they are written as they are.
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
