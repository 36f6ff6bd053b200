/**
 * What a GPU monitor can read from each GPU, by the names operators write
 * in a configuration (`gpu0.temperature`, `gpu*.power`, `gpu1.*`), and how
 * those names expand once the GPUs are known.
 *
 * @module
 */

import { quoteText } from "./errors.ts";
import type { ColumnKind } from "./types.ts";

/** One per-GPU reading. */
export interface GpuReading {
  /** The name after `gpuN.` */
  readonly name: string;
  /**
   * `counter` for readings that only grow (energy, ECC error counts),
   * which metrics report as rates; `gauge` for levels.
   */
  readonly kind: ColumnKind;
  /** Unit and meaning, for check-config and the README. */
  readonly help: string;
}

/**
 * Every reading, in the order a GPU's columns appear. Counters only grow
 * (volatile ECC counts reset when the driver loads, which the metrics
 * treat as a counter reset).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GPU_READINGS } from "./gpu_readings.ts";
 *
 * const energy = GPU_READINGS.find((r) => r.name === "energy");
 * assert.equal(energy?.kind, "counter");
 * assert.equal(energy?.help, "energy since the driver loaded, mJ");
 * ```
 */
export const GPU_READINGS: readonly GpuReading[] = [
  { name: "temperature", kind: "gauge", help: "GPU core temperature, °C" },
  { name: "power", kind: "gauge", help: "power draw, mW" },
  {
    name: "energy",
    kind: "counter",
    help: "energy since the driver loaded, mJ",
  },
  { name: "gpu_utilization", kind: "gauge", help: "GPU utilization, %" },
  {
    name: "memory_utilization",
    kind: "gauge",
    help: "memory controller utilization, %",
  },
  { name: "memory_used", kind: "gauge", help: "memory used, bytes" },
  { name: "memory_total", kind: "gauge", help: "memory installed, bytes" },
  { name: "sm_clock", kind: "gauge", help: "SM clock, MHz" },
  { name: "memory_clock", kind: "gauge", help: "memory clock, MHz" },
  {
    name: "clock_event_reasons",
    kind: "gauge",
    help:
      "why clocks are held down (bitmask: 0x4 power cap, 0x8 hw slowdown, 0x20 sw thermal, 0x40 hw thermal, 0x80 power brake)",
  },
  {
    name: "ecc_corrected",
    kind: "counter",
    help: "corrected ECC errors since the driver loaded",
  },
  {
    name: "ecc_uncorrected",
    kind: "counter",
    help: "uncorrected ECC errors since the driver loaded",
  },
  { name: "pcie_replays", kind: "counter", help: "PCIe replay counter" },
  {
    name: "pcie_tx_bytes",
    kind: "counter",
    help: "bytes sent over PCIe (NVML's count, which can wrap)",
  },
  {
    name: "pcie_rx_bytes",
    kind: "counter",
    help: "bytes received over PCIe (NVML's count, which can wrap)",
  },
  {
    name: "nvlink_crc_flit_errors",
    kind: "counter",
    help: "NVLink CRC flit errors, all links",
  },
  {
    name: "nvlink_crc_data_errors",
    kind: "counter",
    help: "NVLink CRC data errors, all links",
  },
  {
    name: "nvlink_replay_errors",
    kind: "counter",
    help: "NVLink replay errors, all links",
  },
  {
    name: "nvlink_recovery_errors",
    kind: "counter",
    help: "NVLink recovery errors, all links",
  },
  {
    name: "xid_errors",
    kind: "counter",
    help: "Xid critical error events seen by this agent",
  },
  { name: "last_xid", kind: "gauge", help: "code of the latest Xid (0: none)" },
];

const BY_NAME: ReadonlyMap<string, number> = new Map(
  GPU_READINGS.map((r, i) => [r.name, i]),
);

/** The highest GPU index a name may give (NVML supports at most 64 GPUs). */
export const MAX_GPU_INDEX = 63;

/** A parsed column name: which GPUs (`*` = every GPU) and which readings. */
export interface GpuColumnPattern {
  /** A GPU index, or `"*"` for every GPU NVML reports. */
  readonly gpu: number | "*";
  /** An index into {@linkcode GPU_READINGS}, or `"*"` for all of them. */
  readonly reading: number | "*";
}

/**
 * Parses a GPU column name. Returns the pattern, or a problem phrased to
 * follow the value's path in an error message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GPU_READINGS, parseGpuColumn } from "./gpu_readings.ts";
 *
 * // Every GPU's power reading (index 1 in GPU_READINGS).
 * assert.deepEqual(parseGpuColumn("gpu*.power"), {
 *   ok: true,
 *   value: { gpu: "*", reading: 1 },
 * });
 * assert.equal(GPU_READINGS[1].name, "power");
 * assert.equal(parseGpuColumn("gpu0.bogus").ok, false);
 * ```
 */
export function parseGpuColumn(
  text: string,
):
  | { readonly ok: true; readonly value: GpuColumnPattern }
  | { readonly ok: false; readonly problem: string } {
  const match = /^gpu(\*|0|[1-9][0-9]?)\.([a-z_*]+)$/.exec(text);
  if (match === null) {
    return {
      ok: false,
      problem:
        `must be gpuN.READING, gpu*.READING, gpuN.* or gpu*.* (e.g. gpu0.temperature)`,
    };
  }
  const gpu = match[1] === "*" ? "*" : Number(match[1]);
  if (gpu !== "*" && gpu > MAX_GPU_INDEX) {
    return {
      ok: false,
      problem: `names GPU ${gpu}; GPU indexes go from 0 to ${MAX_GPU_INDEX}`,
    };
  }
  if (match[2] === "*") return { ok: true, value: { gpu, reading: "*" } };
  const reading = BY_NAME.get(match[2]);
  if (reading === undefined) {
    return {
      ok: false,
      problem: `names no GPU reading ${quoteText(match[2], 40)}; readings are ${
        GPU_READINGS.map((r) => r.name).join(", ")
      }`,
    };
  }
  return { ok: true, value: { gpu, reading } };
}

/**
 * The GPU column name of one reading of one GPU, or of every GPU (`*`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuColumnName } from "./gpu_readings.ts";
 *
 * assert.equal(gpuColumnName("*", 1), "gpu*.power");
 * ```
 */
export function gpuColumnName(gpu: number | "*", reading: number): string {
  return `gpu${gpu}.${GPU_READINGS[reading].name}`;
}

/** The suffix that names a rule's copy for one GPU: ` [gpu3]`. */
export const GPU_RULE_SUFFIX: RegExp = / \[gpu\d+\]$/;

/**
 * The name of a rule's copy for GPU `gpu`, when the rule watches a `gpu*`
 * column.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuRuleName } from "./gpu_readings.ts";
 *
 * assert.equal(gpuRuleName("GPU hot", 1), "GPU hot [gpu1]");
 * ```
 */
export function gpuRuleName(name: string, gpu: number): string {
  return `${name} [gpu${gpu}]`;
}
