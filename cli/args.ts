/**
 * Command-line parsing. The reference app's invocation
 * (`dpu-traceback -d 03:00.0 --rules rules.json`) is the `run` command.
 *
 * @module
 */

import { LOG_LEVELS, type LogLevel } from "../logging/logger.ts";
import { formatValue } from "../config/errors.ts";
import { MAX_DURATION_S } from "../config/limits.ts";
import type { GpuMode, SourceKind } from "../config/types.ts";
import {
  gpuMode,
  listen,
  metricsWindow,
  parseValue,
  text,
} from "../config/values.ts";
import { parseOptions } from "./parse_options.ts";
import { UsageError } from "./usage_error.ts";

/** Options of `run` (and `demo`), as given on the command line. */
export interface RunOptions {
  /** `--rules`, `-c` or `--config`. */
  readonly configFile: string;
  readonly dataIdsFile?: string;
  readonly device?: string;
  readonly eventLog?: string;
  readonly source?: SourceKind;
  readonly input?: string;
  readonly durationS?: number;
  readonly listen?: string;
  readonly webConfigFile?: string;
  readonly metricsWindowS?: number;
  readonly seed?: number;
  readonly forceOwnership: boolean;
  readonly docaLibDir?: string;
  readonly nvmlLibDir?: string;
  /** `--gpu`: whether a GPU monitor is added when none is configured. */
  readonly gpu?: GpuMode;
  /** No live status line and no closing table. */
  readonly quiet: boolean;
  /** Least severe operational message written (`--log-level`). */
  readonly logLevel?: LogLevel;
}

/** What the command line asks for. */
export type Command =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | {
    readonly kind: "check-config";
    readonly configFile: string;
    readonly dataIdsFile?: string;
  }
  | { readonly kind: "run"; readonly options: RunOptions }
  /** `review`: its arguments, parsed by cli/review_args.ts. */
  | { readonly kind: "review"; readonly args: readonly string[] }
  /** `counters`: its arguments, parsed by cli/counters.ts. */
  | { readonly kind: "counters"; readonly args: readonly string[] }
  | {
    readonly kind: "demo";
    readonly options: DemoOptions;
  };

/** Options of `demo`: those of `run`, the rules file optional. */
export type DemoOptions = Omit<RunOptions, "configFile"> & {
  readonly configFile?: string;
};

