/**
 * Helpers for tests that run the CLI as an operator would: a child
 * `deno run main.ts ...` with its exit code and output.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** Repository root. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url));

/** What a finished CLI run left behind. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The agent's arguments as a test runs them: unless the test chooses a
 * `--listen`, the metrics endpoint gets a free loopback port, so test runs
 * never fight each other (or a running agent) over port 9477; unless it
 * chooses `--gpu`, no GPU monitor is added, so a host with a real GPU
 * driver runs the tests as one without.
 */
function withListen(args: readonly string[]): string[] {
  const has = (option: string) =>
    args.some((a) => a === option || a.startsWith(`${option}=`));
  return [
    ...args,
    ...(has("--listen") ? [] : ["--listen", "127.0.0.1:0"]),
    ...(has("--gpu") ? [] : ["--gpu", "off"]),
  ];
}

/** Runs `main.ts` with `args` from the repository root and waits for it. */
export async function runCli(
  args: readonly string[],
  options: { env?: Record<string, string> } = {},
): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...withListen(args)],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

/** Starts `main.ts` with `args` and returns the child, for signal tests. */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...withListen(args)],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Lines of the agent's stderr other than the endpoint's start-up notice
 * (`dpu-traceback: metrics on URL`), which every run with an endpoint
 * prints before anything can go wrong.
 */
export function errorLines(stderr: string): string[] {
  return stderr.trimEnd().split("\n").filter((line) =>
    !/^dpu-traceback: metrics on \S+$/.test(line)
  );
}
