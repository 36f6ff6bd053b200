/**
 * Deno FFI declarations for NVML (`libnvidia-ml.so.1`, from the GPU
 * driver) and the decoding of the structs it fills. Declarations and
 * decoding only: which calls to make, how often, and what a failure means
 * for a GPU live in collectors/nvml/readers.ts and gpu_health.ts.
 *
 * Every symbol is the versioned name the C header's macros would pick
 * (`nvmlInit_v2`, `nvmlDeviceGetPciInfo_v3`, ...): FFI has no macros.
 * Symbols newer than the oldest driver we accept are optional; a missing
 * one is `null` and the caller falls back.
 *
 * ABI facts: docs/spec/doca-nvml-abi.md §3.
 *
 * @module
 */

import { cStringFromBuffer, readCString } from "./library.ts";

/** The soname to load; a bare `libnvidia-ml.so` may be a CUDA stub. */
export const NVML_SONAME = "libnvidia-ml.so.1";

/** `nvmlReturn_t` codes the agent acts on (every name: {@linkcode nvmlReturnName}). */
export const NvmlReturn = {
  SUCCESS: 0,
  NOT_SUPPORTED: 3,
  DRIVER_NOT_LOADED: 9,
  TIMEOUT: 10,
  FUNCTION_NOT_FOUND: 13,
  GPU_IS_LOST: 15,
  ARGUMENT_VERSION_MISMATCH: 25,
  UNKNOWN: 999,
} as const;

/** Every `nvmlReturn_t` name by code, for when the library cannot say. */
const RETURN_NAMES: readonly string[] = [
  "SUCCESS",
  "UNINITIALIZED",
  "INVALID_ARGUMENT",
  "NOT_SUPPORTED",
  "NO_PERMISSION",
  "ALREADY_INITIALIZED",
  "NOT_FOUND",
  "INSUFFICIENT_SIZE",
  "INSUFFICIENT_POWER",
  "DRIVER_NOT_LOADED",
  "TIMEOUT",
  "IRQ_ISSUE",
  "LIBRARY_NOT_FOUND",
  "FUNCTION_NOT_FOUND",
  "CORRUPTED_INFOROM",
  "GPU_IS_LOST",
  "RESET_REQUIRED",
  "OPERATING_SYSTEM",
  "LIB_RM_VERSION_MISMATCH",
  "IN_USE",
  "MEMORY",
  "NO_DATA",
  "VGPU_ECC_NOT_SUPPORTED",
  "INSUFFICIENT_RESOURCES",
  "FREQ_NOT_SUPPORTED",
  "ARGUMENT_VERSION_MISMATCH",
  "DEPRECATED",
  "NOT_READY",
  "GPU_NOT_FOUND",
  "INVALID_STATE",
  "RESET_TYPE_NOT_SUPPORTED",
];

/**
 * The header's name for a return code (`NVML_ERROR_GPU_IS_LOST`),
 * `NVML_SUCCESS` for 0; unknown codes by number.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nvmlReturnName } from "./nvml.ts";
 *
 * assert.equal(nvmlReturnName(15), "NVML_ERROR_GPU_IS_LOST");
 * assert.equal(nvmlReturnName(999), "NVML_ERROR_UNKNOWN");
 * ```
 */
export function nvmlReturnName(code: number): string {
  if (code === 0) return "NVML_SUCCESS";
  if (code === NvmlReturn.UNKNOWN) return "NVML_ERROR_UNKNOWN";
  const name = RETURN_NAMES[code];
  return name === undefined ? `NVML_ERROR_${code}` : `NVML_ERROR_${name}`;
}

/** `nvmlClockType_t`. */
export const ClockType = { GRAPHICS: 0, SM: 1, MEM: 2, VIDEO: 3 } as const;
/** `nvmlTemperatureSensors_t`. */
export const TemperatureSensor = { GPU: 0 } as const;
/** `nvmlMemoryErrorType_t`. */
export const MemoryErrorType = { CORRECTED: 0, UNCORRECTED: 1 } as const;
/** `nvmlEccCounterType_t`: VOLATILE resets when the driver loads. */
export const EccCounterType = { VOLATILE: 0, AGGREGATE: 1 } as const;
/** `nvmlEventType` bit for Xid critical errors (the only way to get Xids). */
export const EVENT_XID_CRITICAL_ERROR = 0x8;

/** `nvmlValueType_t`: which member of a field value's union is set. */
export const ValueType = {
  DOUBLE: 0,
  UNSIGNED_INT: 1,
  UNSIGNED_LONG: 2,
  UNSIGNED_LONG_LONG: 3,
  SIGNED_LONG_LONG: 4,
  SIGNED_INT: 5,
  UNSIGNED_SHORT: 6,
} as const;

