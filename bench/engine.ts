/**
 * Throughput of the Deno engine: the real {@linkcode Monitor} (ring, 16
 * rules, reference order of work) feeding the real {@linkcode EventsLog}
 * writing to a temp file, fed by a cheap deterministic generator that
 * writes each sample straight into `monitor.words` between `claim()` and
 * `commit()`, as a collector does.
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/engine.ts idle [DIR]
 * ```
 *
 * Prints one JSON line per timed repetition and a summary JSON line on
 * stdout (what run.ts parses), and a human line on stderr. Cases and the
 * workload are in mix.ts; `engine.c` runs the same loop in C.
 *
 * @module
 */

import { WindowAggregator } from "../metrics/aggregate.ts";
import { join } from "node:path";
import {
  EventsLog,
  type EventsLogOptions,
  formatLogPeak,
} from "../events/log.ts";
import { formatHeader, quoteName } from "../events/header.ts";
import { PEAK, PEAK_FIELD, RULE_FIELD } from "../events/markers.ts";
import { Monitor } from "../rules/monitor.ts";
import {
  type BenchCase,
  caseFromArgs,
  COLUMNS,
  COUNTER,
  PERIOD_NS,
  SEED,
  TABLE_RECORDS,
} from "./mix.ts";

/**
 * The synthetic data source. All the randomness is drawn into a table up
 * front, so the per-sample cost is a table read and a 64-bit add per
 * counter: small next to the engine, and trivially the same in C.
 */
class Generator {
  // TABLE_RECORDS rows of one draw per column (timestamp first).
  readonly #table: Uint32Array;
  // Running (lo, hi) totals of the counter columns.
  readonly #totals: Uint32Array;
  readonly #starts: Uint32Array;
  readonly #width: number;
  readonly #counters: number;
  #row = 0;

  constructor() {
    this.#width = COLUMNS.length;
    this.#counters = COLUMNS.findIndex((c) => c.kind !== COUNTER);
    if (this.#counters < 0) this.#counters = this.#width;
    if (COLUMNS.slice(this.#counters).some((c) => c.kind === COUNTER)) {
      throw new Error("Cannot build generator: counters must come first");
    }
    this.#table = new Uint32Array(TABLE_RECORDS * this.#width);
    let x = SEED;
    for (let i = 0; i < TABLE_RECORDS; i++) {
      for (let k = 0; k < this.#width; k++) {
        // xorshift32 (Marsaglia 2003), the same three shifts as engine.c.
        x = (x ^ (x << 13)) >>> 0;
        x = (x ^ (x >>> 17)) >>> 0;
        x = (x ^ (x << 5)) >>> 0;
        const c = COLUMNS[k];
        this.#table[i * this.#width + k] = c.base + (x & c.mask);
      }
    }
    this.#starts = new Uint32Array(2 * this.#counters);
    for (let k = 0; k < this.#counters; k++) {
      this.#starts[2 * k] = Number(COLUMNS[k].start & 0xffffffffn);
      this.#starts[2 * k + 1] = Number(COLUMNS[k].start >> 32n);
    }
    this.#totals = new Uint32Array(this.#starts);
  }

  /** Starts the sequence over: every repetition sees the same samples. */
  reset(): void {
    this.#totals.set(this.#starts);
    this.#row = 0;
  }

  /** Claims, fills and commits `count` samples. */
  feed(monitor: Monitor, count: number): void {
    const words = monitor.words;
    const table = this.#table;
    const totals = this.#totals;
    const width = this.#width;
    const counters = this.#counters;
    let row = this.#row;
    for (let n = 0; n < count; n++) {
      const at = monitor.claim();
      const draw = row * width;
      for (let k = 0; k < counters; k++) {
        const lo = totals[2 * k] + table[draw + k];
        totals[2 * k] = lo; // stored mod 2^32
        if (lo > 0xffffffff) totals[2 * k + 1]++; // carry; hi wraps mod 2^32
        words[at + 2 * k] = totals[2 * k];
        words[at + 2 * k + 1] = totals[2 * k + 1];
      }
      for (let k = counters; k < width; k++) {
        words[at + 2 * k] = table[draw + k];
        words[at + 2 * k + 1] = 0;
      }
      monitor.commit();
      row = (row + 1) & (TABLE_RECORDS - 1);
    }
    this.#row = row;
  }
}

/**
 * A macrotask boundary without timer clamping (a `setTimeout(0)` chain
 * costs about 2 ms a hop here): lets the events log's pending writes
 * complete between batches, as they would between real polls.
 */
class Yielder {
  readonly #channel = new MessageChannel();
  #wake: (() => void) | null = null;

  constructor() {
    this.#channel.port1.onmessage = () => this.#wake?.();
  }

  next(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#channel.port2.postMessage(null);
    });
  }

