/**
 * One DOCA Telemetry Diag session, step by step: load the libraries, open
 * the device, check its capabilities, create and configure the diag
 * context, check and apply the data IDs, start, and shut down in order.
 * The collector (collectors/doca.ts) and discovery
 * (collectors/doca_discovery.ts) run the same steps, so a device is opened,
 * refused and released the same way by both; each step throws an Error
 * with a one-line message.
 *
 * @module
 */

import { docaCounterIds, docaCounterName } from "../config/doca_counters.ts";
import { nearest } from "../config/suggest.ts";
import type { ColumnConfig } from "../config/types.ts";
import {
  COMMON_SYMBOLS,
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
import {
  cStringFromBuffer,
  libraryPaths,
  openFirst,
  toCString,
} from "../ffi/library.ts";

/** Sonames tried for each DOCA library, newest ABI first. */
export const DOCA_SONAME_SUFFIXES: readonly string[] = [
  ".so.3",
  ".so.2",
  ".so",
];
const PCI_ADDRESS = /^([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i;
/** Ports whose known counters are probed to suggest supported names. */
const SUGGESTION_PORTS: readonly number[] = [0, 1];
/** Supported names a refused column's message offers at most. */
const MAX_SUGGESTIONS = 3;

/**
 * A DOCA source that cannot start for a reason outside its configuration:
 * no DOCA libraries on this host, or another program holding the device's
 * diag context. `run` stops on it like on any error; `check-config` says
 * the counters were not checked and goes on. Its name stays "Error" so
 * that it prints as every other start failure.
 */
export class DocaUnavailableError extends Error {}

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

/** `what: DOCA_ERROR_NAME (description)` as an Error. */
export function docaFailure(
  what: string,
  common: DocaCommon | null,
  code: number,
): Error {
  const description = docaErrorDescription(common, code);
  return new Error(
    `${what}: ${docaErrorName(common, code)}${
      description ? ` (${description})` : ""
    }`,
  );
}

/** The libraries, the open device and its diag context, as far as reached. */
export interface DiagSession {
  readonly common: DocaCommon;
  readonly telemetry: DocaTelemetry;
  /** Where the libraries were loaded from. */
  readonly libraries: readonly string[];
  dev: Deno.PointerValue;
  diag: Deno.PointerValue;
  started: boolean;
  /** The device as DOCA lists it: PCIe address (ibdev, iface). */
  deviceName: string;
}

/** What the device can do, from its capabilities. */
export interface DiagCaps {
  /** Data IDs one context samples at most. */
  readonly maxDataIds: number;
  /** log2 of the samples the device ring holds at most. */
  readonly logMaxSamples: number;
}

/** The properties set before apply_config. */
export interface DiagProperties {
  readonly forceOwnership: boolean;
  readonly samplePeriodNs: number;
  readonly logSamples: number;
  readonly maxDataIds: number;
}

/**
 * Loads the libraries and opens the device `device` names (PCIe address
 * in either form, IB device or interface name). Throws a one-line Error
 * ({@linkcode DocaUnavailableError} when the libraries are missing),
 * having released what it had acquired.
 */
export function openDiagSession(
  device: string,
  libDir?: string,
): DiagSession {
  const dirs = docaLibraryDirs(libDir);
  const common = openFirst(
    libraryPaths("libdoca_common", dirs, DOCA_SONAME_SUFFIXES),
    COMMON_SYMBOLS,
  );
  if (common === null) {
    throw new DocaUnavailableError(
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
      throw new DocaUnavailableError(
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
    common: common.library,
    telemetry: telemetry.library,
    libraries: [common.path, telemetry.path],
    dev: null,
    diag: null,
    started: false,
    deviceName: device,
  };
  try {
    openDevice(session, device);
  } catch (error) {
    closeDiagSession(session);
    throw error;
  }
  return session;
}

/**
 * Checks that the device does Telemetry Diag with repetitive sampling and
 * RTC timestamps, as the collector needs, and reads its limits.
 */
export function checkDiagCaps(session: DiagSession): DiagCaps {
  const { common } = session;
  const c = common.symbols;
  const t = session.telemetry.symbols;
  const name = session.deviceName;
  const devinfo = c.doca_dev_as_devinfo(session.dev);
  const supported = t.doca_telemetry_diag_cap_is_supported(devinfo);
  if (supported !== DocaError.SUCCESS) {
    const hint = supported === DocaError.NOT_FOUND
      ? "; is the mlx5_fwctl module loaded (ConnectX-7 or BlueField-3, firmware xx.43.1000 or newer)?"
      : supported === DocaError.OPERATING_SYSTEM ||
          supported === DocaError.NOT_PERMITTED
      ? "; run as root (sudo)"
      : "";
    throw new Error(
      docaFailure(
        `Cannot start DOCA source: ${name} does not support Telemetry Diag`,
        common,
        supported,
      ).message + hint,
    );
  }
  const maxIds = new Uint32Array(1);
  check(
    session,
    t.doca_telemetry_diag_cap_get_max_num_data_ids(devinfo, maxIds),
    "reading the data ID limit",
  );
  const logMax = new Uint8Array(1);
  check(
    session,
    t.doca_telemetry_diag_cap_get_log_max_num_samples(devinfo, logMax),
    "reading the sample limit",
  );
  const flag = new Uint8Array(1);
  check(
    session,
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
    session,
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
  return { maxDataIds: maxIds[0], logMaxSamples: logMax[0] };
}

/**
 * Creates the diag context, sets every property as the reference does
 * (FORMAT_1, repetitive, RTC, no sync, no data clear) and applies them.
 * A context held by another program is a {@linkcode DocaUnavailableError}.
 */
export function createDiag(
  session: DiagSession,
  properties: DiagProperties,
): void {
  const t = session.telemetry.symbols;
  const out = new BigUint64Array(1);
  const created = t.doca_telemetry_diag_create(
    session.dev,
    properties.forceOwnership ? 1 : 0,
    out,
  );
  if (created === DocaError.IN_USE) {
    throw new DocaUnavailableError(
      `Cannot start DOCA source: the diag context of ${session.deviceName} is in use by another program; ` +
        "stop it, or take it over with --force-ownership",
    );
  }
  check(session, created, "creating the diag context");
  session.diag = Deno.UnsafePointer.create(out[0]);
  const d = session.diag;
  check(
    session,
    t.doca_telemetry_diag_set_output_format(d, OutputFormat.FORMAT_1),
    "setting the output format",
  );
  check(
    session,
    t.doca_telemetry_diag_set_sample_period(
      d,
      BigInt(properties.samplePeriodNs),
    ),
    "setting the sample period",
  );
  check(
    session,
    t.doca_telemetry_diag_set_log_max_num_samples(d, properties.logSamples),
    "setting the device ring size",
  );
  check(
    session,
    t.doca_telemetry_diag_set_max_num_data_ids(d, properties.maxDataIds),
    "setting the data ID count",
  );
  check(
    session,
    t.doca_telemetry_diag_set_sync_mode(d, SyncMode.NO_SYNC),
    "setting the sync mode",
  );
  check(
    session,
    t.doca_telemetry_diag_set_sample_mode(d, SampleMode.REPETITIVE),
    "setting the sample mode",
  );
  check(
    session,
    t.doca_telemetry_diag_set_data_clear(d, 0),
    "setting data clear",
  );
  check(
    session,
    t.doca_telemetry_diag_set_data_timestamp_source(d, TimestampSource.RTC),
    "setting the timestamp source",
  );
  check(
    session,
    t.doca_telemetry_diag_apply_config(d),
    "applying the configuration",
  );
}

/**
 * Whether the device supports each of `dataIds` (after
 * {@linkcode createDiag}), or undefined when the library has no
 * check_data_id to ask. Any answer but SUCCESS and NOT_SUPPORTED throws.
 */
export function probeDataIds(
  session: DiagSession,
  dataIds: readonly bigint[],
): boolean[] | undefined {
  const checkId = session.telemetry.symbols.doca_telemetry_diag_check_data_id;
  if (checkId === null) return undefined;
  return dataIds.map((id) => {
    const status = checkId(session.diag, id);
    if (status === DocaError.NOT_SUPPORTED) return false;
    check(session, status, `checking data ID ${hexId(id)}`);
    return true;
  });
}

/**
 * Refuses, in one line, the first column the device does not support,
 * naming the nearest counters it does support (of those the agent knows
 * by name, on ports 0 and 1). Does nothing where the library cannot say;
 * apply_counters_list_by_id refuses such a column then.
 */
export function refuseUnsupportedColumns(
  session: DiagSession,
  columns: readonly ColumnConfig[],
): void {
  const ids = columns.map((column) => BigInt(column.dataId));
  const supported = probeDataIds(session, ids);
  const at = supported?.indexOf(false) ?? -1;
  if (at < 0) return;
  const column = columns[at];
  const known = docaCounterName(hexId(ids[at]));
  const candidates = docaCounterIds(SUGGESTION_PORTS);
  const answers = probeDataIds(
    session,
    candidates.map((c) => BigInt(c.dataId)),
  )!;
  const offered = candidates.filter((_, i) => answers[i]);
  const near = nearestCounters(known, hexId(ids[at]), offered);
  throw new Error(
    `Cannot start DOCA source on ${session.deviceName}: column "${column.name}" (${
      describeId(ids[at])
    }) is not supported by this device; ${
      near.length > 0
        ? `it supports ${near.join(", ")}`
        : `it supports none of the ${candidates.length} counters the agent knows by name`
    }`,
  );
}

/**
 * The supported counters nearest a refused one: by name when it has a
 * known name and some are near it, else those whose data IDs share the
 * longest leading digits with it (same counter, then same group).
 */
function nearestCounters(
  name: string | undefined,
  dataId: string,
  offered: readonly { name: string; dataId: string }[],
): string[] {
  if (name !== undefined) {
    const near = nearest(name, offered.map((c) => c.name), MAX_SUGGESTIONS);
    if (near.length > 0) return near;
  }
  const shared = (other: string) => {
    let n = 0;
    while (n < dataId.length && dataId[n] === other[n]) n++;
    return n;
  };
  return offered
    .map((c, i) => ({ name: c.name, i, n: shared(c.dataId) }))
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .slice(0, MAX_SUGGESTIONS)
    .map((c) => c.name);
}

/**
 * Applies the columns' data IDs. A refusal names the data ID the device
 * gave back, with its column and known name where there are.
 */
export function applyCounters(
  session: DiagSession,
  columns: readonly ColumnConfig[],
): void {
  const ids = new BigUint64Array(
    columns.map((column) => BigInt(column.dataId)),
  );
  const failed = new BigUint64Array(1);
  const applied = session.telemetry.symbols
    .doca_telemetry_diag_apply_counters_list_by_id(
      session.diag,
      ids,
      columns.length,
      failed,
    );
  if (applied !== DocaError.SUCCESS) {
    const column = columns.find((col) => BigInt(col.dataId) === failed[0]);
    const described = describeId(failed[0]);
    const which = column
      ? `data ID "${column.name}" (${described})`
      : `data ID ${described}`;
    throw docaFailure(
      `Cannot start DOCA source: ${session.deviceName} rejected ${which}`,
      session.common,
      applied,
    );
  }
}

/** The sample period the device settled on, ns (after apply_config). */
export function readSamplePeriod(session: DiagSession): number {
  const period = new BigUint64Array(1);
  check(
    session,
    session.telemetry.symbols.doca_telemetry_diag_get_sample_period(
      session.diag,
      period,
    ),
    "reading the sample period",
  );
  return Number(period[0]);
}

/**
 * Starts sampling and checks the sample size is FORMAT_1's for `columns`
 * data IDs; returns it in bytes.
 */
export function startDiag(session: DiagSession, columns: number): number {
  const t = session.telemetry.symbols;
  check(
    session,
    t.doca_telemetry_diag_start(session.diag),
    "starting sampling",
  );
  session.started = true;
  const size = new Uint32Array(1);
  check(
    session,
    t.doca_telemetry_diag_get_sample_size(session.diag, size),
    "reading the sample size",
  );
  const expected = FORMAT_1_HEADER_BYTES + 8 * columns;
  if (size[0] !== expected) {
    throw new Error(
      `Cannot start DOCA source: ${session.deviceName} reports ${
        size[0]
      }-byte samples, ` +
        `expected ${expected} for ${columns} data IDs in format 1`,
    );
  }
  return expected;
}

/**
 * Stop, destroy, close the device: each only if it was reached, each
 * attempted even if an earlier one failed; then closes the libraries.
 * Returns what went wrong.
 */
export function closeDiagSession(session: DiagSession): string[] {
  const problems: string[] = [];
  const t = session.telemetry.symbols;
  const step = (status: number, what: string) => {
    if (status !== DocaError.SUCCESS) {
      problems.push(`${what}: ${docaErrorName(session.common, status)}`);
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
    step(session.common.symbols.doca_dev_close(session.dev), "close");
    session.dev = null;
  }
  session.telemetry.close();
  session.common.close();
  return problems;
}

/** `0x` and 16 lowercase hex digits. */
function hexId(id: bigint): string {
  return `0x${id.toString(16).padStart(16, "0")}`;
}

/** `name, 0x...` for a known data ID, else `0x...`. */
function describeId(id: bigint): string {
  const hex = hexId(id);
  const name = docaCounterName(hex);
  return name === undefined ? hex : `${name}, ${hex}`;
}

function check(session: DiagSession, status: number, what: string): void {
  if (status !== DocaError.SUCCESS) {
    throw docaFailure(
      `Cannot start DOCA source on ${session.deviceName}: ${what}`,
      session.common,
      status,
    );
  }
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
 * Opens the device `wanted` names into `session.dev`. The list is
 * destroyed after the open, as DOCA's samples do: its entries die with it.
 */
function openDevice(session: DiagSession, wanted: string): void {
  const common = session.common;
  const c = common.symbols;
  const listOut = new BigUint64Array(1);
  const countOut = new Uint32Array(1);
  const listed = c.doca_devinfo_create_list(listOut, countOut);
  if (listed !== DocaError.SUCCESS) {
    throw docaFailure(
      "Cannot start DOCA source: listing devices",
      common,
      listed,
    );
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
        throw docaFailure(
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