/** `NVML_FI_DEV_*` field IDs the agent reads. */
export const FieldId = {
  PCIE_REPLAY_COUNTER: 94,
  /** Bytes sent over PCIe; a counter that can wrap. */
  PCIE_COUNT_TX_BYTES: 197,
  /** Bytes received over PCIe; a counter that can wrap. */
  PCIE_COUNT_RX_BYTES: 198,
  NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL: 38,
  NVLINK_CRC_DATA_ERROR_COUNT_TOTAL: 45,
  NVLINK_REPLAY_ERROR_COUNT_TOTAL: 52,
  NVLINK_RECOVERY_ERROR_COUNT_TOTAL: 59,
} as const;

/** Sizes of the string buffers NVML documents (`NVML_DEVICE_*_V2_BUFFER_SIZE`). */
export const NAME_BUFFER_SIZE = 96;
/** `NVML_DEVICE_UUID_V2_BUFFER_SIZE`. */
export const UUID_BUFFER_SIZE = 96;
/** `NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE`. */
export const DRIVER_VERSION_BUFFER_SIZE = 80;

/** `sizeof(nvmlPciInfo_t)`. */
export const PCI_INFO_BYTES = 68;
/** `sizeof(nvmlUtilization_t)`. */
export const UTILIZATION_BYTES = 8;
/** `sizeof(nvmlMemory_t)`. */
export const MEMORY_BYTES = 24;
/** `sizeof(nvmlMemory_v2_t)`. */
export const MEMORY_V2_BYTES = 40;
/** `nvmlMemory_v2` version word: the size, and 2 in the top byte. */
export const MEMORY_V2_VERSION = MEMORY_V2_BYTES | (2 << 24);
/** `sizeof(nvmlTemperature_v1_t)`. */
export const TEMPERATURE_V1_BYTES = 12;
/** `nvmlTemperature_v1` version word. */
export const TEMPERATURE_V1_VERSION = TEMPERATURE_V1_BYTES | (1 << 24);
/** `sizeof(nvmlFieldValue_t)`: the stride of a field value array. */
export const FIELD_VALUE_BYTES = 40;
/** `sizeof(nvmlEventData_t)`. */
export const EVENT_DATA_BYTES = 32;

