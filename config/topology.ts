/**
 * Where this agent sits, as its alerts and its topology series say it:
 * the `instance` (configured, else the host name) and the topology labels
 * (`labels:` over those of the labels file), resolved once when the agent
 * starts.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { readLabelsFile } from "./labels_file.ts";
import { MAX_TOPOLOGY_LABELS } from "./limits.ts";
import { instance, tooManyLabels } from "./topology_labels.ts";
import { parseValue } from "./values.ts";
import type { AgentConfig } from "./types.ts";

/** The resolved topology of one agent. */
export interface Topology {
  /** The `instance` label of alerts. */
  readonly instance: string;
  /** The topology labels, by name in ascending order. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The labels file's own labels, as read (before `labels:` wins over
   * them), so check-config can show where each came from; absent when no
   * labels file is configured.
   */
  readonly fileLabels?: Readonly<Record<string, string>>;
}

/**
 * The configuration's labels over the labels file's (the configuration
 * wins on a name both give), sorted by name, at most
 * {@linkcode MAX_TOPOLOGY_LABELS} in all.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { mergeLabels } from "./topology.ts";
 *
 * assert.deepEqual(
 *   mergeLabels({ rack: "r12" }, { rack: "r99", rail: "3" }, "/etc/l.ini"),
 *   { rack: "r12", rail: "3" },
 * );
 * ```
 *
 * @param configured `labels:` of the configuration.
 * @param fromFile The labels file's labels.
 * @param file The labels file, for the message.
 * @returns The merged labels.
 * @throws {RangeError} When there are more than 10 together.
 */
export function mergeLabels(
  configured: Readonly<Record<string, string>>,
  fromFile: Readonly<Record<string, string>>,
  file: string,
): Record<string, string> {
  const merged: Record<string, string> = { ...fromFile, ...configured };
  const names = Object.keys(merged).sort();
  if (names.length > MAX_TOPOLOGY_LABELS) {
    throw new RangeError(
      `Cannot read labels file ${file}: with labels: of the configuration it ${
        tooManyLabels(names.length)
      }`,
    );
  }
  return Object.fromEntries(names.map((n) => [n, merged[n]]));
}

/**
 * Resolves `config`'s topology: reads its labels file (if any) and, when
 * no `instance` is configured, the host name. Call it once at start; a
 * changed file takes effect at the next start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveTopology } from "./topology.ts";
 * import { parseConfig } from "./load.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".ini" });
 * await Deno.writeTextFile(path, "rail = 3\nrack = r99\n");
 * const config = parseConfig(
 *   `instance: dpu-r12-07
 * labels: { rack: r12 }
 * labels_file: ${path}
 * monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]`,
 *   "a.yaml",
 * );
 * assert.deepEqual(await resolveTopology(config), {
 *   instance: "dpu-r12-07",
 *   labels: { rack: "r12", rail: "3" },
 *   fileLabels: { rail: "3", rack: "r99" },
 * });
 * await Deno.remove(path);
 * ```
 *
 * @param config The loaded configuration.
 * @returns The instance, the topology labels and the labels file's own.
 * @throws {TypeError | RangeError} When the labels file is not valid or
 * the host name is no label value; `Deno.errors.NotFound` when the labels
 * file does not exist; `Error` when the host name cannot be read.
 */
export async function resolveTopology(
  config: Pick<AgentConfig, "instance" | "labels" | "labelsFile">,
): Promise<Topology> {
  if (config.labelsFile === undefined) {
    return {
      instance: config.instance ?? hostInstance(),
      labels: mergeLabels(config.labels, {}, ""),
    };
  }
  const fileLabels = await readLabelsFile(config.labelsFile);
  const labels = mergeLabels(config.labels, fileLabels, config.labelsFile);
  return { instance: config.instance ?? hostInstance(), labels, fileLabels };
}

/** The host name as an instance, or why it cannot be one. */
function hostInstance(): string {
  let name: string;
  try {
    name = Deno.hostname();
  } catch (error) {
    throw new Error(
      `Cannot tell the host name for the instance label (${
        errorMessage(error)
      }); set instance: in the configuration`,
      { cause: error },
    );
  }
  const parsed = parseValue(instance, name);
  if (!parsed.ok) {
    throw new TypeError(
      `The host name ${
        JSON.stringify(name.slice(0, 100))
      } ${parsed.problem}; set instance: in the configuration`,
    );
  }
  return parsed.value;
}
