/**
 * The GPU monitor's collector: NVML runs in a Worker
 * (collectors/nvml/worker.ts) and hands records over through shared
 * memory; this side copies them into the monitor's ring on a timer. No
 * NVML call is ever made on this thread, so a slow or hung driver delays
 * GPU samples, never the NIC's.
 *
 * A GPU monitor is independent: NVML absent, a GPU lost, even the worker
 * dying end (at most) the GPU monitor, never the agent.
 *
 * @module
 */

import type { MonitorConfig } from "../../config/types.ts";
import { NvmlReturn, nvmlReturnName } from "../../ffi/nvml.ts";
import type { SampleSink } from "../../rules/sample_sink.ts";
import type { Collector, SourceDevice } from "../collector.ts";
import { expandGpuMonitor } from "./gpu_monitor.ts";
import { GpuMailbox } from "./mailbox.ts";
import { toNumberU64 } from "../../base/u64.ts";
import type { NvmlReply, NvmlRequest } from "./worker.ts";
import { ERROR_SLOTS } from "./gpu_health.ts";
import type { GpuInfo } from "./gpu_list.ts";
import type { PollerNote } from "./notes.ts";
import { CALL_NAMES, type GpuColumn } from "./readings.ts";
import { PollStats } from "../poll_stats.ts";
import { formatDuration } from "../../base/units.ts";

/** How long NVML may take to initialize and list the GPUs. */
const NVML_OPEN_TIMEOUT_MS = 15_000;
/** How long NVML may take to shut down before the worker is dropped. */
const NVML_CLOSE_TIMEOUT_MS = 5_000;
/** The longest a record waits in the mailbox before the ring gets it. */
const DRAIN_INTERVAL_MS = 100;
/** No record for this long (or 3 periods, if longer) means NVML is stuck. */
const STALL_MS = 10_000;

/**
 * Where NVML (the GPU driver's `libnvidia-ml.so.1`) is looked for: `libDir`
 * (`--nvml-lib-dir`, `nvml_lib_dir:`), `NVML_LIB_DIR`, then the standard
 * library directories.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nvmlLibraryDirs } from "./collector.ts";
 *
 * const dirs = nvmlLibraryDirs("/opt/nv", "/srv/nvml");
 * assert.deepEqual(dirs.slice(0, 2), ["/opt/nv", "/srv/nvml"]);
 * assert.ok(dirs.includes("/usr/lib64"));
 * ```
 */
export function nvmlLibraryDirs(
  libDir?: string,
  env: string | undefined = Deno.env.get("NVML_LIB_DIR"),
): string[] {
  const arch = Deno.build.arch === "aarch64" ? "aarch64" : "x86_64";
  const dirs = [`/usr/lib/${arch}-linux-gnu`, "/usr/lib64", "/usr/lib"];
  if (env) dirs.unshift(env);
  if (libDir) dirs.unshift(libDir);
  return dirs;
}

/** What {@linkcode NvmlCollector.open} needs. */
export interface NvmlCollectorOptions {
  /** The GPU monitor as configured (pattern columns). */
  readonly config: MonitorConfig;
  /** Directories to look for libnvidia-ml.so.1 in, in order. */
  readonly libDirs: readonly string[];
  /** Where unsupported readings, left-out patterns and lost GPUs are told. */
  readonly warn?: (message: string) => void;
  /** Where "no NVML here" and other expected absences are told. */
  readonly info?: (message: string) => void;
  /** Give up on NVML's init and GPU listing after this long, ms (default 15 s). */
  readonly openTimeoutMs?: number;
  /** No record for this long means NVML is stuck (default 10 s or 3 periods). */
  readonly stallMs?: number;
}

/** What opening the GPU monitor gave. */
export type NvmlOpened =
  | {
    readonly ok: true;
    readonly collector: NvmlCollector;
    /** The monitor expanded for the GPUs found. */
    readonly config: MonitorConfig;
  }
  | {
    readonly ok: false;
    readonly level: "info" | "warning";
    /** One line: why there is no GPU monitor. */
    readonly reason: string;
  };

