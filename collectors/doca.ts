/**
 * The DOCA Telemetry Diag collector: finds the NIC, checks what it can do,
 * configures the diag context as the reference application does, drains
 * samples into the monitor's ring, and shuts the device down in order.
 * The start-up and shutdown steps are collectors/doca_session.ts's, which
 * discovery shares; the sampling policy (which errors are transient, what
 * a message says) is here; ffi/doca.ts only declares and decodes.
 *
 * @module
 */

import type { ColumnConfig } from "../config/types.ts";
import {
  decodeFormat1Sample,
  type DocaCommon,
  DocaError,
  docaErrorName,
  type DocaTelemetry,
} from "../ffi/doca.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import type { Collector } from "./collector.ts";
import { PollStats } from "./poll_stats.ts";
import { type DeadlineClock, STOP_CHECK_NS } from "./sampler_loop.ts";
import { runSamplerThread, samplerControl } from "./sampler_thread.ts";
import { formatDuration } from "../base/units.ts";
import { toNumberU64 } from "../base/u64.ts";
import {
  applyCounters,
  checkDiagCaps,
  closeDiagSession,
  createDiag,
  type DiagSession,
  docaFailure,
  openDiagSession,
  readSamplePeriod,
  refuseUnsupportedColumns,
  startDiag,
} from "./doca_session.ts";

export {
  DOCA_SONAME_SUFFIXES,
  docaLibraryDirs,
  DocaUnavailableError,
} from "./doca_session.ts";

/** How to reach the device and what to sample. */
export interface DocaOptions {
  /** PCIe address (`03:00.0`, `0000:03:00.0`), IB device or interface name. */
  readonly device: string;
  /** The data IDs to sample, in record order. */
  readonly columns: readonly ColumnConfig[];
  /** Requested sample period in ns; the device may round it (see {@linkcode warn}). */
  readonly samplePeriodNs: number;
  /** History depth; the device ring holds the next power of two (capped). */
  readonly depth: number;
  /** Take the diag context over from another owner instead of failing. */
  readonly forceOwnership: boolean;
  /** Directory to load the DOCA libraries from before the standard ones. */
  readonly libDir?: string;
  /**
   * Told of conditions worth an operator's attention: a rounded period,
   * a device that keeps failing queries (and when it works again).
   */
  readonly warn?: (message: string) => void;
  /** Told once, as {@linkcode DocaCollector.run} starts, what scheduling its thread got. */
  readonly info?: (message: string) => void;
  /**
   * How long a stop waits for the sampling thread before leaving it (and
   * the device) to the process's exit, ms; default 5 s.
   */
  readonly stopGraceMs?: number;
}

/**
 * Transient query failures (`AGAIN`, `TIME_OUT`) in a row that end the
 * run: with {@linkcode transientRetryMs}'s waits, about 30 s of failing.
 */
export const MAX_TRANSIENT_FAILURES = 40;
/**
 * Transient failures in a row after which the operator is told, long
 * before the run ends: the waits before it add up to about a second (a
 * blip of `AGAIN` is only counted), and from it on the retries are a
 * second apart.
 */
export const WARN_TRANSIENT_FAILURES = 11;
/** Least time between two warnings that the source keeps failing. */
const RETRY_WARN_INTERVAL_MS = 60_000;
const MIN_POLL_MS = 1;
/** Device ring at least this long in time, so millisecond polls keep up. */
const RING_MIN_MS = 100;

/**
 * The wait before the next query after `failures` transient failures in a
 * row: 1 ms, doubling, at most a second.
 *
 * @example The whole schedule: a second of quick retries, then one a second
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   MAX_TRANSIENT_FAILURES,
 *   transientRetryMs,
 *   WARN_TRANSIENT_FAILURES,
 * } from "./doca.ts";
 *
 * assert.deepEqual([1, 2, 3, 10, 11, 39].map(transientRetryMs), [1, 2, 4, 512, 1000, 1000]);
 * const waited = (failures: number) => {
 *   let ms = 0;
 *   for (let k = 1; k < failures; k++) ms += transientRetryMs(k);
 *   return ms;
 * };
 * assert.equal(waited(WARN_TRANSIENT_FAILURES), 1023); // warned after about 1 s
 * assert.equal(waited(MAX_TRANSIENT_FAILURES), 30_023); // given up after about 30 s
 * ```
 */
export function transientRetryMs(failures: number): number {
  return Math.min(1000, 2 ** (failures - 1));
}

