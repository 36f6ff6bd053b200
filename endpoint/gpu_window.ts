/**
 * What a NIC event's page shows of the GPUs behind the NIC: their
 * readings (utilisation, PCIe throughput, power) over the NIC chart's time
 * span, copied from the GPU monitor's ring through shared memory
 * (rules/shared_ring.ts) on the endpoint's thread, or one line saying why
 * there are none (the ring no longer reaches back that far).
 *
 * The ring is what the GPU monitor keeps anyway (2 x depth samples: two
 * minutes at the default 1 s and depth 60); nothing is kept for the page,
 * and reading it never makes the sampler wait.
 *
 * @module
 */

import { toNumberU64 } from "../base/u64.ts";
import { formatDuration } from "../base/units.ts";
import type { NicGpus } from "../collectors/pcie_affinity.ts";
import type { GpuChart, GpuLine, GpuPanel } from "../review/gpu_chart.ts";
import type { ChartSpan } from "../review/signal_chart.ts";
import { SharedRingReader } from "../rules/shared_ring.ts";

/** GPUs charted at most: the closest first (a few share a switch). */
export const MAX_GPUS = 4;

/** What the page reads of a GPU monitor (a ServedMonitor has it). */
export interface GpuRingMonitor {
  readonly config: {
    readonly name: string;
    readonly source?: string;
    readonly samplePeriodNs?: number;
    readonly columns?: readonly { readonly name: string }[];
  };
  /** The shared copy of its ring, for a GPU monitor. */
  readonly sharedRing?: SharedArrayBuffer;
}

/** The GPUs' part of the page. */
export interface GpuWindow {
  /** The chart, when the ring holds readings of the span. */
  readonly chart?: GpuChart;
  /** What the chart is, in words, under it. */
  readonly caption?: string;
  /** One line instead of (or about) the chart. */
  readonly note?: string;
  /**
   * Whether it can no longer change: false while the sample that covers
   * the span's end is still to come, so an ended event's page is not kept
   * without it.
   */
  readonly complete: boolean;
}

/**
 * One reading the page charts: its columns, heading, unit and scale, and
 * whether the columns are counters charted as their rate per second.
 */
const READINGS = [
  {
    names: ["gpu_utilization"],
    heading: "GPU utilisation",
    unit: "%",
    k: 1,
    rate: false,
  },
  {
    // Byte counters (NVML fields 197 and 198), charted as bytes per second.
    names: ["pcie_tx_bytes", "pcie_rx_bytes"],
    heading: "PCIe throughput (solid TX, dashed RX)",
    unit: "B/s",
    k: 1,
    rate: true,
  },
  // mW.
  { names: ["power"], heading: "power", unit: "W", k: 1e-3, rate: false },
] as const;

/** 2^32, to join a u64's words. */
const HI = 4294967296;

/**
 * The per-second rate of the counter in `column` over each sample's
 * period: its increase since the previous sample over the time between
 * the two. NaN (unknown) for the oldest sample, for a step where the
 * counter went down (it wrapped, as NVML's PCIe byte counts can, or was
 * reset: never a negative rate), and where it reads 0 at both ends (a GPU
 * that does not support the counter reads 0: no reading, not no traffic).
 * Differences are taken word by word, exact where a u64 made a number
 * would not be.
 */
function counterRates(
  words: Uint32Array,
  stride: number,
  count: number,
  column: number,
): Float64Array {
  const rates = new Float64Array(count).fill(NaN);
  const at = 2 * (column + 1);
  for (let k = 1; k < count; k++) {
    const a = (k - 1) * stride;
    const b = k * stride;
    const ns = (words[b + 1] - words[a + 1]) * HI + (words[b] - words[a]);
    const hi = words[b + at + 1];
    const lo = words[b + at];
    const delta = (hi - words[a + at + 1]) * HI + (lo - words[a + at]);
    if (!(ns > 0) || delta < 0 || (delta === 0 && hi === 0 && lo === 0)) {
      continue;
    }
    rates[k] = delta / (ns / 1e9);
  }
  return rates;
}

/**
 * The GPUs' readings over `span` (ms from the NIC event's start sample at
 * `startNs`, host time in ns) for the NIC's closest GPUs `behind`, from the
 * first GPU monitor among `monitors` that reads any of them; undefined
 * when there is nothing to say (no GPU behind the NIC, no GPU monitor
 * reading them).
 *
 * @example Usage
 * ```ts ignore
 * const gpus = gpuWindow(served.nicGpus, monitors, key.startNs, chartSpan(e, chart));
 * ```
 */
