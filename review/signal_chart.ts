/**
 * The picture of one event that its page shows: what the rule tested
 * (its signal, with the threshold and the clear level) above, and what it
 * tested it on (its column's rate per second; for a ratio, both columns')
 * below, over the history before the start, the event and its end.
 *
 * The rows are read once, streamed ({@linkcode SignalChartData} is a
 * {@linkcode WindowVisitor}); they are kept as at most
 * {@linkcode MAX_BUCKETS} buckets of consecutive rows (at least half as
 * many once there are that many rows), each with its
 * lowest and highest value of every series, merged two into one whenever
 * they fill: a million rows cost the same memory as a thousand, and a
 * one-sample spike stays in its bucket's highest value, so no burst
 * disappears however long the event.
 *
 * @module
 */

import { decimalToNumber, increaseOf } from "./decimal.ts";
import { firesLow, type ReviewEvent } from "./event.ts";
import { parseGapMarker } from "./markers.ts";
import { clockDeltaNs } from "./reference_time.ts";
import { SignalColumn } from "./signal_column.ts";
import {
  COLORS,
  coord as f,
  escapeXml,
  formatTick,
  HALO,
  niceTicks,
  scale,
} from "./svg.ts";
import type { WindowNote, WindowVisitor } from "./window_rows.ts";
import { formatDuration } from "../base/units.ts";
import { measureText } from "../base/peak_text.ts";

/** Buckets kept at most: about one per pixel column of the chart. */
export const MAX_BUCKETS = 480;

/**
 * Numbers per bucket in {@linkcode SignalChart.points}: first and last
 * time (ms from the start sample), then lowest and highest signal, rate
 * of the column, rate of the denominator (NaN where unknown).
 */
export const BUCKET_STRIDE = 8;

// While gathering: the bucket, then its row count.
const B = BUCKET_STRIDE + 1;

/** What an event's chart is drawn from. */
export interface SignalChart {
  /** Buckets, {@linkcode BUCKET_STRIDE} numbers each, oldest first. */
  readonly points: Float64Array;
  /** Rows read. */
  readonly rows: number;
  /** Times (ms from the start sample) of the rows that follow a `<<Gap>>`. */
  readonly gaps: readonly number[];
  /** What the signal is, in words (`ecn rate/1ms (/s)`). */
  readonly signalHeading: string;
  /** The rule's column (for a ratio, its numerator). */
  readonly column?: string;
  /** A ratio's denominator column. */
  readonly denominator?: string;
}

/**
 * Gathers an event's chart from its window's rows: hand it to
 * `readWindow(e, data)`, then read {@linkcode SignalChartData.chart}.
 *
 * @example Usage
 * ```ts ignore
 * const data = new SignalChartData(event);
 * await readWindow(event, data);
 * const svg = signalChartSvg(event, data.chart());
 * ```
 */
export class SignalChartData implements WindowVisitor {
  readonly #event: ReviewEvent;
  readonly #signal: SignalColumn;
  readonly #denominatorName: string | undefined;
  readonly #startSec: number;
  readonly #startNs: number;
  #buckets = new Float64Array(MAX_BUCKETS * B);
  #count = 0; // buckets in use
  #per = 1; // rows a bucket takes
  #rows = 0;
  #gaps: number[] = [];
  #gapPending = false;
  // Field indexes of the column and denominator; -1: absent.
  #col = -1;
  #den = -1;
  // The previous row: time and the two values, split form; NaN: none.
  #prevSec = NaN;
  #prevNs = NaN;
  #prev = new Float64Array(4);
  #d = new Float64Array(2);

  /** Ready for `event`'s window. */
  constructor(event: ReviewEvent) {
    this.#event = event;
    this.#signal = new SignalColumn(event);
    this.#denominatorName = event.signal?.denominator;
    this.#startSec = event.start?.sec ?? NaN;
    this.#startNs = event.start?.ns ?? NaN;
  }

