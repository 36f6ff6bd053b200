import assert from "node:assert/strict";
import { parseTimePoint } from "../base/time_point.ts";
import { traceCommand } from "./trace_command.ts";

Deno.test("the command's --event is the start sample's time to the ns, and reads back as exactly it", () => {
  for (
    const ns of [
      0n,
      1_795_272_600_000_000_000n, // on a whole second
      1_795_272_600_999_999_999n, // its last ns
      1_795_272_600_300_000_001n,
      18_446_744_073_709_551_615n, // the largest u64 a row can hold
    ]
  ) {
    const command = traceCommand("/var/log/dpu-traceback/events.log", ns, "r");
    const m = / --event (\S+) --rule='r'$/.exec(command);
    assert.ok(m, command);
    assert.deepEqual(parseTimePoint("--event", m[1]), { ns, spanNs: 1n });
  }
});

Deno.test("the events log is quoted only where a shell would split or expand it", () => {
  assert.equal(
    traceCommand("/var/log/a_b-1.2/events.log", 0n, "x"),
    "dpu-traceback review /var/log/a_b-1.2/events.log --event 1970-01-01T00:00:00.000000000Z --rule='x'",
  );
  assert.equal(
    traceCommand("/tmp/$HOME's log", 0n, "x"),
    "dpu-traceback review '/tmp/$HOME'\\''s log' --event 1970-01-01T00:00:00.000000000Z --rule='x'",
  );
});

Deno.test("a name or a relative path starting with - cannot be taken for an option", () => {
  assert.equal(
    traceCommand("-nic.log", 0n, "--json"),
    "dpu-traceback review ./-nic.log --event 1970-01-01T00:00:00.000000000Z --rule='--json'",
  );
  assert.equal(
    traceCommand("-my log", 0n, "-x"),
    "dpu-traceback review './-my log' --event 1970-01-01T00:00:00.000000000Z --rule='-x'",
  );
});
