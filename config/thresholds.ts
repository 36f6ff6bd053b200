/**
 * Thresholds and clear levels of signal rules (`above`, `below`, `clear`),
 * whose form depends on the signal:
 *
 * - `value` and `increase`: an exact unsigned 64-bit integer, compared on
 *   its halves as the reference rules are. A safe-integer number, or a
 *   string of digits with optional `_` grouping (`1_000_000`) and an
 *   optional SI suffix `k`, `M`, `G`, `T`, `P`, `E` (powers of 1000); a
 *   decimal mantissa is allowed when the result is whole (`"1.5k"`).
 *   Fractions are refused, and so is `/s`: these signals are per sample.
 * - `rate`: a non-negative finite number per second, as a number or a
 *   string with an optional exponent, SI suffix and `/s` (`"1M/s"`,
 *   `"200k/s"`, `"1e6"`).
 * - `ratio`: a number from 0 to {@linkcode MAX_RATIO}, or a percentage
 *   (`"0.1%"` is 0.001) from 0 % to 1e308 %; no `/s`.
 *
 * One space may separate the number from its suffix (`"0.1 %"`, as
 * `check-config` prints it). Commas are refused: `1,000` is a thousand to
 * some and one to others. Decimal text is converted once, exactly rounded
 * (`"0.3k"` is 300, not 300.00000000000006).
 *
 * @module
 */

import type { SignalKind } from "./types.ts";
import { bad, ok, type Parsed } from "./values.ts";

const U64_LIMIT = 1n << 64n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Powers of 1000 by SI suffix. */
const SI: Readonly<Record<string, number>> = {
  "": 0,
  k: 1,
  M: 2,
  G: 3,
  T: 4,
  P: 5,
  E: 6,
};
/** Longer text is no threshold a rule could mean; BigInt stays cheap. */
const MAX_TEXT = 64;
const DIGITS = "[0-9]+(?:_[0-9]+)*";
const COUNT = new RegExp(`^(${DIGITS})(?:\\.([0-9]+))?( ?)([kMGTPE]?)$`);
const RATE = new RegExp(
  `^(${DIGITS}(?:\\.[0-9]+)?)(?:[eE]([+-]?[0-9]+))?( ?)([kMGTPE]?)(/s)?$`,
);
/**
 * The largest ratio threshold. The rule compares floats, so any finite
 * ratio would work; but a ratio is shown as a percentage (check-config,
 * review, alerts), and past 1.8e306 x 100 that is Infinity. A round bound
 * below it keeps every threshold showable: 1e306, 1e308 %.
 */
export const MAX_RATIO = 1e306;
const RATIO_RANGE = "from 0 to 1e306 (0 % to 1e308 %)";
const RATIO = new RegExp(
  `^(${DIGITS}(?:\\.[0-9]+)?)(?:[eE]([+-]?[0-9]+))?( ?)(%?)$`,
);

/**
 * Parses a threshold or clear level for a rule on `signal`: a `bigint`
 * for `value` and `increase`, a `number` for `rate` and `ratio`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseThreshold } from "./thresholds.ts";
 *
 * assert.deepEqual(parseThreshold("rate", "1M/s"), { ok: true, value: 1_000_000 });
 * assert.deepEqual(parseThreshold("ratio", "0.1%"), { ok: true, value: 0.001 });
 * assert.deepEqual(parseThreshold("increase", "1.5k"), { ok: true, value: 1500n });
 * assert.equal(parseThreshold("increase", "1k/s").ok, false); // per sample: use rate
 * ```
 */
export function parseThreshold(
  signal: SignalKind,
  value: unknown,
): Parsed<bigint | number> {
  switch (signal) {
    case "value":
    case "increase":
      return parseCountThreshold(signal, value);
    case "rate":
      return parseRateThreshold(value);
    case "ratio":
      return parseRatioThreshold(value);
  }
}

