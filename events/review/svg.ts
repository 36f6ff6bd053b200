/**
 * The report's pictures, as inline SVG text: the timeline of all events
 * and, per event, the rule's column and its per-second rate over the
 * traceback window. Drawn here rather than by a charting library so the
 * report is one file that works offline, without scripts.
 *
 * @module
 */

import { firesLow, instantMs, lastKnown, type ReviewEvent } from "./event.ts";
import { POINT_STRIDE } from "./window.ts";
import { formatDuration, formatSi } from "./units.ts";

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

/** `text` safe inside XML/HTML text and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(
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
 * import { niceTicks } from "./svg.ts";
 * niceTicks(0, 97, 5); // [0, 20, 40, 60, 80]
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
    ? Math.min(SI_PREFIXES.length - 1, Math.floor(Math.log10(magnitude) / 3))
    : 0;
  const unit = 10 ** (3 * k);
  const decimals = step > 0
    ? Math.min(8, Math.max(0, Math.ceil(-Math.log10(step / unit) - 1e-9)))
    : 0;
  return `${(value / unit).toFixed(decimals)}${SI_PREFIXES[k]}`;
}

const SI_PREFIXES = ["", "k", "M", "G", "T", "P", "E", "Z"];

function f(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 10) / 10) : "0";
}

/** Linear map from `[d0, d1]` to `[r0, r1]`. */
function scale(d0: number, d1: number, r0: number, r1: number) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (x: number) => r0 + (x - d0) * k;
}

// White outline behind labels drawn over lines.
const HALO = 'stroke="#fff" stroke-width="3" paint-order="stroke"';

const W = 960;
const LEFT = 80;
const RIGHT = 18;
const TOP = 26;
const PANEL = 140;
const GAP = 44;
const BOTTOM = 36;

/** Geometry of the per-event chart, for callers that lay pages out. */
export const CHART_SIZE = {
  width: W,
  height: TOP + 2 * PANEL + GAP + BOTTOM,
} as const;

/** A threshold line and its label, if the rule gives one for this panel. */
interface Threshold {
  readonly y: number;
  readonly label: string;
}

function thresholds(e: ReviewEvent): { value?: Threshold; rate?: Threshold } {
  const value = e.threshold === undefined ? NaN : Number(e.threshold);
  if (!Number.isFinite(value) || e.kind === undefined) return {};
  if (e.kind === "gt" || e.kind === "lt") {
    return { value: { y: value, label: `threshold ${formatSi(value)}` } };
  }
  const period = e.samplePeriodNs;
  if (period === undefined || period <= 0) return {};
  const samples = e.kind === "inc_gt" ? 1 : e.depth ?? NaN;
  if (!Number.isFinite(samples)) return {};
  const perS = value / (samples * period / 1e9);
  return {
    rate: {
      y: perS,
      label: `threshold ≈ ${formatSi(perS)}/s (${formatSi(value)} over ${
        samples === 1 ? "1 sample" : `${samples} samples`
      })`,
    },
  };
}

/**
 * The chart of one event: two panels sharing the time axis (seconds from
 * the start sample), the column's value above and its per-second rate
 * below, each bucket drawn from its lowest to its highest value so spikes
 * show however many rows a pixel holds. The event is shaded, its start
 * and end marked, the peaks dotted, the rule's threshold dashed. Empty
 * string if the event has no chart data.
 */
