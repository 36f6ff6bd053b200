/**
 * The DOCA Telemetry Diag collector: finds the NIC, checks what it can do,
 * configures the diag context as the reference application does, drains
 * samples into the monitor's ring, and shuts the device down in order.
 * All policy (which errors are transient, what a message says) is here;
 * ffi/doca.ts only declares and decodes.
 *
 * @module
 */

import type { ColumnConfig } from "../config/types.ts";
import {
  COMMON_SYMBOLS,
  decodeFormat1Sample,
  type DocaCommon,
  DocaError,
  docaErrorDescription,
  docaErrorName,
  type DocaTelemetry,
  FORMAT_1_HEADER_BYTES,
  IBDEV_NAME_SIZE,
  IFACE_NAME_SIZE,
  OutputFormat,
  PCI_ADDR_SIZE,
  SampleMode,
  SyncMode,
  TELEMETRY_SYMBOLS,
  TimestampSource,
} from "../ffi/doca.ts";
import { cStringFromBuffer, toCString } from "../ffi/library.ts";
import { libraryPaths, openFirst } from "../ffi/library.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import type { Collector } from "./collector.ts";
import { PollStats } from "./poll_stats.ts";
import { formatDuration } from "../base/units.ts";

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
}

/** Counters about the device side of sampling. */
export interface DocaStats {
  /** query_counters calls made. */
  readonly polls: number;
  /** Samples lost by the device (sample_id gaps), SKIPPED or not. */
  readonly droppedSamples: number;
  /** Polls that returned DOCA_ERROR_SKIPPED (valid data after a gap). */
  readonly skippedPolls: number;
  /** Current wait between polls, ms. */
  readonly pollIntervalMs: number;
}

