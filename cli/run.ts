/**
 * The `run` and `demo` commands: load the configuration, apply the command
 * line over it, and run the agent.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { runAgent } from "../agent/run.ts";
import { fileKind } from "../base/file_kind.ts";
import { loadConfig } from "../config/load.ts";
import { withAutoGpuMonitor } from "../config/normalize.ts";
import type { AgentConfig } from "../config/types.ts";
import { VERSION } from "../config/version.ts";
import type { Logger } from "../logging/logger.ts";
import type { DemoOptions, RunOptions } from "./args.ts";
import { applyRunOptions } from "./overrides.ts";
import { readStartFiles, type StartFiles } from "./start_files.ts";
import {
  asUsageError,
  EXIT_FAILURE,
  EXIT_OK,
  UsageError,
} from "./usage_error.ts";

/** The configuration `demo` runs unless `--rules` names another. */
const DEMO_CONFIG = fileURLToPath(
  new URL("../deploy/demo.yaml", import.meta.url),
);
/** How long `demo` runs unless `--duration` says otherwise, s. */
const DEMO_SECONDS = 20;

/**
 * `run`: returns the exit code. Throws a {@linkcode UsageError} when the
 * configuration, the options over it or a file it names for the start
 * (cli/start_files.ts) cannot be used.
 *
 * @example
 * ```ts ignore
 * const code = await runCommand({ configFile: "rules.json", device: "03:00.0", forceOwnership: false, quiet: true }, log);
 * ```
 */
export async function runCommand(
  options: RunOptions,
  log: Logger,
): Promise<number> {
  const { config, start } = await prepare(options);
  const ok = await runAgent(config, {
    log,
    generator: `dpu-traceback ${VERSION}`,
    version: VERSION,
    web: start.web,
    topology: start.topology,
    credentials: start.credentials,
    durationS: options.durationS,
    quiet: options.quiet,
  });
  return ok ? EXIT_OK : EXIT_FAILURE;
}

/**
 * `demo`: `run` on the built-in simulator with deploy/demo.yaml for 20 s,
 * each of which the command line may change.
 */
export function demoCommand(
  options: DemoOptions,
  log: Logger,
): Promise<number> {
  return runCommand({
    ...options,
    configFile: options.configFile ?? DEMO_CONFIG,
    source: options.source ?? "sim",
    durationS: options.durationS ?? DEMO_SECONDS,
  }, log);
}

/** A run's configuration, with what it reads at start. */
interface Prepared {
  readonly config: AgentConfig;
  readonly start: StartFiles;
}

/** Everything a run needs from files, checked before anything starts. */
async function prepare(options: RunOptions): Promise<Prepared> {
  try {
    const config = withAutoGpuMonitor(applyRunOptions(
      await loadConfig(options.configFile, {
        dataIdsFile: options.dataIdsFile,
      }),
      options,
    ));
    for (const m of config.monitors) {
      if (m.source === "replay" && m.input !== undefined) {
        await checkCapture(m.input);
      }
    }
    // Before anything starts, and by check-config's function: a labels
    // file or an Alertmanager secret that cannot be used is the operator's
    // to fix (exit 2), not a failure worth a service manager's restart.
    return { config, start: await readStartFiles(config) };
  } catch (error) {
    // A file the operator named that cannot be used is theirs to fix.
    throw asUsageError(error);
  }
}

/** Fails with one line unless `path` is a file to replay. */
async function checkCapture(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new UsageError(`Cannot replay ${path}: no such file`, {
        cause: error,
      });
    }
    throw error;
  }
  if (!info.isFile) {
    throw new UsageError(
      `Cannot replay ${path}: is ${fileKind(info)}, not a regular file`,
    );
  }
}
