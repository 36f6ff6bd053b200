/**
 * Deno FFI declarations for DOCA's libdoca_common and libdoca_telemetry
 * (Telemetry Diag), the constants they use, and the decoding of diag
 * samples. Declarations and decoding only: retries, what an error means
 * and in which order to call things live in collectors/doca.ts.
 *
 * ABI facts: docs/spec/doca-nvml-abi.md §1-2.
 *
 * @module
 */

import { mulAdd1e9U64 } from "../base/u64.ts";
import { readCString } from "./library.ts";

/** `doca_error_t` codes the agent acts on (DOCA 3.0 numbering). */
export const DocaError = {
  SUCCESS: 0,
  NOT_PERMITTED: 2,
  IN_USE: 3,
  NOT_SUPPORTED: 4,
  AGAIN: 5,
  INVALID_VALUE: 6,
  TIME_OUT: 9,
  NOT_FOUND: 16,
  BAD_STATE: 18,
  OPERATING_SYSTEM: 20,
  DRIVER: 21,
  SKIPPED: 30,
} as const;

/** Every code DOCA 3.0 defines, for messages when the library cannot name one. */
const DOCA_ERROR_NAMES: readonly string[] = [
  "SUCCESS",
  "UNKNOWN",
  "NOT_PERMITTED",
  "IN_USE",
  "NOT_SUPPORTED",
  "AGAIN",
  "INVALID_VALUE",
  "NO_MEMORY",
  "INITIALIZATION",
  "TIME_OUT",
  "SHUTDOWN",
  "CONNECTION_RESET",
  "CONNECTION_ABORTED",
  "CONNECTION_INPROGRESS",
  "NOT_CONNECTED",
  "NO_LOCK",
  "NOT_FOUND",
  "IO_FAILED",
  "BAD_STATE",
  "UNSUPPORTED_VERSION",
  "OPERATING_SYSTEM",
  "DRIVER",
  "UNEXPECTED",
  "ALREADY_EXIST",
  "FULL",
  "EMPTY",
  "IN_PROGRESS",
  "TOO_BIG",
  "AUTHENTICATION",
  "BAD_CONFIG",
  "SKIPPED",
].map((name) => `DOCA_ERROR_${name}`);

/** `enum doca_telemetry_diag_sync_mode`. */
export const SyncMode = { NO_SYNC: 0, SYNC_START: 1 } as const;
/** `enum doca_telemetry_diag_sample_mode`. */
export const SampleMode = { SINGLE: 0, REPETITIVE: 1, ON_DEMAND: 2 } as const;
/** `enum doca_telemetry_diag_timestamp_source`. */
export const TimestampSource = { FRC: 0, RTC: 1 } as const;
/** `enum doca_telemetry_diag_output_format`. */
export const OutputFormat = { FORMAT_0: 0, FORMAT_1: 1, FORMAT_2: 2 } as const;

/** `DOCA_DEVINFO_PCI_ADDR_SIZE`: "XXXX:XX:XX.X" and its NUL. */
export const PCI_ADDR_SIZE = 13;
/** `DOCA_DEVINFO_IBDEV_NAME_SIZE`. */
export const IBDEV_NAME_SIZE = 64;
/** `DOCA_DEVINFO_IFACE_NAME_SIZE`. */
export const IFACE_NAME_SIZE = 256;
/** Bytes of a FORMAT_1 sample before its values. */
export const FORMAT_1_HEADER_BYTES = 16;

