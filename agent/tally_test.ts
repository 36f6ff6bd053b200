import assert from "node:assert/strict";
import { type EventRecord, formatEventTable } from "./tally.ts";
import { HOSTILE, TERMINAL_CONTROL } from "../review/test_util.ts";

Deno.test("formatEventTable shows terminal controls in names as escapes, never as they are", () => {
  const events: EventRecord[] = [{
    monitor: HOSTILE.monitor,
    rule: HOSTILE.rule,
    startMs: Date.UTC(2026, 10, 21, 14, 50),
    startSample: 100,
    endMs: Date.UTC(2026, 10, 21, 14, 50, 0, 25),
    endSample: 350,
  }, {
    monitor: "nic",
    rule: "rx\u2028\u2066\u200f\x85",
    startMs: Date.UTC(2026, 10, 21, 14, 51),
    startSample: 400,
    endMs: null,
    endSample: null,
  }];
  const table = formatEventTable(events);
  assert.doesNotMatch(table, TERMINAL_CONTROL);
  const [, first, second] = table.trimEnd().split("\n");
  assert.match(
    first,
    /^=1\+1\\u001b\[2J {2}GPU \\u202ehot\\u001b\[2J\\u001b\]52;c;ZXZpbA==\\u0007 \\u009b31m {2}2026-11-21 14:50:00\.000 {2}0\.025 s +250$/,
  );
  // Still aligned: the escapes are counted in the column widths.
  assert.equal(second.indexOf("rx"), first.indexOf("GPU"));
  assert.ok(second.includes("rx\\u2028\\u2066\\u200f\\u0085"));
});