/**
 * Parses an exact u64 threshold for a `value` or `increase` rule. A
 * number past 2^53 is refused with the quoted spelling to use, as for
 * `comparison_value`: a JSON or YAML reader may already have rounded it.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCountThreshold } from "./thresholds.ts";
 *
 * assert.deepEqual(parseCountThreshold("value", "1_000_000"), { ok: true, value: 1_000_000n });
 * assert.deepEqual(parseCountThreshold("value", "18E"), { ok: true, value: 18n * 10n ** 18n });
 * assert.equal(parseCountThreshold("value", "1.5").ok, false); // exact integers only
 * ```
 */
export function parseCountThreshold(
  signal: "value" | "increase",
  value: unknown,
): Parsed<bigint> {
  const whole = `must be a whole number: ${
    signal === "value" ? "a value" : "an increase"
  } threshold is an exact unsigned 64-bit integer`;
  switch (typeof value) {
    case "undefined":
      return bad("is required");
    case "number":
      if (!Number.isInteger(value)) return bad(whole);
      if (value < 0) return bad("must not be negative", "range");
      if (!Number.isSafeInteger(value)) {
        return bad(
          "is not below 2^53, so a JSON or YAML number cannot hold it exactly; quote it as a string of digits",
          "range",
        );
      }
      return ok(BigInt(value));
    case "bigint":
      if (value < 0n) return bad("must not be negative", "range");
      if (value >= U64_LIMIT) return bad("is not below 2^64", "range");
      if (value > MAX_SAFE) {
        return bad(
          `is not below 2^53, so a JSON or YAML number cannot hold it exactly; quote it as a string: "${value}"`,
          "range",
        );
      }
      return ok(value);
    case "string":
      break;
    default:
      return bad(`must be a whole number, e.g. 1500 or "1.5k"`);
  }
  const common = commonProblem(value);
  if (common !== undefined) return common;
  if (value.endsWith("/s")) {
    return bad(
      signal === "increase"
        ? "is per second, but an increase is per sample; use rate: (over a window) for a threshold per second"
        : "is per second, but a value has no time in it; use rate: (over a window) for a threshold per second",
    );
  }
  if (value.endsWith("%")) {
    return bad("is a percentage, which only a ratio threshold can be");
  }
  const match = COUNT.exec(value);
  if (match === null) {
    return bad(
      `must be a whole number with optional _ grouping and an SI suffix (k, M, G, T, P, E: powers of 1000), e.g. 1500 or "1.5k"`,
    );
  }
  const [, digits, fraction = "", , suffix] = match;
  const scaled = BigInt(digits.replaceAll("_", "") + fraction) *
    1000n ** BigInt(SI[suffix]);
  const divisor = 10n ** BigInt(fraction.length);
  if (scaled % divisor !== 0n) {
    return bad(`${whole} (1.5 is not; "1.5k" is)`);
  }
  const n = scaled / divisor;
  if (n >= U64_LIMIT) return bad("is not below 2^64", "range");
  return ok(n);
}

/**
 * Parses a `rate` threshold, per second: a non-negative finite number.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRateThreshold } from "./thresholds.ts";
 *
 * assert.deepEqual(parseRateThreshold("200k/s"), { ok: true, value: 200_000 });
 * assert.deepEqual(parseRateThreshold(1e6), { ok: true, value: 1_000_000 });
 * assert.equal(parseRateThreshold("1e400").ok, false); // not finite
 * ```
 */
export function parseRateThreshold(value: unknown): Parsed<number> {
  const example = 'e.g. 1000000, "1M/s" or "200k/s"';
  const number = plainNumber(value, `must be a rate per second, ${example}`);
  if (number !== undefined) return number;
  const text = value as string;
  const common = commonProblem(text);
  if (common !== undefined) return common;
  if (text.endsWith("%")) {
    return bad("is a percentage, which only a ratio threshold can be");
  }
  const match = RATE.exec(text);
  if (match === null) {
    return bad(
      `must be a number per second with an optional SI suffix (k, M, G, T, P, E) and /s, ${example}`,
    );
  }
  const [, mantissa, exponent = "0", , suffix] = match;
  return finite(decimal(mantissa, exponent, 3 * SI[suffix]));
}

