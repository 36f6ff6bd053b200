import assert from "node:assert/strict";
import {
  parseCountThreshold,
  parseRateThreshold,
  parseRatioThreshold,
  parseThreshold,
} from "./thresholds.ts";

type Kind = "type" | "range";

const COUNT_SYNTAX =
  'must be a whole number with optional _ grouping and an SI suffix (k, M, G, T, P, E: powers of 1000), e.g. 1500 or "1.5k"';
const WHOLE =
  "must be a whole number: a value threshold is an exact unsigned 64-bit integer";
const COMMAS =
  "groups digits with commas; use _ (1_000_000) or the digits alone";
const PERCENT = "is a percentage, which only a ratio threshold can be";
const NOT_FINITE = "is too large: a threshold must be a finite number";
const RATIO_TOO_LARGE =
  "is too large: a ratio threshold must be from 0 to 1e306 (0 % to 1e308 %)";

Deno.test("parseCountThreshold() reads exact u64 values", () => {
  const cases: [unknown, bigint][] = [
    [0, 0n],
    [-0, 0n],
    [5, 5n],
    [Number.MAX_SAFE_INTEGER, 9007199254740991n],
    [1e6, 1_000_000n], // YAML reads 1e6 as a whole float
    [9007199254740991n, 9007199254740991n],
    ["0", 0n],
    ["1500", 1500n],
    ["1_000_000", 1_000_000n],
    ["1k", 1000n],
    ["1.5k", 1500n],
    ["1.000k", 1000n],
    ["0.001k", 1n],
    ["2M", 2_000_000n],
    ["3G", 3n * 10n ** 9n],
    ["4T", 4n * 10n ** 12n],
    ["5P", 5n * 10n ** 15n],
    ["18E", 18n * 10n ** 18n],
    ["18.446744073709551615E", 18446744073709551615n],
    ["18446744073709551615", 18446744073709551615n],
    ["9007199254740993", 9007199254740993n],
    ["1 k", 1000n], // one space, as check-config prints
  ];
  for (const [value, expected] of cases) {
    assert.deepEqual(
      parseCountThreshold("value", value),
      { ok: true, value: expected },
      String(value),
    );
  }
});

Deno.test("parseCountThreshold() refuses fractions, rates, negatives and more", () => {
  const cases: [unknown, string, Kind][] = [
    ["1.5", `${WHOLE} (1.5 is not; "1.5k" is)`, "type"],
    ["1.0001k", `${WHOLE} (1.5 is not; "1.5k" is)`, "type"],
    [1.5, WHOLE, "type"],
    [NaN, WHOLE, "type"],
    [Infinity, WHOLE, "type"],
    [-1, "must not be negative", "range"],
    [-1n, "must not be negative", "range"],
    ["-1", "must not be negative", "range"],
    ["18446744073709551616", "is not below 2^64", "range"],
    ["18.446744073709551616E", "is not below 2^64", "range"],
    ["99999999999999999999E", "is not below 2^64", "range"],
    [1n << 64n, "is not below 2^64", "range"],
    [
      9007199254740993n,
      'is not below 2^53, so a JSON or YAML number cannot hold it exactly; quote it as a string: "9007199254740993"',
      "range",
    ],
    [
      1e300,
      "is not below 2^53, so a JSON or YAML number cannot hold it exactly; quote it as a string of digits",
      "range",
    ],
    ["1e6", COUNT_SYNTAX, "type"],
    ["1e400", COUNT_SYNTAX, "type"],
    ["NaN", COUNT_SYNTAX, "type"],
    ["1K", COUNT_SYNTAX, "type"],
    ["1Ki", COUNT_SYNTAX, "type"],
    ["1m", COUNT_SYNTAX, "type"],
    ["1__000", COUNT_SYNTAX, "type"],
    ["_1", COUNT_SYNTAX, "type"],
    ["1  k", COUNT_SYNTAX, "type"],
    ["", COUNT_SYNTAX, "type"],
    ["1,000", COMMAS, "type"],
    ["0.1%", PERCENT, "type"],
    [
      "1M/s",
      "is per second, but a value has no time in it; use rate: (over a window) for a threshold per second",
      "type",
    ],
    ["9".repeat(65), "is too long for a threshold", "type"],
    [true, 'must be a whole number, e.g. 1500 or "1.5k"', "type"],
    [null, 'must be a whole number, e.g. 1500 or "1.5k"', "type"],
    [undefined, "is required", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseCountThreshold("value", value),
      { ok: false, problem, kind },
      String(value),
    );
  }
  // An increase is per sample; the advice names it.
  assert.deepEqual(parseCountThreshold("increase", "5k/s"), {
    ok: false,
    problem:
      "is per second, but an increase is per sample; use rate: (over a window) for a threshold per second",
    kind: "type",
  });
  assert.deepEqual(parseCountThreshold("increase", "1.5"), {
    ok: false,
    problem:
      'must be a whole number: an increase threshold is an exact unsigned 64-bit integer (1.5 is not; "1.5k" is)',
    kind: "type",
  });
});