export function eventChartSvg(e: ReviewEvent): string {
  const chart = e.chart;
  if (chart === undefined) return "";
  const origin = e.window.startRow;
  if (origin === null || e.start === null) return "";
  const originMs = origin.sec * 1000 + origin.ns / 1e6;
  const pts: number[][] = [];
  for (const series of [chart.before, chart.during]) {
    for (let i = 0; i < series.length; i += POINT_STRIDE) {
      const p = Array.from(series.subarray(i, i + POINT_STRIDE));
      p[0] = (p[0] - originMs) / 1000;
      p[1] = (p[1] - originMs) / 1000;
      pts.push(p);
    }
  }
  if (pts.length === 0) return "";
  const endX = e.state === "ended" && e.durationS !== null
    ? e.durationS
    : undefined;
  let x0 = Math.min(0, pts[0][0]);
  let x1 = Math.max(pts[pts.length - 1][1], endX ?? 0);
  if (x1 - x0 < 1e-6) {
    x0 -= 1e-4;
    x1 += 1e-4;
  }
  const sx = scale(x0, x1, LEFT, W - RIGHT);
  const th = thresholds(e);
  const valueTop = TOP;
  const rateTop = TOP + PANEL + GAP;
  const parts: string[] = [];
  const column = e.column ?? "the rule's column";
  const title = `#${e.id} ${e.rule}: ${column} and its rate per second`;
  parts.push(
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${CHART_SIZE.height}" width="${W}" height="${CHART_SIZE.height}" role="img" aria-label="${
      escapeXml(title)
    }" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
  );

  const panel = (
    top: number,
    lo: number[],
    hi: number[],
    color: string,
    cls: string,
    heading: string,
    threshold: Threshold | undefined,
    peak: { x: number; y: number } | undefined,
  ) => {
    const finite = [...lo, ...hi].filter(Number.isFinite);
    if (threshold !== undefined && Number.isFinite(threshold.y)) {
      finite.push(threshold.y);
    }
    let y0 = finite.length ? Math.min(...finite) : 0;
    let y1 = finite.length ? Math.max(...finite) : 1;
    if (y1 - y0 <= Math.abs(y1) * 1e-12) {
      const pad = Math.abs(y1) * 0.01 || 1;
      y0 -= pad;
      y1 += pad;
    }
    const padY = (y1 - y0) * 0.06;
    y0 -= padY;
    y1 += padY;
    const sy = scale(y0, y1, top + PANEL, top);
    parts.push(
      `<rect class="panel" x="${LEFT}" y="${top}" width="${
        W - LEFT - RIGHT
      }" height="${PANEL}" fill="#fff" stroke="${COLORS.grid}"/>`,
    );
    const ticks = niceTicks(y0, y1, 4);
    const step = ticks.length > 1 ? ticks[1] - ticks[0] : Math.abs(y1 - y0);
    for (const t of ticks) {
      const y = sy(t);
      parts.push(
        `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${f(y)}" y2="${
          f(y)
        }" stroke="${COLORS.grid}"/>`,
        `<text x="${LEFT - 6}" y="${
          f(y + 4)
        }" text-anchor="end" fill="${COLORS.axis}">${
          escapeXml(formatTick(t, step, Math.max(Math.abs(y0), Math.abs(y1))))
        }</text>`,
      );
    }
    // The event: shaded from start to end (to the right edge if open).
    const spanEnd = endX === undefined ? W - RIGHT : sx(endX);
    parts.push(
      `<rect class="event-span" x="${f(sx(0))}" y="${top}" width="${
        f(Math.max(2, spanEnd - sx(0)))
      }" height="${PANEL}" fill="${COLORS.span}" fill-opacity="0.55"/>`,
    );
    if (threshold !== undefined && Number.isFinite(threshold.y)) {
      const y = sy(threshold.y);
      parts.push(
        `<line class="threshold" x1="${LEFT}" x2="${W - RIGHT}" y1="${
          f(y)
        }" y2="${f(y)}" stroke="${COLORS.threshold}" stroke-dasharray="6 4"/>`,
        `<text x="${W - RIGHT - 4}" y="${
          f(y - 4)
        }" text-anchor="end" fill="${COLORS.threshold}">${
          escapeXml(threshold.label)
        }</text>`,
      );
    }
    // Each bucket spans its lowest to its highest value: a shaded band
    // between the two lines (one line where a bucket is one row).
    const runs: number[][] = [];
    let run: number[] = [];
    for (let i = 0; i < pts.length; i++) {
      if (Number.isFinite(lo[i]) && Number.isFinite(hi[i])) run.push(i);
      else if (run.length) {
        runs.push(run);
        run = [];
      }
    }
    if (run.length) runs.push(run);
    const xOf = (i: number) => f(sx((pts[i][0] + pts[i][1]) / 2));
    const line = (ys: number[]) =>
      runs.map((r) =>
        r.map((i, k) => `${k ? "L" : "M"}${xOf(i)} ${f(sy(ys[i]))}`).join("")
      ).join("");
    const band = runs.map((r) =>
      r.map((i, k) => `${k ? "L" : "M"}${xOf(i)} ${f(sy(hi[i]))}`).join("") +
      [...r].reverse().map((i) => `L${xOf(i)} ${f(sy(lo[i]))}`).join("") + "Z"
    ).join("");
    if (runs.length) {
      parts.push(
        `<path class="band" d="${band}" fill="${color}" fill-opacity="0.25" stroke="none"/>`,
        `<path class="${cls}" d="${
          line(hi)
        }" fill="none" stroke="${color}" stroke-width="1.5" stroke-linejoin="round"/>`,
        `<path class="${cls}-low" d="${
          line(lo)
        }" fill="none" stroke="${color}" stroke-width="1" stroke-linejoin="round"/>`,
      );
    }
    if (peak !== undefined && Number.isFinite(peak.y)) {
      parts.push(
        `<circle class="peak" cx="${f(sx(peak.x))}" cy="${
          f(sy(peak.y))
        }" r="4" fill="none" stroke="${color}" stroke-width="2"/>`,
      );
    }
    parts.push(
      `<text x="${LEFT}" y="${
        top - 8
      }" font-weight="600" fill="${COLORS.axis}">${escapeXml(heading)}</text>`,
    );
  };

  const since = (t: { sec: number; ns: number } | null) =>
    t === null ? NaN : (instantMs(t) - instantMs(e.start!)) / 1000;
  const low = firesLow(e.kind);
  panel(
    valueTop,
    pts.map((p) => p[2]),
    pts.map((p) => p[3]),
    COLORS.value,
    "value-line",
    `${column} (value)`,
    th.value,
    e.peak === null ? undefined : { x: since(e.peakAt), y: Number(e.peak) },
  );
  panel(
    rateTop,
    pts.map((p) => p[4]),
    pts.map((p) => p[5]),
    COLORS.rate,
    "rate-line",
    `${column} per second (rate)`,
    th.rate,
    e.peakRate === null ? undefined : { x: since(e.peakRateAt), y: e.peakRate },
  );

  // Start and end, across both panels.
  const markerTop = valueTop;
  const markerBottom = rateTop + PANEL;
  parts.push(
    `<line class="start-marker" x1="${f(sx(0))}" x2="${
      f(sx(0))
    }" y1="${markerTop}" y2="${markerBottom}" stroke="${COLORS.event}" stroke-width="2"/>`,
    `<text x="${f(sx(0) + 4)}" y="${
      markerTop + 14
    }" fill="${COLORS.event}" font-weight="600" ${HALO}>start</text>`,
  );
  if (endX !== undefined) {
    parts.push(
      `<line class="end-marker" x1="${f(sx(endX))}" x2="${
        f(sx(endX))
      }" y1="${markerTop}" y2="${markerBottom}" stroke="${COLORS.event}" stroke-width="2" stroke-dasharray="5 3"/>`,
      `<text x="${f(sx(endX) - 4)}" y="${
        markerTop + 14
      }" text-anchor="end" fill="${COLORS.event}" font-weight="600" ${HALO}>end</text>`,
    );
  } else {
    parts.push(
      `<text x="${W - RIGHT - 4}" y="${
        markerTop + 14
      }" text-anchor="end" fill="${COLORS.event}" font-weight="600">${
        e.state === "open"
          ? "still open at the end of the log →"
          : "cut by a restart"
      }</text>`,
    );
  }
  // Time axis: seconds from the start sample.
  const span = x1 - x0;
  for (const t of niceTicks(x0, x1, 8)) {
    const x = sx(t);
    const label = t === 0
      ? "0"
      : `${t > 0 ? "+" : "−"}${formatDuration(Math.abs(t))}`;
    parts.push(
      `<line x1="${f(x)}" x2="${f(x)}" y1="${markerBottom}" y2="${
        markerBottom + 5
      }" stroke="${COLORS.axis}"/>`,
      `<text x="${f(x)}" y="${
        markerBottom + 18
      }" text-anchor="middle" fill="${COLORS.axis}">${escapeXml(label)}</text>`,
    );
  }
  parts.push(
    `<text x="${W - RIGHT}" y="${
      markerBottom + 32
    }" text-anchor="end" fill="${COLORS.axis}">time from the start sample (window ${
      escapeXml(formatDuration(span))
    }${low ? "; peaks are minimums" : ""})</text>`,
  );
  parts.push("</svg>");
  return parts.join("\n");
}