const RUN_OPTIONS = {
  device: { type: "string", short: "d" },
  rules: { type: "string" },
  config: { type: "string", short: "c" },
  "data-ids": { type: "string" },
  "event-log": { type: "string" },
  source: { type: "string" },
  input: { type: "string" },
  duration: { type: "string" },
  listen: { type: "string" },
  "web-config-file": { type: "string" },
  "metrics-window": { type: "string" },
  seed: { type: "string" },
  "force-ownership": { type: "boolean" },
  "doca-lib-dir": { type: "string" },
  gpu: { type: "string" },
  "nvml-lib-dir": { type: "string" },
  quiet: { type: "boolean", short: "q" },
  "log-level": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const;

const SOURCES: readonly SourceKind[] = ["doca", "sim", "replay"];
const COMMANDS = ["run", "check-config", "demo", "help"];

/** The `--help` text. */
export const USAGE = `Usage:
  dpu-traceback [run] -d DEVICE --rules FILE [options]   sample, evaluate rules, write events.log
  dpu-traceback check-config FILE [--data-ids FILE]     validate a config and summarize it
  dpu-traceback demo                                    20 s on the built-in simulator
  dpu-traceback review [FILE|DIR] [options]             list the events in events.log (review --help)
  dpu-traceback counters -d DEVICE [--json]             list what a device offers to sample (counters --help)
  dpu-traceback --help | --version

Run options:
  -d, --device DEVICE      PCIe address (03:00.0, 0000:03:00.0), IB device or interface
  -c, --config, --rules FILE
                           rules/config file: the reference JSON or our YAML/JSON
      --data-ids FILE      data IDs in a separate JSON/YAML file (reference form)
      --event-log FILE     events log path (default events.log; single monitor only)
      --source SOURCE      doca (default), sim (built-in simulator) or replay
      --input FILE         CSV capture for --source replay
      --duration SECONDS   stop after this long (default: until SIGINT/SIGTERM)
      --listen HOST:PORT   metrics endpoint address (default 0.0.0.0:9477; off for none)
      --web-config-file FILE
                           TLS and basic auth for the endpoint (exporter-toolkit format)
      --metrics-window SECONDS
                           aggregation window of the served rates and extremes (default 10)
      --seed N             simulator seed
      --force-ownership    take the diag context over from another owner
      --doca-lib-dir DIR   load the DOCA libraries from DIR first (also DOCA_LIB_DIR)
      --gpu auto|off       auto (default): also watch every GPU NVML finds when a
                           NIC is monitored and the config has no GPU monitor
      --nvml-lib-dir DIR   load libnvidia-ml.so.1 from DIR first (also NVML_LIB_DIR)
  -q, --quiet              no live status line, no closing event table
      --log-level LEVEL    error, warning, info (default) or debug; under systemd,
                           lines carry journald priorities

Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
`;

/**
 * Parses `args` (without the program name). Throws a {@linkcode UsageError}
 * with a one-line message on a usage error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCommand } from "./args.ts";
 * import { UsageError } from "./usage_error.ts";
 *
 * const command = parseCommand(["-d", "03:00.0", "--rules", "rules.json"]);
 * assert.equal(command.kind, "run");
 * assert.equal(command.kind === "run" && command.options.device, "03:00.0");
 * assert.deepEqual(parseCommand(["review", "--json"]), { kind: "review", args: ["--json"] });
 * assert.throws(() => parseCommand(["--gpu", "on", "--rules", "r.json"]), UsageError);
 * ```
 */
export function parseCommand(args: readonly string[]): Command {
  // review and counters have options of their own; they parse them.
  if (args[0] === "review") return { kind: "review", args: args.slice(1) };
  if (args[0] === "counters") return { kind: "counters", args: args.slice(1) };
  const { values, positionals } = parseOptions(args, RUN_OPTIONS);
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };

  let command = "run";
  let rest = positionals;
  if (positionals.length > 0 && COMMANDS.includes(positionals[0])) {
    command = positionals[0];
    rest = positionals.slice(1);
  }
  if (command === "help") return { kind: "help" };

  if (
    values.rules !== undefined && values.config !== undefined &&
    values.rules !== values.config
  ) {
    throw new UsageError(
      "--rules and --config name the same file; give one of them",
    );
  }
  const configFile = pathOption("--rules", values.rules) ??
    pathOption("--config", values.config);
  const dataIdsFile = pathOption("--data-ids", values["data-ids"]);

  if (command === "check-config") {
    if (rest.length > 1) {
      throw new UsageError(`check-config takes one file, got ${rest.length}`);
    }
    const file = pathOption("check-config's FILE", rest[0]) ?? configFile;
    if (file === undefined) throw new UsageError("check-config needs a FILE");
    return {
      kind: "check-config",
      configFile: file,
      dataIdsFile,
    };
  }
  if (rest.length > 0) {
    throw new UsageError(`unexpected argument ${formatValue(rest[0])}`);
  }

  const options = {
    dataIdsFile,
    device: values.device,
    eventLog: parseEventLogOption(values["event-log"]),
    source: parseSource(values.source),
    input: pathOption("--input", values.input),
    durationS: parseDuration(values.duration),
    listen: values.listen === undefined
      ? undefined
      : parseListenOption(values.listen),
    webConfigFile: pathOption("--web-config-file", values["web-config-file"]),
    metricsWindowS: parseMetricsWindowOption(values["metrics-window"]),
    seed: parseSeed(values.seed),
    forceOwnership: values["force-ownership"] ?? false,
    docaLibDir: pathOption(
      "--doca-lib-dir",
      values["doca-lib-dir"],
      "directory",
    ),
    nvmlLibDir: pathOption(
      "--nvml-lib-dir",
      values["nvml-lib-dir"],
      "directory",
    ),
    gpu: parseGpuOption(values.gpu),
    quiet: values.quiet ?? false,
    logLevel: parseLogLevel(values["log-level"]),
  };
  if (command === "demo") {
    return { kind: "demo", options: { ...options, configFile } };
  }
  if (configFile === undefined) {
    throw new UsageError(
      "missing the rules file: --rules FILE (or -c/--config FILE)",
    );
  }
  return { kind: "run", options: { ...options, configFile } };
}

