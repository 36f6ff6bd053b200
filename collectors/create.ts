/**
 * Picks the collector for a monitor's configured source.
 *
 * @module
 */

import type { MonitorConfig } from "../config/types.ts";
import type { Collector } from "./collector.ts";
import { DocaCollector } from "./doca.ts";
import { ReplayCollector } from "./replay.ts";
import { SimCollector } from "./sim.ts";

/** Agent-wide settings a collector may need. */
export interface CollectorContext {
  /**
   * For source doca: take the diag context over from another owner (a
   * crashed run, another tool) instead of failing; default false.
   */
  readonly forceOwnership?: boolean;
  /**
   * For source doca: a directory to load the DOCA libraries from
   * (`--doca-lib-dir`, `doca_lib_dir:`), tried before `DOCA_LIB_DIR` and
   * the standard install locations.
   */
  readonly docaLibDir?: string;
  /** Where a collector reports conditions worth an operator's attention. */
  readonly warn?: (message: string) => void;
  /** Where a collector says what it got (a sampling thread's scheduling). */
  readonly info?: (message: string) => void;
}

/**
 * The collector a monitor's `source` names; hardware sources are opened
 * and started here, so a missing device fails before any log is written. Throws an Error with a one-line
 * message when the source cannot be used as configured.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCollector } from "./create.ts";
 * import type { MonitorConfig } from "../config/types.ts";
 *
 * const monitor: MonitorConfig = {
 *   name: "nic",
 *   source: "sim",
 *   samplePeriodNs: 100_000,
 *   depth: 1024,
 *   columns: [{ name: "rx", dataId: "0x1020000100000000", kind: "counter" }],
 *   rules: [],
 *   eventLog: "events.log",
 *   seed: 1,
 * };
 * assert.equal(createCollector(monitor).source, "sim");
 * // A source that cannot be used as configured fails here, before any log.
 * assert.throws(() => createCollector({ ...monitor, source: "replay" }), {
 *   name: "TypeError",
 *   message: 'Cannot start monitor "nic": source replay needs a capture (--input FILE or input: in the config)',
 * });
 * ```
 */
export function createCollector(
  config: MonitorConfig,
  agent: CollectorContext = {},
): Collector {
  switch (config.source) {
    case "sim":
      return new SimCollector({
        columns: config.columns,
        samplePeriodNs: config.samplePeriodNs,
        seed: config.seed,
      });
    case "replay":
      if (config.input === undefined) {
        throw new TypeError(
          `Cannot start monitor "${config.name}": source replay needs a capture (--input FILE or input: in the config)`,
        );
      }
      return new ReplayCollector({
        path: config.input,
        columns: config.columns,
      });
    case "doca":
      if (config.device === undefined) {
        throw new TypeError(
          `Cannot start monitor "${config.name}": source doca needs a device (-d DEVICE)`,
        );
      }
      return DocaCollector.open({
        device: config.device,
        columns: config.columns,
        samplePeriodNs: config.samplePeriodNs,
        depth: config.depth,
        forceOwnership: agent.forceOwnership ?? false,
        libDir: agent.docaLibDir,
        warn: agent.warn,
        info: agent.info,
      });
    case "nvml":
      // NVML is opened asynchronously, in a Worker: see NvmlCollector.open.
      throw new TypeError(
        `Cannot start monitor "${config.name}": a GPU monitor is opened with NvmlCollector.open`,
      );
    case "kernel":
      // The device is looked up in sysfs first: see KernelCollector.open.
      throw new TypeError(
        `Cannot start monitor "${config.name}": a kernel monitor is opened with KernelCollector.open`,
      );
  }
}

/**
 * What events.log shows as the device for a monitor: what its collector
 * found, else what the configuration names.
 */
export function describeDevice(
  config: MonitorConfig,
  collector?: Collector,
): string {
  if (collector?.device !== undefined) return collector.device;
  switch (config.source) {
    case "sim":
      return `sim (seed ${config.seed})`;
    case "replay":
      return `replay ${config.input ?? ""}`.trimEnd();
    case "kernel":
      return `kernel ${config.device ?? ""}`.trimEnd();
    case "doca":
    case "nvml":
      return config.device ?? "";
  }
}
