import assert from "node:assert/strict";
import { ROOT } from "./cli_util.ts";

// Differential check of the rule engine and the events writer against an
// independent C implementation of the same semantics (bench/engine.c):
// 100,000 samples, depth 8, 6,694 transitions (dumps, overlapping events, a
// 2^64 wrap, stale inc_gt targets); transition hashes, final states, ring
// contents and every byte of events.log (marker times aside) must agree.
Deno.test("the engine and the C reference loop do the same work on a churning trace", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "bench/run.ts", "--check"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(
    stdout,
    /cross-check ok: \{"transitions":6694,.*\}, \d+ bytes of events\.log identical/,
  );
});
