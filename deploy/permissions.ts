/**
 * The Deno permissions baked into the `dpu-traceback` binary by
 * `deno compile`: the one list. The `compile` and `compile:arm64` tasks in
 * deno.json spell it out (a task cannot import it), and
 * tests/permissions_test.ts fails when they differ from
 * {@linkcode compileCommand}, and runs main.ts with exactly these flags.
 * After a change here, `deno run deploy/permissions.ts` prints the tasks to
 * paste into deno.json.
 *
 * What each flag is for, and why it is no narrower:
 *
 * - `--allow-read`: the configuration directory (config, data IDs, web
 *   config, TLS certificate and key); the log directory (an open events
 *   log is fstat'ed, and rotation renames, both of which Deno counts as
 *   reads); the DOCA library directories (each candidate is stat'ed before
 *   `Deno.dlopen`, and `--version` resolves the soname link); and the four
 *   standard `libnvidia-ml.so.1` paths (the GPU monitor stats and loads the
 *   first that exists; `--version` resolves its soname link). Not /sys:
 *   Deno refuses every path under /sys (and /proc and /dev) to a program
 *   without `--allow-all`, whatever `--allow-read` names
 *   (denoland/deno#27564), so the kernel source and the PCIe lookups read
 *   sysfs through libc (collectors/sysfs.ts, collectors/kernel/), as the
 *   DOCA and NVML libraries do natively; `--allow-ffi` is what allows that.
 * - `--allow-write`: the log directory only.
 * - `--allow-net` without a scope: Deno has one permission for listening
 *   and connecting, and the listen address and the Alertmanagers are the
 *   operator's choice at run time (`listen:`, `--listen HOST:PORT`,
 *   `alerting.alertmanagers`), so a scope fixed at build time would refuse
 *   them. The endpoint's thread gives `net` up once listening; the
 *   Alertmanager sender's thread gets `net` for the configured
 *   Alertmanagers' `host:port` only.
 * - `--allow-env`: exactly the variables read: JOURNAL_STREAM (the logger),
 *   DOCA_LIB_DIR and NVML_LIB_DIR (library lookup), LOG_TOKENS and
 *   LOG_STREAM (the `yaml` package reads them while parsing, and throws
 *   without access).
 * - `--allow-ffi` without a scope: Deno lets `--allow-ffi=PATH` open PATH,
 *   but every `Deno.UnsafePointer` and `Deno.UnsafePointerView` call needs
 *   the unscoped permission (denoland/deno#15511), and the DOCA bindings
 *   use both. Which libraries get opened is still bounded by
 *   `--allow-read`: a candidate the agent may not stat is refused before
 *   `Deno.dlopen` sees it.
 * - `--allow-sys=hostname`: the `instance` label of alerts defaults to the
 *   host name (`Deno.hostname()`); nothing else of the system is read.
 * - no `--allow-run` or `--allow-import`: nothing uses them
 *   (`Deno.memoryUsage()` and `process.cpuUsage()` need no permission).
 * - `--no-prompt`: a permission not granted fails at once, never waits on
 *   a terminal.
 *
 * The metrics endpoint's Worker gets narrower permissions than these
 * (agent/endpoint.ts: no write, FFI, run or env, and it gives up `net`
 * once listening). Per-worker permissions need deno.json's
 * `"unstable": ["worker-options"]`, which `deno compile` carries into the
 * binary.
 *
 * The compiled binary can also read its embedded files (`--include`): the
 * runtime grants read access to them by itself.
 *
 * @module
 */

/** Where the agent's configuration lives (deploy/install.sh). */
export const CONFIG_DIR = "/etc/dpu-traceback";
/** The only directory the agent may write: events logs. */
export const LOG_DIR = "/var/log/dpu-traceback";
/** The standard DOCA library directories (collectors/doca.ts), any arch. */
export const DOCA_LIB_DIRS: readonly string[] = [
  "/opt/mellanox/doca/lib",
  "/opt/mellanox/doca/lib64",
];
/** The files `--version` stats for NVML (collectors/versions.ts), any arch. */
export const NVML_LIBRARIES: readonly string[] = [
  "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
  "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
  "/usr/lib64/libnvidia-ml.so.1",
  "/usr/lib/libnvidia-ml.so.1",
];
/** Environment variables the agent and its packages read. */
export const ENV_VARS: readonly string[] = [
  "JOURNAL_STREAM",
  "DOCA_LIB_DIR",
  "NVML_LIB_DIR",
  "LOG_TOKENS",
  "LOG_STREAM",
];
/**
 * Files the binary needs that no static import reaches: the bcrypt, NVML,
 * kernel and DOCA samplers, endpoint and Alertmanager sender workers (`new Worker(new URL(...))`) and the demo's config (read
 * at run time).
 */
export const INCLUDES: readonly string[] = [
  "endpoint/bcrypt_worker.ts",
  "collectors/nvml/worker.ts",
  "collectors/kernel/sampler_worker.ts",
  "collectors/doca_sampler_worker.ts",
  "endpoint/worker.ts",
  "alerts/sender_worker.ts",
  "deploy/demo.yaml",
];

/**
 * V8's flags for the binary. A young generation of 1 MiB per semi-space
 * (V8 grows it to 16 MiB by default) saves about 10 MB of resident memory:
 * the sampling path allocates nothing, so the smaller nursery costs only
 * the endpoint's thread a few more, shorter scavenges.
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=1";

/** The permission flags (and V8's), in the order the tasks give them. */
export const PERMISSION_FLAGS: readonly string[] = [
  "--no-prompt",
  V8_FLAGS,
  `--allow-read=${
    [CONFIG_DIR, LOG_DIR, ...DOCA_LIB_DIRS, ...NVML_LIBRARIES].join(",")
  }`,
  `--allow-write=${LOG_DIR}`,
  "--allow-net",
  `--allow-env=${ENV_VARS.join(",")}`,
  "--allow-sys=hostname",
  "--allow-ffi",
];

/** The compile tasks: name, `--target` (none: the host's) and output. */
export const COMPILE_TASKS: Readonly<
  Record<string, { readonly target?: string; readonly output: string }>
> = {
  "compile": { output: "dist/dpu-traceback" },
  "compile:arm64": {
    target: "aarch64-unknown-linux-gnu",
    output: "dist/dpu-traceback-arm64",
  },
};

/**
 * The `deno compile` command of task `name`, as deno.json has it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileCommand } from "./permissions.ts";
 *
 * const command = compileCommand("compile:arm64");
 * assert.ok(command.startsWith("deno compile --no-prompt --v8-flags="));
 * assert.ok(command.includes(" --allow-read=/etc/dpu-traceback,"));
 * assert.ok(command.includes("--target aarch64-unknown-linux-gnu"));
 * ```
 */
export function compileCommand(name: string): string {
  const task = COMPILE_TASKS[name];
  if (task === undefined) throw new Error(`no compile task ${name}`);
  return [
    "deno compile",
    ...PERMISSION_FLAGS,
    ...INCLUDES.map((file) => `--include ${file}`),
    ...(task.target === undefined ? [] : [`--target ${task.target}`]),
    `--output ${task.output}`,
    "main.ts",
  ].join(" ");
}

if (import.meta.main) {
  const tasks = Object.fromEntries(
    Object.keys(COMPILE_TASKS).map((name) => [name, compileCommand(name)]),
  );
  console.log(JSON.stringify(tasks, null, 2));
}
