import assert from "node:assert/strict";
import { describeRowProblem, parseRow } from "./row.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("parseRow reads every field exactly, with or without spaces", () => {
  const out = new Float64Array(8);
  for (
    const text of [
      "1795272600000000000, 18446744073709551615, 0, 9007199254740993",
      "1795272600000000000,18446744073709551615,0,9007199254740993",
      "  1795272600000000000 ,  18446744073709551615,0 , 9007199254740993  ",
    ]
  ) {
    const b = bytes(text);
    assert.equal(parseRow(b, 0, b.length, out), 4, text);
    assert.deepEqual([...out], [
      1795272600,
      0,
      18446744073,
      709551615,
      0,
      0,
      9007199,
      254740993,
    ]);
  }
});

Deno.test("parseRow reads a range inside a larger buffer", () => {
  const b = bytes("xx12, 34\nyy");
  const out = new Float64Array(4);
  assert.equal(parseRow(b, 2, 8, out), 2);
  assert.deepEqual([...out], [0, 12, 0, 34]);
});

Deno.test("parseRow refuses malformed rows", () => {
  const out = new Float64Array(6);
  for (
    const text of [
      "",
      "1,,2",
      "1, 2,",
      "1, -2",
      "1, 2x",
      "1, 18446744073709551616",
      "1; 2",
      "1, 2, 3, 4",
    ]
  ) {
    const b = bytes(text);
    assert.equal(parseRow(b, 0, b.length, out), -1, text);
  }
});

Deno.test("describeRowProblem says what is wrong in words", () => {
  assert.match(
    describeRowProblem("1, 2", 3),
    /expected 3 values \(the timestamp and 2 columns\), got 2/,
  );
  assert.match(
    describeRowProblem("1, x2, 3", 3),
    /value 2 is not a decimal unsigned integer: "x2"/,
  );
  assert.match(
    describeRowProblem("1, 18446744073709551616, 3", 3),
    /value 2 is 2\^64 or more/,
  );
  // A row followed by NUL padding (a crash): no raw NUL in the message.
  const padded = describeRowProblem("1, 2\u0000\u0000\u0000", 2);
  assert.equal(
    padded,
    'value 2 is not a decimal unsigned integer: "2\\u0000\\u0000\\u0000"',
  );
});