/** What a {@linkcode DocaPoller} polls: a started diag context. */
export interface DocaPollerOptions {
  readonly common: DocaCommon;
  readonly telemetry: DocaTelemetry;
  /** The started diag context (`doca_telemetry_diag`). */
  readonly diag: Deno.PointerValue;
  /** The device as DOCA lists it, for messages. */
  readonly deviceName: string;
  /** Data IDs in a sample. */
  readonly columns: number;
  /** The period the device samples at, ns. */
  readonly samplePeriodNs: number;
  /** Samples the device ring holds. */
  readonly ringSamples: number;
  /** Bytes of one FORMAT_1 sample. */
  readonly sampleBytes: number;
  /** Told that the device keeps failing queries, and when it works again. */
  readonly warn?: (message: string) => void;
  /** Told each failed query's error name (also counted in `pollStats`). */
  readonly onError?: (name: string) => void;
}

/**
 * Drains a started diag context into a sink: one query_counters call a
 * poll, every sample decoded, sample_id gaps told as lost samples, the
 * wait between polls adapted so the device ring stays under half full.
 * {@linkcode pollUntilStopped} is the whole loop with its retry policy; it
 * blocks, so it runs on a sampling thread (doca_sampler_worker.ts).
 */
export class DocaPoller {
  /** The poll loop's health. */
  readonly pollStats: PollStats = new PollStats();
  readonly #options: DocaPollerOptions;
  readonly #query:
    DocaTelemetry["symbols"]["doca_telemetry_diag_query_counters"];
  // Query buffer and its word view, allocated once.
  readonly #buffer: Uint8Array<ArrayBuffer>;
  readonly #words: Uint32Array;
  readonly #sampleWords: number;
  readonly #count = new Uint32Array(1);
  readonly #maxIntervalMs: number;
  #intervalMs: number;
  #lastSampleId = -1;

  /** Allocates the query buffer for the whole device ring. */
  constructor(options: DocaPollerOptions) {
    this.#options = options;
    this.#query = options.telemetry.symbols.doca_telemetry_diag_query_counters;
    this.#buffer = new Uint8Array(options.sampleBytes * options.ringSamples);
    this.#words = new Uint32Array(this.#buffer.buffer);
    this.#sampleWords = options.sampleBytes / 4;
    // Polling when the device ring is a quarter full keeps it under half
    // full with room for a late wake-up, without a wake-up per sample.
    const ringMs = options.ringSamples * options.samplePeriodNs / 1e6;
    this.#maxIntervalMs = Math.max(MIN_POLL_MS, ringMs / 2);
    this.#intervalMs = Math.max(MIN_POLL_MS, ringMs / 4);
  }

