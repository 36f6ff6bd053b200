/**
 * The timestamp column of events.log, in either writer's encoding.
 *
 * Ours writes nanoseconds since the Unix epoch. NVIDIA's reference
 * application writes the device's RTC time as `(seconds << 32) |
 * nanoseconds` in one integer, built from the sample's earliest seconds and
 * latest nanoseconds, so a sample whose counters straddle a second
 * boundary comes out one second early. A free-running-counter (FRC) clock
 * gives neither: nanoseconds of device uptime, not wall time.
 *
 * @module
 */

import { mulAdd1e9U64 } from "../base/u64.ts";
import { utcText } from "../base/units.ts";
import { E9, signedDelta } from "./decimal.ts";

/**
 * How a block's timestamps are encoded: `ns` (ours), `reference`
 * (`(seconds << 32) | nanoseconds`) or `counter` (not wall-clock time:
 * differences are nanoseconds, wall times come from the event markers).
 */
export type TimeFormat = "ns" | "reference" | "counter";

/** The names `--timestamps` accepts. */
export const TIME_FORMATS: readonly TimeFormat[] = [
  "ns",
  "reference",
  "counter",
];

// Plausible wall-clock seconds: 2000-01-01 to 2100-01-01, and to
// 2090-01-01 for our encoding: the reference's encoding of 2000 reads as
// nanoseconds in 2098, so the ranges must not meet.
const WALL_MIN_S = 946684800;
const WALL_MAX_S = 4102444800;
const NS_MAX_S = 3786912000;

// (lo, hi) 32-bit halves of a timestamp: [value & 0xffffffff, value >> 32].
const scratch = new Uint32Array(2);

/**
 * Guesses a block's encoding from one timestamp (`hi * 10^9 + lo`): wall
 * time in nanoseconds between 2000 and 2090 is `ns`; upper 32 bits in that
 * range of seconds with lower 32 bits below 10^9 is `reference`; anything
 * else is `counter`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { detectTimeFormat } from "./reference_time.ts";
 *
 * assert.equal(detectTimeFormat(1795272600, 0), "ns"); // 2026-11-21T14:50:00Z
 * // (1795272600 << 32) | 102400000 = 7710637104507289600
 * assert.equal(detectTimeFormat(7710637104, 507289600), "reference");
 * ```
 */
export function detectTimeFormat(hi: number, lo: number): TimeFormat {
  if (hi >= WALL_MIN_S && hi < NS_MAX_S) return "ns";
  mulAdd1e9U64(scratch, 0, hi, lo);
  if (scratch[1] >= WALL_MIN_S && scratch[1] < WALL_MAX_S && scratch[0] < E9) {
    return "reference";
  }
  return "counter";
}

/**
 * Nanoseconds from `b` to `a` (each as seconds and nanoseconds, as
 * {@linkcode TimeDecoder} gives them) on a block's clock: for wall-clock
 * time the plain difference, negative if the clock was stepped back; for
 * a counter the difference modulo 2^64 read as signed, so a counter that
 * wrapped past 2^64 - 1 still moved forward by a little.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clockDeltaNs } from "./reference_time.ts";
 *
 * // Stepped back 10 s.
 * assert.equal(clockDeltaNs("ns", 1795272590, 0, 1795272600, 0), -10_000_000_000);
 * // counter: 4 after 2^64 - 6 is 10 ns later
 * assert.equal(clockDeltaNs("counter", 0, 4, 18446744073, 709551610), 10);
 * ```
 */
export function clockDeltaNs(
  format: TimeFormat,
  aSec: number,
  aNs: number,
  bSec: number,
  bNs: number,
): number {
  return format === "counter"
    ? signedDelta(aSec, aNs, bSec, bNs)
    : (aSec - bSec) * 1e9 + (aNs - bNs);
}

/** Whether times in this encoding are wall-clock times. */
export function isWallClock(format: TimeFormat): boolean {
  return format !== "counter";
}

/**
 * Decodes a block's timestamps into seconds and nanoseconds, row by row.
 * For the reference encoding it undoes the one-second-early rows: a row
 * earlier than the previous one by less than a second is moved a second
 * on (samples are never that far out of order). Call {@linkcode reset} at
 * every history dump, whose first row legitimately goes back in time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TimeDecoder } from "./reference_time.ts";
 *
 * const t = new TimeDecoder("ns");
 * t.decode(1795272600, 102400000);
 * assert.deepEqual([t.sec, t.ns], [1795272600, 102400000]);
 * ```
 */
export class TimeDecoder {
  /** The encoding. */
  readonly format: TimeFormat;
  /** Seconds of the last decoded row (since the epoch, or of the counter). */
  sec = 0;
  /** Nanoseconds within {@linkcode sec}. */
  ns = 0;
  /** Reference rows moved a second on so far. */
  corrected = 0;
  #prevSec = -1;
  #prevNs = 0;

  constructor(format: TimeFormat) {
    this.format = format;
  }

  /** Decodes the timestamp `hi * 10^9 + lo` into {@linkcode sec} / {@linkcode ns}. */
  decode(hi: number, lo: number): void {
    if (this.format !== "reference") {
      this.sec = hi;
      this.ns = lo;
      return;
    }
    mulAdd1e9U64(scratch, 0, hi, lo);
    let sec = scratch[1];
    let ns = scratch[0];
    if (ns >= E9) {
      // Not a valid RTC nanosecond field; keep time monotone at least.
      sec += Math.floor(ns / E9);
      ns %= E9;
    }
    const prevSec = this.#prevSec;
    if (
      prevSec >= 0 &&
      (sec < prevSec || (sec === prevSec && ns < this.#prevNs)) &&
      (sec + 1 > prevSec || (sec + 1 === prevSec && ns >= this.#prevNs))
    ) {
      sec += 1;
      this.corrected++;
    }
    this.sec = this.#prevSec = sec;
    this.ns = this.#prevNs = ns;
  }

  /** Forgets the previous row (a history dump starts over). */
  reset(): void {
    this.#prevSec = -1;
  }
}

/**
 * ISO-8601 UTC time of `sec` + `ns`, with `digits` (0 to 9) decimals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isoTime } from "./reference_time.ts";
 *
 * assert.equal(isoTime(1795272600, 102400000, 3), "2026-11-21T14:50:00.102Z");
 * ```
 */
export function isoTime(sec: number, ns: number, digits = 3): string {
  return utcText(sec, ns, digits, "T") + "Z";
}
