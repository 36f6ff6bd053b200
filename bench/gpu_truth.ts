/**
 * The GPU truth check: runs the agent's GPU monitor (NvmlCollector, its
 * NVML worker and poller, as the agent runs them) against the machine's
 * `libnvidia-ml.so.1` for about `--seconds`, and after each GPU sample asks
 * `nvidia-smi` for the same quantities, alternately with
 * `--query-gpu=... --format=csv,noheader,nounits` and `-q` (for the readings
 * that have no query name). Each answer is compared with the samples
 * nvidia-smi may have seen: the last one taken before the query started
 * and any taken while it ran; a reading agrees if it agrees with one of
 * them. When nvidia-smi answers within a period there is one such sample
 * and both describe the same instant (the simulator's fake nvidia-smi,
 * which prints the simulator's current tick, depends on this). Then it
 * compares:
 *
 * - exactly: UUID, PCI bus id (domain widths normalised), memory total
 *   (MiB), volatile ECC counts, the PCIe replay counter (`-q`); the
 *   retired-page counts are shown (the agent has no such reading);
 * - within tolerances: temperature ±2 °C, power ±10 % or ±10 W, SM and
 *   memory clocks ±5 %, GPU and memory utilisation ±10 points, memory used
 *   ±2 % of the total, PCIe TX/RX throughput (the agent's byte counters
 *   from the sample before the query to the one after it, against `-q`'s
 *   throughput) ±10 % or ±10 MB/s;
 * - energy: never decreasing, and its rate over the run within ±10 % or
 *   ±10 W of nvidia-smi's mean power draw;
 * - Xid event registration: the monitor says nothing failed;
 * - shutdown: the worker's close reports nvmlShutdown answered SUCCESS.
 *
 * Prints one table (reading, agent, nvidia-smi, verdict), the agent's CPU
 * over the run and the NVML poll cost, and one line per mismatch; writes
 * the same to `DIR/table.txt` and every sample and answer to
 * `DIR/readings.jsonl`. Exits 1 on any mismatch, 2 when it cannot run.
 *
 * ```sh
 * deno task gpu-truth --seconds 60 --out DIR [--nvml-lib-dir DIR]
 *   [--nvidia-smi PATH] [--period-ms 1000]
 * ```
 *
 * See docs/gpu-monitor.md, "Checking the readings against nvidia-smi".
 *
 * @module
 */

import process from "node:process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GPU_READINGS } from "../config/gpu_readings.ts";
import type { MonitorConfig } from "../config/types.ts";
import {
  NvmlCollector,
  nvmlLibraryDirs,
} from "../collectors/nvml/collector.ts";
import type { GpuInfo } from "../collectors/nvml/gpu_list.ts";
import { NvmlPoller } from "../collectors/nvml/poller.ts";
import type { SampleSink } from "../rules/sample_sink.ts";

/** The fields asked with --query-gpu, in this order. */
export const QUERY_FIELDS = [
  "index",
  "uuid",
  "pci.bus_id",
  "memory.total",
  "memory.used",
  "temperature.gpu",
  "power.draw",
  "clocks.sm",
  "clocks.mem",
  "utilization.gpu",
  "utilization.memory",
  "ecc.errors.corrected.volatile.total",
  "ecc.errors.uncorrected.volatile.total",
  "retired_pages.sbe",
  "retired_pages.dbe",
  "retired_pages.pending",
] as const;

const MIB = 1024 * 1024;

/** One GPU sample of the monitor: its time and every reading by name. */
interface Sample {
  readonly ms: number;
  readonly gpus: Map<number, Map<string, bigint>>;
}

/** One nvidia-smi answer, by GPU index (query) or bus id (-q). */
interface Answer {
  readonly kind: "query" | "q";
  readonly startMs: number;
  readonly endMs: number;
  readonly code: number;
  readonly stdout: string;
  /** Field -> value for each GPU, by normalised bus id. */
  readonly gpus: Map<string, Map<string, string>>;
}

/** Collects the monitor's records as they are committed. */
class Capture implements SampleSink {
  readonly words: Uint32Array;
  readonly columns: number;
  readonly samples: Sample[] = [];
  gaps = 0;
  #names: readonly { gpu: number; reading: string }[];
  #waiters: (() => void)[] = [];