export function gpuWindow(
  behind: NicGpus | undefined,
  monitors: readonly GpuRingMonitor[],
  startNs: bigint,
  span: ChartSpan,
): GpuWindow | undefined {
  if (behind === undefined || behind.gpus.length === 0) return undefined;
  for (const m of monitors) {
    const ring = m.sharedRing;
    const columns = m.config.columns;
    if (ring === undefined || columns === undefined) continue;
    const index = new Map(columns.map((c, i) => [c.name, i]));
    const gpus = behind.gpus.filter((g) =>
      READINGS.some((r) => r.names.some((n) => index.has(`gpu${g.index}.${n}`)))
    );
    if (gpus.length === 0) continue;
    return fromRing(m, ring, index, gpus, behind.gpus.length, startNs, span);
  }
  return undefined;
}

function fromRing(
  m: GpuRingMonitor,
  ring: SharedArrayBuffer,
  index: ReadonlyMap<string, number>,
  read: NicGpus["gpus"],
  closest: number,
  startNs: bigint,
  span: ChartSpan,
): GpuWindow {
  const reader = new SharedRingReader(ring, index.size);
  const periodMs = (m.config.samplePeriodNs ?? 1e9) / 1e6;
  const name = JSON.stringify(m.config.name);
  const every = formatDuration(periodMs / 1000, { exact: true });
  const keeps = `the GPU monitor ${name} keeps the last ${
    formatDuration(reader.capacity * periodMs / 1000, { exact: true })
  } (${reader.capacity} samples, one every ${every})`;
  const records = reader.read();
  const n = records.count;
  if (n === 0) {
    return {
      note: `GPUs: the GPU monitor ${name} has no reading yet.`,
      complete: false,
    };
  }
  const start = Number(startNs);
  const stride = records.stride;
  const words = records.words;
  const times = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    times[k] = (toNumberU64(words[k * stride], words[k * stride + 1]) - start) /
      1e6;
  }
  // The oldest reading covers the period before it.
  const oldest = times[0] - periodMs;
  const newest = times[n - 1];
  if (oldest >= span.t1) {
    return { note: `GPUs: ${keeps}; this event is older.`, complete: true };
  }
  if (newest <= span.t0) {
    // Asked within a period of the event: the reading is still to come.
    return {
      note: span.t0 - newest <= 2 * periodMs
        ? `GPUs: the GPU monitor ${name}'s reading over this chart is still to come (one every ${every}): reload in a moment.`
        : `GPUs: the GPU monitor ${name} has no reading since ${
          formatDuration((span.t0 - newest) / 1000)
        } before this chart begins (is it stalled?).`,
      complete: false,
    };
  }
  const shown = read.slice(0, MAX_GPUS);
  const value = (column: number | undefined, k: number) => {
    if (column === undefined) return NaN;
    const at = k * stride + 2 * (column + 1);
    return toNumberU64(words[at], words[at + 1]);
  };
  const panels: GpuPanel[] = [];
  for (const reading of READINGS) {
    const lines: GpuLine[] = [];
    shown.forEach((g, gpu) => {
      reading.names.forEach((suffix, j) => {
        const column = index.get(`gpu${g.index}.${suffix}`);
        if (column === undefined) return;
        const values = reading.rate
          ? counterRates(words, stride, n, column)
          : new Float64Array(n);
        if (!reading.rate) {
          for (let k = 0; k < n; k++) values[k] = value(column, k) * reading.k;
        }
        lines.push({ gpu, values, ...(j === 1 ? { dashed: true } : {}) });
      });
    });
    if (lines.length > 0) {
      panels.push({ heading: reading.heading, unit: reading.unit, lines });
    }
  }
  const missing = READINGS.filter((r) =>
    !shown.some((g) => r.names.some((s) => index.has(`gpu${g.index}.${s}`)))
  ).map((r) => r.heading.replace(/ \(.*\)$/, ""));
  const complete = newest >= span.t1;
  const caption = [
    `The GPUs behind the NIC, from the GPU monitor ${name}: each reading drawn over the ${every} it was measured over, on the time axis of the chart above.`,
    oldest > span.t0
      ? ` Its readings begin ${
        formatDuration((oldest - span.t0) / 1000)
      } into the chart: ${keeps}.`
      : "",
    complete
      ? ""
      : " The reading that covers the chart's end is still to come.",
    missing.length === 0
      ? ""
      : ` Not read by that monitor: ${missing.join(", ")}.`,
    closest > shown.length
      ? ` ${closest - shown.length} more GPUs as close are not charted.`
      : "",
  ].join("");
  return {
    chart: {
      span,
      periodMs,
      times,
      gpus: shown.map((g) => `GPU ${g.index} (${g.link})`),
      panels,
    },
    caption,
    complete,
  };
}
