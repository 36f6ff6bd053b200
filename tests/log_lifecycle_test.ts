/**
 * The events log's life under an operator: logrotate renames it and sends
 * SIGHUP; the disk fills up; stderr goes away; a second agent is started
 * on the same log. The agent keeps sampling, evaluating rules and serving
 * metrics through them, and loses no row.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startedAgent } from "./agent_util.ts";
import { errorLines, runMain, spawnMain } from "./cli_util.ts";
import { tempDir } from "./temp_dir.ts";

/**
 * A simulated NIC whose one rule starts and ends about twenty times a
 * second (a PFC pause in the last 10 samples), so a one-second run leaves
 * a log with many whole events in it.
 */
const BUSY_CONFIG = `
monitors:
  - name: nic
    source: sim
    sample_period_ns: 100000
    depth: 10
    seed: 7
    columns:
      - { name: port_0_rx_bytes, data_id: "0x1020000100000000" }
      - { name: port_0_prio_3_rx_pause_packets, data_id: "0x1020000600000300" }
    rules:
      - name: pause frames
        column: port_0_prio_3_rx_pause_packets
        comparison_type: dt_gt
        comparison_value: 0
`;

/** Writes BUSY_CONFIG into `dir`; returns `run`'s arguments for `log`. */
async function busyRun(
  dir: string,
  log: string,
  ...extra: string[]
): Promise<string[]> {
  const config = join(dir, "busy.yaml");
  await Deno.writeTextFile(config, BUSY_CONFIG);
  return ["run", "--rules", config, "--event-log", log, "-q", ...extra];
}

/**
 * Asserts `path` holds one header block and whole events: as many ends as
 * starts (but for an event cut by the stop), rows, and a last full line.
 */
async function assertWholeLog(path: string): Promise<void> {
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("Telemetry monitor : ").length - 1, 1);
  const starts = text.split("<<Event start>>").length - 1;
  const ends = text.split("<<Event end>>").length - 1;
  assert.ok(ends >= 5, `${ends} event ends`);
  assert.ok(starts - ends <= 1, `${starts} starts, ${ends} ends`);
  assert.ok(
    text.split("\n").filter((l) => /^\d+, \d+, \d+$/.test(l)).length > 100,
  );
  assert.ok(text.endsWith("\n"));
}

Deno.test("SIGHUP after a rename starts a new events log and loses nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const agent = await startedAgent([
    "demo",
    "-q",
    "--duration",
    "60",
    "--event-log",
    path,
  ]);
  let stopped;
  try {
    await agent.waitReady();
    await Deno.rename(path, `${path}.1`);
    agent.signal("SIGHUP");
    // The new file appears with its own header block.
    const end = Date.now() + 10_000;
    let text = "";
    while (Date.now() < end) {
      text = await Deno.readTextFile(path).catch(() => "");
      if (text.startsWith("Telemetry monitor : ")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(text, /^Telemetry monitor : dpu-traceback /);
    // Still sampling afterwards.
    const before = await agent.samples();
    await new Promise((r) => setTimeout(r, 300));
    assert.ok((await agent.samples()) > before);
  } finally {
    stopped = await agent.stop();
  }
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stderr, /SIGHUP: reopening the events logs/);
  const old = await Deno.readTextFile(`${path}.1`);
  assert.equal(old.split("Telemetry monitor : ").length - 1, 1);
});

