/**
 * The readings a poll takes of each GPU and the NVML call behind each.
 * Several readings share one call (utilization, memory, the field values),
 * so a poll makes each call once per GPU however many of its readings are
 * columns; the Xid readings come from events, read once for all GPUs.
 * Also how a reading lands in a record: two words, low word first.
 *
 * @module
 */

import { GPU_READINGS } from "../../config/gpu_readings.ts";
import { FieldId, NvmlReturn } from "../../ffi/nvml.ts";

/** One column of the record: a reading of a GPU. */
export interface GpuColumn {
  /** NVML's index of the GPU. */
  readonly gpu: number;
  /** Index into {@linkcode GPU_READINGS}. */
  readonly reading: number;
}

/** Index into {@linkcode GPU_READINGS} by reading name. */
export const R = Object.fromEntries(
  GPU_READINGS.map((r, i) => [r.name, i]),
) as {
  readonly [name: string]: number;
};

/** Field-value readings and the field each comes from. */
export const FIELD_READINGS: readonly (readonly [number, number])[] = [
  [R.pcie_replays, FieldId.PCIE_REPLAY_COUNTER],
  [R.pcie_tx_bytes, FieldId.PCIE_COUNT_TX_BYTES],
  [R.pcie_rx_bytes, FieldId.PCIE_COUNT_RX_BYTES],
  [R.nvlink_crc_flit_errors, FieldId.NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL],
  [R.nvlink_crc_data_errors, FieldId.NVLINK_CRC_DATA_ERROR_COUNT_TOTAL],
  [R.nvlink_replay_errors, FieldId.NVLINK_REPLAY_ERROR_COUNT_TOTAL],
  [R.nvlink_recovery_errors, FieldId.NVLINK_RECOVERY_ERROR_COUNT_TOTAL],
];

/** The calls a poll makes, in this order; temperature first. */
export const Call = {
  Temperature: 0,
  Power: 1,
  Energy: 2,
  Utilization: 3,
  Memory: 4,
  SmClock: 5,
  MemClock: 6,
  Reasons: 7,
  EccCorrected: 8,
  EccUncorrected: 9,
  Fields: 10,
} as const;
/** One of the {@linkcode Call} values. */
export type Call = typeof Call[keyof typeof Call];

/** Which call reads each reading (events are read once for all GPUs). */
export const CALL_OF: readonly (Call | -1)[] = GPU_READINGS.map((r) => {
  switch (r.name) {
    case "temperature":
      return Call.Temperature;
    case "power":
      return Call.Power;
    case "energy":
      return Call.Energy;
    case "gpu_utilization":
    case "memory_utilization":
      return Call.Utilization;
    case "memory_used":
    case "memory_total":
      return Call.Memory;
    case "sm_clock":
      return Call.SmClock;
    case "memory_clock":
      return Call.MemClock;
    case "clock_event_reasons":
      return Call.Reasons;
    case "ecc_corrected":
      return Call.EccCorrected;
    case "ecc_uncorrected":
      return Call.EccUncorrected;
    case "xid_errors":
    case "last_xid":
      return -1;
    default:
      return Call.Fields;
  }
});

/**
 * What each call reads, for messages; the last entry is the Xid event
 * wait. Index + 1 is what `NvmlPoller.busy` holds during a call.
 */
export const CALL_NAMES: readonly string[] = [
  "temperature",
  "power",
  "energy",
  "utilization",
  "memory",
  "sm_clock",
  "memory_clock",
  "clock_event_reasons",
  "ecc_corrected",
  "ecc_uncorrected",
  "field values (pcie_replays, pcie_*_bytes, nvlink_*)",
  "Xid event wait",
];
/** The {@linkcode CALL_NAMES} index of the Xid event wait. */
export const EVENT_WAIT: number = CALL_NAMES.length - 1;

/**
 * Whether NVML's `code` says the reading does not exist here (the GPU or
 * the driver lacks it), which is no sign of trouble.
 */
export function isUnsupported(code: number): boolean {
  return code === NvmlReturn.NOT_SUPPORTED ||
    code === NvmlReturn.FUNCTION_NOT_FOUND;
}

/** Writes a 32-bit reading at word `at` of `record`; `at < 0` is no column. */
export function put32(record: Uint32Array, at: number, value: number): void {
  if (at < 0) return;
  record[at] = value;
  record[at + 1] = 0;
}

/** Writes a 64-bit reading's words at word `at`; `at < 0` is no column. */
export function put64(
  record: Uint32Array,
  at: number,
  lo: number,
  hi: number,
): void {
  if (at < 0) return;
  record[at] = lo;
  record[at + 1] = hi;
}
