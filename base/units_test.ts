import assert from "node:assert/strict";
import {
  countOf,
  formatBytes,
  formatCount,
  formatDuration,
  formatUtc,
} from "./units.ts";

Deno.test("formatDuration picks the unit an operator reads", () => {
  assert.deepEqual(
    [0.00012, 0.0123, 4.0123, 192, 7380].map((s) => formatDuration(s)),
    ["120 µs", "12.3 ms", "4.012 s", "3 min 12.0 s", "2 h 03 min"],
  );
});

Deno.test("formatDuration: nanoseconds below a microsecond, and the sign of a clock stepped back", () => {
  assert.deepEqual(
    [3e-7, 0, 1.5e-6, 0.9999995e-3].map((s) => formatDuration(s)),
    ["300 ns", "0 ns", "1.5 µs", "1 ms"],
  );
  assert.deepEqual(
    [-9.7, -0.0004, -3e-7, -192].map((s) => formatDuration(s)),
    ["-9.700 s", "-400 µs", "-300 ns", "-3 min 12.0 s"],
  );
});

Deno.test("formatDuration, exact: the largest unit that shows a configured duration exactly", () => {
  const cases: [number, string][] = [
    [0, "0 ns"],
    [1, "1 ns"],
    [999, "999 ns"],
    [1_000, "1 µs"],
    [1_500, "1.5 µs"],
    [100_000, "100 µs"],
    [1_000_000, "1 ms"],
    [1_234_000, "1.234 ms"],
    [1_234_500, "1234.5 µs"],
    [1_000_001, "1000.001 µs"],
    [10_000_000, "10 ms"],
    [2_000_000_000, "2 s"],
    [60_000_000_000, "1 min"],
    [90_000_000_000, "1.5 min"],
    [3_600_000_000_000, "1 h"],
    [5_400_000_000_000, "1.5 h"],
    [6_000_000_000_000, "100 min"],
    [7 * 86_400e9, "168 h"], // the longest a rule's duration may be
  ];
  for (const [ns, text] of cases) {
    assert.equal(formatDuration(ns / 1e9, { exact: true }), text);
  }
  assert.equal(formatDuration(-0.0015, { exact: true }), "-1.5 ms");
});

Deno.test("formatDuration, exact: whole nanoseconds survive the trip through seconds", () => {
  // Callers hold configured durations as ns and pass ns / 1e9: up to the
  // 7-day bound the rounding must give back the same nanoseconds.
  let x = 12345;
  for (let i = 0; i < 10_000; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const ns = Math.floor((x / 2 ** 31) * 7 * 86_400e9) + (i % 1000);
    const text = formatDuration(ns / 1e9, { exact: true });
    const m = /^([0-9.]+) (ns|µs|ms|s|min|h)$/.exec(text)!;
    const per = { ns: 1, "µs": 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 }[
      m[2] as "ns"
    ];
    assert.equal(Math.round(Number(m[1]) * per), ns, text);
  }
});

Deno.test("formatBytes uses the largest binary unit", () => {
  assert.equal(formatBytes(0), "0 bytes");
  assert.equal(formatBytes(1023), "1023 bytes");
  assert.equal(formatBytes(65536), "64 KiB");
  assert.equal(formatBytes(1024 ** 3 + 1), "1 GiB");
  assert.equal(formatBytes(450 * 1024 ** 2), "450 MiB");
  assert.equal(formatBytes(2 ** 60 * 3), "3 EiB");
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