/**
 * Reads GPUs through NVML in a Worker.
 *
 * @example Without NVML there is no GPU monitor: told why, never thrown
 * ```ts
 * import assert from "node:assert/strict";
 * import { NvmlCollector } from "./collector.ts";
 *
 * const opened = await NvmlCollector.open({
 *   config: {
 *     name: "gpu",
 *     source: "nvml",
 *     samplePeriodNs: 1_000_000_000,
 *     depth: 60,
 *     columns: [{ name: "gpu*.temperature", dataId: "nvml gpu*.temperature", kind: "gauge" }],
 *     rules: [],
 *     eventLog: "gpu-events.log",
 *     seed: 1,
 *   },
 *   libDirs: ["/nonexistent-nvml-dir"],
 * });
 * assert.deepEqual(opened, {
 *   ok: false,
 *   level: "info",
 *   reason: "no NVML (libnvidia-ml.so.1 not found in /nonexistent-nvml-dir)",
 * });
 * ```
 *
 * @example Sampling the GPUs into a monitor
 * ```ts ignore
 * const opened = await NvmlCollector.open({ config, libDirs: nvmlLibraryDirs() });
 * if (opened.ok) {
 *   const monitor = new Monitor(opened.config, log);
 *   await opened.collector.run(monitor, AbortSignal.timeout(5000));
 *   await opened.collector.close();
 * }
 * ```
 */
export class NvmlCollector implements Collector {
  readonly source = "nvml";
  readonly independent = true;
  readonly pollStats: PollStats = new PollStats();
  /** The GPUs this monitor reads. */
  readonly gpus: readonly GpuInfo[];
  /**
   * Every GPU NVML listed, read by this monitor or not: what the NICs'
   * GPUs are found among (collectors/nic_gpus.ts).
   */
  readonly listed: readonly GpuInfo[];
  /** Each GPU as a device that goes down on its own, for `device_up`. */
  readonly devices: readonly SourceDevice[];
  /** `nvml` and each GPU read: index, PCI bus id, UUID. */
  readonly device: string;
  /** Where NVML was loaded from and the driver's version. */
  readonly library: string;
  /** The driver's version as NVML reports it (`550.54.15`). */
  readonly driverVersion: string;

  #worker: Worker;
  #columns: readonly GpuColumn[];
  #mailbox: GpuMailbox;
  #periodMs: number;
  #warn: (message: string) => void;
  #info: (message: string) => void;
  #failure: string | undefined;
  #onFailure: ((message: string) => void) | undefined;
  #closed: Promise<readonly string[]> | undefined;
  /** The GPU whose NVML call has not returned for too long, or -1. */
  #stalledGpu = -1;
  #name: string;
  #stallMs: number;
  #replies: ((reply: NvmlReply) => void)[] = [];

  private constructor(
    worker: Worker,
    opened: NvmlReply & { kind: "opened" },
    columns: readonly GpuColumn[],
    recordWords: number,
    periodMs: number,
    name: string,
    stallMs: number | undefined,
    warn: (message: string) => void,
    info: (message: string) => void,
  ) {
    this.#worker = worker;
    this.gpus = opened.gpus.filter((g) =>
      columns.some((c) => c.gpu === g.index)
    );
    this.listed = opened.gpus;
    this.device = `nvml ${
      this.gpus.map((g) => `gpu${g.index} ${g.pciBusId} ${g.uuid}`).join(", ")
    }`;
    this.library = opened.library;
    this.driverVersion = opened.driverVersion;
    this.#columns = columns;
    this.#mailbox = new GpuMailbox(recordWords);
    this.#periodMs = periodMs;
    this.#warn = warn;
    this.#info = info;
    this.#name = name;
    this.#stallMs = stallMs ?? Math.max(STALL_MS, 3 * periodMs);
    const mailbox = this.#mailbox;
    // Up until the worker says otherwise (it starts with the first poll).
    for (const g of this.gpus) mailbox.gpuUp[g.index] = 1;
    this.devices = this.gpus.map((g) => ({
      labels: [
        ["device", `gpu${g.index}`],
        ["uuid", g.uuid],
        ["pci_bus_id", g.pciBusId],
        ["model", g.name],
      ] as const,
      up: () => this.isUp(g.index),
    }));
  }