  /**
   * One drain of the device into `sink`. Returns the DOCA status: SUCCESS
   * or SKIPPED (data delivered, gap told) or an error (nothing
   * delivered). Adjusts the poll interval from how full the ring was.
   */
  poll(sink: SampleSink): number {
    const count = this.#count;
    count[0] = 0;
    const ring = this.#options.ringSamples;
    const status = this.#query(this.#options.diag, this.#buffer, ring, count);
    if (status === DocaError.SKIPPED) this.pollStats.overflows++;
    else if (status !== DocaError.SUCCESS) return status;
    const n = count[0];
    this.pollStats.recordBatch(n, ring);
    const words = this.#words;
    const stride = this.#sampleWords;
    const columns = this.#options.columns;
    for (let i = 0, src = 0; i < n; i++, src += stride) {
      const id = words[src];
      if (this.#lastSampleId >= 0) {
        // sample_id is a u32 that wraps; anything but +1 is a gap.
        const lost = (id - this.#lastSampleId - 1) >>> 0;
        if (lost !== 0) sink.gap(lost);
      }
      this.#lastSampleId = id;
      const at = sink.claim();
      decodeFormat1Sample(words, src, columns, true, sink.words, at);
      // The period the device achieved, from its own timestamps.
      this.pollStats.recordSampleTime(
        toNumberU64(sink.words[at], sink.words[at + 1]),
      );
      sink.commit();
    }
    // Fuller than half: poll twice as often; under an eighth: back off.
    if (n > ring / 2) {
      this.#intervalMs = Math.max(MIN_POLL_MS, this.#intervalMs / 2);
    } else if (n < ring / 8) {
      this.#intervalMs = Math.min(this.#maxIntervalMs, this.#intervalMs * 1.25);
    }
    return status;
  }

  /**
   * Polls on `clock` until `stopped()` says so after a wake-up, calling
   * `polled()` after each poll. Blocks the thread. Throws on a
   * non-transient DOCA error, and after {@linkcode MAX_TRANSIENT_FAILURES}
   * transient ones in a row (retried after {@linkcode transientRetryMs}).
   * At {@linkcode WARN_TRANSIENT_FAILURES} in a row it warns (at most once
   * a minute) that the source keeps failing, and warns again once it
   * works.
   */
  pollUntilStopped(
    sink: SampleSink,
    clock: DeadlineClock,
    stopped: () => boolean,
    polled: () => void = () => {},
  ): void {
    const { common, deviceName, warn, onError } = this.#options;
    const fail = (name: string) => {
      this.pollStats.recordError(name);
      onError?.(name);
    };
    let failures = 0;
    let failingSince = 0; // clock time of the first of them, ns
    let warned = false; // about the failures going on now
    let lastWarn = -Infinity;
    const failingFor = () => formatDuration((clock.now() - failingSince) / 1e9);
    let due = clock.now();
    while (true) {
      if (clock.now() >= due) {
        this.pollStats.recordPoll((clock.now() - due) / 1e6);
        const status = this.poll(sink);
        let waitMs = this.#intervalMs;
        if (status === DocaError.AGAIN || status === DocaError.TIME_OUT) {
          const name = docaErrorName(common, status);
          fail(name);
          if (++failures === 1) failingSince = clock.now();
          if (failures >= MAX_TRANSIENT_FAILURES) {
            throw docaFailure(
              `DOCA source ${deviceName}: gave up after query_counters failed ${failures} times in a row over ${failingFor()}`,
              common,
              status,
            );
          }
          // Said long before the run ends: an operator watching the
          // journal learns at once why no samples come.
          if (
            failures === WARN_TRANSIENT_FAILURES &&
            clock.now() - lastWarn >= RETRY_WARN_INTERVAL_MS * 1e6
          ) {
            warned = true;
            lastWarn = clock.now();
            warn?.(
              `DOCA source ${deviceName}: query_counters has failed ${failures} times in a row (${name}) over ${failingFor()}; ` +
                `retrying every second, giving up after ${MAX_TRANSIENT_FAILURES} in a row`,
            );
          }
          waitMs = transientRetryMs(failures);
        } else if (
          status !== DocaError.SUCCESS && status !== DocaError.SKIPPED
        ) {
          fail(docaErrorName(common, status));
          throw docaFailure(
            `DOCA source ${deviceName}: query_counters failed`,
            common,
            status,
          );
        } else {
          if (warned) {
            warn?.(
              `DOCA source ${deviceName}: query_counters works again after ${failures} failures in a row over ${failingFor()}`,
            );
            warned = false;
          }
          failures = 0;
        }
        polled();
        due = clock.now() + waitMs * 1e6;
      }
      clock.sleepUntil(Math.min(due, clock.now() + STOP_CHECK_NS));
      if (stopped()) return;
    }
  }
}

/** What the DOCA source's sampling thread attaches to (doca_sampler_worker.ts). */
export interface DocaSamplerPayload {
  /** The common and telemetry libraries' paths, as the main thread loaded them. */
  readonly libraries: readonly string[];
  /** The started diag context's address. */
  readonly diag: bigint;
  readonly deviceName: string;
  readonly columns: number;
  readonly samplePeriodNs: number;
  readonly ringSamples: number;
  readonly sampleBytes: number;
}

/**
 * Samples one NIC through DOCA Telemetry Diag. This thread opens,
 * configures and starts the device and shuts it down; between those,
 * {@linkcode run} polls it on a sampling thread of its own, which raises
 * its scheduling, sleeps to absolute deadlines and hands samples over in
 * batches (collectors/sampler_thread.ts). The two never use the diag
 * context at once.
 *
 * @example Without the DOCA libraries or the device, open fails at once, in one line
 * ```ts
 * import assert from "node:assert/strict";
 * import { DocaCollector } from "./doca.ts";
 *
 * assert.throws(
 *   () =>
 *     DocaCollector.open({
 *       device: "no-such-nic",
 *       columns: [{ name: "rx", dataId: "0x1020000100000000" }],
 *       samplePeriodNs: 100_000,
 *       depth: 1024,
 *       forceOwnership: false,
 *       libDir: "/nonexistent-doca-dir",
 *     }),
 *   /^Error: Cannot start DOCA source: /,
 * );
 * ```
 *
 * @example Sampling a NIC into a monitor
 * ```ts ignore
 * const doca = DocaCollector.open({ device: "03:00.0", columns, samplePeriodNs: 100_000, depth: 1024, forceOwnership: false });
 * try {
 *   await doca.run(monitor, signal);
 * } finally {
 *   doca.close();
 * }
 * ```
 */
export class DocaCollector implements Collector {
  readonly source = "doca";
  /** Where the libraries were loaded from. */
  readonly libraries: readonly string[];
  /** The device as DOCA lists it: PCIe address (ibdev, iface). */
  readonly deviceName: string;
  /** Sample period the device actually uses, ns. */
  readonly samplePeriodNs: number;
  /** Samples the device ring holds (2^log_max_num_samples). */
  readonly deviceRingSamples: number;
  /** What the sampling thread got as its scheduling, once it started. */
  scheduling: string | undefined;
  /** Samples lost during {@linkcode run}: by the device, or by a main thread a mailbox behind. */
  lostSamples = 0;
  readonly #session: DiagSession;
  // Polls on this thread, for poll() and pollUntilStopped(); its
  // pollStats are the source's, into which run() loads its thread's.
  readonly #poller: DocaPoller;
  readonly #started: Started;
  readonly #columns: number;
  readonly #warn: ((message: string) => void) | undefined;
  readonly #info: ((message: string) => void) | undefined;
  readonly #stopGraceMs: number | undefined;
  #closed = false;
  #running = false;
  /** A stop gave up on the sampling thread: it may be inside the library. */
  #threadLeftBehind = false;

