import assert from "node:assert/strict";
import { formatCount, formatDuration, formatSi, formatUtc } from "./units.ts";

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

Deno.test("formatUtc and formatCount", () => {
  assert.equal(
    formatUtc({ sec: 1795272600, ns: 102400000 }),
    "2026-11-21 14:50:00.102",
  );
  assert.equal(formatCount(1234567), "1,234,567");
});