  /**
   * Starts the worker, opens NVML there and expands the monitor for the
   * GPUs found. Resolves `ok: false` (never rejects) when there is no
   * usable NVML, no GPU, or no column left: the agent then runs without
   * this monitor.
   */
  static async open(options: NvmlCollectorOptions): Promise<NvmlOpened> {
    const warn = options.warn ?? (() => {});
    const info = options.info ?? (() => {});
    const started = await startWorker(options.libDirs, options.openTimeoutMs);
    if (!started.ok) return started;
    const { worker, first } = started;
    for (const line of first.skipped) {
      warn(`monitor "${options.config.name}": ${line}`);
    }
    const expanded = expandGpuMonitor(
      options.config,
      first.gpus.map((g) => g.index),
    );
    for (const line of expanded.leftOut) {
      warn(`monitor "${options.config.name}": ${line}`);
    }
    if (expanded.columns.length === 0) {
      const closing = await closeWorker(worker);
      return {
        ok: false,
        level: "warning",
        reason:
          `no column of monitor "${options.config.name}" names a GPU that is present${
            closing.length === 0 ? "" : `; ${closing.join("; ")}`
          }`,
      };
    }
    const collector = new NvmlCollector(
      worker,
      first,
      expanded.columns,
      2 * (1 + expanded.columns.length),
      options.config.samplePeriodNs / 1e6,
      options.config.name,
      options.stallMs,
      warn,
      info,
    );
    collector.#listen();
    return { ok: true, collector, config: expanded.config };
  }

  /**
   * Opens NVML on a Worker only to list its GPUs, then shuts it down: for
   * an agent without a GPU monitor that still names the GPUs behind its
   * NICs. Resolves `ok: false` (never rejects) as {@linkcode open} does:
   * `info` where there is no NVML, `warning` where it does not work or
   * does not answer within `openTimeoutMs` (default 15 s).
   *
   * @example
   * ```ts ignore
   * const listed = await NvmlCollector.listGpus({ libDirs: nvmlLibraryDirs() });
   * if (listed.ok) console.log(listed.gpus.map((g) => g.pciBusId));
   * ```
   */
  static async listGpus(options: {
    readonly libDirs: readonly string[];
    readonly openTimeoutMs?: number;
  }): Promise<
    | { readonly ok: true; readonly gpus: readonly GpuInfo[] }
    | {
      readonly ok: false;
      readonly level: "info" | "warning";
      readonly reason: string;
    }
  > {
    const started = await startWorker(options.libDirs, options.openTimeoutMs);
    if (!started.ok) return started;
    const { worker, first } = started;
    // Shutdown problems do not make the list wrong; the list is what counts.
    await closeWorker(worker);
    return { ok: true, gpus: first.gpus };
  }

  /**
   * Whether GPU `index` still contributes: not taken down by the worker,
   * not stuck in an NVML call, and the worker itself alive.
   */
  isUp(index: number): boolean {
    return this.#mailbox.gpuUp[index] === 1 && this.#stalledGpu !== index &&
      this.#failure === undefined;
  }

