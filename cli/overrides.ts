/**
 * Command-line options applied over a loaded configuration.
 *
 * @module
 */

import type { RunOptions } from "./args.ts";
import { UsageError } from "./usage_error.ts";
import type { AgentConfig, MonitorConfig } from "../config/types.ts";

/**
 * The configuration with the command line's overrides applied and the
 * combination checked. Throws a {@linkcode UsageError} with a one-line message when the
 * options do not fit the configuration (a usage error).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/load.ts";
 * import { applyRunOptions } from "./overrides.ts";
 * import { UsageError } from "./usage_error.ts";
 *
 * const config = await loadConfig("deploy/example-rules.json");
 * const run = applyRunOptions(config, { source: "sim", forceOwnership: false, quiet: true });
 * assert.equal(run.monitors[0].source, "sim");
 * // A NIC read through DOCA needs a device.
 * assert.throws(() => applyRunOptions(config, { forceOwnership: false, quiet: true }), UsageError);
 * ```
 */
export function applyRunOptions(
  config: AgentConfig,
  options: Omit<RunOptions, "configFile">,
): AgentConfig {
  // Source, device, log and input options are the NIC monitor's: a GPU
  // monitor reads whatever GPUs NVML finds.
  const single = config.monitors.filter((m) => m.source !== "nvml").length ===
    1;
  if (options.eventLog !== undefined && !single) {
    throw new UsageError(
      `--event-log applies to a single monitor, and ${config.file} has ${config.monitors.length}; set event_log per monitor`,
    );
  }
  // One device for several monitors would read one port twice and the
  // others never (and two monitors on one DOCA device are refused later,
  // less plainly).
  if (options.device !== undefined && !single) {
    const nics = config.monitors.filter((m) => m.source !== "nvml");
    throw new UsageError(
      `-d names one device, and ${config.file} has ${nics.length} NIC monitors (${
        nics.map((m) => m.name).join(", ")
      }); set device per monitor`,
    );
  }
  const monitors = config.monitors.map((m): MonitorConfig =>
    m.source === "nvml" ? m : {
      ...m,
      source: options.source ?? m.source,
      device: options.device ?? m.device,
      eventLog: options.eventLog ?? m.eventLog,
      seed: options.seed ?? m.seed,
      input: options.input ?? m.input,
    }
  );
  const replays = monitors.filter((m) => m.source === "replay");
  if (options.input !== undefined && replays.length === 0) {
    throw new UsageError("--input is for --source replay");
  }
  if (options.input !== undefined && replays.length > 1) {
    throw new UsageError(
      `--input names one capture, and ${replays.length} monitors replay; set input per monitor`,
    );
  }
  for (const m of monitors) {
    if (
      (m.source === "doca" || m.source === "kernel") &&
      (m.device === undefined || m.device === "")
    ) {
      throw new UsageError(
        `monitor "${m.name}" reads a device (source ${m.source}) and none was given: use -d DEVICE`,
      );
    }
    if (m.source === "replay" && m.input === undefined) {
      throw new UsageError(
        `monitor "${m.name}" replays a capture and none was given: use --input FILE`,
      );
    }
  }
  return {
    ...config,
    listen: options.listen ?? config.listen,
    metricsWindowNs: options.metricsWindowS === undefined
      ? config.metricsWindowNs
      : Math.round(options.metricsWindowS * 1e9),
    webConfigFile: options.webConfigFile ?? config.webConfigFile,
    forceOwnership: options.forceOwnership || config.forceOwnership,
    docaLibDir: options.docaLibDir ?? config.docaLibDir,
    nvmlLibDir: options.nvmlLibDir ?? config.nvmlLibDir,
    gpu: options.gpu ?? config.gpu,
    monitors,
  };
}