/** libdoca_common: devices and error names. */
export const COMMON_SYMBOLS = {
  doca_devinfo_create_list: { parameters: ["buffer", "buffer"], result: "i32" },
  doca_devinfo_destroy_list: { parameters: ["pointer"], result: "i32" },
  doca_devinfo_get_pci_addr_str: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  doca_devinfo_is_equal_pci_addr: {
    parameters: ["pointer", "buffer", "buffer"],
    result: "i32",
  },
  doca_devinfo_get_ibdev_name: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  doca_devinfo_get_iface_name: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  doca_dev_open: { parameters: ["pointer", "buffer"], result: "i32" },
  doca_dev_close: { parameters: ["pointer"], result: "i32" },
  doca_dev_as_devinfo: { parameters: ["pointer"], result: "pointer" },
  doca_error_get_name: { parameters: ["i32"], result: "pointer" },
  doca_error_get_descr: { parameters: ["i32"], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libdoca_telemetry: the diag context. */
export const TELEMETRY_SYMBOLS = {
  doca_telemetry_diag_cap_is_supported: {
    parameters: ["pointer"],
    result: "i32",
  },
  doca_telemetry_diag_cap_get_max_num_data_ids: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_cap_get_log_max_num_samples: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_cap_is_sample_mode_supported: {
    parameters: ["pointer", "i32", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_cap_is_data_timestamp_source_supported: {
    parameters: ["pointer", "i32", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_create: {
    parameters: ["pointer", "u8", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_destroy: { parameters: ["pointer"], result: "i32" },
  doca_telemetry_diag_apply_config: { parameters: ["pointer"], result: "i32" },
  doca_telemetry_diag_start: { parameters: ["pointer"], result: "i32" },
  doca_telemetry_diag_stop: { parameters: ["pointer"], result: "i32" },
  doca_telemetry_diag_set_output_format: {
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  doca_telemetry_diag_set_sample_period: {
    parameters: ["pointer", "u64"],
    result: "i32",
  },
  doca_telemetry_diag_get_sample_period: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_set_log_max_num_samples: {
    parameters: ["pointer", "u8"],
    result: "i32",
  },
  doca_telemetry_diag_set_max_num_data_ids: {
    parameters: ["pointer", "u32"],
    result: "i32",
  },
  doca_telemetry_diag_set_sync_mode: {
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  doca_telemetry_diag_set_sample_mode: {
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  doca_telemetry_diag_set_data_clear: {
    parameters: ["pointer", "u8"],
    result: "i32",
  },
  doca_telemetry_diag_set_data_timestamp_source: {
    parameters: ["pointer", "i32"],
    result: "i32",
  },
  doca_telemetry_diag_apply_counters_list_by_id: {
    parameters: ["pointer", "buffer", "u32", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_get_sample_size: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  doca_telemetry_diag_query_counters: {
    parameters: ["pointer", "buffer", "u32", "buffer"],
    result: "i32",
  },
  // Absent from some DOCA releases (null there). After apply_config, before
  // apply_counters_list_by_id: SUCCESS, or NOT_SUPPORTED for an ID this
  // device cannot sample. Start-up and discovery only, so the BigInt a u64
  // parameter takes is no cost to sampling.
  doca_telemetry_diag_check_data_id: {
    parameters: ["pointer", "u64"],
    result: "i32",
    optional: true,
  },
  // DOCA 3.1 and later; absent from 3.0.
  doca_telemetry_diag_reconfig_sample_period: {
    parameters: ["pointer", "u64"],
    result: "i32",
    optional: true,
  },
} as const satisfies Deno.ForeignLibraryInterface;

/** The opened common library. */
export type DocaCommon = Deno.DynamicLibrary<typeof COMMON_SYMBOLS>;
/** The opened telemetry library. */
export type DocaTelemetry = Deno.DynamicLibrary<typeof TELEMETRY_SYMBOLS>;

/** The name DOCA gives an error code, from the library when it has one. */
export function docaErrorName(common: DocaCommon | null, code: number): string {
  const name = common
    ? readCString(common.symbols.doca_error_get_name(code))
    : "";
  if (name !== "" && name !== "unrecognized error code") return name;
  return DOCA_ERROR_NAMES[code] ?? `DOCA error ${code}`;
}

/** DOCA's description of an error code ("" if the library has none). */
export function docaErrorDescription(
  common: DocaCommon | null,
  code: number,
): string {
  return common ? readCString(common.symbols.doca_error_get_descr(code)) : "";
}

/**
 * Decodes one FORMAT_1 sample at word `src` of `words` (a Uint32Array over
 * the query buffer) into a ring record at word `dst` of `out`: the sample's
 * latest timestamp, then `columns` u64 values. Returns the sample_id.
 *
 * FORMAT_1 stores no latest_h: it is earliest_h plus one when latest_l
 * wrapped below earliest_l (a second boundary for RTC, a 2^32 carry for
 * FRC). RTC decodes to ns since the epoch (h * 1e9 + l); FRC is
 * (h << 32) | l. No allocation, no BigInt.
 */
export function decodeFormat1Sample(
  words: Uint32Array,
  src: number,
  columns: number,
  rtc: boolean,
  out: Uint32Array,
  dst: number,
): number {
  const earliestH = words[src + 1];
  const earliestL = words[src + 2];
  const latestL = words[src + 3];
  const latestH = (earliestH + (latestL < earliestL ? 1 : 0)) >>> 0;
  if (rtc) {
    mulAdd1e9U64(out, dst, latestH, latestL);
  } else {
    out[dst] = latestL;
    out[dst + 1] = latestH;
  }
  const end = dst + 2 + 2 * columns;
  for (let d = dst + 2, s = src + 4; d < end; d++, s++) out[d] = words[s];
  return words[src];
}
