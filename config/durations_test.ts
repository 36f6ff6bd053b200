import assert from "node:assert/strict";
import { formatDuration } from "../base/units.ts";
import { parseDuration, parseWindow } from "./durations.ts";
import { MAX_RULE_DURATION_NS } from "./limits.ts";

const UNITS_HINT = "(ns, us, µs, ms, s, m (minutes) or h)";

Deno.test("parseDuration() reads every unit to whole nanoseconds", () => {
  const cases: [string, number][] = [
    ["250ns", 250],
    ["500us", 500_000],
    ["500\u00b5s", 500_000], // micro sign
    ["500\u03bcs", 500_000], // Greek mu, which looks the same
    ["10ms", 10_000_000],
    ["2s", 2_000_000_000],
    ["1m", 60_000_000_000],
    ["1min", 60_000_000_000],
    ["1h", 3_600_000_000_000],
    ["1.5ms", 1_500_000],
    ["0.001s", 1_000_000],
    ["0.0000000000025h", 9],
    ["007ms", 7_000_000],
    // One space, as check-config prints durations.
    ["10 ms", 10_000_000],
    ["500 µs", 500_000],
    ["168h", MAX_RULE_DURATION_NS],
    ["0ms", 0],
    ["0", 0],
    ["0.0", 0],
  ];
  for (const [text, ns] of cases) {
    assert.deepEqual(parseDuration(text), { ok: true, value: ns }, text);
  }
  assert.deepEqual(parseDuration(0), { ok: true, value: 0 });
  assert.deepEqual(parseDuration(-0), { ok: true, value: 0 });
});

Deno.test("parseDuration() refuses what is not a duration, saying why", () => {
  const cases: [unknown, string, "type" | "range"][] = [
    [500, `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    [1.5, `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    [NaN, `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    [10n ** 30n, `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    ["500", `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    ["0 ", `needs a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`, "type"],
    ["1.5ns", "is not a whole number of nanoseconds", "type"],
    ["0.0000000001s", "is not a whole number of nanoseconds", "type"],
    ["-1ms", "must not be negative", "range"],
    ["-1", "must not be negative", "range"],
    ["169h", 'must be at most 7 days ("168h")', "range"],
    ["604800000000001ns", 'must be at most 7 days ("168h")', "range"],
    [
      "99999999999999999999999999999999h",
      'must be at most 7 days ("168h")',
      "range",
    ],
    [
      "7d",
      'has an unknown unit "d"; use ns, us, µs, ms, s, m (minutes) or h',
      "type",
    ],
    [
      "1MS",
      'has an unknown unit "MS"; use ns, us, µs, ms, s, m (minutes) or h',
      "type",
    ],
    [
      "1\u202ems",
      'has an unknown unit "\\u202ems"; use ns, us, µs, ms, s, m (minutes) or h',
      "type",
    ],
    [
      "10  ms",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      "1e3ms",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      ".5ms",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      "NaN",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      "1,000ms",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      "",
      `must be a number and a unit, e.g. "500us" or "10ms" ${UNITS_HINT}`,
      "type",
    ],
    [
      "1".repeat(65) + "ms",
      'is too long for a duration, e.g. "500us" or "10ms"',
      "type",
    ],
    [true, 'must be a duration, e.g. "500us" or "10ms"', "type"],
    [null, 'must be a duration, e.g. "500us" or "10ms"', "type"],
    [undefined, "is required", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseDuration(value),
      { ok: false, problem, kind },
      String(value),
    );
  }
});

Deno.test("parseWindow() refuses a window of no time", () => {
  assert.deepEqual(parseWindow("1ns"), { ok: true, value: 1 });
  for (const zero of [0, "0", "0ms", "0.0s"]) {
    assert.deepEqual(parseWindow(zero), {
      ok: false,
      problem: 'must be longer than 0, e.g. "500us" or "10ms"',
      kind: "range",
    });
  }
  assert.equal(parseWindow("1.5ns").ok, false);
});

Deno.test("what formatDuration(exact) prints, parseDuration() reads back", () => {
  for (
    const ns of [1, 999, 1_500, 100_000, 1_234_500, 90_000_000_000, 3_600e9]
  ) {
    assert.deepEqual(parseDuration(formatDuration(ns / 1e9, { exact: true })), {
      ok: true,
      value: ns,
    });
  }
});

Deno.test("parseDuration() points M of N to `for`", () => {
  const parsed = parseDuration("2 of 3");
  assert.ok(!parsed.ok);
  assert.match(parsed.problem, /M of N is for `for` only$/);
});