  constructor(names: readonly string[]) {
    this.columns = names.length;
    this.words = new Uint32Array(2 * (1 + names.length));
    this.#names = names.map((n) => {
      const m = /^gpu(\d+)\.(\w+)$/.exec(n);
      if (m === null) throw new Error(`not a GPU column: ${n}`);
      return { gpu: Number(m[1]), reading: m[2] };
    });
  }

  claim(): number {
    return 0;
  }

  commit(): void {
    const w = this.words;
    const u64 = (at: number) => BigInt(w[at]) | (BigInt(w[at + 1]) << 32n);
    const gpus = new Map<number, Map<string, bigint>>();
    this.#names.forEach(({ gpu, reading }, i) => {
      let values = gpus.get(gpu);
      if (values === undefined) gpus.set(gpu, values = new Map());
      values.set(reading, u64(2 + 2 * i));
    });
    this.samples.push({ ms: Number(u64(0)) / 1e6, gpus });
    for (const wake of this.#waiters.splice(0)) wake();
  }

  gap(dropped: number): void {
    this.gaps += dropped;
  }

  /** Resolves at the next commit, or after `ms`. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** `0000:18:00.0` from any of NVML's and nvidia-smi's forms. */
export function normalBusId(id: string): string {
  const m = /^(?:([0-9a-f]{1,8}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i
    .exec(id.trim());
  if (m === null) return id.trim().toLowerCase();
  const domain = (m[1] ?? "0").replace(/^0+(?=.)/, "").padStart(4, "0");
  return `${domain}:${m[2]}:${m[3]}.${m[4]}`.toLowerCase();
}

/** Parses `--query-gpu` CSV (noheader, nounits) by bus id. */
export function parseQuery(stdout: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const line of stdout.split("\n")) {
    if (line.trim() === "") continue;
    const values = line.split(",").map((v) => v.trim());
    if (values.length !== QUERY_FIELDS.length) continue;
    const fields = new Map<string, string>(
      QUERY_FIELDS.map((f, i) => [f, values[i]]),
    );
    out.set(normalBusId(fields.get("pci.bus_id")!), fields);
  }
  return out;
}

/** Parses `nvidia-smi -q`: the PCI lines the check reads, by bus id. */
export function parseQ(stdout: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let gpu: Map<string, string> | undefined;
  for (const line of stdout.split("\n")) {
    const head = /^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$/
      .exec(line);
    if (head !== null) {
      out.set(normalBusId(head[1]), gpu = new Map());
      continue;
    }
    const kv = /^\s+([A-Za-z][A-Za-z ]*?)\s*:\s*(.*)$/.exec(line);
    if (gpu === undefined || kv === null) continue;
    // Older drivers write "Replays since reset".
    const key = kv[1].toLowerCase();
    const value = kv[2].trim();
    if (key === "replays since reset") gpu.set("replays", value);
    if (key === "tx throughput") gpu.set("tx", value);
    if (key === "rx throughput") gpu.set("rx", value);
  }
  return out;
}

/** A number nvidia-smi printed, or undefined for [N/A] and the like. */
function smiNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(-?\d+(?:\.\d+)?)(?:\s*\S+)?$/.exec(value.trim());
  return m === null ? undefined : Number(m[1]);
}

/** One comparison of one reading of one GPU at one instant. */
interface Compared {
  readonly gpu: number;
  readonly reading: string;
  readonly agent: string;
  readonly smi: string;
  readonly ok: boolean | undefined; // undefined: not comparable (n/a)
  readonly deviation: number;
  readonly atMs: number;
  readonly note?: string;
}

/** How each compared reading is judged, for the docs and the table. */
export const TOLERANCES: Readonly<Record<string, string>> = {
  uuid: "exact",
  pci_bus_id: "exact (normalised)",
  memory_total: "exact, MiB",
  memory_used: "±2 % of total",
  temperature: "±2 °C",
  power: "±10 % or ±10 W",
  sm_clock: "±5 %",
  memory_clock: "±5 %",
  gpu_utilization: "±10 points",
  memory_utilization: "±10 points",
  ecc_corrected: "exact",
  ecc_uncorrected: "exact",
  pcie_replays: "exact (-q)",
  pcie_tx_bytes: "rate ±10 % or ±10 MB/s (-q)",
  pcie_rx_bytes: "rate ±10 % or ±10 MB/s (-q)",
  energy: "monotonic; rate ±10 % or ±10 W of mean power.draw",
};