const LANE = 26;
const LABEL_W = 300;

/**
 * The timeline: one lane per monitor and rule, one bar per event from its
 * start to its end (to its last row, in red, if still open; grey if cut by
 * a restart), each a link to the event's section.
 */
export function timelineSvg(events: readonly ReviewEvent[]): string {
  const dated = events.filter((e) => e.start !== null);
  if (dated.length === 0) return "";
  const lanes = new Map<string, number>();
  for (const e of dated) {
    const key = `${e.monitor}\u0000${e.rule}`;
    if (!lanes.has(key)) lanes.set(key, lanes.size);
  }
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const e of dated) {
    t0 = Math.min(t0, instantMs(e.start!));
    t1 = Math.max(t1, instantMs(lastKnown(e)!));
  }
  if (t1 - t0 < 1) {
    t0 -= 1;
    t1 += 1;
  }
  const pad = (t1 - t0) * 0.02;
  t0 -= pad;
  t1 += pad;
  const top = 14;
  const height = top + lanes.size * LANE + 40;
  const sx = scale(t0, t1, LABEL_W, W - RIGHT);
  const parts = [
    `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="Timeline of ${dated.length} events" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>Timeline of ${dated.length} events</title>`,
  ];
  for (const [key, lane] of lanes) {
    const [monitor, rule] = key.split("\u0000");
    const y = top + lane * LANE;
    const label = `${monitor} · ${rule}`;
    const short = label.length > 44 ? label.slice(0, 43) + "…" : label;
    parts.push(
      `<rect x="${LABEL_W}" y="${y}" width="${W - RIGHT - LABEL_W}" height="${
        LANE - 4
      }" fill="${lane % 2 ? "#f9fafb" : "#f3f4f6"}"/>`,
      `<text x="${LABEL_W - 8}" y="${
        y + 15
      }" text-anchor="end" fill="${COLORS.axis}"><title>${
        escapeXml(label)
      }</title>${escapeXml(short)}</text>`,
    );
  }
  const axisY = top + lanes.size * LANE;
  for (const t of timeTicks(t0, t1, 7)) {
    const x = sx(t.ms);
    parts.push(
      `<line x1="${f(x)}" x2="${f(x)}" y1="${top}" y2="${
        axisY + 4
      }" stroke="${COLORS.grid}"/>`,
      `<text x="${f(x)}" y="${
        axisY + 18
      }" text-anchor="middle" fill="${COLORS.axis}">${
        escapeXml(t.label)
      }</text>`,
    );
  }
  parts.push(
    `<text x="${W - RIGHT}" y="${
      axisY + 34
    }" text-anchor="end" fill="${COLORS.axis}">UTC, ${
      new Date(t0).toISOString().slice(0, 10)
    }${
      new Date(t1).toISOString().slice(0, 10) !==
          new Date(t0).toISOString().slice(0, 10)
        ? " to " + new Date(t1).toISOString().slice(0, 10)
        : ""
    }</text>`,
  );
  for (const e of dated) {
    const lane = lanes.get(`${e.monitor}\u0000${e.rule}`)!;
    const y = top + lane * LANE + 3;
    const xa = sx(instantMs(e.start!));
    const xb = sx(instantMs(lastKnown(e)!));
    const color = e.state === "ended"
      ? COLORS.ended
      : e.state === "open"
      ? COLORS.open
      : COLORS.interrupted;
    const tip = `#${e.id} ${e.monitor} · ${e.rule}: ${
      e.durationS === null ? "?" : formatDuration(e.durationS)
    } (${e.state})`;
    parts.push(
      `<a href="#event-${e.id}"><rect class="event-bar" x="${
        f(xa)
      }" y="${y}" width="${f(Math.max(3, xb - xa))}" height="${
        LANE - 10
      }" rx="2" fill="${color}"><title>${escapeXml(tip)}</title></rect></a>`,
    );
  }
  parts.push("</svg>");
  return parts.join("\n");
}