Deno.test("parseRateThreshold() reads numbers per second", () => {
  const cases: [unknown, number][] = [
    [0, 0],
    [-0, 0],
    [1000000, 1_000_000],
    [0.5, 0.5],
    [1e300, 1e300],
    [10n ** 20n, 1e20],
    ["1M/s", 1_000_000],
    ["200k/s", 200_000],
    ["1e6", 1_000_000],
    ["1e6/s", 1_000_000],
    ["1.5E-3/s", 0.0015],
    ["0.3k", 300],
    ["2.5", 2.5],
    ["1_000_000", 1_000_000],
    ["1 M/s", 1_000_000],
    ["1 /s", 1],
    ["1.7976931348623157e308", Number.MAX_VALUE],
    ["1e-400", 0],
  ];
  for (const [value, expected] of cases) {
    assert.deepEqual(
      parseRateThreshold(value),
      { ok: true, value: expected },
      String(value),
    );
  }
});

Deno.test("parseRateThreshold() refuses what is no rate", () => {
  const syntax =
    'must be a number per second with an optional SI suffix (k, M, G, T, P, E) and /s, e.g. 1000000, "1M/s" or "200k/s"';
  const cases: [unknown, string, Kind][] = [
    ["1e400", NOT_FINITE, "range"],
    ["1e99999999999999999999", NOT_FINITE, "range"],
    ["1.8e308", NOT_FINITE, "range"],
    [Infinity, NOT_FINITE, "range"],
    [
      NaN,
      'must be a rate per second, e.g. 1000000, "1M/s" or "200k/s"',
      "type",
    ],
    [-1, "must not be negative", "range"],
    [-1n, "must not be negative", "range"],
    ["-1M/s", "must not be negative", "range"],
    ["NaN", syntax, "type"],
    ["Infinity", syntax, "type"],
    ["1M/min", syntax, "type"],
    ["1m/s", syntax, "type"],
    ["1/ms", syntax, "type"],
    ["0x10", syntax, "type"],
    ["1,000,000/s", COMMAS, "type"],
    ["10%", PERCENT, "type"],
    [
      {},
      'must be a rate per second, e.g. 1000000, "1M/s" or "200k/s"',
      "type",
    ],
    [undefined, "is required", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseRateThreshold(value),
      { ok: false, problem, kind },
      String(value),
    );
  }
});

Deno.test("parseRatioThreshold() reads fractions and percentages", () => {
  const cases: [unknown, number][] = [
    [0, 0],
    [0.001, 0.001],
    [1, 1],
    [1500, 1500], // bytes per packet is a ratio too
    ["0.001", 0.001],
    ["0.1%", 0.001],
    ["0.1 %", 0.001], // as check-config prints it
    ["0.07%", 0.0007],
    ["100%", 1],
    ["150%", 1.5],
    ["1e-3", 0.001],
    // The largest: its percentage is still a number to show.
    ["1e308%", 1e306],
    ["1e306", 1e306],
    [1e306, 1e306],
  ];
  for (const [value, expected] of cases) {
    assert.deepEqual(
      parseRatioThreshold(value),
      { ok: true, value: expected },
      String(value),
    );
  }
});

Deno.test("parseRatioThreshold() refuses rates, suffixes and non-numbers", () => {
  const syntax = 'must be a fraction or a percentage, e.g. 0.001 or "0.1%"';
  const cases: [unknown, string, Kind][] = [
    [
      "0.1/s",
      'is per second, but a ratio has no unit; write a fraction or a percentage, e.g. 0.001 or "0.1%"',
      "type",
    ],
    ["1k", syntax, "type"],
    ["NaN", syntax, "type"],
    ["0.1%%", syntax, "type"],
    ["%", syntax, "type"],
    ["1e309%", RATIO_TOO_LARGE, "range"],
    ["1e400%", RATIO_TOO_LARGE, "range"],
    ["1e307", RATIO_TOO_LARGE, "range"],
    [1e307, RATIO_TOO_LARGE, "range"],
    [Infinity, RATIO_TOO_LARGE, "range"],
    [10n ** 400n, RATIO_TOO_LARGE, "range"],
    ["-0.1%", "must not be negative", "range"],
    [-0.001, "must not be negative", "range"],
    [NaN, syntax, "type"],
    [false, syntax, "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseRatioThreshold(value),
      { ok: false, problem, kind },
      String(value),
    );
  }
});

Deno.test("parseThreshold() reads each signal's form", () => {
  assert.deepEqual(parseThreshold("value", "1k"), { ok: true, value: 1000n });
  assert.deepEqual(parseThreshold("increase", 7), { ok: true, value: 7n });
  assert.deepEqual(parseThreshold("rate", "1k"), { ok: true, value: 1000 });
  assert.deepEqual(parseThreshold("ratio", "50%"), { ok: true, value: 0.5 });
  // The same text can fit one signal and not another.
  assert.equal(parseThreshold("rate", "0.5").ok, true);
  assert.equal(parseThreshold("value", "0.5").ok, false);
  assert.equal(parseThreshold("ratio", "1k").ok, false);
});

Deno.test("a decimal comma is named as one, digit groups as groups", () => {
  const comma = parseThreshold("rate", "1,5");
  assert.ok(!comma.ok);
  assert.equal(
    comma.problem,
    "has a decimal comma; write the decimal point: 1.5, not 1,5",
  );
  const groups = parseThreshold("rate", "1,000,000");
  assert.ok(!groups.ok);
  assert.match(groups.problem, /^groups digits with commas/);
});
