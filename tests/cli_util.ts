/**
 * Running the CLI as an operator would, for tests: a child
 * `deno run <flags> main.ts ...` with its exit code and output. Every test
 * that starts the agent or `dpu-traceback review` as a process goes
 * through {@linkcode mainCommand} (or {@linkcode runMain} and
 * {@linkcode spawnMain}, built on it).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url));

/** What a finished CLI run left behind. */
export interface MainResult {
  readonly code: number;
  /** Empty where stdout was not piped. */
  readonly stdout: string;
  /** Empty where stderr was not piped. */
  readonly stderr: string;
}

/** How to run `main.ts`; every field has a default. */
export interface MainOptions {
  /**
   * Deno's flags between `run` and `main.ts`: the permissions (and, say,
   * `--config`). Default `-A`.
   */
  readonly flags?: readonly string[];
  /**
   * Whether to add the test defaults to `args`: `--listen 127.0.0.1:0` and
   * `--gpu off`, each unless `args` choose it (see withTestDefaults).
   * Default: yes, unless the command is `review` (which takes neither).
   */
  readonly testDefaults?: boolean;
  /** Variables added to the environment (after `NO_COLOR`, if set). */
  readonly env?: Record<string, string>;
  /** Whether `NO_COLOR=1` is added to the environment. Default true. */
  readonly noColor?: boolean;
  /** Start from an empty environment instead of this process's. */
  readonly clearEnv?: boolean;
  /** The working directory. Default: the repository root. */
  readonly cwd?: string;
  /** Default `"null"`. */
  readonly stdin?: "piped" | "inherit" | "null";
  /** Default `"piped"`. */
  readonly stdout?: "piped" | "inherit" | "null";
  /** Default `"piped"`. */
  readonly stderr?: "piped" | "inherit" | "null";
  /**
   * A program to start Deno through, e.g. `["sh", "-c", 'exec "$@"',
   * "sh"]`: it is run with `via`'s arguments, then Deno's path and Deno's
   * arguments.
   */
  readonly via?: readonly string[];
  /**
   * Ends the child (SIGTERM) when it aborts: a test of something that must
   * not hang gives `AbortSignal.timeout(...)`, so a hang fails the test
   * instead of stalling the suite.
   */
  readonly signal?: AbortSignal;
}

/**
 * The agent's arguments as a test runs them: unless the test chooses a
 * `--listen`, the metrics endpoint gets a free loopback port, so test runs
 * never fight each other (or a running agent) over port 9477; unless it
 * chooses `--gpu`, no GPU monitor is added, so a host with a real GPU
 * driver runs the tests as one without.
 */
function withTestDefaults(args: readonly string[]): string[] {
  const has = (option: string) =>
    args.some((a) => a === option || a.startsWith(`${option}=`));
  return [
    ...args,
    ...(has("--listen") ? [] : ["--listen", "127.0.0.1:0"]),
    ...(has("--gpu") ? [] : ["--gpu", "off"]),
  ];
}

/** `deno run <flags> main.ts <args>` as `options` say, not started. */
export function mainCommand(
  args: readonly string[],
  options: MainOptions = {},
): Deno.Command {
  const testDefaults = options.testDefaults ?? args[0] !== "review";
  const deno = [
    "run",
    ...(options.flags ?? ["-A"]),
    join(ROOT, "main.ts"),
    ...(testDefaults ? withTestDefaults(args) : args),
  ];
  const [program, ...programArgs] = [
    ...(options.via ?? []),
    Deno.execPath(),
    ...deno,
  ];
  return new Deno.Command(program, {
    args: programArgs,
    cwd: options.cwd ?? ROOT,
    clearEnv: options.clearEnv,
    env: {
      ...((options.noColor ?? true) ? { NO_COLOR: "1" } : {}),
      ...options.env,
    },
    stdin: options.stdin ?? "null",
    stdout: options.stdout ?? "piped",
    stderr: options.stderr ?? "piped",
    signal: options.signal,
  });
}

/** Runs `main.ts` with `args` and waits for it. */
export async function runMain(
  args: readonly string[],
  options: MainOptions = {},
): Promise<MainResult> {
  const out = await mainCommand(args, options).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: (options.stdout ?? "piped") === "piped"
      ? decoder.decode(out.stdout)
      : "",
    stderr: (options.stderr ?? "piped") === "piped"
      ? decoder.decode(out.stderr)
      : "",
  };
}

/** Starts `main.ts` with `args` and returns the child (signal tests). */
export function spawnMain(
  args: readonly string[],
  options: MainOptions = {},
): Deno.ChildProcess {
  return mainCommand(args, options).spawn();
}

/**
 * Lines of the agent's stderr other than the start-up notices every run
 * of an endpoint or a sampling thread prints before anything can go
 * wrong (`dpu-traceback: metrics on URL`, `...: the sampler thread runs
 * at ...`).
 */
export function errorLines(stderr: string): string[] {
  return stderr.trimEnd().split("\n").filter((line) =>
    !/^dpu-traceback: (metrics on \S+|.*: the sampler thread runs at .*)$/
      .test(line)
  );
}
