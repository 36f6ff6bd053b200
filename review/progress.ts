/**
 * A progress bar on stderr while a big log is read, only when stderr is a
 * terminal (never into a file, a pipe or the journal).
 *
 * @module
 */

import { formatBytes } from "../base/units.ts";

/** Where the bar is drawn. */
export interface ProgressTarget {
  /** Writes raw text (the bar redraws itself with `\r`). */
  write(text: string): void;
  /** Whether it is a terminal. */
  isTerminal(): boolean;
}

/** Logs smaller than this are read too fast for a bar to help. */
export const PROGRESS_MIN_BYTES = 64 * 1024 * 1024;

/** How often the bar is redrawn at most. */
const REDRAW_MS = 200;

const WIDTH = 30;

/**
 * Tracks bytes read out of `total` and redraws
 * `reviewing [=====>    ] 43%  410.1 MiB of 953.7 MiB  114.4 MiB/s` at most five
 * times a second.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Progress } from "./progress.ts";
 *
 * let screen = "";
 * const p = new Progress(100, { write: (t) => screen += t, isTerminal: () => true }, () => 0);
 * p.add(50);
 * assert.match(screen, /reviewing \[=+>\s+\] 50%/);
 * p.done(); // the bar's line is cleared
 * assert.ok(screen.endsWith("\r\x1b[2K"));
 * ```
 */
export class Progress {
  readonly #total: number;
  readonly #target: ProgressTarget;
  readonly #now: () => number;
  readonly #started: number;
  #read = 0;
  #lastDraw = -Infinity;
  #drawn = false;

  constructor(
    total: number,
    target: ProgressTarget,
    now = () => performance.now(),
  ) {
    this.#total = Math.max(1, total);
    this.#target = target;
    this.#now = now;
    this.#started = now();
  }

  /** Bytes read so far. */
  get read(): number {
    return this.#read;
  }

  /** Counts `bytes` more as read; redraws if it is time. */
  add(bytes: number): void {
    this.#read += bytes;
    const now = this.#now();
    if (now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    this.#drawn = true;
    const fraction = Math.min(1, this.#read / this.#total);
    const filled = Math.round(fraction * WIDTH);
    const bar = "=".repeat(Math.max(0, filled - 1)) +
      (filled > 0 ? ">" : "") + " ".repeat(WIDTH - filled);
    const seconds = (now - this.#started) / 1000;
    const speed = seconds > 0 ? `  ${formatBytes(this.#read / seconds)}/s` : "";
    this.#target.write(
      `\r\x1b[2Kreviewing [${bar}] ${Math.floor(fraction * 100)}%  ${
        formatBytes(this.#read)
      } of ${formatBytes(this.#total)}${speed}`,
    );
  }

  /** Clears the bar. */
  done(): void {
    if (this.#drawn) this.#target.write("\r\x1b[2K");
    this.#drawn = false;
  }
}

/**
 * A bar for reading `total` bytes, or undefined when `target` is not a
 * terminal or the files are small.
 */
export function createProgress(
  total: number,
  target: ProgressTarget,
): Progress | undefined {
  if (total < PROGRESS_MIN_BYTES || !target.isTerminal()) return undefined;
  return new Progress(total, target);
}
