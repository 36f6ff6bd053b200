/**
 * Shares one rendering of `/metrics` between the scrapes that arrive close
 * together. Several Prometheus servers (HA pairs, federation, an operator's
 * curl loop) then cost one render and one gzip per format per interval, so
 * a scrape storm costs the poll loop little more than the HTTP work.
 *
 * @module
 */

import { gzipSync } from "node:zlib";

/** How long a rendering is served again, ms: far below any scrape interval. */
export const SCRAPE_CACHE_MS = 200;

interface Entry {
  at: number;
  text?: string;
  gzip?: Uint8Array<ArrayBuffer>;
}

/**
 * Renders on demand, at most once per key (an exposition format, or
 * `json` for the snapshot) per `maxAgeMs`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScrapeCache } from "./scrape_cache.ts";
 *
 * let renders = 0;
 * const cache = new ScrapeCache(() => `up ${++renders}\n`, 200);
 * assert.equal(cache.text("prometheus", 1000), "up 1\n");
 * assert.equal(cache.text("prometheus", 1150), "up 1\n"); // shared
 * assert.equal(cache.text("prometheus", 1200), "up 2\n"); // 200 ms later
 * ```
 */
export class ScrapeCache<K extends string = string> {
  readonly #render: (key: K, nowMs: number) => string;
  readonly #maxAgeMs: number;
  readonly #entries = new Map<K, Entry>();

  constructor(
    render: (key: K, nowMs: number) => string,
    maxAgeMs: number = SCRAPE_CACHE_MS,
  ) {
    this.#render = render;
    this.#maxAgeMs = maxAgeMs;
  }

  /** The rendering of `key` as of at most `maxAgeMs` before `nowMs`. */
  text(key: K, nowMs: number): string {
    const entry = this.#fresh(key, nowMs);
    return entry.text ??= this.#render(key, entry.at);
  }

  /** The same, gzipped. */
  gzip(key: K, nowMs: number): Uint8Array<ArrayBuffer> {
    const entry = this.#fresh(key, nowMs);
    entry.text ??= this.#render(key, entry.at);
    return entry.gzip ??= new Uint8Array(gzipSync(entry.text));
  }

  #fresh(key: K, nowMs: number): Entry {
    let entry = this.#entries.get(key);
    // A clock that steps back also renders afresh.
    if (
      entry === undefined || nowMs - entry.at >= this.#maxAgeMs ||
      nowMs < entry.at
    ) {
      entry = { at: nowMs };
      this.#entries.set(key, entry);
    }
    return entry;
  }
}
