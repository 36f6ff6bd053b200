/**
 * The `check-config` command: validate a configuration (and the web config
 * it names) and summarize it, before a service restart finds a mistake.
 *
 * @module
 */

import { type LibraryProbe, probeNvml } from "../collectors/versions.ts";
import { describeConfig } from "../config/describe.ts";
import { loadConfig } from "../config/load.ts";
import { resolveTopology } from "../config/topology.ts";
import { withAutoGpuMonitor } from "../config/normalize.ts";
import type { Logger } from "../logging/logger.ts";
import { loadWebConfig, type WebConfig } from "../endpoint/web_config.ts";
import { asUsageError, EXIT_OK } from "./usage_error.ts";

/**
 * Prints the summary of `configFile` and returns 0. Throws a
 * {@linkcode UsageError} naming the file and the problem when it, its
 * data IDs or its web config cannot be used.
 *
 * @example
 * ```ts ignore
 * await checkConfig({ configFile: "/etc/dpu-traceback/config.yaml" }, log); // 0
 * ```
 */
export async function checkConfig(
  options: { readonly configFile: string; readonly dataIdsFile?: string },
  log: Logger,
): Promise<number> {
  let web: WebConfig | undefined;
  let summary: string;
  try {
    const config = await loadConfig(options.configFile, {
      dataIdsFile: options.dataIdsFile,
    });
    // The endpoint's TLS and auth are checked too, so a bad certificate is
    // found before the service restarts.
    web = config.webConfigFile === undefined
      ? undefined
      : await loadWebConfig(config.webConfigFile);
    // The topology is resolved as the agent resolves it at start, so a
    // broken or missing labels file, or a host name that is no instance
    // label, is found now.
    const { fileLabels } = await resolveTopology(config);
    const full = withAutoGpuMonitor(config);
    // Whether a GPU monitor runs is found at start; say what this host has,
    // looked for as run looks, without loading NVML (a broken driver can
    // hang in its init).
    const gpu = full.monitors.some((m) => m.source === "nvml");
    summary = describeConfig(full, {
      fileLabels,
      nvmlHere: gpu
        ? describeNvmlProbe(probeNvml(config.nvmlLibDir))
        : undefined,
      addedByGpuAuto: full.monitors.length > config.monitors.length
        ? full.monitors.at(-1)?.name
        : undefined,
    });
  } catch (error) {
    throw asUsageError(error);
  }
  console.log(summary);
  if (web !== undefined) {
    console.log(describeWebConfig(web));
    for (const warning of web.warnings) log.warn(warning);
  }
  return EXIT_OK;
}

/** What {@linkcode probeNvml} found, for a GPU monitor's line. */
function describeNvmlProbe(probe: LibraryProbe): string {
  if ("found" in probe) return `found ${probe.found}`;
  if ("notFound" in probe) return `not found in ${probe.notFound.join(", ")}`;
  return `cannot look (${probe.cannotLook})`;
}

/** One line on what a web config turns on. */
function describeWebConfig(web: WebConfig): string {
  const users = web.basicAuthUsers.size;
  const parts = [
    web.tls === undefined ? "plain HTTP" : "TLS",
    users === 0
      ? "no basic auth"
      : `basic auth (${users} user${users === 1 ? "" : "s"})`,
  ];
  if (web.headers.size > 0) parts.push(`${web.headers.size} extra headers`);
  return `web config ${web.file}: ${parts.join(", ")}`;
}