Deno.test({
  name:
    "a full disk leaves sampling and the endpoint running, counts write errors and warns once",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    // The disk fills up: the file may not grow past its size (`prlimit`,
    // once Deno's own start-up writes are done). The agent ignores SIGXFSZ
    // itself (ignoreFileSizeSignal()), so writes fail with EFBIG instead of
    // the signal ending the process.
    const child = spawnMain(await busyRun(dir.path, path, "--duration", "60"));
    const stderr: string[] = [];
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).values();
    let url: string | undefined;
    while (url === undefined) {
      const { value, done } = await reader.next();
      if (done) break;
      stderr.push(value);
      url = /metrics on (\S+)/.exec(stderr.join(""))?.[1];
    }
    const drained = (async () => {
      for await (const value of reader) stderr.push(value);
    })();
    let code;
    try {
      assert.ok(url, stderr.join(""));
      // The endpoint listens before the log is opened (a busy port must
      // not leave a header behind): wait for the header to be written.
      let size = 0;
      for (let i = 0; i < 3000 && size === 0; i++) {
        size = await Deno.stat(path).then((s) => s.size, () => 0);
        if (size === 0) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(size > 0, "the events log was never written");
      const limited = await new Deno.Command("prlimit", {
        args: [`--pid=${child.pid}`, `--fsize=${size}`],
      }).output();
      assert.equal(limited.code, 0);
      const metrics = async () => await (await fetch(`${url}metrics`)).text();
      const samples = async () =>
        Number(
          /dpu_traceback_samples_total\{monitor="nic"\} (\d+)/.exec(
            await metrics(),
          )?.[1],
        );
      let body = "";
      for (let i = 0; i < 100; i++) {
        body = await metrics();
        if (
          /dpu_traceback_events_log_write_errors_total\{monitor="nic"\} ([2-9]|\d\d+)\n/
            .test(body)
        ) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(
        body,
        /dpu_traceback_events_log_write_errors_total\{monitor="nic"\} ([2-9]|\d\d+)\n/,
      );
      assert.match(body, /dpu_traceback_source_up\{monitor="nic"\} 1\n/);
      const before = await samples();
      await new Promise((r) => setTimeout(r, 300));
      assert.ok((await samples()) > before, "sampling stopped");
    } finally {
      child.kill("SIGTERM");
      code = (await child.status).code;
      await child.stdout.cancel();
      await drained;
    }
    // The data that could not be written is reported at the end: exit 1.
    const text = stderr.join("");
    assert.equal(code, 1, text);
    const warnings = text.split("\n").filter((l) =>
      l.includes(`events log ${path}: cannot write (File too large`)
    );
    assert.equal(warnings.length, 1, text);
    assert.match(text, /Cannot finish events log .*events\.log: /);
  },
});

Deno.test("a second agent on the same events log exits 1 with one line; the first loses nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const args = await busyRun(dir.path, path);
  const first = await startedAgent([...args, "--duration", "60"]);
  let stopped;
  try {
    await first.waitReady();
    const second = await runMain([...args, "--duration", "1"]);
    assert.equal(second.code, 1, second.stderr);
    assert.deepEqual(errorLines(second.stderr), [
      `dpu-traceback: Cannot open events log ${path}: another dpu-traceback is writing it`,
    ]);
    await new Promise((r) => setTimeout(r, 500)); // the first writes on
  } finally {
    stopped = await first.stop();
  }
  assert.equal(stopped.code, 0, stopped.stderr);
  await assertWholeLog(path);
});

Deno.test("a symbolic link as the events log is refused at start with one line", async () => {
  await using dir = await tempDir();
  const target = join(dir.path, "elsewhere");
  const link = join(dir.path, "events.log");
  await Deno.symlink(target, link);
  const result = await runMain(
    await busyRun(dir.path, link, "--duration", "1"),
  );
  assert.equal(result.code, 1, result.stderr);
  assert.deepEqual(errorLines(result.stderr), [
    `dpu-traceback: Cannot open events log ${link}: it is a symbolic link, not a regular file`,
  ]);
  await assert.rejects(() => Deno.lstat(target), Deno.errors.NotFound);
});

Deno.test({
  name:
    "a full stderr (ENOSPC) costs the messages, not the run: exit 0 and a whole log",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const result = await runMain(
      await busyRun(dir.path, path, "--duration", "1"),
      { via: ["sh", "-c", 'exec "$@" 2>/dev/full', "sh"], stderr: "null" },
    );
    assert.equal(result.code, 0);
    await assertWholeLog(path);
  },
});

Deno.test("a stderr whose reader has gone (EPIPE) costs the messages, not the run: exit 0 and a whole log", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const child = spawnMain(await busyRun(dir.path, path, "--duration", "1"));
  await child.stderr.cancel(); // closes the pipe's only reader
  const [status] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
  ]);
  assert.equal(status.code, 0);
  await assertWholeLog(path);
});

Deno.test({
  name:
    "a full stdout (ENOSPC) costs the closing table, not the run: exit 0 and a whole log",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const args = (await busyRun(dir.path, path, "--duration", "1")).filter((
      a,
    ) => a !== "-q");
    const result = await runMain(args, {
      via: ["sh", "-c", 'exec "$@" >/dev/full', "sh"],
      stdout: "null",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(errorLines(result.stderr), []);
    await assertWholeLog(path);
  },
});
