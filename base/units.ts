/**
 * Numbers and times written for people: durations (measured and
 * configured), byte counts, counts, UTC times. One
 * formatter per unit, shared by check-config, the closing table, review
 * (table, traceback, report), /ready, the alerts and the log lines.
 * Rates (`/s`) and ratios (`%`) are base/peak_text.ts's measureText.
 *
 * @module
 */

/** A point in time: whole seconds and nanoseconds (wall-clock UTC). */
export interface Instant {
  /** Whole seconds since the Unix epoch. */
  readonly sec: number;
  /** Nanoseconds within that second (0 to 999999999). */
  readonly ns: number;
}

/**
 * The instant of `ns` nanoseconds since the Unix epoch, exactly.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { instantOfNs } from "./units.ts";
 *
 * assert.deepEqual(instantOfNs(1_795_272_600_000_000_123n), { sec: 1795272600, ns: 123 });
 * ```
 */
export function instantOfNs(ns: bigint): Instant {
  const sec = ns / 1_000_000_000n;
  return { sec: Number(sec), ns: Number(ns - sec * 1_000_000_000n) };
}

/** SI prefixes by power of 1000: "" (1), "k", "M", ... (a chart's axis). */
export const SI: readonly string[] = ["", "k", "M", "G", "T", "P", "E", "Z"];

/** How {@linkcode formatDuration} writes a duration. */
export interface DurationOptions {
  /**
   * A configured duration (a rule's window, `for`, a timeout), shown
   * exactly, in a form `parseDuration` (config/durations.ts) reads back:
   * the largest unit that shows the whole nanoseconds with at most three
   * decimals (`500 µs`, `1.5 ms`, `1000.001 µs`, `1.5 min`). Without it
   * the duration is a measured one, rounded to what a person reads.
   */
  readonly exact?: boolean;
}

/** Units of an exact duration, largest first: ns each, and the name. */
const EXACT_UNITS: readonly (readonly [number, string])[] = [
  [3_600_000_000_000, "h"],
  [60_000_000_000, "min"],
  [1_000_000_000, "s"],
  [1_000_000, "ms"],
  [1_000, "µs"],
];

/**
 * A duration in seconds, the one way the agent writes one. A measured
 * duration (how long an event lasted, how old the data is) to a sensible
 * precision: "300 ns", "120 µs", "12.3 ms", "4.012 s", "3 min 12.0 s",
 * "2 h 03 min". A configured one (`{ exact: true }`: a rule's window, a
 * timeout) exactly, as `parseDuration` reads it back: "500 µs", "10 s",
 * "1.5 min". The units and their spelling are the same either way; a
 * negative duration (a clock stepped back) keeps its sign.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDuration } from "./units.ts";
 *
 * assert.equal(formatDuration(4.0123), "4.012 s");
 * assert.equal(formatDuration(192), "3 min 12.0 s");
 * assert.equal(formatDuration(-9.7), "-9.700 s");
 * assert.equal(formatDuration(0.0015, { exact: true }), "1.5 ms");
 * assert.equal(formatDuration(90, { exact: true }), "1.5 min");
 * assert.equal(formatDuration(0.001000001, { exact: true }), "1000.001 µs");
 * ```
 */
export function formatDuration(
  seconds: number,
  options: DurationOptions = {},
): string {
  const s = Math.abs(seconds);
  const sign = seconds < 0 ? "-" : "";
  const ns = Math.round(s * 1e9);
  if (options.exact) {
    for (const [unit, name] of EXACT_UNITS) {
      if (ns >= unit && ns % (unit / 1000) === 0) {
        return `${sign}${Number((ns / unit).toFixed(3))} ${name}`;
      }
    }
    return `${sign}${ns} ns`;
  }
  // Each unit while its rounded figure stays under 1000 (999.9996 µs
  // reads "1 ms", not "1000 µs").
  if (ns < 1000) return `${sign}${ns} ns`;
  const us = Number((s * 1e6).toPrecision(3));
  if (us < 1000) return `${sign}${us} µs`;
  const ms = Number((s * 1e3).toPrecision(3));
  if (ms < 1000) return `${sign}${ms} ms`;
  if (s < 59.9995) return `${sign}${s.toFixed(3)} s`;
  if (s < 3600) {
    const m = Math.floor(s / 60);
    return `${sign}${m} min ${(s - 60 * m).toFixed(1)} s`;
  }
  const h = Math.floor(s / 3600);
  const m = Math.floor((s - 3600 * h) / 60);
  return `${sign}${h} h ${String(m).padStart(2, "0")} min`;
}

/** Binary units of a byte count past 1023, smallest first. */
const BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/**
 * A byte count (a file, a ring, a read so far), the one way the agent
 * writes one: the largest binary unit that keeps it at least 1, to one
 * decimal (`1.5 GiB`); plain bytes under 1 KiB (a rate of bytes, which
 * has a fraction, to one decimal too).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatBytes } from "./units.ts";
 *
 * assert.equal(formatBytes(1024 * 1024 * 1024), "1 GiB");
 * assert.equal(formatBytes(1536), "1.5 KiB");
 * assert.equal(formatBytes(100), "100 bytes");
 * ```
 */
export function formatBytes(bytes: number): string {
  if (!(Math.abs(bytes) >= 1024)) return `${Number(bytes.toFixed(1))} bytes`;
  let value = bytes;
  let unit = "bytes";
  for (const next of BYTE_UNITS) {
    if (Math.abs(value) < 1024) break;
    value /= 1024;
    unit = next;
  }
  return `${Number(value.toFixed(1))} ${unit}`;
}

/** "2026-11-21 14:50:00.102" (UTC, milliseconds). */
export function formatUtc(t: Instant, digits = 3): string {
  return utcText(t.sec, t.ns, digits, " ");
}

/**
 * An integer with thousands separators: 40123 -> "40,123". (Not
 * `toLocaleString`: a table of many events calls this for every row, and
 * the locale machinery made it most of the review's time.)
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) {
    out += "," + digits.slice(i, i + 3);
  }
  return n < 0 ? "-" + out : out;
}

/**
 * A count and its noun, singular for 1: `countOf(1, "sample")` is
 * "1 sample", `countOf(40123, "row")` "40,123 rows".
 */
export function countOf(n: number, one: string, many = one + "s"): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

// The date of the last day asked for: a review prints a few times per
// event, mostly of the same day, and Date's own formatting was most of
// the time a table of many events took.
let cachedDay = NaN;
let cachedDate = "";

/**
 * `YYYY-MM-DD` `separator` `HH:MM:SS[.fraction]` (UTC, `digits` decimals),
 * without a zone letter.
 */
export function utcText(
  sec: number,
  ns: number,
  digits: number,
  separator: string,
): string {
  const day = Math.floor(sec / 86400);
  if (day !== cachedDay) {
    cachedDate = new Date(day * 86400000).toISOString().slice(0, 10);
    cachedDay = day;
  }
  const s = sec - day * 86400;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s - 3600 * h) / 60);
  const clock = `${cachedDate}${separator}${two(h)}:${two(m)}:${
    two(s - 3600 * h - 60 * m)
  }`;
  if (digits <= 0) return clock;
  return `${clock}.${String(ns).padStart(9, "0").slice(0, digits)}`;
}

function two(n: number): string {
  return n < 10 ? "0" + n : String(n);
}
