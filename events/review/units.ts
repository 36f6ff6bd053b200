/**
 * Numbers and times written for people: durations, SI-scaled values and
 * rates, UTC times. Shared by the table, the traceback and the report.
 *
 * @module
 */

import type { Instant } from "./event.ts";
import { isoTime } from "./reference_time.ts";

const SI = ["", "k", "M", "G", "T", "P", "E", "Z"];

/**
 * `x` with 3 significant digits and an SI prefix: 1960000 -> "1.96M".
 *
 * @example
 * ```ts
 * import { formatSi } from "./units.ts";
 * formatSi(1960000); // "1.96M"
 * formatSi(-0.5); // "-0.5"
 * ```
 */
export function formatSi(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a < 1000) {
    const digits = a >= 100 || Number.isInteger(x) ? 0 : a >= 10 ? 1 : 2;
    return String(Number(x.toFixed(digits)));
  }
  let k = Math.min(SI.length - 1, Math.floor(Math.log10(a) / 3));
  let scaled = x / 10 ** (3 * k);
  if (Math.abs(Number(scaled.toPrecision(3))) >= 1000 && k < SI.length - 1) {
    k++;
    scaled = x / 10 ** (3 * k);
  }
  return `${Number(scaled.toPrecision(3))}${SI[k]}`;
}

/**
 * A duration in seconds, to a sensible precision: "120 µs", "12.3 ms",
 * "4.012 s", "3 m 12.0 s", "2 h 03 m".
 *
 * @example
 * ```ts
 * import { formatDuration } from "./units.ts";
 * formatDuration(4.0123); // "4.012 s"
 * formatDuration(192); // "3 m 12.0 s"
 * ```
 */
export function formatDuration(seconds: number): string {
  const s = Math.abs(seconds);
  if (s < 1e-3) return `${Math.round(s * 1e6)} µs`;
  if (s < 1) return `${Number((s * 1e3).toPrecision(3))} ms`;
  if (s < 60) return `${s.toFixed(3)} s`;
  if (s < 3600) {
    const m = Math.floor(s / 60);
    return `${m} m ${(s - 60 * m).toFixed(1)} s`;
  }
  const h = Math.floor(s / 3600);
  const m = Math.floor((s - 3600 * h) / 60);
  return `${h} h ${String(m).padStart(2, "0")} m`;
}

/** "2026-11-21 14:50:00.102" (UTC, milliseconds). */
export function formatUtc(t: Instant, digits = 3): string {
  return isoTime(t.sec, t.ns, digits).replace("T", " ").replace(/Z$/, "");
}

/** An integer with thousands separators: 40123 -> "40,123". */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}
