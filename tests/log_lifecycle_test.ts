/**
 * The events log's life under an operator: logrotate renames it and sends
 * SIGHUP; the disk fills up. The agent keeps sampling, evaluating rules and
 * serving metrics through both.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startedAgent } from "./agent_util.ts";
import { tempDir } from "./temp_dir.ts";

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
    const agent = await startedAgent([
      "demo",
      "-q",
      "--duration",
      "60",
      "--event-log",
      "/dev/full",
    ]);
    let stopped;
    try {
      await agent.waitReady();
      const body = await agent.waitFor(
        "/metrics",
        (t) =>
          /dpu_traceback_events_log_write_errors_total\{monitor="nic"\} ([2-9]|\d\d+)\n/
            .test(t),
      );
      assert.match(body, /dpu_traceback_source_up\{monitor="nic"\} 1\n/);
      const before = await agent.samples();
      await new Promise((r) => setTimeout(r, 300));
      assert.ok((await agent.samples()) > before, "sampling stopped");
    } finally {
      stopped = await agent.stop();
    }
    // The data that could not be written is reported at the end: exit 1.
    assert.equal(stopped.code, 1);
    const warnings = stopped.stderr.split("\n").filter((l) =>
      l.includes("events log /dev/full: cannot write")
    );
    assert.equal(warnings.length, 1, stopped.stderr);
    assert.match(stopped.stderr, /Cannot finish events log \/dev\/full: /);
  },
});