  /** A history dump's (or the window's) column names. */
  columns(names: readonly string[]): void {
    this.#signal.columns(names);
    const column = this.#event.column;
    this.#col = column === undefined ? -1 : names.indexOf(column);
    const den = this.#denominatorName;
    this.#den = den === undefined ? -1 : names.indexOf(den);
    // A new dump starts afresh: no rate across it.
    this.#prevSec = NaN;
  }

  /** One row. */
  row(fields: Float64Array, sec: number, ns: number): void {
    const cell = this.#signal.next(fields, sec, ns);
    const signal = cell === null ? NaN : Number(cell);
    const t = clockDeltaNs(
      this.#event.timeFormat,
      sec,
      ns,
      this.#startSec,
      this.#startNs,
    ) / 1e6;
    let a = NaN;
    let b = NaN;
    const known = this.#prevSec === this.#prevSec && !this.#gapPending;
    if (known) {
      const dtS = clockDeltaNs(
        this.#event.timeFormat,
        sec,
        ns,
        this.#prevSec,
        this.#prevNs,
      ) / 1e9;
      if (dtS > 0) {
        a = this.#rate(fields, this.#col, 0, dtS);
        b = this.#rate(fields, this.#den, 2, dtS);
      }
    }
    if (this.#gapPending) {
      this.#gaps.push(t);
      this.#gapPending = false;
    }
    this.#keep(fields, sec, ns);
    this.#add(t, signal, a, b);
    this.#rows++;
  }

  /** A marker: a gap makes the next row's rate unknown and is marked. */
  note(note: WindowNote): void {
    if (note.kind !== "marker") return;
    const gap = parseGapMarker(note.text);
    if (gap === undefined) return;
    this.#signal.gap(gap);
    this.#gapPending = true;
  }

