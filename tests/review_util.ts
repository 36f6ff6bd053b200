/**
 * Helpers for the review's CLI tests (which run `review` through
 * tests/cli_util.ts): the fixtures laid out as a log directory, a big
 * synthetic events.log written as a stream, the peak RSS of a child
 * process, a PNG decoder for screenshots, and a headless Chromium.
 *
 * @module
 */

import { join } from "node:path";
import { formatColumnNames, formatHeader } from "../events/header.ts";
import type { ColumnConfig, RuleConfig } from "../config/types.ts";
import { ROOT } from "./cli_util.ts";

/** tests/fixtures/review/ */
export const REVIEW_FIXTURES: string = join(
  ROOT,
  "tests",
  "fixtures",
  "review",
);

/**
 * The NIC monitor's two older files in `dir` as two agent rotations left
 * them: `nic-events.log.2` (the fixture nic-events.log) and
 * `nic-events.log.1` (rotated/nic-events.log.1, whose event goes on in the
 * live file, which the caller writes).
 */
export async function copyNicRotation(dir: string): Promise<void> {
  await Deno.copyFile(
    join(REVIEW_FIXTURES, "nic-events.log"),
    join(dir, "nic-events.log.2"),
  );
  await Deno.copyFile(
    join(REVIEW_FIXTURES, "rotated", "nic-events.log.1"),
    join(dir, "nic-events.log.1"),
  );
}

/** What {@linkcode writeBigLog} wrote, to check the review against. */
export interface BigLog {
  readonly bytes: number;
  readonly segments: number;
  /** Rows of each burst event (after its start sample). */
  readonly eventRows: number;
  /** Samples the source dropped in each burst event (one gap marker). */
  readonly dropped: number;
  /** Sample period, ns. */
  readonly periodNs: number;
  /** Per segment k: the burst event's start and end sample times (ns since the epoch, exact). */
  startNs(k: number): bigint;
  endNs(k: number): bigint;
  /** counter_0 at the end sample of segment k (its peak), exact. */
  peak(k: number): bigint;
  /** The highest per-second rate of counter_0 in every burst. */
  readonly peakRate: number;
  /** The latency rule's peak in segment k. */
  latencyPeak(k: number): number;
}

const COLUMNS = 8;
const HISTORY = 2048; // 2 x depth 1024
const EVENT_ROWS = 100_000;
const PERIOD_NS = 100_000n;
const STEP = 1000; // counter_0's rise per sample outside bursts
const BURST = 10; // x STEP during a burst
const SPIKE = 50; // x STEP on one sample of each burst
const T0 = 1795272600n * 1_000_000_000n;
const SEGMENT_GAP_NS = 60n * 1_000_000_000n; // a minute between events
const RESTART_EVERY = 20; // segments per header block (agent restarts)

const columns: ColumnConfig[] = Array.from({ length: COLUMNS }, (_, i) => ({
  name: i === COLUMNS - 1 ? "pcie_max_read_latency_ns" : `counter_${i}`,
  dataId: `0x10200001000000${i.toString(16).padStart(2, "0")}`,
}));
const rules: RuleConfig[] = [
  {
    name: "counter_0 burst",
    column: 0,
    comparisonType: "dt_gt",
    comparisonValue: 3_000_000n,
  },
  {
    name: "latency > 5 us",
    column: COLUMNS - 1,
    comparisonType: "gt",
    comparisonValue: 5000n,
  },
];

/** Writes the decimal digits of a non-negative safe integer; returns the end. */
function digits(buf: Uint8Array, pos: number, n: number): number {
  if (n < 10) {
    buf[pos] = 48 + n;
    return pos + 1;
  }
  let len = 0;
  for (let m = n; m >= 1; m = Math.floor(m / 10)) len++;
  for (let i = pos + len - 1; i >= pos; i--) {
    const q = Math.floor(n / 10);
    buf[i] = 48 + n - q * 10;
    n = q;
  }
  return pos + len;
}

