/**
 * Shares one rendering of `/metrics` between the scrapes that arrive close
 * together. Several Prometheus servers (HA pairs, federation, an operator's
 * curl loop) then cost one render and one gzip per format per interval, so
 * a scrape storm costs the poll loop little more than the HTTP work.
 *
 * @module
 */

import type { Body } from "./answer.ts";

/** How long a rendering is served again, ms: far below any scrape interval. */
export const SCRAPE_CACHE_MS = 200;

/**
 * Renders on demand, at most once per key (an exposition format, or
 * `json` for the snapshot) per `maxAgeMs`. What it keeps is a
 * {@linkcode Body}, so its gzipped form is made once too.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Body } from "./answer.ts";
 * import { ScrapeCache } from "./scrape_cache.ts";
 *
 * let renders = 0;
 * const cache = new ScrapeCache(() => new Body(`up ${++renders}\n`, "text/plain"), 200);
 * const text = (body: Body) => new TextDecoder().decode(body.bytes);
 * assert.equal(text(cache.body("prometheus", 1000)), "up 1\n");
 * assert.equal(cache.body("prometheus", 1150), cache.body("prometheus", 1000)); // shared
 * assert.equal(text(cache.body("prometheus", 1200)), "up 2\n"); // 200 ms later
 * ```
 */
export class ScrapeCache<K extends string = string> {
  readonly #render: (key: K, nowMs: number) => Body;
  readonly #maxAgeMs: number;
  readonly #entries = new Map<K, { at: number; body: Body }>();

  constructor(
    render: (key: K, nowMs: number) => Body,
    maxAgeMs: number = SCRAPE_CACHE_MS,
  ) {
    this.#render = render;
    this.#maxAgeMs = maxAgeMs;
  }

  /** The rendering of `key` as of at most `maxAgeMs` before `nowMs`. */
  body(key: K, nowMs: number): Body {
    const entry = this.#entries.get(key);
    // A clock that steps back also renders afresh.
    if (
      entry !== undefined && nowMs - entry.at < this.#maxAgeMs &&
      nowMs >= entry.at
    ) {
      return entry.body;
    }
    const body = this.#render(key, nowMs);
    this.#entries.set(key, { at: nowMs, body });
    return body;
  }
}