  close(): void {
    this.#channel.port1.close();
    this.#channel.port2.close();
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over one 32-bit word (word-wise, as engine.c does it). */
function fnv(hash: number, word: number): number {
  return Math.imul(hash ^ word, FNV_PRIME) >>> 0;
}

/** What both engines must agree on for a repetition. */
export interface Checksum {
  /** Rule state changes, both directions. */
  readonly transitions: number;
  /** FNV-1a of (sample number, rule, became active) per transition. */
  readonly transitionHash: string;
  /** Bit i set when rule i is active at the end. */
  readonly activeMask: number;
  /** FNV-1a of every ring word at the end (the generator's output). */
  readonly ringHash: string;
  /**
   * events.log bytes after the header block (C writes no header), its
   * `<<Peak>>` lines left out (C writes none).
   */
  readonly logBodyBytes: number;
}

const encoder = new TextEncoder();

/** One timed repetition's measurements. */
export interface RepResult {
  readonly samples: number;
  readonly loopSeconds: number;
  readonly closeSeconds: number;
  readonly pendingBytesAtLoopEnd: number;
  /** heapUsed after the loop minus before it, without a GC in between. */
  readonly heapGrowthBytes: number;
  /** The same after a full GC (only with --expose-gc), else null. */
  readonly heapRetainedBytes: number | null;
  /** Quiet cases only: heap bytes per sample of the per-sample path, else null. */
  readonly allocBytesPerSample: number | null;
  readonly checksum: Checksum;
  readonly logPath: string;
  readonly logHeaderBytes: number;
}

const hex = (n: number) => n.toString(16).padStart(8, "0");
const AGGREGATE = Deno.env.get("BENCH_AGGREGATE") === "1";
const gc = (globalThis as { gc?: () => void }).gc;

/** Runs one repetition of `benchCase` with `samples` timed samples. */
async function runRep(
  benchCase: BenchCase,
  generator: Generator,
  yielder: Yielder,
  path: string,
  samples: number,
): Promise<RepResult> {
  const options: EventsLogOptions = {
    path,
    version: "dpu-traceback bench",
    device: "bench",
    depth: benchCase.depth,
    samplePeriodNs: PERIOD_NS,
    columns: COLUMNS.slice(1),
    rules: benchCase.rules,
  };
  const logHeaderBytes = new TextEncoder().encode(formatHeader(options)).length;
  const log = await EventsLog.open(options);
  let transitions = 0;
  let peakLineBytes = 0;
  let transitionHash = FNV_OFFSET;
  const monitor = new Monitor(
    {
      name: "bench",
      depth: benchCase.depth,
      columns: options.columns,
      rules: benchCase.rules,
    },
    log,
    {
      // With BENCH_AGGREGATE=1 the monitor also feeds the metrics
      // aggregator, as in the agent; off by default so the C comparison
      // stays like for like.
      observer: AGGREGATE
        ? new WindowAggregator({
          columns: options.columns.map((c, k) => ({
            name: c.name,
            kind: COLUMNS[k + 1].kind === COUNTER ? "counter" : "gauge",
          })),
        })
        : undefined,
      onTransition(m, rule, active) {
        transitions++;
        // The `<<Peak>>` line written before each end marker is ours: the
        // C loop writes none, so its bytes are left out of the count.
        if (!active) {
          peakLineBytes += encoder.encode(
            `${PEAK} ${RULE_FIELD}: ${
              quoteName(m.rules[rule].name)
            }, ${PEAK_FIELD}: ${
              formatLogPeak(
                m.rules[rule].peak,
                (m.rules[rule] as { signal?: string }).signal === "rate",
              )
            }\n`,
          ).length;
        }
        transitionHash = fnv(
          fnv(fnv(transitionHash, m.samples), rule),
          active ? 1 : 0,
        );
      },
    },
  );
  generator.reset();

  const batch = benchCase.batch;
  const feed = async (count: number) => {
    for (let done = 0; done < count; done += batch) {
      generator.feed(monitor, Math.min(batch, count - done));
      // A poll boundary: the log's pending writes complete here. Then the
      // backpressure sources use (replay does the same): wait while the
      // log has half its chunks queued for the disk, instead of making it
      // drop rows. C's synchronous fwrite() waits for the disk by itself.
      await yielder.next();
      const ready = monitor.ready();
      if (ready !== undefined) await ready;
    }
  };

  await feed(benchCase.prefillSamples);
  gc?.();
  const heapBefore = Deno.memoryUsage().heapUsed;
  const start = performance.now();
  await feed(samples);
  const loopEnd = performance.now();
  const heapAfter = Deno.memoryUsage().heapUsed;
  let heapRetainedBytes: number | null = null;
  if (gc) {
    gc();
    heapRetainedBytes = Deno.memoryUsage().heapUsed - heapBefore;
  }
  const pendingBytesAtLoopEnd = log.stats.pendingBytes;
  // What the engines must agree on, before the probe below feeds more.
  let activeMask = 0;
  monitor.rules.forEach((r, i) => {
    if (r.active) activeMask |= 1 << i;
  });
  let ringHash = FNV_OFFSET;
  for (const word of monitor.words) ringHash = fnv(ringHash, word);
  const timedTransitions = transitions;
  const timedTransitionHash = transitionHash;
  let allocBytesPerSample: number | null = null;
  if (benchCase.quiet) {
    allocBytesPerSample = allocationProbe(monitor, generator);
    if (transitions !== timedTransitions) {
      throw new Error(
        `Case ${benchCase.name} is not quiet: a rule changed state during the allocation probe`,
      );
    }
  }
  // Outside the loop's time: the GC above must not count as closing.
  const closeStart = performance.now();
  await log.close(); // writes what is pending, fsyncs; throws if rows dropped
  const closeEnd = performance.now();

  return {
    samples,
    loopSeconds: (loopEnd - start) / 1000,
    closeSeconds: (closeEnd - closeStart) / 1000,
    pendingBytesAtLoopEnd,
    heapGrowthBytes: heapAfter - heapBefore,
    heapRetainedBytes,
    allocBytesPerSample,
    checksum: {
      transitions: timedTransitions,
      transitionHash: hex(timedTransitionHash),
      activeMask,
      ringHash: hex(ringHash),
      logBodyBytes: log.stats.bytesWritten - logHeaderBytes - peakLineBytes,
    },
    logPath: path,
    logHeaderBytes,
  };
}

/** Chunks and samples per chunk of {@linkcode allocationProbe}. */
const PROBE_CHUNKS = 200;
const PROBE_CHUNK_SAMPLES = 1_000;

/**
 * Heap bytes the per-sample path (generator, claim, commit, every rule)
 * allocates per sample, measured without the per-batch yield that the
 * timed loop's heap figure includes: samples are fed synchronously in
 * chunks, `heapUsed` is read after each, and growth is summed (a drop is a
 * scavenge, skipped, so it cannot hide what was allocated before it). The
 * same loop feeding no samples is subtracted: what reading `heapUsed`
 * itself allocates. Only for quiet cases: with an event active, rows would
 * pile up in the log without the yield that lets it write them.
 */
function allocationProbe(monitor: Monitor, generator: Generator): number {
  const grown = (samples: number) => {
    gc?.();
    let total = 0;
    let last = Deno.memoryUsage().heapUsed;
    for (let c = 0; c < PROBE_CHUNKS; c++) {
      generator.feed(monitor, samples);
      const now = Deno.memoryUsage().heapUsed;
      if (now > last) total += now - last;
      last = now;
    }
    return total;
  };
  grown(PROBE_CHUNK_SAMPLES); // untimed warm-up of the probe itself
  const control = grown(0);
  const fed = grown(PROBE_CHUNK_SAMPLES);
  return (fed - control) / (PROBE_CHUNKS * PROBE_CHUNK_SAMPLES);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Formats a rate for people: `3.21 M/s`. */
export function formatRate(perSecond: number): string {
  return `${(perSecond / 1e6).toFixed(2)} M/s`;
}

/**
 * Runs a case: an untimed warm-up repetition (so the timed ones run
 * optimized code), then `reps` timed ones, each on a fresh monitor and log.
 * Writes the JSON lines; returns the summary.
 */
export async function runCase(
  benchCase: BenchCase,
  dir: string,
): Promise<Record<string, unknown>> {
  const generator = new Generator();
  const yielder = new Yielder();
  const out = (line: Record<string, unknown>) =>
    console.log(JSON.stringify(line));
  try {
    if (benchCase.warmupSamples > 0) {
      const warm = await runRep(
        benchCase,
        generator,
        yielder,
        join(dir, `deno-${benchCase.name}-warmup.log`),
        benchCase.warmupSamples,
      );
      await Deno.remove(warm.logPath);
    }
    const reps: RepResult[] = [];
    for (let rep = 1; rep <= benchCase.reps; rep++) {
      const path = join(dir, `deno-${benchCase.name}-${rep}.log`);
      const r = await runRep(
        benchCase,
        generator,
        yielder,
        path,
        benchCase.samples,
      );
      if (!benchCase.keepLog) await Deno.remove(path);
      reps.push(r);
      out({
        engine: "deno",
        case: benchCase.name,
        rep,
        samples: r.samples,
        loop_s: r.loopSeconds,
        samples_per_s: r.samples / r.loopSeconds,
        close_s: r.closeSeconds,
        samples_per_s_with_close: r.samples /
          (r.loopSeconds + r.closeSeconds),
        pending_bytes_at_loop_end: r.pendingBytesAtLoopEnd,
        heap_growth_bytes: r.heapGrowthBytes,
        heap_retained_bytes: r.heapRetainedBytes,
        alloc_bytes_per_sample: r.allocBytesPerSample,
        checksum: r.checksum,
      });
    }
    // Every repetition replays the same samples: their checksums must agree.
    const first = JSON.stringify(reps[0].checksum);
    if (reps.some((r) => JSON.stringify(r.checksum) !== first)) {
      throw new Error(
        `Checksums differ between repetitions of case ${benchCase.name}`,
      );
    }
    const rates = reps.map((r) => r.samples / r.loopSeconds);
    const summary = {
      engine: "deno",
      case: benchCase.name,
      summary: true,
      reps: reps.length,
      samples: benchCase.samples,
      median_samples_per_s: median(rates),
      min_samples_per_s: Math.min(...rates),
      max_samples_per_s: Math.max(...rates),
      median_close_s: median(reps.map((r) => r.closeSeconds)),
      median_samples_per_s_with_close: median(
        reps.map((r) => r.samples / (r.loopSeconds + r.closeSeconds)),
      ),
      max_heap_growth_bytes: Math.max(...reps.map((r) => r.heapGrowthBytes)),
      max_heap_retained_bytes: gc
        ? Math.max(...reps.map((r) => r.heapRetainedBytes ?? 0))
        : null,
      max_alloc_bytes_per_sample: benchCase.quiet
        ? Math.max(...reps.map((r) => r.allocBytesPerSample ?? 0))
        : null,
      checksum: reps[0].checksum,
      log_path: benchCase.keepLog ? reps[0].logPath : null,
      log_header_bytes: reps[0].logHeaderBytes,
      runtime: `deno ${Deno.version.deno}, v8 ${Deno.version.v8}`,
    };
    out(summary);
    console.error(
      `deno ${benchCase.name}: ${formatRate(summary.median_samples_per_s)} ` +
        `(median of ${reps.length} x ${benchCase.samples} samples; ` +
        `min ${formatRate(summary.min_samples_per_s)}, max ${
          formatRate(summary.max_samples_per_s)
        }; close ${summary.median_close_s.toFixed(3)} s; ` +
        `heap growth <= ${summary.max_heap_growth_bytes} B` +
        (summary.max_alloc_bytes_per_sample === null
          ? ")"
          : `; per-sample path <= ${
            summary.max_alloc_bytes_per_sample.toFixed(3)
          } B/sample)`),
    );
    return summary;
  } finally {
    yielder.close();
  }
}

if (import.meta.main) {
  const benchCase = caseFromArgs();
  const ownDir = Deno.args[1] === undefined;
  const dir = Deno.args[1] ??
    await Deno.makeTempDir({ prefix: "dpu-traceback-bench-" });
  try {
    await runCase(benchCase, dir);
  } finally {
    if (ownDir && !benchCase.keepLog) {
      await Deno.remove(dir, { recursive: true });
    }
  }
}
