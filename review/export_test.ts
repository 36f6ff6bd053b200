import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import {
  CSV_FIELDS,
  formatCsv,
  formatJson,
  jsonTerminalSafe,
} from "./export.ts";
import {
  HOSTILE,
  readFixtures,
  readHostileLog,
  TERMINAL_CONTROL,
} from "./test_util.ts";

Deno.test("--json: events with exact u64 strings, ISO times, null ends for open events", async () => {
  const { events, files } = await readFixtures(["nic-events.log"]);
  const doc = JSON.parse(formatJson(events, files));
  assert.deepEqual(Object.keys(doc), ["events", "files"]);
  const [a, b, c] = doc.events;
  assert.deepEqual(
    [
      a.monitor,
      a.rule,
      a.start,
      a.end,
      a.start_ns,
      a.end_ns,
      a.duration_s,
      a.samples,
      a.peak,
      a.column_peak,
      a.peak_kind,
      a.state,
    ],
    [
      "nic",
      "ECN > 100 per 2 samples",
      "2026-11-21T14:51:40.000300Z",
      "2026-11-21T14:51:40.001100Z",
      "1795272700000300000",
      "1795272700001100000",
      0.0008,
      8,
      173,
      "9007199254740993",
      "max",
      "ended",
    ],
  );
  assert.equal(a.dropped_samples, 5);
  assert.equal(a.comparison_type, "differential_greater_than");
  assert.equal(a.comparison_value, "100");
  assert.equal(a.column_peak_rate_per_s, 1300000);
  assert.equal(a.peak_unit, "");
  assert.deepEqual([b.state, b.end, b.end_ns], ["interrupted", null, null]);
  assert.deepEqual([c.state, c.end, c.duration_s], ["open", null, 0.0002]);
  assert.deepEqual(doc.files[0].time_formats, ["ns"]);
  // JSON.parse of a number would have rounded 2^53 + 1: it is a string.
  assert.equal(typeof a.column_peak, "string");
});

Deno.test("--csv: a header row and the same fields as --json, one row per event", async () => {
  const { events, files } = await readFixtures([
    "nic-events.log",
    "gpu-events.log",
  ]);
  const rows = parse(formatCsv(events)) as string[][];
  assert.deepEqual(rows[0], CSV_FIELDS);
  const json = JSON.parse(formatJson(events, files)).events;
  assert.equal(rows.length, 1 + json.length);
  for (let i = 0; i < json.length; i++) {
    CSV_FIELDS.forEach((field, k) => {
      const v = json[i][field];
      assert.equal(
        rows[i + 1][k],
        v === null ? "" : String(v),
        `${field} of event ${i + 1}`,
      );
    });
  }
});

Deno.test("--json of a hostile log: no terminal control printed, the names read back exactly", async () => {
  const { events, files } = await readHostileLog();
  const json = formatJson(events, files);
  assert.doesNotMatch(json, TERMINAL_CONTROL);
  assert.ok(json.includes('"rule": "GPU \\u202ehot\\u001b[2J'));
  assert.ok(json.includes("\\u0007 \\u009b31m"));
  const doc = JSON.parse(json);
  assert.equal(doc.events[0].rule, HOSTILE.rule);
  assert.equal(doc.events[0].monitor, HOSTILE.monitor);
  assert.equal(doc.events[0].column, HOSTILE.column);
  assert.ok(doc.files[0].path.endsWith(`${HOSTILE.monitor}-events.log`));
});

Deno.test("jsonTerminalSafe keeps the layout's newlines and escapes what JSON.stringify leaves raw", () => {
  const value = { a: "\u2028\u2029\u200e\x7f", b: ["\n\t"] };
  const json = JSON.stringify(value, null, 2);
  const safe = jsonTerminalSafe(json);
  assert.equal(safe.split("\n").length, json.split("\n").length);
  assert.doesNotMatch(safe, TERMINAL_CONTROL);
  assert.deepEqual(JSON.parse(safe), value);
});

Deno.test("--csv of a hostile log: formula cells quoted with ', controls escaped, negative numbers kept", async () => {
  const { events } = await readHostileLog();
  const csv = formatCsv(events);
  assert.doesNotMatch(csv, TERMINAL_CONTROL);
  const [head, row] = parse(csv) as string[][];
  const cell = (field: string) => row[head.indexOf(field)];
  assert.equal(cell("column"), "'" + HOSTILE.column);
  assert.equal(cell("monitor"), "'=1+1\\u001b[2J");
  assert.equal(
    cell("rule"),
    "GPU \\u202ehot\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 \\u009b31m",
  );
  // The clock stepped back during the event: a negative number, as is.
  assert.equal(cell("duration_s"), "-0.1");
});
