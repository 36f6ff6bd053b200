/**
 * The permissions the compiled binary gets (deploy/permissions.ts): the
 * compile tasks in deno.json carry exactly them, and main.ts run with
 * exactly them works (every `--include`d module loads as a Worker; sim
 * source, events log with rotation, the endpoint with basic auth and its
 * bcrypt worker, the DOCA source, --version, the demo, journald detection)
 * and is refused a write outside the log directory and a DOCA library
 * outside the readable directories.
 *
 * `deno compile` needs its runtime (denort) from Deno's download server,
 * which test machines cannot reach, so the binary itself is not built here:
 * `deno run` with the same flags stands in for it, with two differences
 * made on purpose, both in {@linkcode agentFlags}:
 *
 * - the log directory /var/log/dpu-traceback becomes a temporary one (a
 *   test may not write the real one). It is the only path rewritten; the
 *   test's config files go in it too (the log directory is readable), since
 *   /etc/dpu-traceback cannot be written either.
 * - read access to the `--include`d files is added: the compiled binary's
 *   runtime grants read access to its embedded files by itself, while
 *   `deno run` reads them from the repository.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath as fromFileUrl, pathToFileURL } from "node:url";
import bcrypt from "bcryptjs";
import {
  COMPILE_TASKS,
  compileCommand,
  ENV_VARS,
  INCLUDES,
  LOG_DIR,
  PERMISSION_FLAGS,
} from "../deploy/permissions.ts";
import {
  errorLines,
  type MainOptions,
  type MainResult,
  ROOT,
  runMain,
  spawnMain,
} from "./cli_util.ts";
import { buildDocaSim } from "./fixtures/libdoca_sim/build.ts";
import { exists } from "./deploy_util.ts";
import { tempDir } from "./temp_dir.ts";

/**
 * The `--include`d files and the local modules they import: the binary
 * embeds all of them, while a run from source reads them (a worker's
 * imports are loaded when the worker starts, under its permissions).
 */
async function embeddedFiles(): Promise<string[]> {
  const files = new Set<string>();
  for (const file of INCLUDES) {
    files.add(join(ROOT, file));
    if (!file.endsWith(".ts")) continue;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", join(ROOT, file)],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { specifier: string }[];
    };
    for (const { specifier } of graph.modules) {
      if (specifier.startsWith("file://")) files.add(fromFileUrl(specifier));
    }
  }
  return [...files];
}

const EMBEDDED = await embeddedFiles();

/**
 * {@linkcode PERMISSION_FLAGS} as a test runs them: `logDir` for
 * /var/log/dpu-traceback, plus read access to the embedded files (see
 * {@linkcode embeddedFiles}). Nothing else differs.
 */
function agentFlags(logDir: string): string[] {
  const embedded = EMBEDDED;
  const flags = PERMISSION_FLAGS.map((flag) => {
    const moved = flag.replaceAll(LOG_DIR, logDir);
    return moved.startsWith("--allow-read=")
      ? `${moved},${embedded.join(",")}`
      : moved;
  });
  // The log directory is named twice (read and write), and now only as
  // the temporary one.
  assert.equal(flags.filter((f) => f.includes(logDir)).length, 2);
  assert.ok(!flags.some((f) => f.includes(LOG_DIR)));
  return flags;
}

/**
 * This test's environment without the variables the agent reads, so that
 * only what a test sets (DOCA_LIB_DIR, JOURNAL_STREAM) reaches it.
 */
function agentEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of ENV_VARS) delete env[name];
  return { ...env, NO_COLOR: "1", ...extra };
}

interface RunOptions {
  readonly logDir: string;
  readonly env?: Record<string, string>;
  readonly cwd?: string;
}

/**
 * The agent run by `deno run --config deno.json <the binary's flags>
 * main.ts`, with only the environment {@linkcode agentEnv} leaves.
 */
function agentOptions(options: RunOptions): MainOptions {
  return {
    flags: ["--config", join(ROOT, "deno.json"), ...agentFlags(options.logDir)],
    testDefaults: false,
    clearEnv: true,
    env: agentEnv(options.env),
    cwd: options.cwd,
  };
}

/** Runs the agent to the end: exit code and output. */
function runAgent(
  args: readonly string[],
  options: RunOptions,
): Promise<MainResult> {
  return runMain(args, agentOptions(options));
}