  /**
   * Copies records into `sink` until `signal` aborts. Rejects, with one
   * line, if the worker fails.
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (sink.columns !== this.#columns.length) {
      return Promise.reject(
        new RangeError(
          `NvmlCollector: the sink has ${sink.columns} columns, the GPU monitor ${this.#columns.length}`,
        ),
      );
    }
    const request: NvmlRequest = {
      kind: "start",
      columns: this.#columns,
      periodMs: this.#periodMs,
      mailbox: this.#mailbox.buffer,
    };
    this.#worker.postMessage(request);
    const mailbox = this.#mailbox;
    const stats = this.pollStats;
    const seen = new Float64Array(mailbox.errors.length);
    const words = mailbox.recordWords;
    const stallMs = this.#stallMs;
    let read = 0;
    let lastWritten = 0;
    let lastProgressMs = performance.now();
    const drain = () => {
      const written = mailbox.written();
      const now = performance.now();
      if (written !== lastWritten) {
        if (this.#stalledGpu !== -1) this.#resumed(now - lastProgressMs);
        lastWritten = written;
        lastProgressMs = now;
      } else if (this.#stalledGpu === -1 && now - lastProgressMs > stallMs) {
        this.#stalled(now - lastProgressMs);
      }
      let behind = (written - read) | 0;
      // Keep one slot clear of the one the worker may be writing now: only
      // after this thread stalled for capacity periods are records lost,
      // and then they are counted.
      if (behind >= mailbox.capacity - 1) {
        const lost = behind - (mailbox.capacity - 2);
        sink.gap(lost);
        read = (read + lost) | 0;
        behind -= lost;
      }
      for (; behind > 0; behind--) {
        const from = mailbox.offsetOf(read);
        const at = sink.claim();
        const ring = sink.words;
        for (let w = 0; w < words; w++) {
          ring[at + w] = mailbox.records[from + w];
        }
        stats.recordPoll(mailbox.lateness[from / words]);
        stats.recordSampleTime(toNumberU64(ring[at], ring[at + 1]));
        sink.commit();
        read = (read + 1) | 0;
      }
      for (let code = 0; code < seen.length; code++) {
        const count = mailbox.errors[code];
        if (count === seen[code]) continue;
        seen[code] = count;
        // The last slot gathers 999 (UNKNOWN) and codes newer than ours.
        stats.errors.set(
          nvmlReturnName(code === ERROR_SLOTS - 1 ? NvmlReturn.UNKNOWN : code),
          count,
        );
      }
    };
    return new Promise((resolve, reject) => {
      const timer = setInterval(
        drain,
        Math.min(DRAIN_INTERVAL_MS, this.#periodMs),
      );
      const finish = (error?: Error) => {
        clearInterval(timer);
        signal.removeEventListener("abort", onAbort);
        this.#onFailure = undefined;
        if (error === undefined) {
          drain();
          resolve();
        } else {
          reject(error);
        }
      };
      const onAbort = () => finish();
      if (this.#failure !== undefined) {
        finish(new Error(this.#failure));
        return;
      }
      this.#onFailure = (message) => finish(new Error(message));
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) finish();
    });
  }

  /**
   * Stops polling, shuts NVML down and ends the worker. Never throws: a
   * problem (NVML's, or no answer within 5 s) is a warning.
   */
  async close(): Promise<void> {
    if (this.#failure !== undefined && this.#closed === undefined) {
      // A failed worker answers nothing more; its failure was reported.
      this.#worker.terminate();
      this.#closed = Promise.resolve([]);
    }
    this.#closed ??= closeWorker(this.#worker, this.#replies);
    const problems = await this.#closed;
    // A driver that will not shut down must not fail the agent's exit.
    if (problems.length > 0) this.#warn(`GPU monitor: ${problems.join("; ")}`);
  }

