/**
 * The GPUs behind a NIC, charted below a NIC event's chart on the same
 * time axis (ms from the NIC's start sample): one panel per reading
 * (utilisation, PCIe throughput, power), one line per GPU, from the GPU
 * monitor's recent readings.
 *
 * A GPU reading is taken about once a second and describes the period
 * before it (NVML averages utilisation and power over its own sample
 * period), so each sample is drawn as a step across the time since the
 * previous one: a 10 ms NIC burst shows the level of the second it fell
 * in, not a dot that may not exist. Past {@linkcode MAX_STEPS} samples,
 * consecutive samples share a step drawn from their lowest to their
 * highest value, so no spike disappears and the picture stays small.
 *
 * @module
 */

import {
  CHART_GEOMETRY,
  type ChartSpan,
  panelNoteSvg,
  panelTitleSvg,
  timeAxisSvg,
} from "./signal_chart.ts";
import {
  COLORS,
  coord as f,
  escapeXml,
  formatTick,
  niceTicks,
  scale,
} from "./svg.ts";
import { formatDuration } from "../base/units.ts";

/**
 * Steps drawn per line at most: one per 5 pixel columns, so that four
 * GPUs' four lines stay within about 40 KB of the page's 100 KB.
 */
export const MAX_STEPS = 96;

/** Lines' colours, one per GPU in legend order, readable on white. */
export const GPU_COLORS: readonly string[] = [
  "#7c3aed",
  "#059669",
  "#b45309",
  "#0e7490",
  "#be185d",
  "#4d7c0f",
  "#1e40af",
  "#9f1239",
];

/** One line: a reading of one GPU, a value per sample (NaN: not known). */
export interface GpuLine {
  /** Index into {@linkcode GpuChart.gpus}: its colour and legend entry. */
  readonly gpu: number;
  readonly values: Float64Array;
  /** Dashed (PCIe's receive direction beside its transmit). */
  readonly dashed?: boolean;
}

/** One panel: one reading, every GPU's line of it. */
export interface GpuPanel {
  /** What it shows, with its unit (`utilisation, %`). */
  readonly heading: string;
  /** Unit after the tick labels (`%`, `W`, `B/s`). */
  readonly unit: string;
  readonly lines: readonly GpuLine[];
}

/** What the GPU chart is drawn from. */
export interface GpuChart {
  /** The NIC chart's axis (review/signal_chart.ts `chartSpan`). */
  readonly span: ChartSpan;
  /** The GPU monitor's sample period, ms. */
  readonly periodMs: number;
  /** Sample times, ms from the NIC's start sample, oldest first. */
  readonly times: Float64Array;
  /** The GPUs, in legend order: `GPU 0 (PIX)`. */
  readonly gpus: readonly string[];
  readonly panels: readonly GpuPanel[];
}

const W = CHART_GEOMETRY.width;
const LEFT = CHART_GEOMETRY.left;
const RIGHT = CHART_GEOMETRY.right;
const TOP = 40;
const PANEL = 90;
const GAP = 40;
const BOTTOM = 34;
const LEGEND = 20;

/**
 * The chart as inline SVG, colours in attributes, with a `<title>` and a
 * `<desc>` that say what it shows; empty when there is no panel.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuChartSvg } from "./gpu_chart.ts";
 *
 * const svg = gpuChartSvg({
 *   span: { t0: -2000, t1: 1000, endMs: 500 },
 *   periodMs: 1000,
 *   times: new Float64Array([-2500, -1500, -500, 500, 1500]),
 *   gpus: ["GPU 0 (PIX)"],
 *   panels: [{
 *     heading: "utilisation, %",
 *     unit: "%",
 *     lines: [{ gpu: 0, values: new Float64Array([10, 20, 90, 95, 30]) }],
 *   }],
 * });
 * assert.match(svg, /^<svg /);
 * assert.match(svg, />GPU 0 \(PIX\)</);
 * ```
 */
