import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { CSV_FIELDS, formatCsv, formatJson } from "./export.ts";
import { readFixtures } from "./test_util.ts";

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
      "9007199254740993",
      "max",
      "ended",
    ],
  );
  assert.equal(a.dropped_samples, 5);
  assert.equal(a.comparison_type, "differential_greater_than");
  assert.equal(a.comparison_value, "100");
  assert.equal(a.peak_rate_per_s, 1300000);
  assert.deepEqual([b.state, b.end, b.end_ns], ["interrupted", null, null]);
  assert.deepEqual([c.state, c.end, c.duration_s], ["open", null, 0.0002]);
  assert.deepEqual(doc.files[0].time_formats, ["ns"]);
  // JSON.parse of a number would have rounded 2^53 + 1: it is a string.
  assert.equal(typeof a.peak, "string");
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
