/**
 * Parses an events.log data row (`ts, v0, v1, ...`: decimal u64 values
 * separated by a comma and optional spaces) straight from bytes into the
 * split form of {@linkcode ./decimal.ts}, so the millions of rows of a big
 * log cost no strings.
 *
 * @module
 */

import { E9, MAX_HI, MAX_LO } from "./decimal.ts";
import { clip } from "./message_text.ts";

/**
 * Parses bytes `[start, end)` of `buf` into `out` (`hi`, `lo` per field)
 * and returns the number of fields, or -1 if the row is malformed (a
 * character other than digits, commas and spaces, an empty field, a value
 * of 2^64 or more, or more fields than `out` holds).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRow } from "./row.ts";
 *
 * const out = new Float64Array(4);
 * const line = new TextEncoder().encode("1795272600000000000, 42");
 * assert.equal(parseRow(line, 0, line.length, out), 2); // fields
 * assert.deepEqual([...out], [1795272600, 0, 0, 42]);
 * ```
 */
export function parseRow(
  buf: Uint8Array,
  start: number,
  end: number,
  out: Float64Array,
): number {
  const max = out.length >> 1;
  let field = 0;
  let i = start;
  while (true) {
    while (i < end && buf[i] === 32) i++;
    let hi = 0;
    let lo = 0;
    const first = i;
    while (i < end) {
      const c = buf[i] - 48;
      if (c < 0 || c > 9) break;
      lo = lo * 10 + c;
      if (lo >= E9) {
        const carry = Math.floor(lo / E9);
        lo -= carry * E9;
        hi = hi * 10 + carry;
      } else hi *= 10;
      i++;
    }
    const digits = i - first;
    if (digits === 0 || field === max) return -1;
    if (digits > 19 && (hi > MAX_HI || (hi === MAX_HI && lo > MAX_LO))) {
      return -1;
    }
    out[2 * field] = hi;
    out[2 * field + 1] = lo;
    field++;
    while (i < end && buf[i] === 32) i++;
    if (i === end) return field;
    if (buf[i] !== 44) return -1;
    i++;
  }
}

/**
 * Why `text` is not a row of `expected` fields, in words, for a one-line
 * message (control characters escaped, see clip). Slow: only for the row that
 * failed.
 */
export function describeRowProblem(text: string, expected: number): string {
  const cells = text.split(",").map((c) => c.trim());
  const got = cells.length;
  for (let k = 0; k < cells.length; k++) {
    const cell = cells[k];
    if (!/^[0-9]+$/.test(cell)) {
      return `value ${k + 1} is not a decimal unsigned integer: "${
        clip(cell)
      }"`;
    }
    if (cell.replace(/^0+(?=.)/, "").length > 20 || BigInt(cell) >= 1n << 64n) {
      return `value ${k + 1} is 2^64 or more: ${clip(cell)}`;
    }
  }
  return `expected ${expected} values (the timestamp and ${
    expected - 1
  } columns), got ${got}`;
}