export function gpuChartSvg(chart: GpuChart): string {
  const { span, panels } = chart;
  if (panels.length === 0) return "";
  const { t0, t1, endMs } = span;
  const sx = scale(t0, t1, LEFT, W - RIGHT);
  const steps = stepsOf(chart);
  const bottom = TOP + panels.length * PANEL + (panels.length - 1) * GAP;
  // The legend, in rows as wide as the chart: a swatch and the GPU.
  const legend: { x: number; row: number }[] = [];
  let x = LEFT;
  let row = 0;
  for (const label of chart.gpus) {
    const width = 28 + 7.5 * label.length;
    if (x > LEFT && x + width > W - RIGHT) {
      x = LEFT;
      row++;
    }
    legend.push({ x, row });
    x += width;
  }
  const height = bottom + BOTTOM + LEGEND * (row + 1);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-labelledby="gpu-title gpu-desc" font-family="system-ui, sans-serif" font-size="13">`,
    `<title id="gpu-title">${
      escapeXml(
        `${chart.gpus.join(", ")}: ${
          panels.map((p) => p.heading).join("; ")
        }, on the NIC chart's time axis`,
      )
    }</title>`,
    `<desc id="gpu-desc">${escapeXml(describe(chart, steps))}</desc>`,
  ];
  panels.forEach((panel, k) => {
    const top = TOP + k * (PANEL + GAP);
    const xs = sx(0);
    const xe = sx(endMs ?? t1);
    parts.push(
      `<rect x="${LEFT}" y="${top}" width="${
        W - RIGHT - LEFT
      }" height="${PANEL}" fill="#fff" stroke="${COLORS.grid}"/>`,
      `<rect x="${f(xs)}" y="${top}" width="${
        f(Math.max(0, xe - xs))
      }" height="${PANEL}" fill="${COLORS.span}" fill-opacity="0.3"/>`,
      drawPanel(steps, panel, top, sx),
    );
  });
  // The NIC event's start and end, across every panel, as above.
  for (const [ms, color] of [[0, COLORS.event], [endMs, COLORS.ended]]) {
    if (ms === undefined) continue;
    parts.push(
      `<line x1="${f(sx(ms as number))}" y1="${TOP - 6}" x2="${
        f(sx(ms as number))
      }" y2="${bottom}" stroke="${color}" stroke-width="1.5"/>`,
    );
  }
  parts.push(
    timeAxisSvg(t0, t1, sx, bottom, "seconds from the NIC's start sample"),
  );
  chart.gpus.forEach((label, g) => {
    const color = GPU_COLORS[g % GPU_COLORS.length];
    const { x, row } = legend[g];
    const y = bottom + 31 + LEGEND * (row + 1) - 4;
    parts.push(
      `<line x1="${f(x)}" y1="${y - 4}" x2="${f(x + 16)}" y2="${
        y - 4
      }" stroke="${color}" stroke-width="2.5"/><text x="${
        f(x + 20)
      }" y="${y}" fill="${COLORS.axis}">${escapeXml(label)}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}

/**
 * Where each step begins and ends (ms) and which samples it takes: runs
 * of consecutive samples, at most {@linkcode MAX_STEPS}. A sample's
 * reading covers the time since the previous sample, or one period when
 * samples were lost before it (more than two periods between them).
 */
interface Steps {
  readonly count: number;
  /** Per step: start ms, end ms, first sample, last sample + 1. */
  readonly at: Float64Array;
}

function stepsOf(chart: GpuChart): Steps {
  const { times, periodMs, span } = chart;
  // The samples whose period meets the axis.
  const from = (k: number) =>
    k > 0 && times[k] - times[k - 1] <= 2 * periodMs
      ? times[k - 1]
      : times[k] - periodMs;
  let first = 0;
  while (first < times.length && times[first] <= span.t0) first++;
  let last = first;
  while (last < times.length && from(last) < span.t1) last++;
  const n = last - first;
  const per = Math.max(1, Math.ceil(n / MAX_STEPS));
  const count = Math.ceil(n / per);
  const at = new Float64Array(4 * count);
  for (let s = 0; s < count; s++) {
    const a = first + s * per;
    const b = Math.min(last, a + per);
    at[4 * s] = Math.max(span.t0, from(a));
    at[4 * s + 1] = Math.min(span.t1, times[b - 1]);
    at[4 * s + 2] = a;
    at[4 * s + 3] = b;
  }
  return { count, at };
}

function drawPanel(
  steps: Steps,
  panel: GpuPanel,
  top: number,
  sx: (ms: number) => number,
): string {
  const at = steps.at;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const line of panel.lines) {
    for (let s = 0; s < steps.count; s++) {
      for (let k = at[4 * s + 2]; k < at[4 * s + 3]; k++) {
        const v = line.values[k];
        if (v < y0) y0 = v;
        if (v > y1) y1 = v;
      }
    }
  }
  const parts: string[] = [panelTitleSvg(top, panel.heading)];
  if (!(y0 <= y1)) {
    parts.push(panelNoteSvg(top, PANEL, "no reading in this span"));
    return parts.join("");
  }
  // From zero: a level of a GPU reads against nothing, not against itself.
  y0 = Math.min(0, y0);
  if (y1 - y0 <= Math.abs(y1) * 1e-12) y1 = y0 + (Math.abs(y1) || 1);
  const pad = (y1 - y0) * 0.06;
  const sy = scale(y0, y1 + pad, top + PANEL, top);
  const ticks = niceTicks(y0, y1 + pad, 3);
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : 0;
  const magnitude = Math.max(Math.abs(y0), Math.abs(y1));
  for (const v of ticks) {
    const y = sy(v);
    if (y < top - 0.5 || y > top + PANEL + 0.5) continue;
    parts.push(
      `<line x1="${LEFT}" y1="${f(y)}" x2="${W - RIGHT}" y2="${
        f(y)
      }" stroke="${COLORS.grid}"/><text x="${LEFT - 6}" y="${
        f(y + 4)
      }" text-anchor="end" fill="${COLORS.axis}">${
        escapeXml(`${formatTick(v, step, magnitude)} ${panel.unit}`)
      }</text>`,
    );
  }
  for (const line of panel.lines) {
    let d = "";
    let end = NaN;
    let y = "";
    for (let s = 0; s < steps.count; s++) {
      let lo = Infinity;
      let hi = -Infinity;
      let lastValue = NaN;
      for (let k = at[4 * s + 2]; k < at[4 * s + 3]; k++) {
        const v = line.values[k];
        if (v !== v) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        lastValue = v;
      }
      if (lastValue !== lastValue) {
        end = NaN;
        continue;
      }
      const top = f(sy(hi));
      const low = f(sy(lo));
      const level = f(sy(lastValue));
      // A step that follows the previous one joins it (from where that
      // one's level ended); after a loss or an unknown reading a new one
      // begins.
      if (at[4 * s] !== end) d += `M${f(sx(at[4 * s]))} ${top}`;
      else if (top !== y) d += `V${top}`;
      if (low !== top) d += `V${low}`;
      if (level !== low) d += `V${level}`;
      d += `H${f(sx(at[4 * s + 1]))}`;
      y = level;
      end = at[4 * s + 1];
    }
    if (d === "") continue;
    parts.push(
      `<path d="${d}" fill="none" stroke="${
        GPU_COLORS[line.gpu % GPU_COLORS.length]
      }" stroke-width="1.6"${
        line.dashed ? ' stroke-dasharray="5 3"' : ""
      } stroke-linejoin="round"/>`,
    );
  }
  return parts.join("");
}

/** What the chart shows, in a sentence a screen reader can read. */
function describe(chart: GpuChart, steps: Steps): string {
  const samples = steps.count === 0
    ? 0
    : steps.at[4 * steps.count - 1] - steps.at[2];
  return `${samples} sample${
    samples === 1 ? "" : "s"
  } of the GPU monitor (one every ${
    formatDuration(chart.periodMs / 1000, { exact: true })
  }), each drawn as a step over the period it was measured over. ${
    gpuChartSummary(chart)
  } The NIC event's start and end are marked as on the chart above.`;
}