/**
 * Streams a synthetic events.log of at least `targetBytes` to `path`:
 * segments of a history dump (2048 rows), a burst event on counter_0
 * (dt_gt; 100,000 rows, one gap of 3 dropped samples, one spike) and
 * inside it a latency event (gt, a quarter as long), a minute apart, with
 * a new header block (a restart) every 20 segments. Memory stays at one
 * 4 MiB buffer.
 */
export async function writeBigLog(
  path: string,
  targetBytes: number,
): Promise<BigLog> {
  const file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const enc = new TextEncoder();
  const buf = new Uint8Array(4 << 20);
  let pos = 0;
  let bytes = 0;
  const flush = async () => {
    for (let done = 0; done < pos;) {
      done += await file.write(buf.subarray(done, pos));
    }
    bytes += pos;
    pos = 0;
  };
  const text = async (s: string) => {
    const b = enc.encode(s);
    if (pos + b.length > buf.length) await flush();
    buf.set(b, pos);
    pos += b.length;
  };
  const header = formatHeader({
    version: "dpu-traceback synthetic",
    device: "03:00.0",
    depth: 1024,
    samplePeriodNs: Number(PERIOD_NS),
    columns,
    rules,
  });
  const columnRow = formatColumnNames(columns);
  const values = new Float64Array(COLUMNS);
  const start = (k: number) =>
    T0 + BigInt(k) * SEGMENT_GAP_NS + BigInt(HISTORY - 1) * PERIOD_NS;
  // counter_0 at the start sample of segment k: each segment starts from
  // the same base (the agent's dump shows the device's counter; reviewing
  // does not care that it repeats).
  const base0 = 4_000_000_000_000_000;
  let segments = 0;
  try {
    for (let k = 0; bytes + pos < targetBytes; k++) {
      if (k % RESTART_EVERY === 0) await text(header);
      await text(columnRow);
      for (let c = 0; c < COLUMNS; c++) values[c] = base0 + c * 1e12;
      values[COLUMNS - 1] = 1000;
      const t0 = T0 + BigInt(k) * SEGMENT_GAP_NS;
      const sec0 = Number(t0 / 1_000_000_000n);
      const total = HISTORY + EVENT_ROWS + 3; // 3 dropped samples
      const spikeAt = HISTORY + (EVENT_ROWS * 3) / 4;
      const latencyFrom = HISTORY + EVENT_ROWS / 4;
      const latencyTo = HISTORY + EVENT_ROWS / 2;
      for (let i = 0; i < total; i++) {
        const inGap = i >= HISTORY + 10 && i < HISTORY + 13;
        if (i > 0) {
          const burst = i >= HISTORY - 1;
          values[0] += (i === spikeAt ? SPIKE : burst ? BURST : 1) * STEP;
          for (let c = 1; c < COLUMNS - 1; c++) values[c] += c * 7;
          values[COLUMNS - 1] = i >= latencyFrom && i <= latencyTo
            ? (i === (latencyFrom + latencyTo) / 2 ? 9000 + k : 6000)
            : 1000;
        }
        if (i === HISTORY + 10) {
          await text(
            "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 3\n",
          );
        }
        if (!inGap) {
          if (pos + 512 > buf.length) await flush();
          const ns = Number(t0 % 1_000_000_000n) + i * Number(PERIOD_NS);
          const sec = sec0 + Math.floor(ns / 1e9);
          const frac = ns % 1e9;
          pos = digits(buf, pos, sec);
          const fracEnd = pos + 9;
          for (let j = fracEnd - 1, n = frac; j >= pos; j--) {
            const q = Math.floor(n / 10);
            buf[j] = 48 + n - q * 10;
            n = q;
          }
          pos = fracEnd;
          for (let c = 0; c < COLUMNS; c++) {
            buf[pos++] = 44;
            buf[pos++] = 32;
            pos = digits(buf, pos, values[c]);
          }
          buf[pos++] = 10;
        }
        if (i === HISTORY - 1) {
          await text(
            '<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "counter_0 burst"\n',
          );
        } else if (i === latencyFrom) {
          await text(
            '<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "latency > 5 us"\n',
          );
        } else if (i === latencyTo + 1) {
          await text(
            '<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "latency > 5 us"\n',
          );
        }
      }
      await text(
        '<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "counter_0 burst"\n',
      );
      segments++;
    }
    await flush();
  } finally {
    file.close();
  }
  // counter_0 at the end sample: the base, 1 step on each of the samples
  // 1 .. HISTORY - 2, BURST on the start sample, and on the EVENT_ROWS + 3
  // samples after it BURST each but one SPIKE.
  const rise = (HISTORY - 2) * STEP + BURST * STEP +
    ((EVENT_ROWS + 3 - 1) * BURST + SPIKE) * STEP;
  return {
    bytes,
    segments,
    eventRows: EVENT_ROWS,
    dropped: 3,
    periodNs: Number(PERIOD_NS),
    startNs: start,
    endNs: (k) => start(k) + BigInt(EVENT_ROWS + 3) * PERIOD_NS,
    peak: () => BigInt(base0) + BigInt(rise),
    peakRate: SPIKE * STEP * 1e9 / Number(PERIOD_NS),
    latencyPeak: (k) => 9000 + k,
  };
}

