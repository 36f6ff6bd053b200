/**
 * Runs tests/fixtures/concurrent_oversize_writes.ts `runs` times, each
 * with a file size limit set by prlimit once it is ready, and asserts that
 * every run ends normally (exit 0, no signal) with each write past the
 * limit failed. Linux only (prlimit).
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { tempDir } from "./temp_dir.ts";

const FIXTURE = fileURLToPath(
  new URL("./fixtures/concurrent_oversize_writes.ts", import.meta.url),
);

/** See the module doc. */
export async function assertOversizeWritesSurvive(runs: number): Promise<void> {
  for (let run = 0; run < runs; run++) {
    await using dir = await tempDir();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", FIXTURE, dir.path],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stdout = child.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let out = "";
    while (!out.includes("ready\n")) {
      const { value, done } = await stdout.read();
      if (done) break;
      out += value;
    }
    const limit = await new Deno.Command("prlimit", {
      args: [`--pid=${child.pid}`, "--fsize=100"],
    }).output();
    assert.equal(limit.code, 0);
    const stdin = child.stdin.getWriter();
    await stdin.write(new TextEncoder().encode("go\n"));
    await stdin.close();
    for (;;) {
      const { value, done } = await stdout.read();
      if (done) break;
      out += value;
    }
    const status = await child.status;
    const stderr = new TextDecoder().decode(
      (await new Response(child.stderr).arrayBuffer()) as ArrayBuffer,
    );
    assert.equal(
      status.signal,
      null,
      `run ${run}: ended by ${status.signal} ${stderr}`,
    );
    assert.equal(status.code, 0, stderr);
    // Every write past the limit failed: 8 files x 50 rounds, less each
    // file's first, a short write of the 100 bytes that fit.
    assert.match(out, /failed 392\n$/);
  }
}
