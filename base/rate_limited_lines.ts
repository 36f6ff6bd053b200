/**
 * Log lines at a bounded rate: what a remote party can make the agent say
 * again and again (a refused connection or a broken handshake at the
 * endpoint, an Alertmanager refusing every push) must not become a flood
 * in the journal.
 *
 * @module
 */

/**
 * Passes at most `burst` lines per `intervalMs`; the rest are counted and
 * told as one line when the next interval lets a line through (or at
 * {@linkcode flush}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RateLimitedLines } from "./rate_limited_lines.ts";
 *
 * const out: string[] = [];
 * let now = 0;
 * const lines = new RateLimitedLines((l) => out.push(l), {
 *   about: "metrics endpoint",
 *   burst: 2,
 *   intervalMs: 1000,
 *   now: () => now,
 * });
 * for (let i = 0; i < 5; i++) lines.write(`bad request ${i}`);
 * now = 1000;
 * lines.write("bad request 5");
 * assert.deepEqual(out, [
 *   "bad request 0",
 *   "bad request 1",
 *   "metrics endpoint: 3 more messages like these were not logged",
 *   "bad request 5",
 * ]);
 * ```
 */
export class RateLimitedLines {
  readonly #write: (line: string) => void;
  readonly #about: string;
  readonly #burst: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #windowStart = -Infinity;
  #passed = 0;
  #suppressed = 0;

  /**
   * Lines go to `write`; default 10 lines per 10 s. The line that counts
   * those held back starts with `about` (`metrics endpoint: 3 more ...`).
   */
  constructor(
    write: (line: string) => void,
    options: {
      readonly about: string;
      readonly burst?: number;
      readonly intervalMs?: number;
      readonly now?: () => number;
    },
  ) {
    this.#write = write;
    this.#about = options.about;
    this.#burst = options.burst ?? 10;
    this.#intervalMs = options.intervalMs ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Writes `line` if this interval has room, else counts it. */
  write(line: string): void {
    const now = this.#now();
    if (now - this.#windowStart >= this.#intervalMs) {
      this.flush();
      this.#windowStart = now;
      this.#passed = 0;
    }
    if (this.#passed < this.#burst) {
      this.#passed++;
      this.#write(line);
    } else {
      this.#suppressed++;
    }
  }

  /** Tells how many lines were held back, if any. */
  flush(): void {
    if (this.#suppressed === 0) return;
    this.#write(
      `${this.#about}: ${this.#suppressed} more messages like these were not logged`,
    );
    this.#suppressed = 0;
  }
}
