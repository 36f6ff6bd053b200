/**
 * How much memory the monitors' sample rings take, so that a depth the
 * agent could not allocate is refused when the configuration is loaded
 * rather than when the agent starts. The ring (rules/ring.ts) holds
 * 2 x depth records; a record is the timestamp and each column, 8 bytes
 * each.
 *
 * @module
 */

import { MAX_GPU_INDEX } from "./gpu_readings.ts";
import type { MonitorConfig } from "./types.ts";

/** Bytes of one ring value: a u64 as two u32 words. */
const VALUE_BYTES = 8;

/**
 * The most columns a monitor's ring may have once it runs. A GPU
 * monitor's `gpu*` columns become one per GPU NVML reports, known only
 * then, so each counts for every GPU index there may be.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ringColumns } from "./ring_budget.ts";
 *
 * const column = (name: string) => ({ name, dataId: `nvml ${name}`, kind: "gauge" as const });
 * assert.equal(ringColumns({ source: "sim", columns: [column("rx"), column("tx")] }), 2);
 * assert.equal(
 *   ringColumns({ source: "nvml", columns: [column("gpu*.power"), column("gpu0.power")] }),
 *   65,
 * );
 * ```
 */
export function ringColumns(
  monitor: Pick<MonitorConfig, "source" | "columns">,
): number {
  if (monitor.source !== "nvml") return monitor.columns.length;
  let count = 0;
  for (const column of monitor.columns) {
    count += column.name.startsWith("gpu*.") ? MAX_GPU_INDEX + 1 : 1;
  }
  return count;
}

/**
 * Bytes of the ring of a monitor with `columns` columns and history
 * `depth`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ringBytes } from "./ring_budget.ts";
 *
 * // The default depth and one column: 2048 records of 16 bytes.
 * assert.equal(ringBytes(1, 1024), 32_768);
 * ```
 */
export function ringBytes(columns: number, depth: number): number {
  return 2 * depth * (columns + 1) * VALUE_BYTES;
}

/**
 * The largest depth whose ring of `columns` columns fits in `bytes`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { maxDepth, ringBytes } from "./ring_budget.ts";
 *
 * const depth = maxDepth(8, 1024 * 1024 * 1024);
 * assert.ok(ringBytes(8, depth) <= 1024 * 1024 * 1024);
 * assert.ok(ringBytes(8, depth + 1) > 1024 * 1024 * 1024);
 * ```
 */
export function maxDepth(columns: number, bytes: number): number {
  return Math.max(0, Math.floor(bytes / ringBytes(columns, 1)));
}
