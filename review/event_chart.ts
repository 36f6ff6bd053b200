/**
 * The chart of one event in the HTML report, as inline SVG: the rule's
 * column and its per-second rate over the traceback window, the event
 * shaded, its start and end marked.
 *
 * @module
 */

import { firesLow, type ReviewEvent } from "./event.ts";
import {
  COLORS,
  coord as f,
  escapeXml,
  formatTick,
  HALO,
  niceTicks,
  RIGHT_MARGIN as RIGHT,
  scale,
  WIDTH as W,
} from "./svg.ts";
import { formatDuration } from "../base/units.ts";
import { measureText } from "../base/peak_text.ts";
import { POINT_STRIDE } from "./window.ts";

const LEFT = 80;
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
  // The chart draws the column and its rate: a ratio of two columns has
  // no line to put its threshold on.
  if (e.kind === "ratio") return {};
  // As the rule's description writes it (measureText, exact): the
  // header's u64 digits, a rate's float.
  const exact = /^[0-9]+$/.test(e.threshold!) ? BigInt(e.threshold!) : value;
  if (e.kind === "gt" || e.kind === "lt" || e.kind === "value") {
    return {
      value: {
        y: value,
        label: `threshold ${measureText(exact, "", { exact: true })}`,
      },
    };
  }
  if (e.kind === "rate") {
    const windowNs = e.signal?.windowNs ?? 0;
    return {
      rate: {
        y: value,
        label: `threshold ${measureText(exact, "/s", { exact: true })}${
          windowNs > 0
            ? ` (over ${formatDuration(windowNs / 1e9, { exact: true })})`
            : ""
        }`,
      },
    };
  }
  const period = e.samplePeriodNs;
  if (period === undefined || period <= 0) return {};
  const samples = e.kind === "inc_gt" || e.kind === "increase"
    ? 1
    : e.depth ?? NaN;
  if (!Number.isFinite(samples)) return {};
  const perS = value / (samples * period / 1e9);
  return {
    rate: {
      y: perS,
      label: `threshold ≈ ${measureText(perS, "/s")} (${
        measureText(exact, "", { exact: true })
      } over ${samples === 1 ? "1 sample" : `${samples} samples`})`,
    },
  };
}

/** The time axis of an event's chart and its points on it. */
export interface ChartTimeAxis {
  /**
   * Points `[t0, t1, vMin, vMax, rMin, rMax]`, times in seconds from the
   * start sample.
   */
  readonly pts: readonly number[][];
  /** The axis' span, seconds from the start sample. */
  readonly x0: number;
  readonly x1: number;
  /** Seconds from the start sample -> x (SVG units). */
  readonly sx: (seconds: number) => number;
  /** Where the end mark goes (seconds from the start sample); undefined unless ended. */
  readonly endX: number | undefined;
}

/**
 * The time axis an event's chart is drawn on: from the first row of its
 * window (or the start) to its last row (or its end), in seconds from the
 * start sample; undefined if the event has no chart data.
 */
export function chartTimeAxis(e: ReviewEvent): ChartTimeAxis | undefined {
  const chart = e.chart;
  if (chart === undefined || e.start === null) return undefined;
  const originMs = chart.originMs;
  if (!Number.isFinite(originMs)) return undefined;
  const pts: number[][] = [];
  for (const series of [chart.before, chart.during]) {
    for (let i = 0; i < series.length; i += POINT_STRIDE) {
      const p = Array.from(series.subarray(i, i + POINT_STRIDE));
      p[0] = (p[0] - originMs) / 1000;
      p[1] = (p[1] - originMs) / 1000;
      pts.push(p);
    }
  }
  if (pts.length === 0) return undefined;
  // The end sample is the event's last row: its time on the chart's
  // clock is the duration, whatever the rows' clock is.
  const endX = e.state === "ended" && e.durationS !== null
    ? e.durationS
    : undefined;
  let x0 = Math.min(0, pts[0][0], endX ?? 0);
  let x1 = Math.max(pts[pts.length - 1][1], endX ?? 0);
  if (x1 - x0 < 1e-6) {
    x0 -= 1e-4;
    x1 += 1e-4;
  }
  return { pts, x0, x1, sx: scale(x0, x1, LEFT, W - RIGHT), endX };
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
  const axis = chartTimeAxis(e);
  if (axis === undefined) return "";
  const { pts, x0, x1, sx, endX } = axis;
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
    let y0 = Infinity;
    let y1 = -Infinity;
    for (const y of [...lo, ...hi, threshold?.y ?? NaN]) {
      if (!Number.isFinite(y)) continue;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
    if (y0 > y1) {
      y0 = 0;
      y1 = 1;
    }
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

  // Exact: seconds and nanoseconds apart, not ms since 1970 as doubles.
  const since = (t: { sec: number; ns: number } | null) =>
    t === null ? NaN : (t.sec - e.start!.sec) + (t.ns - e.start!.ns) / 1e9;
  const low = firesLow(e);
  panel(
    valueTop,
    pts.map((p) => p[2]),
    pts.map((p) => p[3]),
    COLORS.value,
    "value-line",
    `${column} (value)`,
    th.value,
    e.columnPeak === null
      ? undefined
      : { x: since(e.columnPeakAt), y: Number(e.columnPeak) },
  );
  panel(
    rateTop,
    pts.map((p) => p[4]),
    pts.map((p) => p[5]),
    COLORS.rate,
    "rate-line",
    `${column} per second (rate)`,
    th.rate,
    e.columnPeakRate === null
      ? undefined
      : { x: since(e.columnPeakRateAt), y: e.columnPeakRate },
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
