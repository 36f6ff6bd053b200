/**
 * What a monitor's configuration says it reads, for labels and snapshots.
 *
 * @module
 */

import type { MonitorConfig } from "./types.ts";

/**
 * The device a monitor's configuration names, for labels and snapshots:
 * its device, its replay input, `nvml` for a GPU monitor (its GPUs are
 * labelled one by one), or undefined.
 */
export function configuredDevice(config: MonitorConfig): string | undefined {
  return config.device ?? config.input ??
    (config.source === "nvml" ? "nvml" : undefined);
}
