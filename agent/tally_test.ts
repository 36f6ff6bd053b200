import assert from "node:assert/strict";
import type { Monitor } from "../rules/monitor.ts";
import {
  type EventRecord,
  EventTally,
  formatEventTable,
  MAX_TALLIED_EVENTS,
} from "./tally.ts";
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

Deno.test("a rule that flaps all run long keeps the tally bounded and the table printable", () => {
  const nic = { name: "nic", rules: [{ name: "flap" }], samples: 0 };
  const tally = new EventTally();
  const events = 200_000;
  for (let i = 0; i < events; i++) {
    nic.samples = 2 * i;
    tally.listener(nic as unknown as Monitor, 0, true, i);
    nic.samples = 2 * i + 1;
    tally.listener(nic as unknown as Monitor, 0, false, i + 0.5);
  }
  assert.equal(tally.events.length, MAX_TALLIED_EVENTS);
  assert.equal(tally.earlier, events - MAX_TALLIED_EVENTS);
  assert.equal(tally.events.at(-1)?.endSample, 2 * events - 1);
  const lines = formatEventTable(tally.events, tally.earlier).split("\n");
  assert.equal(
    lines[0],
    `${
      events - MAX_TALLIED_EVENTS
    } earlier events not shown (all are in the events logs: dpu-traceback review)`,
  );
  assert.equal(lines.length, 1 + 1 + MAX_TALLIED_EVENTS + 1);
});

Deno.test("the closing table of more rows than a call takes arguments", () => {
  const records = Array.from({ length: 300_000 }, (_, i) => ({
    monitor: "nic",
    rule: "r",
    startMs: i,
    startSample: i,
    endMs: i + 1,
    endSample: i + 1,
  }));
  assert.equal(formatEventTable(records).split("\n").length, 300_002);
});
