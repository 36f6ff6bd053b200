import assert from "node:assert/strict";
import {
  countOf,
  formatCount,
  formatDuration,
  formatSi,
  formatUtc,
} from "./units.ts";

Deno.test("formatSi: three significant digits and a prefix", () => {
  assert.deepEqual(
    [0, 7, 12.345, 999, 1000, 1960000, 999950, -17700000, 3e18, 0.5].map(
      formatSi,
    ),
    ["0", "7", "12.3", "999", "1k", "1.96M", "1M", "-17.7M", "3E", "0.5"],
  );
});

Deno.test("formatDuration picks the unit an operator reads", () => {
  assert.deepEqual(
    [0.00012, 0.0123, 4.0123, 192, 7380].map(formatDuration),
    ["120 µs", "12.3 ms", "4.012 s", "3 m 12.0 s", "2 h 03 m"],
  );
});

Deno.test("formatDuration: nanoseconds below a microsecond, and the sign of a clock stepped back", () => {
  assert.deepEqual(
    [3e-7, 0, 1.5e-6, 0.9999995e-3].map(formatDuration),
    ["300 ns", "0 ns", "1.5 µs", "1 ms"],
  );
  assert.deepEqual(
    [-9.7, -0.0004, -3e-7, -192].map(formatDuration),
    ["-9.700 s", "-400 µs", "-300 ns", "-3 m 12.0 s"],
  );
});

Deno.test("formatUtc and formatCount", () => {
  assert.equal(
    formatUtc({ sec: 1795272600, ns: 102400000 }),
    "2026-11-21 14:50:00.102",
  );
  assert.deepEqual(
    [0, 7, 999, 1000, 40123, 1234567, -1234, 1e21].map(formatCount),
    ["0", "7", "999", "1,000", "40,123", "1,234,567", "-1,234", "1e+21"],
  );
});

Deno.test("countOf: singular for one", () => {
  assert.equal(countOf(1, "sample"), "1 sample");
  assert.equal(countOf(0, "sample"), "0 samples");
  assert.equal(countOf(40123, "row"), "40,123 rows");
  assert.equal(countOf(2, "event has", "events have"), "2 events have");
});