function within(a: number, s: number, abs: number, rel: number): boolean {
  return Math.abs(a - s) <= Math.max(abs, rel * Math.abs(s));
}

async function runSmi(
  smi: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await new Deno.Command(smi, {
      args: [...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return {
      code: out.code,
      stdout: text.decode(out.stdout),
      stderr: text.decode(out.stderr),
    };
  } catch (error) {
    return { code: 127, stdout: "", stderr: String(error) };
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      seconds: { type: "string", default: "60" },
      out: { type: "string" },
      "nvml-lib-dir": { type: "string" },
      "nvidia-smi": { type: "string", default: "nvidia-smi" },
      "period-ms": { type: "string", default: "1000" },
      "poll-cost-polls": { type: "string", default: "20" },
    },
  });
  const seconds = Number(values.seconds);
  const periodMs = Number(values["period-ms"]);
  const smi = values["nvidia-smi"]!;
  if (!(seconds > 0) || !(periodMs >= 10)) {
    console.error("gpu_truth: --seconds > 0 and --period-ms >= 10, please");
    return 2;
  }
  const outDir = values.out;
  if (outDir !== undefined) await Deno.mkdir(outDir, { recursive: true });
  const libDirs = nvmlLibraryDirs(values["nvml-lib-dir"]);

  const probe = await runSmi(smi, [
    `--query-gpu=${QUERY_FIELDS.join(",")}`,
    "--format=csv,noheader,nounits",
  ]);
  if (probe.code !== 0) {
    console.error(
      `gpu_truth: ${smi} --query-gpu failed (exit ${probe.code}): ${
        (probe.stdout + probe.stderr).trim()
      }`,
    );
    return 2;
  }

  const notes: string[] = [];
  const config: MonitorConfig = {
    name: "gpu",
    source: "nvml",
    samplePeriodNs: periodMs * 1e6,
    depth: 60,
    columns: GPU_READINGS.map((r) => ({
      name: `gpu*.${r.name}`,
      dataId: `nvml gpu*.${r.name}`,
      kind: r.kind,
    })),
    rules: [],
    eventLog: "gpu-truth-events.log",
    seed: 1,
  };
  const opened = await NvmlCollector.open({
    config,
    libDirs,
    warn: (m) => notes.push(`warning: ${m}`),
    info: (m) => notes.push(`info: ${m}`),
  });
  if (!opened.ok) {
    console.error(`gpu_truth: no GPU monitor: ${opened.reason}`);
    return 2;
  }
  const collector = opened.collector;
  const gpus = collector.gpus;
  const capture = new Capture(opened.config.columns.map((c) => c.name));
  const abort = new AbortController();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const running = collector.run(capture, abort.signal);
  let failed: unknown;
  running.catch((error) => failed = error);

  const answers: Answer[] = [];
  const deadline = performance.now() + seconds * 1000;
  let seen = 0;
  let kind: "query" | "q" = "query";
  while (performance.now() < deadline && failed === undefined) {
    if (capture.samples.length === seen) {
      await capture.next(Math.min(periodMs * 3, deadline - performance.now()));
      continue;
    }
    seen = capture.samples.length;
    const args = kind === "query"
      ? [
        `--query-gpu=${QUERY_FIELDS.join(",")}`,
        "--format=csv,noheader,nounits",
      ]
      : ["-q"];
    const startMs = performance.timeOrigin + performance.now();
    const out = await runSmi(smi, args);
    const endMs = performance.timeOrigin + performance.now();
    answers.push({
      kind,
      startMs,
      endMs,
      code: out.code,
      stdout: out.stdout,
      gpus: out.code !== 0
        ? new Map()
        : kind === "query"
        ? parseQuery(out.stdout)
        : parseQ(out.stdout),
    });
    kind = kind === "query" ? "q" : "query";
  }
  // One more period, so that the last answers can be judged.
  await capture.next(periodMs * 2);
  abort.abort();
  await running.catch(() => {});
  const wallS = (performance.now() - wall0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const closing: string[] = [];
  const closeNotes = notes.length;
  await collector.close();
  closing.push(...notes.slice(closeNotes));

  const pollCost = measurePollCost(
    libDirs,
    opened.config.columns.length,
    Number(values["poll-cost-polls"]),
  );

  const compared = compare(capture.samples, answers, gpus, notes);
  const lines = report({
    gpus,
    library: collector.library,
    driver: collector.driverVersion,
    samples: capture.samples,
    gaps: capture.gaps,
    answers,
    compared,
    notes,
    closing,
    failed,
    wallS,
    cpuS: (cpu.user + cpu.system) / 1e6,
    pollCost,
    periodMs,
  });
  const text = lines.text.join("\n") + "\n";
  console.log(text);
  if (outDir !== undefined) {
    await Deno.writeTextFile(join(outDir, "table.txt"), text);
    const jsonl = [
      ...capture.samples.map((s) =>
        JSON.stringify({
          source: "agent",
          ms: s.ms,
          gpus: Object.fromEntries(
            [...s.gpus].map((
              [g, v],
            ) => [
              g,
              Object.fromEntries([...v].map(([k, x]) => [k, String(x)])),
            ]),
          ),
        })
      ),
      ...answers.map((a) =>
        JSON.stringify({
          source: "nvidia-smi",
          kind: a.kind,
          start_ms: a.startMs,
          end_ms: a.endMs,
          exit: a.code,
          stdout: a.stdout,
        })
      ),
    ];
    await Deno.writeTextFile(
      join(outDir, "readings.jsonl"),
      jsonl.join("\n") + "\n",
    );
  }
  return lines.mismatches > 0 ? 1 : 0;
}

/** Per-poll time of the worker's own poll code, in this thread. */
function measurePollCost(
  libDirs: readonly string[],
  columns: number,
  polls: number,
): { meanMs: number; maxMs: number; polls: number } | string {
  const opened = NvmlPoller.open(libDirs);
  if (opened.poller === undefined) {
    return `NVML would not open again: ${JSON.stringify(opened.result)}`;
  }
  const poller = opened.poller;
  try {
    const gpus = poller.result.gpus.map((g) => g.index);
    const cols = gpus.flatMap((gpu) =>
      GPU_READINGS.map((_, reading) => ({ gpu, reading }))
    );
    if (cols.length !== columns) {
      return `NVML lists ${cols.length / GPU_READINGS.length} GPUs now`;
    }
    poller.start(cols);
    const record = new Uint32Array(poller.recordWords);
    poller.poll(record, Date.now()); // the first poll may set things up
    let total = 0;
    let max = 0;
    for (let i = 0; i < polls; i++) {
      const t0 = performance.now();
      poller.poll(record, Date.now());
      const dt = performance.now() - t0;
      total += dt;
      if (dt > max) max = dt;
    }
    return { meanMs: total / polls, maxMs: max, polls };
  } finally {
    poller.close();
  }
}

/** The readings whose NVML call the monitor said is unsupported on `gpu`. */
function unsupported(notes: readonly string[], gpu: number, reading: string) {
  const call = reading.endsWith("_utilization")
    ? "utilization"
    : reading.startsWith("memory_") && reading !== "memory_clock"
    ? "memory"
    : reading;
  return notes.some((n) =>
    n.includes(`gpu${gpu} (`) && n.includes("not supported") &&
    (n.includes(` ${reading}`) || n.includes(`: ${call} not`))
  );
}

function compare(
  samples: readonly Sample[],
  answers: readonly Answer[],
  gpus: readonly GpuInfo[],
  notes: readonly string[],
): Compared[] {
  const out: Compared[] = [];
  for (const answer of answers) {
    if (answer.code !== 0) continue;
    // What nvidia-smi may have seen: the last sample before the query
    // started and any taken while it ran (none, when it is quicker than a
    // period). A reading agrees if it agrees with one of them.
    let at = -1;
    for (let i = 0; i < samples.length; i++) {
      if (samples[i].ms <= answer.startMs) at = i;
    }
    if (at < 0) continue;
    let last = at;
    while (
      last + 1 < samples.length && samples[last + 1].ms < answer.endMs
    ) last++;
    // The sample after the query: the end of the interval rates are read on.
    const after = samples[last + 1];
    if (after === undefined) continue;
    const seen = samples.slice(at, last + 1);
    for (const info of gpus) {
      const smi = answer.gpus.get(normalBusId(info.pciBusId));
      const push = (
        reading: string,
        a: string,
        s: string,
        ok: boolean | undefined,
        deviation = 0,
        atMs = samples[at].ms,
        note?: string,
      ) =>
        out.push({
          gpu: info.index,
          reading,
          agent: a,
          smi: s,
          ok,
          deviation,
          atMs,
          note,
        });
      if (smi === undefined) {
        push(
          "pci_bus_id",
          info.pciBusId,
          `(no GPU with this bus id in nvidia-smi ${
            answer.kind === "q" ? "-q" : "--query-gpu"
          })`,
          false,
        );
        continue;
      }
      const value = (s: Sample, r: string) =>
        Number(s.gpus.get(info.index)?.get(r) ?? 0n);
      const numeric = (
        reading: string,
        get: (s: Sample) => number,
        show: (n: number) => string,
        field: string,
        ok: (a: number, s: number) => boolean,
        unit: string,
      ) => {
        const raw = smi.get(field);
        const s = smiNumber(raw);
        const na = unsupported(notes, info.index, reading);
        if (s === undefined || na) {
          // Both say "not here" (or nvidia-smi cannot say): not compared.
          const a = get(seen[0]);
          const bothAbsent = (s === undefined) === na ||
            (s === undefined && a === 0);
          push(
            reading,
            na ? "not supported" : show(a),
            raw ?? "(absent)",
            bothAbsent ? undefined : false,
          );
          return;
        }
        // The sample that agrees, else the nearest.
        const judged = seen.map((sample) => {
          const a = get(sample);
          return { sample, a, ok: ok(a, s), deviation: Math.abs(a - s) };
        });
        const best = judged.find((j) => j.ok) ??
          [...judged].sort((x, y) => x.deviation - y.deviation)[0];
        push(
          reading,
          show(best.a),
          `${raw}${unit}`,
          best.ok,
          best.deviation,
          best.sample.ms,
        );
      };
      if (answer.kind === "query") {
        push(
          "uuid",
          info.uuid,
          smi.get("uuid") ?? "",
          info.uuid === smi.get("uuid"),
        );
        push(
          "pci_bus_id",
          info.pciBusId,
          smi.get("pci.bus_id") ?? "",
          normalBusId(info.pciBusId) === normalBusId(smi.get("pci.bus_id")!),
        );
        const totalMiB = (s: Sample) =>
          Math.floor(value(s, "memory_total") / MIB);
        numeric(
          "memory_total",
          totalMiB,
          (n) => `${n} MiB`,
          "memory.total",
          (a, s) => a === s,
          " MiB",
        );
        const total = totalMiB(seen[0]);
        numeric(
          "memory_used",
          (s) => value(s, "memory_used") / MIB,
          (n) => `${n.toFixed(1)} MiB`,
          "memory.used",
          (a, s) => Math.abs(a - s) <= 0.02 * total,
          " MiB",
        );
        numeric(
          "temperature",
          (s) => value(s, "temperature"),
          (n) => `${n} °C`,
          "temperature.gpu",
          (a, s) => Math.abs(a - s) <= 2,
          " °C",
        );
        numeric(
          "power",
          (s) => value(s, "power") / 1000,
          (n) => `${n.toFixed(2)} W`,
          "power.draw",
          (a, s) => within(a, s, 10, 0.10),
          " W",
        );
        for (
          const [reading, field] of [
            ["sm_clock", "clocks.sm"],
            ["memory_clock", "clocks.mem"],
          ]
        ) {
          numeric(
            reading,
            (s) => value(s, reading),
            (n) => `${n} MHz`,
            field,
            (a, s) => within(a, s, 0, 0.05),
            " MHz",
          );
        }
        for (
          const [reading, field] of [
            ["gpu_utilization", "utilization.gpu"],
            ["memory_utilization", "utilization.memory"],
          ]
        ) {
          numeric(
            reading,
            (s) => value(s, reading),
            (n) => `${n} %`,
            field,
            (a, s) => Math.abs(a - s) <= 10,
            " %",
          );
        }
        for (
          const [reading, field] of [
            ["ecc_corrected", "ecc.errors.corrected.volatile.total"],
            ["ecc_uncorrected", "ecc.errors.uncorrected.volatile.total"],
          ]
        ) {
          numeric(
            reading,
            (s) => value(s, reading),
            String,
            field,
            (a, s) => a === s,
            "",
          );
        }
        for (
          const field of [
            "retired_pages.sbe",
            "retired_pages.dbe",
            "retired_pages.pending",
          ]
        ) {
          push(
            field,
            "(no such reading)",
            smi.get(field) ?? "",
            undefined,
            0,
            samples[at].ms,
            "nvidia-smi only",
          );
        }
      } else {
        numeric(
          "pcie_replays",
          (s) => value(s, "pcie_replays"),
          String,
          "replays",
          (a, s) => a === s,
          "",
        );
        // The agent's byte counters over the period(s) around the query.
        const from = samples[at];
        const dt = (after.ms - from.ms) / 1000;
        for (
          const [reading, field] of [
            ["pcie_tx_bytes", "tx"],
            ["pcie_rx_bytes", "rx"],
          ]
        ) {
          const bytes = (s: Sample) => s.gpus.get(info.index)?.get(reading);
          const rate = Number(
            BigInt.asUintN(64, (bytes(after) ?? 0n) - (bytes(from) ?? 0n)),
          ) / dt / 1e6;
          numeric(
            reading,
            () => rate,
            (n) => `${n.toFixed(3)} MB/s`,
            field,
            // nvidia-smi's throughput is in KB/s.
            (a, s) => within(a, s / 1000, 10, 0.10),
            "",
          );
        }
      }
    }
  }
  // Energy: never down, and its rate against nvidia-smi's mean power.
  for (const info of gpus) {
    const series = samples.map((s) => ({
      ms: s.ms,
      mj: s.gpus.get(info.index)?.get("energy") ?? 0n,
    }));
    if (unsupported(notes, info.index, "energy")) {
      out.push({
        gpu: info.index,
        reading: "energy",
        agent: "not supported",
        smi: "-",
        ok: undefined,
        deviation: 0,
        atMs: 0,
      });
      continue;
    }
    const down = series.findIndex((p, i) => i > 0 && p.mj < series[i - 1].mj);
    const powers = answers.flatMap((a) => {
      const p = smiNumber(
        a.gpus.get(normalBusId(info.pciBusId))?.get("power.draw"),
      );
      return a.kind === "query" && p !== undefined ? [p] : [];
    });
    if (series.length < 2 || powers.length === 0) continue;
    const first = series[0];
    const last = series[series.length - 1];
    const watts = Number(last.mj - first.mj) / (last.ms - first.ms);
    const mean = powers.reduce((a, b) => a + b, 0) / powers.length;
    out.push({
      gpu: info.index,
      reading: "energy",
      agent: `${watts.toFixed(2)} W over ${
        ((last.ms - first.ms) / 1000).toFixed(1)
      } s${down >= 0 ? ", DECREASED" : ", never down"}`,
      smi: `mean power.draw ${mean.toFixed(2)} W`,
      ok: down < 0 && within(watts, mean, 10, 0.10),
      deviation: Math.abs(watts - mean),
      atMs: first.ms,
    });
  }
  return out;
}

function report(r: {
  gpus: readonly GpuInfo[];
  library: string;
  driver: string;
  samples: readonly Sample[];
  gaps: number;
  answers: readonly Answer[];
  compared: readonly Compared[];
  notes: readonly string[];
  closing: readonly string[];
  failed: unknown;
  wallS: number;
  cpuS: number;
  pollCost: ReturnType<typeof measurePollCost>;
  periodMs: number;
}): { text: string[]; mismatches: number } {
  const text: string[] = [];
  const mismatchLines: string[] = [];
  const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);
  text.push(
    `GPU truth check: ${r.library}, driver ${r.driver}; ${r.gpus.length} GPU(s): ${
      r.gpus.map((g) => `gpu${g.index} ${g.name} ${g.pciBusId}`).join(", ")
    }`,
    `${r.samples.length} samples every ${r.periodMs} ms over ${
      r.wallS.toFixed(1)
    } s (${r.gaps} lost); ${r.answers.length} nvidia-smi answers (${
      r.answers.filter((a) => a.code !== 0).length
    } failed)`,
    "",
    "| reading | agent | nvidia-smi | verdict |",
    "| ------- | ----- | ---------- | ------- |",
  );
  // One row per GPU and reading: the worst pair stands for all.
  const groups = new Map<string, Compared[]>();
  for (const c of r.compared) {
    const key = `gpu${c.gpu}.${c.reading}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  for (const [key, group] of groups) {
    const bad = group.filter((c) => c.ok === false);
    const judged = group.filter((c) => c.ok !== undefined);
    const worst = bad[0] ??
      [...judged].sort((a, b) => b.deviation - a.deviation)[0] ?? group[0];
    const reading = key.slice(key.indexOf(".") + 1);
    const rule = TOLERANCES[reading] ?? group[0].note ?? "";
    const verdict = judged.length === 0
      ? `n/a${group[0].note ? ` (${group[0].note})` : ""}`
      : bad.length === 0
      ? `ok (${judged.length}/${judged.length}, ${rule})`
      : `MISMATCH (${bad.length}/${judged.length}, ${rule})`;
    text.push(`| ${key} | ${worst.agent} | ${worst.smi} | ${verdict} |`);
    if (bad.length > 0) {
      mismatchLines.push(
        `MISMATCH ${key}: agent ${worst.agent}, nvidia-smi ${worst.smi} at ${
          time(worst.atMs)
        } (${bad.length} of ${judged.length} pairs; ${rule})`,
      );
    }
  }
  // What must have been compared at least once.
  for (const info of r.gpus) {
    for (const reading of ["uuid", "temperature", "pcie_replays"]) {
      if (!groups.has(`gpu${info.index}.${reading}`)) {
        mismatchLines.push(
          `MISMATCH gpu${info.index}.${reading}: no nvidia-smi answer could be paired with a sample (run longer, or a longer --period-ms)`,
        );
      }
    }
  }
  const xid = r.notes.filter((n) => /Xid events/.test(n));
  text.push(
    `| Xid event registration | ${
      xid.length === 0 ? "registered" : xid.join("; ")
    } | - | ${xid.length === 0 ? "ok" : "MISMATCH"} |`,
  );
  if (xid.length > 0) {
    mismatchLines.push(`MISMATCH Xid event registration: ${xid.join("; ")}`);
  }
  const shut = r.closing.length === 0;
  text.push(
    `| shutdown | ${
      shut
        ? "nvmlShutdown SUCCESS (the worker's close reported no problem)"
        : r.closing.join("; ")
    } | - | ${shut ? "ok" : "MISMATCH"} |`,
  );
  if (!shut) mismatchLines.push(`MISMATCH shutdown: ${r.closing.join("; ")}`);
  if (r.failed !== undefined) {
    mismatchLines.push(`MISMATCH the GPU monitor failed: ${r.failed}`);
  }
  const cost = typeof r.pollCost === "string"
    ? r.pollCost
    : `${r.pollCost.meanMs.toFixed(3)} ms mean, ${
      r.pollCost.maxMs.toFixed(3)
    } ms max over ${r.pollCost.polls} polls of every reading of every GPU (NvmlPoller.poll, timed after the run)`;
  text.push(
    "",
    `Agent CPU: ${r.cpuS.toFixed(3)} s user+system over ${
      r.wallS.toFixed(1)
    } s (${
      (100 * r.cpuS / r.wallS).toFixed(2)
    } % of one core; the whole process: the monitor, its NVML worker and this check's loop, not nvidia-smi)`,
    `NVML poll cost: ${cost}`,
  );
  if (r.notes.length > 0) {
    text.push("", "The monitor said:", ...r.notes.map((n) => `  ${n}`));
  }
  text.push(
    "",
    mismatchLines.length === 0
      ? "No mismatch."
      : `${mismatchLines.length} mismatch(es):`,
    ...mismatchLines,
  );
  return { text, mismatches: mismatchLines.length };
}

if (import.meta.main) Deno.exit(await main());