/**
 * Runs `child` to the end while sampling its peak resident set (VmHWM in
 * /proc/PID/status, which the kernel keeps as a high-water mark, so polling
 * misses at most the growth after the last poll) every `intervalMs`.
 * Returns the output and the peak in bytes (0 if /proc could not be read).
 */
export async function runWithPeakRss(
  command: Deno.Command,
  intervalMs = 50,
): Promise<{ output: Deno.CommandOutput; peakRssBytes: number }> {
  const child = command.spawn();
  let peak = 0;
  let done = false;
  const poll = async () => {
    while (!done) {
      try {
        const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
        const m = /^VmHWM:\s+(\d+) kB$/m.exec(status);
        if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      } catch {
        // Gone, or not yet there.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  };
  const polling = poll();
  const output = await child.output();
  done = true;
  await polling;
  return { output, peakRssBytes: peak };
}

/** A decoded 8-bit RGB(A) PNG. */
export interface Image {
  readonly width: number;
  readonly height: number;
  /** RGBA, 4 bytes per pixel. */
  readonly rgba: Uint8Array;
}

/** Decodes an 8-bit truecolor (with or without alpha) PNG, as Chromium writes. */
export async function decodePng(png: Uint8Array): Promise<Image> {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Uint8Array<ArrayBuffer>[] = [];
  while (pos < png.length) {
    const len = view.getUint32(pos);
    const type = new TextDecoder().decode(png.subarray(pos + 4, pos + 8));
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = view.getUint32(pos + 8);
      height = view.getUint32(pos + 12);
      const depth = data[8];
      const color = data[9];
      if (depth !== 8 || (color !== 2 && color !== 6) || data[12] !== 0) {
        throw new Error(
          `unsupported PNG: depth ${depth}, color ${color}, interlace ${
            data[12]
          }`,
        );
      }
      channels = color === 6 ? 4 : 3;
    } else if (type === "IDAT") idat.push(data.slice());
    pos += 12 + len;
  }
  const raw = new Uint8Array(
    await new Response(
      new Blob(idat).stream().pipeThrough(new DecompressionStream("deflate")),
    ).arrayBuffer(),
  );
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  const prev = new Uint8Array(stride);
  const cur = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 255;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = cur[x * channels];
      out[o + 1] = cur[x * channels + 1];
      out[o + 2] = cur[x * channels + 2];
      out[o + 3] = channels === 4 ? cur[x * channels + 3] : 255;
    }
    prev.set(cur);
  }
  return { width, height, rgba: out };
}