/** Sonames tried for each DOCA library, newest ABI first. */
export const DOCA_SONAME_SUFFIXES: readonly string[] = [
  ".so.3",
  ".so.2",
  ".so",
];
const PCI_ADDRESS = /^([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i;
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

/** Standard install locations, newest layout first. */
export function docaLibraryDirs(
  libDir?: string,
  env = Deno.env.get("DOCA_LIB_DIR"),
): string[] {
  const arch = Deno.build.arch === "aarch64" ? "aarch64" : "x86_64";
  const dirs = [
    `/opt/mellanox/doca/lib/${arch}-linux-gnu`,
    "/opt/mellanox/doca/lib64",
  ];
  if (env) dirs.unshift(env);
  if (libDir) dirs.unshift(libDir);
  return dirs;
}

function fail(what: string, common: DocaCommon | null, code: number): Error {
  const description = docaErrorDescription(common, code);
  return new Error(
    `${what}: ${docaErrorName(common, code)}${
      description ? ` (${description})` : ""
    }`,
  );
}

/** A configured, started diag context and what the device agreed to. */
interface DiagSession {
  dev: Deno.PointerValue;
  diag: Deno.PointerValue;
  started: boolean;
  /** The device as DOCA lists it. */
  deviceName: string;
  samplePeriodNs: number;
  ringSamples: number;
  sampleBytes: number;
}

/**
 * Samples one NIC through DOCA Telemetry Diag.
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
  /** The poll loop's health. */
  readonly pollStats: PollStats = new PollStats();
  /** Where the libraries were loaded from. */
  readonly libraries: readonly string[];
  /** The device as DOCA lists it: PCIe address (ibdev, iface). */
  readonly deviceName: string;
  /** Sample period the device actually uses, ns. */
  readonly samplePeriodNs: number;
  /** Samples the device ring holds (2^log_max_num_samples). */
  readonly deviceRingSamples: number;
  readonly #common: DocaCommon;
  readonly #telemetry: DocaTelemetry;
  readonly #session: DiagSession;
  readonly #columns: number;
  // Query buffer and its word view, allocated once.
  readonly #buffer: Uint8Array<ArrayBuffer>;
  readonly #words: Uint32Array;
  readonly #sampleWords: number;
  readonly #count = new Uint32Array(1);
  readonly #maxIntervalMs: number;
  readonly #warn: ((message: string) => void) | undefined;
  #intervalMs: number;
  #closed = false;
  #lastSampleId = -1;
  #polls = 0;
  #dropped = 0;
  #skippedPolls = 0;

  private constructor(
    common: DocaCommon,
    telemetry: DocaTelemetry,
    libraries: string[],
    session: DiagSession,
    columns: number,
    warn: ((message: string) => void) | undefined,
  ) {
    this.#common = common;
    this.#warn = warn;
    this.#telemetry = telemetry;
    this.libraries = libraries;
    this.#session = session;
    this.#columns = columns;
    this.deviceName = session.deviceName;
    this.samplePeriodNs = session.samplePeriodNs;
    this.deviceRingSamples = session.ringSamples;
    this.#buffer = new Uint8Array(session.sampleBytes * session.ringSamples);
    this.#words = new Uint32Array(this.#buffer.buffer);
    this.#sampleWords = session.sampleBytes / 4;
    // Polling when the device ring is a quarter full keeps it under half
    // full with room for a late timer, without a wake-up per sample.
    const ringMs = session.ringSamples * session.samplePeriodNs / 1e6;
    this.#maxIntervalMs = Math.max(MIN_POLL_MS, ringMs / 2);
    this.#intervalMs = Math.max(MIN_POLL_MS, ringMs / 4);
  }

  /**
   * Loads the libraries, opens the device, checks its capabilities,
   * configures and starts sampling as the reference does. Throws an Error
   * with a one-line message on any failure, having released whatever it
   * had acquired.
   */
  static open(options: DocaOptions): DocaCollector {
    const dirs = docaLibraryDirs(options.libDir);
    const common = openFirst(
      libraryPaths("libdoca_common", dirs, DOCA_SONAME_SUFFIXES),
      COMMON_SYMBOLS,
    );
    if (common === null) {
      throw new Error(
        `Cannot start DOCA source: libdoca_common not found (looked in ${
          dirs.join(", ")
        }); ` +
          "install the DOCA SDK runtime, point DOCA_LIB_DIR or --doca-lib-dir at it, " +
          "or run with --source sim",
      );
    }
    let telemetry;
    try {
      // Telemetry from common's directory first: the two must be one release.
      const commonDir = common.path.slice(0, common.path.lastIndexOf("/"));
      const telemetryDirs = [commonDir, ...dirs.filter((d) => d !== commonDir)];
      telemetry = openFirst(
        libraryPaths("libdoca_telemetry", telemetryDirs, DOCA_SONAME_SUFFIXES),
        TELEMETRY_SYMBOLS,
      );
      if (telemetry === null) {
        throw new Error(
          `Cannot start DOCA source: libdoca_telemetry not found (looked in ${
            telemetryDirs.join(", ")
          }); ` +
            "install DOCA's telemetry library or run with --source sim",
        );
      }
    } catch (error) {
      common.library.close();
      throw error;
    }
    const session: DiagSession = {
      dev: null,
      diag: null,
      started: false,
      deviceName: options.device,
      samplePeriodNs: options.samplePeriodNs,
      ringSamples: 0,
      sampleBytes: 0,
    };
    try {
      configure(common.library, telemetry.library, session, options);
    } catch (error) {
      shutDown(common.library, telemetry.library, session);
      telemetry.library.close();
      common.library.close();
      throw error;
    }
    return new DocaCollector(
      common.library,
      telemetry.library,
      [common.path, telemetry.path],
      session,
      options.columns.length,
      options.warn,
    );
  }

  /** Device-side counters, for health reporting (retried errors by name are in pollStats). */
  get stats(): DocaStats {
    return {
      polls: this.#polls,
      droppedSamples: this.#dropped,
      skippedPolls: this.#skippedPolls,
      pollIntervalMs: this.#intervalMs,
    };
  }

  /**
   * Polls until `signal` aborts. Each poll drains the device in one
   * query_counters call; the wait between polls adapts so the device ring
   * stays under half full. Rejects on a non-transient DOCA error, and
   * after {@linkcode MAX_TRANSIENT_FAILURES} transient ones in a row
   * (retried after {@linkcode transientRetryMs}). At
   * {@linkcode WARN_TRANSIENT_FAILURES} in a row it warns (at most once a
   * minute) that the source keeps failing, and warns again once it works.
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (sink.columns !== this.#columns) {
      return Promise.reject(
        new RangeError(
          `Cannot run DOCA source: the monitor has ${sink.columns} columns, the device ${this.#columns}`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let failures = 0;
      let failingSince = 0; // performance.now() at the first of them
      let warned = false; // about the failures going on now
      let lastWarnMs = -Infinity;
      const failingFor = () =>
        formatDuration((performance.now() - failingSince) / 1000);
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", stop, { once: true });
      let due = performance.now();
      const poll = () => {
        this.pollStats.recordPoll(performance.now() - due);
        let status: number;
        try {
          status = this.poll(sink);
        } catch (error) {
          signal.removeEventListener("abort", stop);
          return reject(error);
        }
        let wait = this.#intervalMs;
        if (status === DocaError.AGAIN || status === DocaError.TIME_OUT) {
          const name = docaErrorName(this.#common, status);
          this.pollStats.recordError(name);
          if (++failures === 1) failingSince = performance.now();
          if (failures >= MAX_TRANSIENT_FAILURES) {
            signal.removeEventListener("abort", stop);
            return reject(fail(
              `DOCA source ${this.deviceName}: gave up after query_counters failed ${failures} times in a row over ${failingFor()}`,
              this.#common,
              status,
            ));
          }
          // Said long before the run ends: an operator watching the
          // journal learns at once why no samples come.
          if (
            failures === WARN_TRANSIENT_FAILURES &&
            performance.now() - lastWarnMs >= RETRY_WARN_INTERVAL_MS
          ) {
            warned = true;
            lastWarnMs = performance.now();
            this.#warn?.(
              `DOCA source ${this.deviceName}: query_counters has failed ${failures} times in a row (${name}) over ${failingFor()}; ` +
                `retrying every second, giving up after ${MAX_TRANSIENT_FAILURES} in a row`,
            );
          }
          wait = transientRetryMs(failures);
        } else if (
          status !== DocaError.SUCCESS && status !== DocaError.SKIPPED
        ) {
          this.pollStats.recordError(docaErrorName(this.#common, status));
          signal.removeEventListener("abort", stop);
          return reject(
            fail(
              `DOCA source ${this.deviceName}: query_counters failed`,
              this.#common,
              status,
            ),
          );
        } else {
          if (warned) {
            this.#warn?.(
              `DOCA source ${this.deviceName}: query_counters works again after ${failures} failures in a row over ${failingFor()}`,
            );
            warned = false;
          }
          failures = 0;
        }
        due = performance.now() + wait;
        timer = setTimeout(poll, wait);
      };
      poll();
    });
  }

  /**
   * One drain of the device into `sink`. Returns the DOCA status: SUCCESS
   * or SKIPPED (data delivered, gap counted) or an error (nothing
   * delivered). Adjusts the poll interval from how full the ring was.
   */
  poll(sink: SampleSink): number {
    const count = this.#count;
    count[0] = 0;
    this.#polls++;
    const status = this.#telemetry.symbols.doca_telemetry_diag_query_counters(
      this.#session.diag,
      this.#buffer,
      this.deviceRingSamples,
      count,
    );
    if (status === DocaError.SKIPPED) this.#skippedPolls++;
    else if (status !== DocaError.SUCCESS) return status;
    const n = count[0];
    this.pollStats.recordBatch(n, this.deviceRingSamples);
    const words = this.#words;
    const stride = this.#sampleWords;
    const columns = this.#columns;
    for (let i = 0, src = 0; i < n; i++, src += stride) {
      const id = words[src];
      if (this.#lastSampleId >= 0) {
        // sample_id is a u32 that wraps; anything but +1 is a gap.
        const lost = (id - this.#lastSampleId - 1) >>> 0;
        if (lost !== 0) {
          this.#dropped += lost;
          sink.gap(lost);
        }
      }
      this.#lastSampleId = id;
      const at = sink.claim();
      decodeFormat1Sample(words, src, columns, true, sink.words, at);
      sink.commit();
    }
    this.#adapt(n);
    return status;
  }

  // Fuller than half: poll twice as often; under an eighth: back off.
  #adapt(samples: number): void {
    const ring = this.deviceRingSamples;
    if (samples > ring / 2) {
      this.#intervalMs = Math.max(MIN_POLL_MS, this.#intervalMs / 2);
    } else if (samples < ring / 8) {
      this.#intervalMs = Math.min(this.#maxIntervalMs, this.#intervalMs * 1.25);
    }
  }

  /**
   * Stops sampling, destroys the diag context, closes the device, then
   * closes the libraries, in that order. Safe to call more than once.
   * Throws if the device refused a step (the rest is still done).
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const problems = shutDown(this.#common, this.#telemetry, this.#session);
    this.#telemetry.close();
    this.#common.close();
    if (problems.length > 0) {
      throw new Error(
        `Cannot shut DOCA source ${this.deviceName} down cleanly: ${
          problems.join("; ")
        }`,
      );
    }
  }
}

/** Finds the device, opens it, checks caps, configures and starts. */
function configure(
  common: DocaCommon,
  telemetry: DocaTelemetry,
  session: DiagSession,
  options: DocaOptions,
): void {
  const c = common.symbols;
  const t = telemetry.symbols;
  const check = (status: number, what: string) => {
    if (status !== DocaError.SUCCESS) {
      throw fail(
        `Cannot start DOCA source on ${session.deviceName}: ${what}`,
        common,
        status,
      );
    }
  };

  openDevice(common, session, options.device);
  const devinfo = c.doca_dev_as_devinfo(session.dev);
  const name = session.deviceName;

  const supported = t.doca_telemetry_diag_cap_is_supported(devinfo);
  if (supported !== DocaError.SUCCESS) {
    const hint = supported === DocaError.NOT_FOUND
      ? "; is the mlx5_fwctl module loaded (ConnectX-7 or BlueField-3, firmware xx.43.1000 or newer)?"
      : supported === DocaError.OPERATING_SYSTEM ||
          supported === DocaError.NOT_PERMITTED
      ? "; run as root (sudo)"
      : "";
    throw new Error(
      fail(
        `Cannot start DOCA source: ${name} does not support Telemetry Diag`,
        common,
        supported,
      ).message + hint,
    );
  }
  const maxIds = new Uint32Array(1);
  check(
    t.doca_telemetry_diag_cap_get_max_num_data_ids(devinfo, maxIds),
    "reading the data ID limit",
  );
  if (options.columns.length > maxIds[0]) {
    throw new Error(
      `Cannot start DOCA source: ${name} samples at most ${
        maxIds[0]
      } data IDs, the config has ${options.columns.length}`,
    );
  }
  const logMax = new Uint8Array(1);
  check(
    t.doca_telemetry_diag_cap_get_log_max_num_samples(devinfo, logMax),
    "reading the sample limit",
  );
  const flag = new Uint8Array(1);
  check(
    t.doca_telemetry_diag_cap_is_sample_mode_supported(
      devinfo,
      SampleMode.REPETITIVE,
      flag,
    ),
    "reading the sample modes",
  );
  if (flag[0] === 0) {
    throw new Error(
      `Cannot start DOCA source: ${name} does not support repetitive sampling`,
    );
  }
  check(
    t.doca_telemetry_diag_cap_is_data_timestamp_source_supported(
      devinfo,
      TimestampSource.RTC,
      flag,
    ),
    "reading the timestamp sources",
  );
  if (flag[0] === 0) {
    throw new Error(
      `Cannot start DOCA source: ${name} has no real-time-clock (RTC) timestamps; set the NIC clock to RTC in firmware`,
    );
  }

  const out = new BigUint64Array(1);
  const created = t.doca_telemetry_diag_create(
    session.dev,
    options.forceOwnership ? 1 : 0,
    out,
  );
  if (created === DocaError.IN_USE) {
    throw new Error(
      `Cannot start DOCA source: the diag context of ${name} is in use by another program; ` +
        "stop it, or take it over with --force-ownership",
    );
  }
  check(created, "creating the diag context");
  session.diag = Deno.UnsafePointer.create(out[0]);
  const d = session.diag;

  // The reference sizes the device ring from the depth because it polls
  // every sample period. We poll every few milliseconds, so the ring also
  // holds at least RING_MIN_MS of samples, where the device allows.
  const wanted = Math.max(
    options.depth,
    RING_MIN_MS * 1e6 / options.samplePeriodNs,
  );
  const logSamples = Math.max(
    1,
    Math.min(Math.ceil(Math.log2(wanted)), logMax[0]),
  );
  check(
    t.doca_telemetry_diag_set_output_format(d, OutputFormat.FORMAT_1),
    "setting the output format",
  );
  check(
    t.doca_telemetry_diag_set_sample_period(d, BigInt(options.samplePeriodNs)),
    "setting the sample period",
  );
  check(
    t.doca_telemetry_diag_set_log_max_num_samples(d, logSamples),
    "setting the device ring size",
  );
  check(
    t.doca_telemetry_diag_set_max_num_data_ids(d, options.columns.length),
    "setting the data ID count",
  );
  check(
    t.doca_telemetry_diag_set_sync_mode(d, SyncMode.NO_SYNC),
    "setting the sync mode",
  );
  check(
    t.doca_telemetry_diag_set_sample_mode(d, SampleMode.REPETITIVE),
    "setting the sample mode",
  );
  check(t.doca_telemetry_diag_set_data_clear(d, 0), "setting data clear");
  check(
    t.doca_telemetry_diag_set_data_timestamp_source(d, TimestampSource.RTC),
    "setting the timestamp source",
  );
  check(t.doca_telemetry_diag_apply_config(d), "applying the configuration");

  const ids = new BigUint64Array(
    options.columns.map((column) => BigInt(column.dataId)),
  );
  const failed = new BigUint64Array(1);
  const applied = t.doca_telemetry_diag_apply_counters_list_by_id(
    d,
    ids,
    options.columns.length,
    failed,
  );
  if (applied !== DocaError.SUCCESS) {
    const id = `0x${failed[0].toString(16).padStart(16, "0")}`;
    const column = options.columns.find((col) =>
      BigInt(col.dataId) === failed[0]
    );
    const which = column ? `data ID "${column.name}" (${id})` : `data ID ${id}`;
    throw fail(
      `Cannot start DOCA source: ${name} rejected ${which}`,
      common,
      applied,
    );
  }

  const period = new BigUint64Array(1);
  check(
    t.doca_telemetry_diag_get_sample_period(d, period),
    "reading the sample period",
  );
  session.samplePeriodNs = Number(period[0]);
  if (session.samplePeriodNs !== options.samplePeriodNs) {
    options.warn?.(
      `${name} samples every ${
        formatDuration(session.samplePeriodNs / 1e9, { exact: true })
      }, not the ${
        formatDuration(options.samplePeriodNs / 1e9, { exact: true })
      } configured; ` +
        "rule windows count samples, so they span time at the device's period",
    );
  }

  check(t.doca_telemetry_diag_start(d), "starting sampling");
  session.started = true;
  const size = new Uint32Array(1);
  check(
    t.doca_telemetry_diag_get_sample_size(d, size),
    "reading the sample size",
  );
  const expected = FORMAT_1_HEADER_BYTES + 8 * options.columns.length;
  if (size[0] !== expected) {
    throw new Error(
      `Cannot start DOCA source: ${name} reports ${size[0]}-byte samples, ` +
        `expected ${expected} for ${options.columns.length} data IDs in format 1`,
    );
  }
  session.sampleBytes = expected;
  session.ringSamples = 2 ** logSamples;
}

/** One line per device: address (ibdev, iface), for messages. */
function describeDevinfo(
  common: DocaCommon,
  devinfo: Deno.PointerValue,
): string {
  const c = common.symbols;
  const pci = new Uint8Array(PCI_ADDR_SIZE);
  const ibdev = new Uint8Array(IBDEV_NAME_SIZE);
  const iface = new Uint8Array(IFACE_NAME_SIZE);
  c.doca_devinfo_get_pci_addr_str(devinfo, pci);
  c.doca_devinfo_get_ibdev_name(devinfo, ibdev, IBDEV_NAME_SIZE);
  c.doca_devinfo_get_iface_name(devinfo, iface, IFACE_NAME_SIZE);
  const names = [cStringFromBuffer(ibdev), cStringFromBuffer(iface)].filter((
    n,
  ) => n !== "");
  return `${cStringFromBuffer(pci)}${
    names.length ? ` (${names.join(", ")})` : ""
  }`;
}

/**
 * Opens the device `wanted` names (PCIe address in either form, IB device
 * or interface name) into `session.dev`. The list is destroyed after the
 * open, as DOCA's samples do: its entries die with it.
 */
function openDevice(
  common: DocaCommon,
  session: DiagSession,
  wanted: string,
): void {
  const c = common.symbols;
  const listOut = new BigUint64Array(1);
  const countOut = new Uint32Array(1);
  const listed = c.doca_devinfo_create_list(listOut, countOut);
  if (listed !== DocaError.SUCCESS) {
    throw fail("Cannot start DOCA source: listing devices", common, listed);
  }
  const list = Deno.UnsafePointer.create(listOut[0]);
  try {
    const view = new Deno.UnsafePointerView(list!);
    const byPci = PCI_ADDRESS.test(wanted);
    const wantedC = toCString(wanted);
    const equal = new Uint8Array(1);
    const found: string[] = [];
    for (let i = 0; i < countOut[0]; i++) {
      const devinfo = view.getPointer(i * 8);
      const description = describeDevinfo(common, devinfo);
      found.push(description);
      let match = false;
      if (byPci) {
        match = c.doca_devinfo_is_equal_pci_addr(devinfo, wantedC, equal) ===
            DocaError.SUCCESS &&
          equal[0] === 1;
      } else {
        const ibdev = new Uint8Array(IBDEV_NAME_SIZE);
        const iface = new Uint8Array(IFACE_NAME_SIZE);
        c.doca_devinfo_get_ibdev_name(devinfo, ibdev, IBDEV_NAME_SIZE);
        c.doca_devinfo_get_iface_name(devinfo, iface, IFACE_NAME_SIZE);
        match = cStringFromBuffer(ibdev) === wanted ||
          cStringFromBuffer(iface) === wanted;
      }
      if (!match) continue;
      const devOut = new BigUint64Array(1);
      const opened = c.doca_dev_open(devinfo, devOut);
      if (opened !== DocaError.SUCCESS) {
        throw fail(
          `Cannot start DOCA source: opening ${description}`,
          common,
          opened,
        );
      }
      session.dev = Deno.UnsafePointer.create(devOut[0]);
      session.deviceName = description;
      return;
    }
    throw new Error(
      `Cannot start DOCA source: no device matches "${wanted}"; found ${
        found.length ? found.join(", ") : "no DOCA devices"
      }`,
    );
  } finally {
    c.doca_devinfo_destroy_list(list);
  }
}

/**
 * Stop, destroy, close the device: each only if it was reached, each
 * attempted even if an earlier one failed. Returns what went wrong.
 */
function shutDown(
  common: DocaCommon,
  telemetry: DocaTelemetry,
  session: DiagSession,
): string[] {
  const problems: string[] = [];
  const t = telemetry.symbols;
  const step = (status: number, what: string) => {
    if (status !== DocaError.SUCCESS) {
      problems.push(`${what}: ${docaErrorName(common, status)}`);
    }
  };
  if (session.started) {
    step(t.doca_telemetry_diag_stop(session.diag), "stop");
    session.started = false;
  }
  if (session.diag !== null) {
    step(t.doca_telemetry_diag_destroy(session.diag), "destroy");
    session.diag = null;
  }
  if (session.dev !== null) {
    step(common.symbols.doca_dev_close(session.dev), "close");
    session.dev = null;
  }
  return problems;
}