  /** Nothing is written while reading. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  /** The chart gathered so far. */
  chart(): SignalChart {
    const points = new Float64Array(this.#count * BUCKET_STRIDE);
    for (let k = 0; k < this.#count; k++) {
      points.set(
        this.#buckets.subarray(k * B, k * B + BUCKET_STRIDE),
        k * BUCKET_STRIDE,
      );
    }
    return {
      points,
      rows: this.#rows,
      gaps: this.#gaps,
      signalHeading: this.#signal.heading,
      ...(this.#event.column === undefined
        ? {}
        : { column: this.#event.column }),
      ...(this.#denominatorName === undefined
        ? {}
        : { denominator: this.#denominatorName }),
    };
  }

  /** Per second, from the previous row's value at `slot`; NaN if unknown. */
  #rate(fields: Float64Array, index: number, slot: number, dtS: number) {
    if (index < 1) return NaN;
    const hi = fields[2 * index];
    const lo = fields[2 * index + 1];
    const prev = this.#prev;
    if (!increaseOf(this.#d, hi, lo, prev[slot], prev[slot + 1])) return NaN;
    return decimalToNumber(this.#d[0], this.#d[1]) / dtS;
  }

  #keep(fields: Float64Array, sec: number, ns: number): void {
    this.#prevSec = sec;
    this.#prevNs = ns;
    const prev = this.#prev;
    if (this.#col >= 1) {
      prev[0] = fields[2 * this.#col];
      prev[1] = fields[2 * this.#col + 1];
    }
    if (this.#den >= 1) {
      prev[2] = fields[2 * this.#den];
      prev[3] = fields[2 * this.#den + 1];
    }
  }

  #add(t: number, s: number, a: number, b: number): void {
    const d = this.#buckets;
    // The newest bucket takes `#per` rows; then a new one begins.
    let o = (this.#count - 1) * B;
    if (this.#count === 0 || d[o + BUCKET_STRIDE] >= this.#per) {
      if (this.#count === MAX_BUCKETS) this.#halve();
      o = this.#count++ * B;
      d.fill(NaN, o, o + BUCKET_STRIDE);
      d[o] = t;
      d[o + BUCKET_STRIDE] = 0;
    }
    d[o + 1] = t;
    widen(d, o + 2, s);
    widen(d, o + 4, a);
    widen(d, o + 6, b);
    d[o + BUCKET_STRIDE]++;
  }

  /** Merges the buckets two into one; each takes twice the rows from now on. */
  #halve(): void {
    const d = this.#buckets;
    const half = this.#count >> 1;
    for (let k = 0; k < half; k++) {
      const to = k * B;
      const a = 2 * k * B;
      const b = a + B;
      const t0 = d[a];
      const t1 = d[b + 1];
      for (let j = 2; j < BUCKET_STRIDE; j += 2) {
        const lo = minKnown(d[a + j], d[b + j]);
        const hi = maxKnown(d[a + j + 1], d[b + j + 1]);
        d[to + j] = lo;
        d[to + j + 1] = hi;
      }
      d[to + BUCKET_STRIDE] = d[a + BUCKET_STRIDE] + d[b + BUCKET_STRIDE];
      d[to] = t0;
      d[to + 1] = t1;
    }
    this.#count = half;
    this.#per *= 2;
  }
}

function widen(d: Float64Array, o: number, v: number): void {
  if (v !== v) return; // unknown
  if (!(v >= d[o])) d[o] = v; // also replaces a NaN
  if (!(v <= d[o + 1])) d[o + 1] = v;
}

function minKnown(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.min(a, b);
}

function maxKnown(a: number, b: number): number {
  return a !== a ? b : b !== b ? a : Math.max(a, b);
}

// Geometry, in SVG units; the chart scales to its container's width.
// 560 wide with 13-unit text reads at about 9 px on a phone's 390 px
// and 17 px at the page's widest.
const W = 560;
const LEFT = 64;
const RIGHT = 12;
const TOP = 44;
const PANEL = 130;
const GAP = 46;
const BOTTOM = 34;

/** A level drawn across a panel. */
interface Level {
  readonly y: number;
  readonly label: string;
  readonly dash: string;
}

/** One panel of the chart: a series of the buckets and how to draw it. */
interface Panel {
  /** Its offset in a bucket: lowest at `slot`, highest at `slot + 1`. */
  readonly slot: number;
  readonly heading: string;
  readonly color: string;
  readonly levels: readonly Level[];
  /** Ticks as percentages (a ratio). */
  readonly percent: boolean;
}

/**
 * The chart as inline SVG: no script, no external reference, its colours
 * in attributes (so a strict Content-Security-Policy needs nothing for
 * it). Panels share the time axis: the rule's signal with its threshold
 * and clear level, then its column's rate per second, then for a ratio
 * its denominator's. Its `<title>` and `<desc>` say in words what it
 * shows, for a screen reader and a text browser. Empty when there is
 * nothing to draw.
 *
 * @example Usage
 * ```ts ignore
 * const svg = signalChartSvg(event, data.chart());
 * ```
 */
export function signalChartSvg(e: ReviewEvent, chart: SignalChart): string {
  const p = chart.points;
  const n = p.length / BUCKET_STRIDE;
  const span = chartSpan(e, chart);
  if (span === undefined) return "";
  const { t0, t1, endMs } = span;
  const sx = scale(t0, t1, LEFT, W - RIGHT);
  const ratio = e.signal?.signal === "ratio";
  const panels: Panel[] = [
    {
      slot: 2,
      heading: chart.signalHeading,
      color: COLORS.event,
      levels: levels(e),
      percent: ratio,
    },
    {
      slot: 4,
      heading: `${chart.column ?? "the rule's column"}, per second`,
      color: COLORS.value,
      levels: [],
      percent: false,
    },
    ...(chart.denominator === undefined ? [] : [{
      slot: 6,
      heading: `${chart.denominator} (the ratio's denominator), per second`,
      color: COLORS.rate,
      levels: [],
      percent: false,
    }]),
  ];
  const height = TOP + panels.length * PANEL + (panels.length - 1) * GAP +
    BOTTOM;
  const bottom = TOP + panels.length * PANEL + (panels.length - 1) * GAP;
  const title = `${e.rule}: ${chart.signalHeading}, and ${
    rateWhat(chart)
  } per second, from ${seconds(t0)} to ${seconds(t1)} around the start`;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-labelledby="chart-title chart-desc" font-family="system-ui, sans-serif" font-size="13">`,
    `<title id="chart-title">${escapeXml(title)}</title>`,
    `<desc id="chart-desc">${escapeXml(describe(e, chart, endMs))}</desc>`,
  ];
  panels.forEach((panel, k) => {
    const top = TOP + k * (PANEL + GAP);
    // The history before the start, then the event, shaded.
    const x0 = sx(t0);
    const xs = sx(0);
    const xe = sx(endMs ?? t1);
    parts.push(
      `<rect x="${f(LEFT)}" y="${top}" width="${
        f(W - RIGHT - LEFT)
      }" height="${PANEL}" fill="#fff" stroke="${COLORS.grid}"/>`,
      xs > x0
        ? `<rect x="${f(x0)}" y="${top}" width="${
          f(xs - x0)
        }" height="${PANEL}" fill="#f3f4f6"/>`
        : "",
      `<rect x="${f(xs)}" y="${top}" width="${
        f(Math.max(0, xe - xs))
      }" height="${PANEL}" fill="${COLORS.span}" fill-opacity="0.45"/>`,
      drawPanel(p, n, panel, top, sx),
    );
  });
  // Start, end and gaps, across every panel; a label near the right
  // edge goes to the left of its line.
  const mark = (x: number, color: string, label: string) => {
    const left = x > W - RIGHT - 40;
    return `<line x1="${f(x)}" y1="${TOP - 24}" x2="${
      f(x)
    }" y2="${bottom}" stroke="${color}" stroke-width="1.5"/><text x="${
      f(left ? x - 3 : x + 3)
    }" y="${TOP - 28}"${
      left ? ' text-anchor="end"' : ""
    } fill="${color}" ${HALO}>${label}</text>`;
  };
  parts.push(mark(sx(0), COLORS.event, "start"));
  if (endMs !== undefined) parts.push(mark(sx(endMs), COLORS.ended, "end"));
  for (const g of chart.gaps) {
    parts.push(
      `<line x1="${f(sx(g))}" y1="${bottom}" x2="${f(sx(g))}" y2="${
        bottom + 6
      }" stroke="${COLORS.threshold}" stroke-width="2"><title>samples lost before this row</title></line>`,
    );
  }
  parts.push(
    timeAxisSvg(t0, t1, sx, bottom, "seconds from the start sample"),
    "</svg>",
  );
  return parts.join("");
}

/** The time axis of an event's chart: ms from the start sample. */
export interface ChartSpan {
  /** The axis's first and last instants. */
  readonly t0: number;
  readonly t1: number;
  /** The event's end, when it has ended. */
  readonly endMs?: number;
}

/**
 * The time axis {@linkcode signalChartSvg} draws `chart` on (the history
 * before the start to the end, or the last row of an open event), for
 * what is drawn on the same axis below it (the GPUs behind the NIC,
 * review/gpu_chart.ts); undefined when the chart has no rows.
 */
export function chartSpan(
  e: ReviewEvent,
  chart: SignalChart,
): ChartSpan | undefined {
  const p = chart.points;
  if (p.length === 0) return undefined;
  const endMs = e.state === "ended" && e.durationS !== null
    ? e.durationS * 1000
    : undefined;
  let t0 = Math.min(0, p[0]);
  let t1 = Math.max(p[p.length - BUCKET_STRIDE + 1], endMs ?? 0);
  if (t1 - t0 < 1e-3) {
    t0 -= 0.05;
    t1 += 0.05;
  }
  return endMs === undefined ? { t0, t1 } : { t0, t1, endMs };
}

/** Geometry of the event chart, in SVG units, for charts drawn below it. */
export const CHART_GEOMETRY = {
  width: W,
  left: LEFT,
  right: RIGHT,
} as const;

/** A panel's heading, above the panel whose top is at `top`. */
export function panelTitleSvg(top: number, heading: string): string {
  return `<text x="${LEFT}" y="${
    top - 8
  }" font-weight="600" fill="${COLORS.axis}">${escapeXml(heading)}</text>`;
}

/** A line across the middle of an empty panel, saying why it is empty. */
export function panelNoteSvg(
  top: number,
  height: number,
  note: string,
): string {
  return `<text x="${(LEFT + W - RIGHT) / 2}" y="${
    top + height / 2
  }" text-anchor="middle" fill="${COLORS.axis}">${escapeXml(note)}</text>`;
}

/** One panel: its series, each bucket from its lowest to its highest value. */
function drawPanel(
  p: Float64Array,
  n: number,
  panel: Panel,
  top: number,
  sx: (ms: number) => number,
): string {
  const { slot, levels, percent } = panel;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let k = 0; k < n; k++) {
    const lo = p[k * BUCKET_STRIDE + slot];
    const hi = p[k * BUCKET_STRIDE + slot + 1];
    if (lo < y0) y0 = lo;
    if (hi > y1) y1 = hi;
  }
  for (const l of levels) {
    if (l.y < y0) y0 = l.y;
    if (l.y > y1) y1 = l.y;
  }
  const parts: string[] = [panelTitleSvg(top, panel.heading)];
  if (!(y0 <= y1)) {
    parts.push(panelNoteSvg(top, PANEL, "not known on these rows"));
    return parts.join("");
  }
  if (y1 - y0 <= Math.abs(y1) * 1e-12) {
    const pad = Math.abs(y1) * 0.01 || 1;
    y0 -= pad;
    y1 += pad;
  }
  const pad = (y1 - y0) * 0.06;
  const sy = scale(y0 - pad, y1 + pad, top + PANEL, top);
  // A ratio's ticks in percent, as its threshold is written.
  const k = percent ? 100 : 1;
  const yTicks = niceTicks(k * (y0 - pad), k * (y1 + pad), 4);
  const yStep = yTicks.length > 1 ? yTicks[1] - yTicks[0] : 0;
  const yMagnitude = k * Math.max(Math.abs(y0), Math.abs(y1));
  for (const v of yTicks) {
    const y = sy(v / k);
    if (y < top || y > top + PANEL) continue;
    parts.push(
      `<line x1="${LEFT}" y1="${f(y)}" x2="${W - RIGHT}" y2="${
        f(y)
      }" stroke="${COLORS.grid}"/><text x="${LEFT - 6}" y="${
        f(y + 4)
      }" text-anchor="end" fill="${COLORS.axis}">${
        escapeXml(`${formatTick(v, yStep, yMagnitude)}${percent ? " %" : ""}`)
      }</text>`,
    );
  }
  let d = "";
  let joined = false;
  for (let b = 0; b < n; b++) {
    const o = b * BUCKET_STRIDE;
    const lo = p[o + slot];
    const hi = p[o + slot + 1];
    if (lo !== lo) {
      joined = false;
      continue;
    }
    const x = f(sx((p[o] + p[o + 1]) / 2));
    const a = f(sy(lo));
    const c = f(sy(hi));
    d += `${joined ? "L" : "M"}${x} ${a}`;
    if (c !== a) d += `L${x} ${c}`;
    joined = true;
  }
  if (d !== "") {
    parts.push(
      `<path d="${d}" fill="none" stroke="${panel.color}" stroke-width="1.4" stroke-linejoin="round"/>`,
    );
  }
  // The threshold's label above its line, the clear level's below, so
  // two close levels do not print over each other.
  levels.forEach((l, i) => {
    const y = sy(l.y);
    parts.push(
      `<line x1="${LEFT}" y1="${f(y)}" x2="${W - RIGHT}" y2="${
        f(y)
      }" stroke="${COLORS.threshold}" stroke-dasharray="${l.dash}"/><text x="${
        W - RIGHT - 4
      }" y="${
        f(i === 0 ? y - 4 : y + 13)
      }" text-anchor="end" fill="${COLORS.threshold}" ${HALO}>${
        escapeXml(l.label)
      }</text>`,
    );
  });
  return parts.join("");
}

/** The threshold and clear level on the signal's axis, as the rule sets them. */
function levels(e: ReviewEvent): Level[] {
  const s = e.signal;
  if (s !== undefined) {
    const unit = s.signal === "rate" ? "/s" : s.signal === "ratio" ? "%" : "";
    const out: Level[] = [];
    const threshold = Number(s.threshold);
    if (Number.isFinite(threshold)) {
      out.push({
        y: threshold,
        label: `threshold ${measureText(threshold, unit)}`,
        dash: "6 4",
      });
    }
    const clear = Number(s.clear);
    if (Number.isFinite(clear) && clear !== threshold) {
      out.push({
        y: clear,
        label: `clear ${measureText(clear, unit)}`,
        dash: "2 3",
      });
    }
    return out;
  }
  const value = Number(e.threshold);
  if (!Number.isFinite(value)) return [];
  // The reference's types: one level, the event ends where it starts.
  return [{
    y: value,
    label: `threshold ${e.threshold}${firesLow(e) ? " (fires below)" : ""}`,
    dash: "6 4",
  }];
}

function rateWhat(chart: SignalChart): string {
  const column = chart.column ?? "the rule's column";
  return chart.denominator === undefined
    ? `the rate of ${column}`
    : `the rates of ${column} and ${chart.denominator}`;
}

/** What the chart shows, in a sentence a screen reader can read. */
function describe(
  e: ReviewEvent,
  chart: SignalChart,
  endMs: number | undefined,
): string {
  const end = endMs === undefined
    ? "it had not ended in the log"
    : `it ended ${seconds(endMs)} after the start`;
  return `${chart.rows} rows of ${e.monitor}'s events log, in ${
    chart.points.length / BUCKET_STRIDE
  } columns each from its lowest to its highest value: the history before the start (grey), the event (red); ${end}${
    chart.gaps.length === 0
      ? ""
      : `; the source lost samples before ${chart.gaps.length} of the rows (ticks under the axis)`
  }.`;
}

function seconds(ms: number): string {
  return formatDuration(ms / 1000);
}

/**
 * The time axis under a chart's panels, at `bottom`: ticks in seconds
 * from the start sample (`t0`..`t1` are ms), and what they count.
 */
export function timeAxisSvg(
  t0: number,
  t1: number,
  sx: (ms: number) => number,
  bottom: number,
  label: string,
): string {
  const parts: string[] = [];
  const ticks = niceTicks(t0 / 1000, t1 / 1000, 6);
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : 0;
  for (const s of ticks) {
    const x = sx(s * 1000);
    parts.push(
      `<line x1="${f(x)}" y1="${bottom}" x2="${f(x)}" y2="${
        bottom + 4
      }" stroke="${COLORS.axis}"/><text x="${f(x)}" y="${
        bottom + 17
      }" text-anchor="middle" fill="${COLORS.axis}">${
        escapeXml(s === 0 ? "0" : formatTick(s, step, 1))
      }</text>`,
    );
  }
  parts.push(
    `<text x="${W - RIGHT}" y="${
      bottom + 31
    }" text-anchor="end" fill="${COLORS.axis}">${escapeXml(label)}</text>`,
  );
  return parts.join("");
}
