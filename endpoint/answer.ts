/**
 * What a route answers: a status, a body and its headers. A body is built
 * once and gzipped at most once, whoever asks for it how often: a scrape
 * storm shares one rendering (endpoint/scrape_cache.ts) and so one gzip.
 *
 * Why gzip at all: Prometheus always sends `Accept-Encoding: gzip`, and
 * the exposition text (label sets repeated on every line) shrinks about
 * tenfold, which is most of what a scrape costs the fabric. Why in one
 * synchronous call: the bodies are kilobytes, built in one piece, so
 * `gzipSync` costs tens of microseconds and no extra turns of the event
 * loop.
 *
 * @module
 */

import { gzipSync } from "node:zlib";

/** Bodies shorter than this go out as they are: gzip would not pay. */
export const GZIP_MIN_BYTES = 1024;

const COMPRESSIBLE =
  /^(?:text\/|application\/(?:json|openmetrics-text)(?:;|$))/i;
const encoder = new TextEncoder();

/**
 * A response body and its content type, with its gzipped form made on
 * first demand and kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gunzipSync } from "node:zlib";
 * import { Body } from "./answer.ts";
 *
 * const big = new Body("a_total 1\n".repeat(500), "text/plain; charset=utf-8");
 * const zipped = big.gzipped();
 * assert.ok(zipped !== undefined && zipped.length < 200);
 * assert.equal(big.gzipped(), zipped); // made once
 * assert.equal(new TextDecoder().decode(gunzipSync(zipped)), "a_total 1\n".repeat(500));
 * // Small or binary bodies are never gzipped.
 * assert.equal(new Body("ok\n", "text/plain").gzipped(), undefined);
 * assert.equal(new Body(new Uint8Array(5000), "image/png").gzipped(), undefined);
 * ```
 */
export class Body {
  /** The body's bytes. */
  readonly bytes: Uint8Array;
  /** Its `content-type`. */
  readonly type: string;
  #gzipped: Uint8Array | null | undefined;

  /** A body of `content` (text is UTF-8 encoded) of type `type`. */
  constructor(content: string | Uint8Array, type: string) {
    this.bytes = typeof content === "string"
      ? encoder.encode(content)
      : content;
    this.type = type;
  }

  /**
   * Whether the body is worth gzipping: its type is text or JSON and it is
   * at least {@linkcode GZIP_MIN_BYTES} long.
   */
  get compressible(): boolean {
    return this.bytes.length >= GZIP_MIN_BYTES && COMPRESSIBLE.test(this.type);
  }

  /**
   * The body gzipped, when it is {@linkcode compressible}; else undefined.
   * Made on first demand (a client that takes gzip) and kept.
   */
  gzipped(): Uint8Array | undefined {
    if (this.#gzipped === undefined) {
      this.#gzipped = this.compressible
        ? new Uint8Array(gzipSync(this.bytes))
        : null;
    }
    return this.#gzipped ?? undefined;
  }
}

/** A route's answer: the server frames it, adds the common headers and picks the coding. */
export interface Answer {
  /** The HTTP status. */
  readonly status: number;
  /** The body (a HEAD request gets its length, not its bytes). */
  readonly body: Body;
  /** Headers of this answer (lower-case names), beyond the content type. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An answer of one line of plain text (`message` and a newline): refusals
 * and errors, never an echo of the request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textAnswer } from "./answer.ts";
 *
 * const busy = textAnswer(503, "too many connections", { "retry-after": "1" });
 * assert.equal(busy.status, 503);
 * assert.equal(new TextDecoder().decode(busy.body.bytes), "too many connections\n");
 * assert.equal(busy.body.type, "text/plain; charset=utf-8");
 * ```
 */
export function textAnswer(
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>,
): Answer {
  return {
    status,
    body: new Body(`${message}\n`, "text/plain; charset=utf-8"),
    headers,
  };
}

/**
 * Whether an `Accept-Encoding` header allows gzip (q > 0).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { acceptsGzip } from "./answer.ts";
 *
 * assert.equal(acceptsGzip("deflate, gzip;q=0.5"), true);
 * assert.equal(acceptsGzip("gzip;q=0"), false);
 * assert.equal(acceptsGzip(undefined), false);
 * ```
 */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding.trim() !== "gzip" && coding.trim() !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