/**
 * Parses a `ratio` threshold: a number or a percentage, from 0 to
 * {@linkcode MAX_RATIO}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRatioThreshold } from "./thresholds.ts";
 *
 * assert.deepEqual(parseRatioThreshold("0.1%"), { ok: true, value: 0.001 });
 * assert.deepEqual(parseRatioThreshold(0.5), { ok: true, value: 0.5 });
 * assert.equal(parseRatioThreshold("1/s").ok, false);
 * assert.equal(parseRatioThreshold("1e309%").ok, false); // past 1e308 %
 * ```
 */
export function parseRatioThreshold(value: unknown): Parsed<number> {
  const example = 'e.g. 0.001 or "0.1%"';
  const number = plainNumber(
    value,
    `must be a fraction or a percentage, ${example}`,
    ratioInRange,
  );
  if (number !== undefined) return number;
  const text = value as string;
  const common = commonProblem(text);
  if (common !== undefined) return common;
  if (text.endsWith("/s")) {
    return bad(
      `is per second, but a ratio has no unit; write a fraction or a percentage, ${example}`,
    );
  }
  const match = RATIO.exec(text);
  if (match === null) {
    return bad(`must be a fraction or a percentage, ${example}`);
  }
  const [, mantissa, exponent = "0", , percent] = match;
  return ratioInRange(decimal(mantissa, exponent, percent === "" ? 0 : -2));
}

/** `ratio` if it is at most {@linkcode MAX_RATIO} (Infinity is not). */
function ratioInRange(ratio: number): Parsed<number> {
  return ratio <= MAX_RATIO
    ? ok(ratio)
    : bad(`is too large: a ratio threshold must be ${RATIO_RANGE}`, "range");
}

/**
 * A number (or bigint) threshold for `rate` or `ratio`, checked by
 * `inRange`; undefined for a string, which the caller parses.
 */
function plainNumber(
  value: unknown,
  what: string,
  inRange: (n: number) => Parsed<number> = finite,
): Parsed<number> | undefined {
  switch (typeof value) {
    case "undefined":
      return bad("is required");
    case "string":
      return undefined;
    case "bigint":
      return value < 0n
        ? bad("must not be negative", "range")
        : inRange(Number(value));
    case "number":
      if (Number.isNaN(value)) return bad(what);
      if (value < 0) return bad("must not be negative", "range");
      // -0 reads as 0: a threshold has no sign.
      return inRange(value === 0 ? 0 : value);
    default:
      return bad(what);
  }
}

/** Problems any threshold text has whatever its signal. */
function commonProblem(text: string): Parsed<never> | undefined {
  if (text.length > MAX_TEXT) return bad("is too long for a threshold");
  if (text.startsWith("-")) return bad("must not be negative", "range");
  if (/^[0-9_]+,[0-9]{1,2}(?:$|[^0-9,])/.test(text)) {
    return bad("has a decimal comma; write the decimal point: 1.5, not 1,5");
  }
  if (/^[0-9_.]+(?:,[0-9_.]+)+/.test(text)) {
    return bad(
      "groups digits with commas; use _ (1_000_000) or the digits alone",
    );
  }
  return undefined;
}

/**
 * `mantissa` x 10^(`exponent` + `shift`) as the nearest float64: the text
 * is converted once, so `0.3` x 1000 is 300 exactly.
 */
function decimal(mantissa: string, exponent: string, shift: number): number {
  // An exponent past ±400 is past float64 either way: Infinity or 0.
  const e = Math.max(-400, Math.min(400, Number(exponent))) + shift;
  return Number(`${mantissa.replaceAll("_", "")}e${e}`);
}

function finite(value: number): Parsed<number> {
  return Number.isFinite(value)
    ? ok(value)
    : bad("is too large: a threshold must be a finite number", "range");
}