/** One error line and no stack trace. */
function assertOneLine(stderr: string, pattern: RegExp): void {
  const lines = errorLines(stderr);
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], pattern);
  assert.ok(!/^\s+at /m.test(stderr), `stack trace in: ${stderr}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Runs `fn` with a temporary root holding an empty `log` directory. */
async function withLogDir(
  fn: (root: string, logDir: string) => Promise<void>,
): Promise<void> {
  await using root = await tempDir("dpu_traceback_perm_");
  const logDir = join(root.path, "log");
  await Deno.mkdir(logDir);
  await fn(root.path, logDir);
}

/** A sim monitor whose one rule is always active: events from the start. */
function simConfig(logDir: string, extra = ""): string {
  return `${extra}
monitors:
  - name: nic
    source: sim
    sample_period_ns: 100000
    depth: 100
    event_log: ${join(logDir, "events.log")}
    seed: 7
    columns:
      - { name: port_0_rx_bytes, data_id: "0x1020000100000000" }
      - { name: port_0_rx_ecn_packets, data_id: "0x1080000400000000" }
    rules:
      - name: "Rx bytes rising"
        column: port_0_rx_bytes
        comparison_type: inc_gt
        comparison_value: 0
`;
}

Deno.test("deno.json's compile tasks are deploy/permissions.ts's commands", async () => {
  const { tasks } = JSON.parse(
    await Deno.readTextFile(join(ROOT, "deno.json")),
  ) as { tasks: Record<string, string> };
  assert.deepEqual(Object.keys(COMPILE_TASKS), ["compile", "compile:arm64"]);
  for (const name of Object.keys(COMPILE_TASKS)) {
    assert.equal(
      tasks[name],
      compileCommand(name),
      `deno.json task "${name}" differs from deploy/permissions.ts; ` +
        "`deno run deploy/permissions.ts` prints the tasks to paste",
    );
  }
  assert.match(tasks["compile:arm64"], / --target aarch64-unknown-linux-gnu /);
  assert.ok(!tasks["compile"].includes("--target"));
  // Nothing broader than the list slipped in: sys only for the host name.
  for (const task of Object.keys(COMPILE_TASKS).map((n) => tasks[n])) {
    assert.ok(!/ (-A|--allow-all|--allow-run)\b/.test(task));
    assert.deepEqual(task.match(/--allow-sys\S*/g), ["--allow-sys=hostname"]);
  }
});

/**
 * The host for the next test: starts each module named in its arguments as
 * a module Worker, through {@linkcode WORKER_LOADER}, and prints one line
 * for each, `URL loaded` or `URL failed: MESSAGE`. It exits 1 if one failed.
 */
const WORKER_HOST = `
const loader = new URL("./load.js", import.meta.url);
let failed = false;
for (const module of Deno.args) {
  const worker = new Worker(loader, { type: "module", name: module });
  const result = await new Promise((resolve) => {
    worker.onmessage = (e) => { if (e.data === "loaded") resolve("loaded"); };
    worker.onerror = (e) => {
      e.preventDefault();
      resolve("failed: " + e.message);
    };
  });
  worker.terminate();
  if (result !== "loaded") failed = true;
  console.log(module + " " + result);
}
if (failed) Deno.exit(1);
`;

/**
 * A Worker has no "loaded" event, so the module is imported by this one,
 * which says "loaded" once the module and its imports have been evaluated.
 */
const WORKER_LOADER = `
await import(self.name);
self.postMessage("loaded");
`;

Deno.test("with exactly the binary's permissions every --include'd module loads as a Worker", async () => {
  // Derived from INCLUDES, so a new worker is covered once it is included
  // (tests/compile_test.ts fails until it is).
  const modules = INCLUDES.filter((file) => /\.(m?[jt]sx?)$/.test(file))
    .map((file) => pathToFileURL(join(ROOT, file)).href);
  assert.ok(modules.length >= 2, `${INCLUDES}`);
  await withLogDir(async (_root, logDir) => {
    // The host and loader go in the log directory, which is readable.
    await Deno.writeTextFile(join(logDir, "host.js"), WORKER_HOST);
    await Deno.writeTextFile(join(logDir, "load.js"), WORKER_LOADER);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        join(ROOT, "deno.json"),
        ...agentFlags(logDir),
        join(logDir, "host.js"),
        ...modules,
      ],
      cwd: ROOT,
      clearEnv: true,
      env: agentEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    const stdout = decoder.decode(out.stdout);
    const stderr = decoder.decode(out.stderr);
    assert.equal(
      stdout,
      modules.map((module) => `${module} loaded\n`).join(""),
      stderr,
    );
    assert.equal(out.code, 0, stderr);
  });
});

Deno.test("with exactly the binary's permissions the agent samples, logs, rotates and serves", async () => {
  await withLogDir(async (_root, logDir) => {
    await Deno.writeTextFile(
      join(logDir, "web.yaml"),
      `basic_auth_users:\n  alice: "${bcrypt.hashSync("alice pw", 4)}"\n`,
    );
    const config = join(logDir, "config.yaml");
    await Deno.writeTextFile(
      config,
      simConfig(
        logDir,
        `listen: "127.0.0.1:0"
web_config_file: ${join(logDir, "web.yaml")}
# Small enough to rotate within the run (renames need read access), and
# enough kept that no file is dropped.
event_log_max_bytes: 65536
event_log_keep: 1000
`,
      ),
    );
    // It runs until the checks below are done and a log has rotated, then
    // gets SIGTERM: no fixed duration that a loaded machine could outlast.
    const child = spawnMain(["run", "-q", "-c", config], {
      ...agentOptions({ logDir }),
      stdout: "null",
    });
    const reader = child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let stderr = "";
    let url: string | undefined;
    while (url === undefined) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += value;
      url = /^dpu-traceback: metrics on (\S+)$/m.exec(stderr)?.[1];
    }
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        stderr += value;
      }
    })();
    try {
      assert.ok(url !== undefined, `no endpoint: ${stderr}`);
      // Right password: the bcrypt worker (an --include'd module) answers.
      const ok = await fetch(`${url}metrics`, {
        headers: { authorization: `Basic ${btoa("alice:alice pw")}` },
      });
      const body = await ok.text();
      assert.equal(ok.status, 200, body);
      assert.match(body, /^dpu_traceback_samples_total\{monitor="nic"\} \d+/m);
      assert.match(body, /^process_resident_memory_bytes \d+/m);
      const wrong = await fetch(`${url}metrics`, {
        headers: { authorization: `Basic ${btoa("alice:wrong")}` },
      });
      await wrong.body?.cancel();
      assert.equal(wrong.status, 401);
      // Every sample is logged, so the first rotation comes in well under
      // a second; a minute without one fails below ("no rotation").
      const rotated = join(logDir, "events.log.1");
      for (let i = 0; i < 1200 && !await exists(rotated); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // It ended already: its status and stderr below say why.
      }
      const status = await child.status;
      await rest;
      assert.equal(status.code, 0, stderr);
    }
    assert.ok(
      !/Requires|NotCapable|cannot (rotate|write)/.test(stderr),
      stderr,
    );
    // Rotated (each file starts with a header), the event in the oldest.
    const logs: string[] = [];
    for await (const { name } of Deno.readDir(logDir)) {
      if (!/^events\.log(\.\d+)?$/.test(name)) continue;
      logs.push(await Deno.readTextFile(join(logDir, name)));
    }
    assert.ok(logs.length >= 2, "no rotation");
    for (const log of logs) {
      assert.match(log, /^Telemetry monitor : dpu-traceback /);
    }
    assert.match(
      logs.join(""),
      /^<<Event start>> Time: .*, Rule: "Rx bytes rising"$/m,
    );
  });
});

Deno.test("with exactly the binary's permissions a write outside the log directory is refused", async () => {
  await withLogDir(async (root, logDir) => {
    const config = join(logDir, "config.yaml");
    await Deno.writeTextFile(config, simConfig(logDir));
    const outside = join(root, "outside");
    await Deno.mkdir(outside);
    // Deno's message names the directory the log would be created in, as
    // the agent named it.
    const cases = [
      { eventLog: join(outside, "events.log"), cwd: ROOT, dir: outside },
      // Relative paths resolve against the working directory (the unit's
      // is the log directory): climbing out of it is refused too.
      { eventLog: "../outside/events.log", cwd: logDir, dir: "../outside" },
    ];
    for (const { eventLog, cwd, dir } of cases) {
      const result = await runAgent(
        ["run", "-q", "-c", config, "--event-log", eventLog, "--duration", "1"],
        { logDir, cwd },
      );
      assert.equal(result.code, 1, result.stderr);
      assertOneLine(
        result.stderr,
        new RegExp(
          `^dpu-traceback: Cannot open events log ${
            escapeRegExp(eventLog)
          }: Requires write access to "${escapeRegExp(dir)}"`,
        ),
      );
      assert.deepEqual(await Array.fromAsync(Deno.readDir(outside)), []);
    }
  });
});

Deno.test("with exactly the binary's permissions the DOCA source loads libraries only from readable directories", async () => {
  const sim = await buildDocaSim();
  try {
    await withLogDir(async (_root, logDir) => {
      const rules = join(logDir, "rules.json");
      await Deno.writeTextFile(
        rules,
        JSON.stringify({
          diag_sample_period_ns: 100000,
          sample_history_depth: 8,
          "data-ids": [
            { name: "port_0_rx_bytes", data_id: "0x1020000100000000" },
          ],
          rules: [{
            name: "Rx bytes rising",
            data_id: "0x1020000100000000",
            comparison_type: "inc_gt",
            comparison_value: 0,
          }],
        }),
      );
      const args = (log: string) => [
        "-q",
        "--rules",
        rules,
        "-d",
        "03:00.0",
        "--event-log",
        join(logDir, log),
        "--duration",
        "0.5",
        "--listen",
        "off",
      ];
      // Inside a readable directory (the real ones, under
      // /opt/mellanox/doca, cannot be written by a test): dlopen and the
      // pointer calls work with the binary's --allow-ffi.
      const readable = join(logDir, "doca");
      await Deno.mkdir(readable);
      for (const file of [sim.common, sim.telemetry]) {
        await Deno.copyFile(file, join(readable, file.split("/").pop()!));
      }
      const ok = await runAgent(args("doca.log"), {
        logDir,
        env: { DOCA_LIB_DIR: readable },
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(
        await Deno.readTextFile(join(logDir, "doca.log")),
        /^Telemetry monitor : dpu-traceback /,
      );
      // Outside them: refused before Deno.dlopen, naming the library.
      const refused = await runAgent(args("refused.log"), {
        logDir,
        env: { DOCA_LIB_DIR: sim.dir },
      });
      assert.equal(refused.code, 1, refused.stderr);
      assertOneLine(
        refused.stderr,
        new RegExp(
          `^dpu-traceback: Requires read access to "${
            escapeRegExp(sim.common)
          }"`,
        ),
      );
      assert.ok(!await exists(join(logDir, "refused.log")));
    });
  } finally {
    await sim.cleanup();
  }
});