/**
 * The chart's numbers in words: each GPU's lowest and highest reading
 * over the span, per panel (`GPU 1 (PIX): GPU utilisation 43 %; power
 * 290 W to 303 W.`), for the caption and a text browser.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuChartSummary } from "./gpu_chart.ts";
 *
 * const summary = gpuChartSummary({
 *   span: { t0: -10, t1: 10 },
 *   periodMs: 1000,
 *   times: new Float64Array([500]),
 *   gpus: ["GPU 1 (PIX)"],
 *   panels: [{
 *     heading: "power",
 *     unit: "W",
 *     lines: [{ gpu: 0, values: new Float64Array([303]) }],
 *   }],
 * });
 * assert.equal(summary, "GPU 1 (PIX): power 303 W.");
 * ```
 */
export function gpuChartSummary(chart: GpuChart): string {
  const steps = stepsOf(chart);
  const first = steps.count === 0 ? 0 : steps.at[2];
  const last = steps.count === 0 ? 0 : steps.at[4 * steps.count - 1];
  return chart.gpus.map((label, g) => {
    const parts: string[] = [];
    for (const panel of chart.panels) {
      const ranges: string[] = [];
      for (const line of panel.lines) {
        if (line.gpu !== g) continue;
        let lo = Infinity;
        let hi = -Infinity;
        for (let k = first; k < last; k++) {
          const v = line.values[k];
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
        if (!(lo <= hi)) continue;
        const text = (v: number) =>
          `${formatTick(v, 0, Math.abs(v))} ${panel.unit}`;
        const range = lo === hi ? text(lo) : `${text(lo)} to ${text(hi)}`;
        ranges.push(
          panel.lines.some((l) => l.gpu === g && l.dashed)
            ? `${line.dashed ? "RX" : "TX"} ${range}`
            : range,
        );
      }
      if (ranges.length > 0) {
        parts.push(
          `${panel.heading.replace(/ \(.*\)$/, "")} ${ranges.join(", ")}`,
        );
      }
    }
    return `${label}: ${parts.length === 0 ? "no reading" : parts.join("; ")}.`;
  }).join(" ");
}