function parseLogLevel(value: string | undefined): LogLevel | undefined {
  if (value === undefined) return undefined;
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new UsageError(
      `--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${
        formatValue(value)
      }`,
    );
  }
  return value as LogLevel;
}

function parseGpuOption(value: string | undefined): GpuMode | undefined {
  if (value === undefined) return undefined;
  const parsed = parseValue(gpuMode, value);
  if (!parsed.ok) {
    throw new UsageError(`--gpu ${parsed.problem}, got ${formatValue(value)}`);
  }
  return parsed.value;
}

function parseSource(value: string | undefined): SourceKind | undefined {
  if (value === undefined) return undefined;
  if (!(SOURCES as readonly string[]).includes(value)) {
    throw new UsageError(
      `--source must be one of ${SOURCES.join(", ")}, got ${
        formatValue(value)
      }`,
    );
  }
  return value as SourceKind;
}

/** A number of seconds as people write one: digits, maybe a fraction. */
const SECONDS = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/;

/**
 * `--duration`: more than 0 and at most {@linkcode MAX_DURATION_S} (ten
 * years), so that it is a real span of time and fits every timer use.
 */
function parseDuration(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = SECONDS.test(value) ? Number(value) : NaN;
  if (!(n > 0)) {
    throw new UsageError(
      `--duration must be a positive number of seconds, got ${
        formatValue(value)
      }`,
    );
  }
  if (n > MAX_DURATION_S) {
    throw new UsageError(
      `--duration must be at most ${MAX_DURATION_S} seconds (ten years); leave it out to run until stopped, got ${
        formatValue(value)
      }`,
    );
  }
  return n;
}

/** `--metrics-window`, bounded as the configuration's metrics_window_s. */
function parseMetricsWindowOption(
  value: string | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  if (!SECONDS.test(value)) {
    throw new UsageError(
      `--metrics-window must be a positive number of seconds, got ${
        formatValue(value)
      }`,
    );
  }
  // 400 digits make Infinity: past the bound, not "not a number".
  const parsed = parseValue(
    metricsWindow,
    Math.min(Number(value), Number.MAX_VALUE),
  );
  if (!parsed.ok) {
    throw new UsageError(
      `--metrics-window ${parsed.problem}, got ${formatValue(value)}`,
    );
  }
  return parsed.value;
}

/** `--seed`: digits only, up to 2^53 - 1 so that the number is exact. */
function parseSeed(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new UsageError(
      `--seed must be a non-negative integer, from 0 to ${Number.MAX_SAFE_INTEGER}, got ${
        formatValue(value)
      }`,
    );
  }
  return n;
}

/**
 * A file or directory the operator names. An empty one names nothing (a
 * shell variable that was not set, as in `--event-log "$LOG"`): refused
 * here, rather than failing later to open "" (exit 1, or a message with
 * no name in it).
 */
function pathOption(
  option: string,
  value: string | undefined,
  kind: "file" | "directory" = "file",
): string | undefined {
  if (value === "") {
    throw new UsageError(`${option} must be a ${kind} path, got ""`);
  }
  return value;
}

/**
 * `--event-log`: a path, and by the same rule as the config's `event_log`
 * (one line of text), since it is written into headers, alerts and the
 * events API.
 */
function parseEventLogOption(value: string | undefined): string | undefined {
  if (pathOption("--event-log", value) === undefined) return undefined;
  const parsed = parseValue(text, value);
  if (!parsed.ok) {
    throw new UsageError(
      `--event-log ${parsed.problem}, got ${formatValue(value)}`,
    );
  }
  return parsed.value;
}

/** The listen address, checked by the same rule as the config's `listen`. */
function parseListenOption(value: string): string {
  const parsed = parseValue(listen, value);
  if (!parsed.ok) {
    throw new UsageError(
      `--listen ${parsed.problem}, got ${formatValue(value)}`,
    );
  }
  return parsed.value;
}