  #listen(): void {
    this.#worker.onmessage = (event: MessageEvent<NvmlReply>) => {
      const reply = event.data;
      switch (reply.kind) {
        case "note":
          this.#tell(reply.note);
          return;
        case "failed":
          this.#fail(`NVML worker failed: ${reply.message}`);
          return;
        default:
          for (const waiter of this.#replies.splice(0)) waiter(reply);
      }
    };
    this.#worker.onerror = (event: ErrorEvent) => {
      // Handled here: an unhandled worker error would end the whole agent.
      event.preventDefault();
      this.#fail(`NVML worker failed: ${event.message}`);
    };
  }

  /** Says, once, which NVML call has kept the worker from sampling. */
  #stalled(forMs: number): void {
    const busy = Atomics.load(this.#mailbox.control, 1);
    const call = (busy & 0xff) - 1;
    const gpu = busy >> 8;
    this.#stalledGpu = call === CALL_NAMES.length - 1 || busy === 0 ? -2 : gpu;
    this.#warn(
      `monitor "${this.#name}": no GPU sample for ${
        formatDuration(forMs / 1000)
      }: ${
        busy === 0
          ? "the NVML worker is not polling"
          : call === CALL_NAMES.length - 1
          ? "NVML's Xid event wait has not returned"
          : `NVML's ${CALL_NAMES[call]} call on gpu${gpu} has not returned`
      }; GPU samples resume when it does`,
    );
  }

  #resumed(afterMs: number): void {
    this.#stalledGpu = -1;
    this.#info(
      `monitor "${this.#name}": GPU samples again, after ${
        formatDuration(afterMs / 1000)
      } without`,
    );
  }

  #tell(note: PollerNote): void {
    if (note.level === "warning") this.#warn(note.message);
    else this.#info(note.message);
  }

  #fail(message: string): void {
    this.#failure ??= message;
    const waiters = this.#replies.splice(0);
    for (const waiter of waiters) waiter({ kind: "failed", message });
    this.#onFailure?.(message);
  }
}

/**
 * Starts the NVML worker and has it open NVML: the worker and its answer,
 * or why not (`info` where there is no NVML, `warning` where it does not
 * work or does not answer within `openTimeoutMs`). A worker whose open
 * failed or hung is dropped: a hung init cannot be shut down.
 */
async function startWorker(
  libDirs: readonly string[],
  openTimeoutMs = NVML_OPEN_TIMEOUT_MS,
): Promise<
  | {
    readonly ok: true;
    readonly worker: Worker;
    readonly first: Extract<NvmlReply, { kind: "opened" }>;
  }
  | {
    readonly ok: false;
    readonly level: "info" | "warning";
    readonly reason: string;
  }
> {
  const worker = new Worker(new URL("./worker.ts", import.meta.url), {
    type: "module",
  });
  const first = await firstReply(
    worker,
    { kind: "open", libDirs },
    openTimeoutMs,
  );
  if (first.kind === "opened") return { ok: true, worker, first };
  worker.terminate();
  return first.kind === "unavailable"
    ? { ok: false, level: first.level, reason: first.reason }
    : {
      ok: false,
      level: "warning",
      reason: first.kind === "failed"
        ? first.message
        : "NVML worker answered out of turn",
    };
}

/** Posts `request` and waits for the worker's first answer or the deadline. */
function firstReply(
  worker: Worker,
  request: NvmlRequest,
  timeoutMs: number,
): Promise<NvmlReply> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve({
        kind: "unavailable",
        level: "warning",
        reason: `NVML did not answer within ${
          formatDuration(timeoutMs / 1000, { exact: true })
        } (initializing the driver or listing GPUs hangs)`,
      });
    }, timeoutMs);
    worker.onmessage = (event: MessageEvent<NvmlReply>) => {
      if (event.data.kind === "note") return;
      clearTimeout(timer);
      resolve(event.data);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      clearTimeout(timer);
      resolve({
        kind: "failed",
        message: `NVML worker failed: ${event.message}`,
      });
    };
    worker.postMessage(request);
  });
}

/**
 * Asks the worker to shut NVML down, waits for it (bounded), and ends the
 * worker. Returns the problems reported; never throws.
 */
async function closeWorker(
  worker: Worker,
  replies?: ((reply: NvmlReply) => void)[],
): Promise<readonly string[]> {
  const answer = new Promise<readonly string[]>((resolve) => {
    const timer = setTimeout(
      () =>
        resolve([
          `NVML did not shut down within ${
            formatDuration(NVML_CLOSE_TIMEOUT_MS / 1000, { exact: true })
          }; left to the process exit`,
        ]),
      NVML_CLOSE_TIMEOUT_MS,
    );
    const done = (reply: NvmlReply) => {
      clearTimeout(timer);
      resolve(
        reply.kind === "closed"
          ? reply.problems
          : reply.kind === "failed"
          ? [reply.message]
          : [],
      );
    };
    if (replies !== undefined) {
      replies.push(done);
    } else {
      worker.onmessage = (event: MessageEvent<NvmlReply>) => {
        if (event.data.kind !== "note") done(event.data);
      };
    }
  });
  try {
    worker.postMessage({ kind: "stop" } satisfies NvmlRequest);
  } catch {
    // A worker that is already gone has nothing to shut down.
  }
  const problems = await answer;
  worker.terminate();
  return problems;
}