Deno.test("with exactly the binary's permissions --version, the demo and journald detection work", async () => {
  await withLogDir(async (root, logDir) => {
    const version = await runAgent(["--version"], { logDir });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^dpu-traceback \S+\n/);
    assert.match(version.stdout, /^doca: /m);
    assert.match(version.stdout, /^nvml: /m);

    // The demo's config is an --include'd file; its log must go to the log
    // directory (its default, demo-out/, is not writable in the binary).
    const demo = await runAgent([
      "demo",
      "-q",
      "--duration",
      "1",
      "--listen",
      "127.0.0.1:0",
      "--event-log",
      join(logDir, "demo.log"),
    ], { logDir });
    assert.equal(demo.code, 0, demo.stderr);
    assert.ok(await exists(join(logDir, "demo.log")));

    // Under systemd, stderr is the journal stream JOURNAL_STREAM names:
    // the agent finds that out (fstat of fd 2) and writes priorities.
    const stderrFile = join(root, "stderr");
    await Deno.writeTextFile(stderrFile, "");
    const { dev, ino } = await Deno.stat(stderrFile);
    const out = await runMain(["--no-such-option"], {
      ...agentOptions({
        logDir,
        env: { JOURNAL_STREAM: `${dev}:${ino}`, STDERR_FILE: stderrFile },
      }),
      via: ["sh", "-c", 'exec "$@" 2>>"$STDERR_FILE"', "sh"],
      stdout: "null",
    });
    assert.equal(out.code, 2);
    assert.match(
      await Deno.readTextFile(stderrFile),
      /^<3>Unknown option '--no-such-option'/,
    );
  });
});