  private constructor(
    session: DiagSession,
    started: Started,
    options: DocaOptions,
  ) {
    this.#warn = options.warn;
    this.#info = options.info;
    this.#stopGraceMs = options.stopGraceMs;
    this.libraries = session.libraries;
    this.#session = session;
    this.#started = started;
    this.#columns = options.columns.length;
    this.deviceName = session.deviceName;
    this.samplePeriodNs = started.samplePeriodNs;
    this.deviceRingSamples = started.ringSamples;
    this.#poller = new DocaPoller({
      ...started, // the device's period, ring and sample sizes
      common: session.common,
      telemetry: session.telemetry,
      diag: session.diag,
      deviceName: session.deviceName,
      columns: this.#columns,
      warn: options.warn,
    });
  }

  /**
   * Loads the libraries, opens the device, checks its capabilities,
   * configures, checks every column where the library can say (refusing
   * one the device does not support, naming the nearest it does) and
   * starts sampling as the reference does. Throws an Error with a one-line
   * message on any failure ({@linkcode DocaUnavailableError} for missing
   * libraries or a context in use), having released whatever it had
   * acquired.
   */
  static open(options: DocaOptions): DocaCollector {
    const session = openDiagSession(options.device, options.libDir);
    let started: Started;
    try {
      started = configure(session, options);
    } catch (error) {
      closeDiagSession(session);
      throw error;
    }
    return new DocaCollector(session, started, options);
  }

  /** The poll loop's health (the sampling thread's, loaded at each drain). */
  get pollStats(): PollStats {
    return this.#poller.pollStats;
  }

  /**
   * One drain of the device into `sink` on this thread, for tests and
   * tools that poll by hand, never while {@linkcode run} runs: see
   * {@linkcode DocaPoller.poll}.
   */
  poll(sink: SampleSink): number {
    this.#idle("poll");
    return this.#poller.poll(sink);
  }

  /**
   * {@linkcode run}'s loop on this thread, blocking it, on the caller's
   * clock (monotonic ns, and a sleep to a deadline on it): see
   * {@linkcode DocaPoller.pollUntilStopped}.
   */
  pollUntilStopped(
    sink: SampleSink,
    clock: { now(): number; sleepUntil(ns: number): void },
    stopped: () => boolean,
    polled?: () => void,
  ): void {
    this.#idle("poll");
    this.#poller.pollUntilStopped(sink, clock, stopped, polled);
  }

  // One user of the diag context at a time: throws unless this thread may
  // use it now (not closed, no sampling thread running or left behind).
  #idle(what: string): void {
    const why = this.#closed
      ? "it is closed"
      : this.#running
      ? "its sampler thread is running"
      : this.#threadLeftBehind
      ? "its sampler thread is still inside query_counters"
      : undefined;
    if (why !== undefined) {
      throw new Error(`Cannot ${what} DOCA source ${this.deviceName}: ${why}`);
    }
  }

  /**
   * Polls on a sampling thread until `signal` aborts (resolves once the
   * thread has ended); the samples reach `sink` on this thread every
   * `DRAIN_MS`, each with the device's timestamp. Rejects on a
   * non-transient DOCA error, and on transient ones that last (see
   * {@linkcode DocaPoller.pollUntilStopped}).
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (sink.columns !== this.#columns) {
      return Promise.reject(
        new RangeError(
          `Cannot run DOCA source: the monitor has ${sink.columns} columns, the device ${this.#columns}`,
        ),
      );
    }
    try {
      this.#idle("run");
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal.aborted) return Promise.resolve();
    this.#running = true;
    const payload: DocaSamplerPayload = {
      libraries: this.libraries,
      diag: BigInt(Deno.UnsafePointer.value(this.#session.diag)),
      deviceName: this.deviceName,
      columns: this.#columns,
      ...this.#started,
    };
    try {
      return runSamplerThread(sink, signal, {
        worker: new Worker(
          new URL("./doca_sampler_worker.ts", import.meta.url),
          {
            type: "module",
          },
        ),
        payload,
        columns: this.#columns,
        periodNs: this.samplePeriodNs,
        burst: this.deviceRingSamples, // one poll drains it at most
        device: `DOCA source ${this.deviceName}`,
        pollStats: this.pollStats,
        control: samplerControl(),
        onStarted: (scheduling) => {
          this.scheduling = scheduling;
          this.#info?.(
            `DOCA source ${this.deviceName}: the sampler thread runs at ${scheduling}`,
          );
        },
        onNote: (_level, message) => this.#warn?.(message),
        onGap: (dropped) => this.lostSamples += dropped,
        stopGraceMs: this.#stopGraceMs,
        onLeftBehind: () => this.#threadLeftBehind = true,
      }).finally(() => this.#running = false);
    } catch (error) {
      this.#running = false; // the Worker could not be started
      return Promise.reject(error);
    }
  }

  /**
   * Stops sampling, destroys the diag context, closes the device, then
   * closes the libraries, in that order. Safe to call more than once.
   * Throws if the device refused a step (the rest is still done), or,
   * doing none of it, while {@linkcode run} runs or when it gave up on its
   * thread.
   */
  close(): void {
    if (this.#closed) return;
    if (this.#running) {
      throw new Error(
        `Cannot shut DOCA source ${this.deviceName} down: its sampler thread is running; stop the run first`,
      );
    }
    this.#closed = true;
    // Destroying the context or unloading the library under a thread that
    // is inside query_counters could crash the agent as it stops: the
    // device is left to the process's exit, which releases it.
    if (this.#threadLeftBehind) {
      throw new Error(
        `Cannot shut DOCA source ${this.deviceName} down cleanly: its sampler thread is still inside query_counters; the device is left to the process's exit`,
      );
    }
    const problems = closeDiagSession(this.#session);
    if (problems.length > 0) {
      throw new Error(
        `Cannot shut DOCA source ${this.deviceName} down cleanly: ${
          problems.join("; ")
        }`,
      );
    }
  }
}

/** What the device agreed to, once started. */
interface Started {
  /** Sample period the device uses, ns. */
  readonly samplePeriodNs: number;
  /** Samples the device ring holds. */
  readonly ringSamples: number;
  /** Bytes of one FORMAT_1 sample. */
  readonly sampleBytes: number;
}

/** Checks caps, configures, checks and applies the columns, and starts. */
function configure(session: DiagSession, options: DocaOptions): Started {
  const caps = checkDiagCaps(session);
  const name = session.deviceName;
  if (options.columns.length > caps.maxDataIds) {
    throw new Error(
      `Cannot start DOCA source: ${name} samples at most ${caps.maxDataIds} data IDs, the config has ${options.columns.length}`,
    );
  }
  // The reference sizes the device ring from the depth because it polls
  // every sample period. We poll every few milliseconds, so the ring also
  // holds at least RING_MIN_MS of samples, where the device allows.
  const wanted = Math.max(
    options.depth,
    RING_MIN_MS * 1e6 / options.samplePeriodNs,
  );
  const logSamples = Math.max(
    1,
    Math.min(Math.ceil(Math.log2(wanted)), caps.logMaxSamples),
  );
  createDiag(session, {
    forceOwnership: options.forceOwnership,
    samplePeriodNs: options.samplePeriodNs,
    logSamples,
    maxDataIds: options.columns.length,
  });
  // Before apply_counters, which names only the first ID it refuses and
  // not what the device offers instead.
  refuseUnsupportedColumns(session, options.columns);
  applyCounters(session, options.columns);

  const samplePeriodNs = readSamplePeriod(session);
  if (samplePeriodNs !== options.samplePeriodNs) {
    options.warn?.(
      `${name} samples every ${
        formatDuration(samplePeriodNs / 1e9, { exact: true })
      }, not the ${
        formatDuration(options.samplePeriodNs / 1e9, { exact: true })
      } configured; ` +
        "rule windows count samples, so they span time at the device's period",
    );
  }
  const sampleBytes = startDiag(session, options.columns.length);
  return { samplePeriodNs, ringSamples: 2 ** logSamples, sampleBytes };
}
