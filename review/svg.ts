/**
 * What the report's pictures (event_chart.ts, timeline.ts) share: inline
 * SVG text, escaping, colours, linear scales and round tick values. Drawn
 * by hand rather than by a charting library so the report is one file
 * that works offline, without scripts.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import { SI } from "../base/units.ts";

/** Colours, chosen to read on white and in grey print. */
export const COLORS = {
  value: "#1d4ed8",
  rate: "#c2410c",
  event: "#dc2626",
  span: "#fecaca",
  threshold: "#4b5563",
  grid: "#e5e7eb",
  axis: "#374151",
  ended: "#2563eb",
  open: "#dc2626",
  interrupted: "#9ca3af",
} as const;

/**
 * `text` safe inside XML/HTML text and attribute values. Controls and
 * bidi overrides (from a log's names) are shown as `\uXXXX` too: a
 * browser would reorder the text around an override, and the page may be
 * written to a terminal (`--html -`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapeXml } from "./svg.ts";
 *
 * assert.equal(escapeXml('<b a="1">\u202e'), "&lt;b a=&quot;1&quot;&gt;\\u202e");
 * ```
 */
export function escapeXml(text: string): string {
  return terminalSafe(text).replace(
    /[&<>"']/g,
    (c) =>
      c === "&"
        ? "&amp;"
        : c === "<"
        ? "&lt;"
        : c === ">"
        ? "&gt;"
        : c === '"'
        ? "&quot;"
        : "&#39;",
  );
}

/**
 * About `count` round tick values covering `[min, max]` (steps of 1, 2 or
 * 5 times a power of ten).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { niceTicks } from "./svg.ts";
 *
 * assert.deepEqual(niceTicks(0, 97, 5), [0, 20, 40, 60, 80]);
 * ```
 */
export function niceTicks(min: number, max: number, count: number): number[] {
  if (!(max > min) || !Number.isFinite(max - min)) return [min];
  const rough = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ??
    10 * power;
  const ticks: number[] = [];
  for (
    let t = Math.ceil(min / step) * step;
    t <= max + step * 1e-9;
    t += step
  ) {
    ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    if (ticks.length > 100) break;
  }
  return ticks;
}

const TIME_STEPS_MS = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  1e3,
  2e3,
  5e3,
  10e3,
  15e3,
  30e3,
  60e3,
  120e3,
  300e3,
  600e3,
  900e3,
  1800e3,
  3600e3,
  7200e3,
  10800e3,
  21600e3,
  43200e3,
  86400e3,
  172800e3,
  604800e3,
];

/** Round UTC clock times across `[minMs, maxMs]`, with labels. */
export function timeTicks(
  minMs: number,
  maxMs: number,
  count: number,
): { ms: number; label: string }[] {
  const span = maxMs - minMs;
  const step = TIME_STEPS_MS.find((s) => s >= span / Math.max(1, count)) ??
    TIME_STEPS_MS[TIME_STEPS_MS.length - 1];
  const ticks = [];
  for (let t = Math.ceil(minMs / step) * step; t <= maxMs; t += step) {
    const iso = new Date(t).toISOString();
    const label = step >= 86400e3
      ? iso.slice(5, 10)
      : step >= 60e3
      ? iso.slice(11, 16)
      : step >= 1e3
      ? iso.slice(11, 19)
      : iso.slice(11, 23);
    ticks.push({ ms: t, label });
    if (ticks.length > 50) break;
  }
  return ticks;
}

/**
 * A y-axis label: SI-scaled by the axis' magnitude, with enough decimals
 * to tell ticks `step` apart (a counter near 64.9G moving by 500k reads
 * 64.9475G, 64.9480G).
 */
export function formatTick(
  value: number,
  step: number,
  magnitude: number,
): string {
  const k = magnitude >= 1000
    ? Math.min(SI.length - 1, Math.floor(Math.log10(magnitude) / 3))
    : 0;
  const unit = 10 ** (3 * k);
  const decimals = step > 0
    ? Math.min(8, Math.max(0, Math.ceil(-Math.log10(step / unit) - 1e-9)))
    : 0;
  return `${(value / unit).toFixed(decimals)}${SI[k]}`;
}

/** A coordinate as SVG text: one decimal ("0" if not finite). */
export function coord(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 10) / 10) : "0";
}

/** Linear map from `[d0, d1]` to `[r0, r1]`. */
export function scale(
  d0: number,
  d1: number,
  r0: number,
  r1: number,
): (x: number) => number {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (x: number) => r0 + (x - d0) * k;
}

/** A white outline behind labels drawn over lines (attributes). */
export const HALO = 'stroke="#fff" stroke-width="3" paint-order="stroke"';

/** Width of every picture (SVG units; the page scales them down). */
export const WIDTH = 960;
/** Margin right of every plot area. */
export const RIGHT_MARGIN = 18;
