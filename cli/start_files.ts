/**
 * The files a run reads at start besides the configuration: the web
 * config (with its certificate and key), the labels file (with the host
 * name, the topology) and the Alertmanagers' password, token, CA and
 * client certificate files. `run` reads them all before anything starts,
 * and `check-config` reads them with this same function: what one accepts
 * the other does, and a file `run` would refuse fails `check-config`
 * first, each with exit 2 (a service manager would otherwise restart an
 * agent whose files can never work).
 *
 * @module
 */

import {
  type AlertmanagerCredentials,
  readCredentials,
} from "../alerts/alertmanager_client.ts";
import { resolveTopology, type Topology } from "../config/topology.ts";
import type { AgentConfig } from "../config/types.ts";
import { LISTEN_OFF } from "../config/values.ts";
import { loadWebConfig, type WebConfig } from "../endpoint/web_config.ts";

/** What {@linkcode readStartFiles} read. */
export interface StartFiles {
  /** The endpoint's web config, when one is read. */
  readonly web?: WebConfig;
  /** The instance and the topology labels (and the labels file's own). */
  readonly topology: Topology;
  /** Each Alertmanager's credentials, in order, when alerting is on. */
  readonly credentials?: readonly AlertmanagerCredentials[];
}

/**
 * Reads and checks every file `config` names for the start (see the
 * module). Each is read through config/read_text.ts: a regular file only,
 * bounded, refused in one line naming it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "../config/load.ts";
 * import { readStartFiles } from "./start_files.ts";
 *
 * const config = parseConfig(
 *   `instance: dpu-1
 * alerting:
 *   alertmanagers:
 *     - url: http://am:9093
 *       bearer_token_file: /dev/zero
 * monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]`,
 *   "a.yaml",
 * );
 * await assert.rejects(readStartFiles(config), {
 *   message: "Cannot read the bearer token of Alertmanager http://am:9093 from /dev/zero: is a character device, not a regular file",
 * });
 * ```
 *
 * @param config The configuration, with the command line applied.
 * @param options `webConfig: "always"` reads the web config even where
 * `listen` is off (check-config: the command line of the run may turn the
 * endpoint on); by default only when the endpoint will serve.
 * @returns What was read.
 */
export async function readStartFiles(
  config: AgentConfig,
  options: { readonly webConfig?: "always" | "if listening" } = {},
): Promise<StartFiles> {
  const wanted = options.webConfig === "always" ||
    config.listen !== LISTEN_OFF;
  const web = wanted && config.webConfigFile !== undefined
    ? await loadWebConfig(config.webConfigFile)
    : undefined;
  const topology = await resolveTopology(config);
  let credentials: AlertmanagerCredentials[] | undefined;
  if (config.alerting !== undefined) {
    credentials = [];
    // One after another: with two bad files, the first is always the one told.
    for (const am of config.alerting.alertmanagers) {
      credentials.push(await readCredentials(am));
    }
  }
  return {
    ...(web === undefined ? {} : { web }),
    topology,
    ...(credentials === undefined ? {} : { credentials }),
  };
}
