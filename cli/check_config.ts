/**
 * The `check-config` command: validate a configuration (and the web config
 * it names) and summarize it, before a service restart finds a mistake.
 *
 * @module
 */

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
    summary = describeConfig(withAutoGpuMonitor(config), { fileLabels });
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