/** The path of Debian's `chromium` (or another on PATH), or undefined. */
export function findChromium(): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    for (const name of ["chromium", "chromium-browser"]) {
      try {
        const path = `${dir}/${name}`;
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // Not here.
      }
    }
  }
  return undefined;
}

/** Runs headless Chromium with `args` (after the fixed flags) and returns stdout. */
export async function chromium(
  binary: string,
  args: readonly string[],
  home: string,
): Promise<string> {
  const out = await new Deno.Command(binary, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--force-device-scale-factor=1",
      "--no-first-run",
      "--disable-extensions",
      `--user-data-dir=${home}/profile`,
      ...args,
    ],
    env: { HOME: home },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `chromium failed (${out.code}): ${
        new TextDecoder().decode(out.stderr).slice(-500)
      }`,
    );
  }
  return new TextDecoder().decode(out.stdout);
}

/** What {@linkcode writeFlappingLog} wrote. */
export interface FlappingLog {
  readonly bytes: number;
  readonly events: number;
  /** Start and end sample times (ns since the epoch) of event `k` (0-based). */
  startNs(k: number): bigint;
  endNs(k: number): bigint;
}

/**
 * Streams the log of a flapping rule to `path`: `events` short events, each
 * as our writer logs it with depth 1 (a column-name row and the 2-row ring,
 * the start marker, one row, the end marker), 10 ms apart. Memory stays at
 * one 1 MiB buffer.
 */
export async function writeFlappingLog(
  path: string,
  events: number,
): Promise<FlappingLog> {
  const file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const enc = new TextEncoder();
  const columns: ColumnConfig[] = [
    { name: "port_0_rx_bytes", dataId: "0x1020000100000000" },
    { name: "port_0_rx_ecn_packets", dataId: "0x1020000100000001" },
  ];
  const header = enc.encode(formatHeader({
    version: "dpu-traceback synthetic",
    device: "03:00.0",
    depth: 1,
    samplePeriodNs: 100_000,
    columns,
    rules: [{
      name: "ECN flaps",
      column: 1,
      comparisonType: "dt_gt",
      comparisonValue: 100n,
    }],
  }));
  const columnRow = enc.encode(formatColumnNames(columns));
  const buf = new Uint8Array(1 << 20);
  let pos = 0;
  let bytes = 0;
  const flush = async () => {
    for (let done = 0; done < pos;) {
      done += await file.write(buf.subarray(done, pos));
    }
    bytes += pos;
    pos = 0;
  };
  const put = (b: Uint8Array) => {
    buf.set(b, pos);
    pos += b.length;
  };
  const row = (ns: bigint, rx: number, ecn: number) =>
    put(enc.encode(`${ns}, ${rx}, ${ecn}\n`));
  const T0 = 1795272600n * 1_000_000_000n;
  const EVERY = 10_000_000n; // 10 ms between events
  const PERIOD = 100_000n;
  const second = (ns: bigint) =>
    new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19) + "Z";
  try {
    put(header);
    for (let k = 0; k < events; k++) {
      if (pos > buf.length - 1024) await flush();
      const t = T0 + BigInt(k) * EVERY;
      const base = 1_000_000 + 1000 * k;
      put(columnRow);
      row(t, base, 10 * k);
      row(t + PERIOD, base + 100, 10 * k + 500);
      put(enc.encode(
        `<<Event start>> Time: ${second(t + PERIOD)}, Rule: "ECN flaps"\n`,
      ));
      row(t + 2n * PERIOD, base + 200, 10 * k + 510);
      put(enc.encode(
        `<<Event end>> Time: ${second(t + 2n * PERIOD)}, Rule: "ECN flaps"\n`,
      ));
    }
    await flush();
  } finally {
    file.close();
  }
  return {
    bytes,
    events,
    startNs: (k) => T0 + BigInt(k) * EVERY + PERIOD,
    endNs: (k) => T0 + BigInt(k) * EVERY + 2n * PERIOD,
  };
}