Deno.test("with exactly the binary's permissions the kernel source finds an interface, lists its counters and samples it", async () => {
  // Deno refuses /sys to anything short of --allow-all: the lookups must
  // go through libc (collectors/sysfs.ts), or none of this finds `lo`.
  await withLogDir(async (_root, logDir) => {
    const config = join(logDir, "kernel.yaml");
    await Deno.writeTextFile(
      config,
      `listen: "off"
gpu: off
monitors:
  - name: host
    source: kernel
    device: lo
    sample_period_ns: 10000000
    depth: 4
    event_log: ${join(logDir, "host-events.log")}
    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
    rules:
      - name: always
        column: rx_packets
        comparison_type: lt
        comparison_value: 9007199254740991
`,
    );
    const checked = await runAgent(["check-config", config], { logDir });
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(
      checked.stdout + checked.stderr,
      /^monitor host: lo is here and offers all 1 of its counters$/m,
    );

    const counters = await runAgent(["counters", "-d", "lo", "--json"], {
      logDir,
    });
    assert.equal(counters.code, 0, counters.stderr);
    assert.match(counters.stdout, /"netdev:rx_packets"/);

    const run = await runAgent(
      ["run", "-q", "-c", config, "--duration", "0.5"],
      { logDir },
    );
    assert.equal(run.code, 0, run.stderr);
    const log = await Deno.readTextFile(join(logDir, "host-events.log"));
    assert.match(log, /^<<Event start>> .*Rule: "always"$/m);
  });
});
