/**
 * Picks the collector for a monitor's configured source.
 *
 * @module
 */

import type { MonitorConfig } from "../config/types.ts";
import type { Collector } from "./collector.ts";
import { ReplayCollector } from "./replay.ts";
import { SimCollector } from "./sim.ts";

/**
 * The collector a monitor's `source` names. Throws an Error with a one-line
 * message when the source cannot be used as configured.
 *
 * @example
 * ```ts ignore
 * const config = await loadConfig("deploy/demo.yaml");
 * createCollector(config.monitors[0]).source; // "sim"
 * ```
 */
export function createCollector(config: MonitorConfig): Collector {
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
      throw new Error(
        `Cannot start monitor "${config.name}": the DOCA Telemetry Diag collector is not in this build yet; ` +
          "use --source sim (built-in simulator) or --source replay --input FILE",
      );
  }
}

/** What events.log shows as the device for a monitor. */
export function describeDevice(config: MonitorConfig): string {
  switch (config.source) {
    case "sim":
      return `sim (seed ${config.seed})`;
    case "replay":
      return `replay ${config.input ?? ""}`.trimEnd();
    case "doca":
      return config.device ?? "";
  }
}
