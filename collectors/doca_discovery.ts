/**
 * DOCA discovery: which of the Telemetry Diag counters the agent knows by
 * name a device supports, their current values, and what one read costs.
 * The device is opened, configured and shut down by the collector's own
 * steps (collectors/doca_session.ts), so discovery fails where and as a
 * run would.
 *
 * @module
 */

import { formatU64 } from "../base/u64.ts";
import { docaCounterIds } from "../config/doca_counters.ts";
import { DocaError, FORMAT_1_HEADER_BYTES } from "../ffi/doca.ts";
import {
  applyCounters,
  checkDiagCaps,
  closeDiagSession,
  createDiag,
  type DiagSession,
  docaFailure,
  openDiagSession,
  probeDataIds,
  startDiag,
} from "./doca_session.ts";

/** One known counter on the device. */
export interface DocaCounterReport {
  /** e.g. `rx_bytes{port=0}`. */
  readonly name: string;
  /** `0x` and 16 lowercase hex digits. */
  readonly dataId: string;
  /** What it counts. */
  readonly meaning: string;
  /** Whether the device supports it; undefined where the library cannot say. */
  readonly supported: boolean | undefined;
  /** Decimal u64, when read */
  readonly value?: string;
}

/** What {@linkcode discoverDocaCounters} found on a device. */
export interface DocaDiscovery {
  /** As DOCA describes it: PCI address (ibdev, iface). */
  readonly device: string;
  /** The library could say which are supported (it has check_data_id). */
  readonly checked: boolean;
  /**
   * Every known counter of the ports asked for, in table order. A
   * supported one without a value was left unread: past the device's
   * {@linkcode DocaDiscovery.maxDataIds}.
   */
  readonly counters: readonly DocaCounterReport[];
  /** ns for one query_counters of the supported counters, when read */
  readonly readNs?: number;
  /** Data IDs the device samples at once. */
  readonly maxDataIds: number;
}

/** Sample period while discovering, ns: the reference's default. */
const DISCOVERY_PERIOD_NS = 100_000;
/**
 * log2 of the device ring while discovering: 1024 samples, 100 ms at the
 * period above, so the first sample is still there when a busy host reads
 * late (the value reported is the first sample's).
 */
const DISCOVERY_LOG_SAMPLES = 10;
/** How long to wait for the first sample before giving up, ms. */
const FIRST_SAMPLE_TIMEOUT_MS = 2_000;

/**
 * Opens `device` as the DOCA collector does, asks it (with
 * check_data_id) which of the counters the agent knows by name for
 * `ports` (default 0 and 1) it supports, samples the supported ones (the
 * first {@linkcode DocaDiscovery.maxDataIds} in table order; the rest are
 * reported unread) once for their values and the cost of one
 * query_counters, and shuts the device down in order. Where the library
 * has no check_data_id, nothing is probed or read: every counter's
 * `supported` is undefined. Throws an Error with a one-line message (no
 * libraries, no such device, a device without Telemetry Diag, a context
 * in use) having released what it had acquired.
 *
 * @example Without the DOCA libraries, one line saying where it looked
 * ```ts
 * import assert from "node:assert/strict";
 * import { discoverDocaCounters } from "./doca_discovery.ts";
 *
 * assert.throws(
 *   () => discoverDocaCounters({ device: "03:00.0", libDir: "/nonexistent-doca-dir" }),
 *   /^Error: Cannot start DOCA source: libdoca_common not found \(looked in \/nonexistent-doca-dir, /,
 * );
 * ```
 *
 * @example On a device
 * ```ts ignore
 * const found = discoverDocaCounters({ device: "03:00.0" });
 * for (const c of found.counters) console.log(c.name, c.supported, c.value ?? "");
 * ```
 */
export function discoverDocaCounters(
  options: { device: string; libDir?: string; ports?: readonly number[] },
): DocaDiscovery {
  const session = openDiagSession(options.device, options.libDir);
  let found: DocaDiscovery;
  try {
    found = discover(session, options.ports ?? [0, 1]);
  } catch (error) {
    closeDiagSession(session);
    throw error;
  }
  const problems = closeDiagSession(session);
  if (problems.length > 0) {
    throw new Error(
      `Cannot shut DOCA source ${found.device} down cleanly after discovery: ${
        problems.join("; ")
      }`,
    );
  }
  return found;
}

function discover(
  session: DiagSession,
  ports: readonly number[],
): DocaDiscovery {
  const caps = checkDiagCaps(session);
  createDiag(session, {
    forceOwnership: false,
    samplePeriodNs: DISCOVERY_PERIOD_NS,
    logSamples: Math.min(DISCOVERY_LOG_SAMPLES, caps.logMaxSamples),
    maxDataIds: caps.maxDataIds,
  });
  const known = docaCounterIds(ports);
  const supported = probeDataIds(
    session,
    known.map((c) => BigInt(c.dataId)),
  );
  const base = {
    device: session.deviceName,
    checked: supported !== undefined,
    maxDataIds: caps.maxDataIds,
  };
  const read = supported === undefined
    ? []
    : known.filter((_, i) => supported[i]).slice(0, caps.maxDataIds);
  if (read.length === 0) {
    return {
      ...base,
      counters: known.map((c, i) => ({ ...c, supported: supported?.[i] })),
    };
  }
  applyCounters(session, read);
  const sampleBytes = startDiag(session, read.length);
  const { words, readNs } = firstSample(session, sampleBytes);
  const values = new Map<string, string>();
  read.forEach((c, j) => {
    const at = FORMAT_1_HEADER_BYTES / 4 + 2 * j;
    values.set(c.dataId, formatU64(words[at], words[at + 1]));
  });
  return {
    ...base,
    counters: known.map((c, i) => {
      const value = values.get(c.dataId);
      return value === undefined
        ? { ...c, supported: supported![i] }
        : { ...c, supported: supported![i], value };
    }),
    readNs,
  };
}

/**
 * Queries until the device holds a sample (the first after start), and
 * times the query that returned it. Synchronous: the first sample is one
 * period away.
 */
function firstSample(
  session: DiagSession,
  sampleBytes: number,
): { words: Uint32Array; readNs: number } {
  const buffer = new Uint8Array(sampleBytes);
  const count = new Uint32Array(1);
  const query = session.telemetry.symbols.doca_telemetry_diag_query_counters;
  const deadline = performance.now() + FIRST_SAMPLE_TIMEOUT_MS;
  for (;;) {
    count[0] = 0;
    const before = performance.now();
    const status = query(session.diag, buffer, 1, count);
    const readNs = Math.round((performance.now() - before) * 1e6);
    if (
      (status === DocaError.SUCCESS || status === DocaError.SKIPPED) &&
      count[0] > 0
    ) {
      return { words: new Uint32Array(buffer.buffer), readNs };
    }
    if (
      status !== DocaError.SUCCESS && status !== DocaError.SKIPPED &&
      status !== DocaError.AGAIN && status !== DocaError.TIME_OUT
    ) {
      throw docaFailure(
        `Cannot read DOCA source ${session.deviceName}: query_counters failed`,
        session.common,
        status,
      );
    }
    if (performance.now() > deadline) {
      throw new Error(
        `Cannot read DOCA source ${session.deviceName}: no sample in ${
          FIRST_SAMPLE_TIMEOUT_MS / 1000
        } s at a ${DISCOVERY_PERIOD_NS / 1000} µs period`,
      );
    }
  }
}
