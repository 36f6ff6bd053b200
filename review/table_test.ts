import assert from "node:assert/strict";
import { formatReviewTable, tableChunks } from "./table.ts";
import {
  HOSTILE,
  readFixtures,
  readHostileLog,
  TERMINAL_CONTROL,
} from "./test_util.ts";

Deno.test("the table has one aligned line per event, states and peaks in words", async () => {
  const { events } = await readFixtures([
    "nic-events.log",
    "reference-events.log",
  ]);
  const lines = formatReviewTable(events).trimEnd().split("\n");
  assert.equal(lines.length, 1 + events.length);
  const head = lines[0];
  for (
    const column of [
      "#",
      "MONITOR",
      "RULE",
      "START (UTC)",
      "END",
      "DURATION",
      "SAMPLES",
      "PEAK",
      "ROWS",
    ]
  ) {
    assert.ok(head.includes(column), column);
  }
  const cells = (l: string) => l.trim().split(/\s{2,}/);
  assert.deepEqual(cells(lines[1]), [
    "1",
    "reference",
    "ECN > 100 per 2 samples",
    "2026-11-21 14:50:01.000",
    "14:50:01.000",
    "400 µs",
    "4",
    "-", // the reference writes no <<Peak>> line
    "4+4",
  ]);
  assert.deepEqual(cells(lines[2]), [
    "2",
    "reference",
    "Rx < 1000 per 2 samples",
    "2026-11-21 14:50:01.000",
    "14:50:01.000",
    "300 µs",
    "3",
    "-",
    "4+3",
  ]);
  assert.deepEqual(cells(lines[3]).slice(4, 9), [
    "14:51:40.001",
    "800 µs",
    "8",
    "173", // the rule's peak, from the log's <<Peak>> line
    "4+3",
  ]);
  assert.doesNotMatch(head, /PEAK RATE/);
  assert.deepEqual(cells(lines[4]).slice(4, 6), [
    "cut by restart",
    ">= 100 µs",
  ]);
  assert.deepEqual(cells(lines[5]).slice(4, 6), [
    "open (log ends)",
    ">= 200 µs",
  ]);
  // Right-aligned numbers end in the same column.
  const ends = lines.map((l) =>
    l.indexOf(" 4+") >= 0 ? l.lastIndexOf(" 4+") : -1
  );
  assert.ok(ends.slice(1).every((e) => e === ends[1]));
  // The line under the table, as the CLI has it written.
  const summary = (shown: typeof events) =>
    [...tableChunks(shown, { all: events, files: 2 })].at(-1)!.slice(1);
  assert.equal(
    summary(events.slice(0, 2)),
    "2 of 5 events; 2 files read. ROWS: history before the start + rows during.\n",
  );
  assert.match(
    summary(events),
    /^5 events, 1 open at the end of the log, 1 cut by a restart;/,
  );
  assert.equal(formatReviewTable([]), "No events.\n");
});

Deno.test("a hostile log's names show in the table as escapes, never as terminal controls", async () => {
  const { events } = await readHostileLog();
  const table = [...tableChunks(events, { all: events, files: 1 })].join("");
  assert.doesNotMatch(table, TERMINAL_CONTROL);
  const [head, row] = table.split("\n");
  const monitor = "=1+1\\u001b[2J";
  const rule =
    "GPU \\u202ehot\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 \\u009b31m";
  assert.ok(row.startsWith(`1  ${monitor}  ${rule}  2026-11-21 14:50:50.300`));
  // Aligned by the escapes' width: START starts where its heading does.
  assert.equal(row.indexOf("2026"), head.indexOf("START"));
  assert.equal(events[0].rule, HOSTILE.rule);
});