/** The NVML functions the agent calls. */
export const NVML_SYMBOLS = {
  nvmlInit_v2: { parameters: [], result: "i32" },
  nvmlShutdown: { parameters: [], result: "i32" },
  nvmlErrorString: { parameters: ["i32"], result: "pointer" },
  nvmlSystemGetDriverVersion: {
    parameters: ["buffer", "u32"],
    result: "i32",
  },
  nvmlDeviceGetCount_v2: { parameters: ["buffer"], result: "i32" },
  nvmlDeviceGetHandleByIndex_v2: {
    parameters: ["u32", "buffer"],
    result: "i32",
  },
  nvmlDeviceGetName: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  nvmlDeviceGetUUID: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  nvmlDeviceGetPciInfo_v3: { parameters: ["pointer", "buffer"], result: "i32" },
  // Deprecated in NVML 13 in favour of TemperatureV: either may be missing.
  nvmlDeviceGetTemperature: {
    parameters: ["pointer", "i32", "buffer"],
    result: "i32",
    optional: true,
  },
  nvmlDeviceGetTemperatureV: {
    parameters: ["pointer", "buffer"],
    result: "i32",
    optional: true,
  },
  nvmlDeviceGetPowerUsage: { parameters: ["pointer", "buffer"], result: "i32" },
  nvmlDeviceGetTotalEnergyConsumption: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  nvmlDeviceGetUtilizationRates: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  nvmlDeviceGetMemoryInfo: { parameters: ["pointer", "buffer"], result: "i32" },
  nvmlDeviceGetMemoryInfo_v2: {
    parameters: ["pointer", "buffer"],
    result: "i32",
    optional: true,
  },
  nvmlDeviceGetClockInfo: {
    parameters: ["pointer", "i32", "buffer"],
    result: "i32",
  },
  nvmlDeviceGetCurrentClocksEventReasons: {
    parameters: ["pointer", "buffer"],
    result: "i32",
    optional: true,
  },
  // The old name of ClocksEventReasons (same bits); a future driver may drop it.
  nvmlDeviceGetCurrentClocksThrottleReasons: {
    parameters: ["pointer", "buffer"],
    result: "i32",
    optional: true,
  },
  nvmlDeviceGetTotalEccErrors: {
    parameters: ["pointer", "i32", "i32", "buffer"],
    result: "i32",
  },
  nvmlDeviceGetFieldValues: {
    parameters: ["pointer", "i32", "buffer"],
    result: "i32",
  },
  nvmlEventSetCreate: { parameters: ["buffer"], result: "i32" },
  nvmlDeviceGetSupportedEventTypes: {
    parameters: ["pointer", "buffer"],
    result: "i32",
  },
  nvmlDeviceRegisterEvents: {
    parameters: ["pointer", "u64", "pointer"],
    result: "i32",
  },
  nvmlEventSetWait_v2: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  nvmlEventSetFree: { parameters: ["pointer"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The opened library's functions. */
export type NvmlSymbols = Deno.DynamicLibrary<typeof NVML_SYMBOLS>["symbols"];

/**
 * NVML's own description of a return code, or the code's name when the
 * library gives none.
 */
export function nvmlErrorString(symbols: NvmlSymbols, code: number): string {
  return readCString(symbols.nvmlErrorString(code)) || nvmlReturnName(code);
}

/** The parts of `nvmlPciInfo_t` the agent shows. */
export interface PciInfo {
  /** `busId` as NVML writes it: `00000000:18:00.0`. */
  readonly busId: string;
  readonly domain: number;
  readonly bus: number;
  readonly device: number;
  /** `device << 16 | vendor`. */
  readonly pciDeviceId: number;
}

/**
 * Decodes an `nvmlPciInfo_t` (68 bytes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodePciInfo, PCI_INFO_BYTES } from "./nvml.ts";
 *
 * const raw = new Uint8Array(PCI_INFO_BYTES);
 * raw.set(new TextEncoder().encode("00000000:18:00.0"), 36);
 * new DataView(raw.buffer).setUint32(20, 0x18, true);
 * const info = decodePciInfo(raw);
 * assert.equal(info.busId, "00000000:18:00.0");
 * assert.equal(info.bus, 0x18);
 * ```
 */
export function decodePciInfo(raw: Uint8Array): PciInfo {
  const view = new DataView(raw.buffer, raw.byteOffset, PCI_INFO_BYTES);
  return {
    busId: cStringFromBuffer(raw.subarray(36, 68)),
    domain: view.getUint32(16, true),
    bus: view.getUint32(20, true),
    device: view.getUint32(24, true),
    pciDeviceId: view.getUint32(28, true),
  };
}

/**
 * A PCI bus id in the form DOCA and lspci use (`0000:18:00.0`, lower
 * case, 4-digit domain), from NVML's 8-digit upper-case form.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizePciBusId } from "./nvml.ts";
 *
 * assert.equal(normalizePciBusId("00000000:3A:00.0"), "0000:3a:00.0");
 * ```
 */
export function normalizePciBusId(busId: string): string {
  const match = /^([0-9A-Fa-f]+):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$/
    .exec(busId);
  if (match === null) return busId.toLowerCase();
  const domain = match[1].replace(/^0+(?=.{4})/, "").padStart(4, "0");
  return `${domain}:${match[2]}:${match[3]}.${match[4]}`.toLowerCase();
}

/**
 * Copies the value of field entry `entry` of an `nvmlFieldValue_t` array
 * into `out[at]` (lo) and `out[at + 1]` (hi) as an unsigned 64-bit
 * integer, by the entry's `valueType`, without BigInt. Returns the entry's
 * own `nvmlReturn` (check it: the call succeeds even when entries fail);
 * on failure `out` is untouched. Signed values below zero and doubles are
 * clamped to 0 and truncated: a counter cannot be negative.
 */
export function readFieldValue(
  view: DataView,
  entry: number,
  out: Uint32Array,
  at: number,
): number {
  const base = entry * FIELD_VALUE_BYTES;
  const status = view.getInt32(base + 28, true);
  if (status !== NvmlReturn.SUCCESS) return status;
  const value = base + 32;
  switch (view.getInt32(base + 24, true)) {
    case ValueType.UNSIGNED_INT:
      out[at] = view.getUint32(value, true);
      out[at + 1] = 0;
      break;
    case ValueType.SIGNED_INT: {
      const v = view.getInt32(value, true);
      out[at] = v > 0 ? v : 0;
      out[at + 1] = 0;
      break;
    }
    case ValueType.UNSIGNED_SHORT:
      out[at] = view.getUint16(value, true);
      out[at + 1] = 0;
      break;
    case ValueType.SIGNED_LONG_LONG:
      if (view.getInt32(value + 4, true) < 0) {
        out[at] = 0;
        out[at + 1] = 0;
        break;
      }
      // falls through: a non-negative i64 has the same bits as a u64
    case ValueType.UNSIGNED_LONG:
    case ValueType.UNSIGNED_LONG_LONG:
      out[at] = view.getUint32(value, true);
      out[at + 1] = view.getUint32(value + 4, true);
      break;
    case ValueType.DOUBLE: {
      const v = view.getFloat64(value, true);
      const whole = v > 0 && v < 18446744073709551616 ? Math.floor(v) : 0;
      const hi = Math.floor(whole / 4294967296);
      out[at] = whole - hi * 4294967296;
      out[at + 1] = hi;
      break;
    }
    default:
      return NvmlReturn.UNKNOWN;
  }
  return NvmlReturn.SUCCESS;
}
