/**
 * Exact unsigned 64-bit values as a reader of events.log sees them: split
 * at 10^9 into `hi * 10^9 + lo`, two exact doubles (`hi` < 1.9e10, `lo` <
 * 1e9). Parsing a decimal digit by digit into this form needs no BigInt,
 * printing it back is two number-to-string conversions, and a timestamp in
 * nanoseconds since the epoch splits into whole seconds and nanoseconds.
 *
 * @module
 */

/** 10^9: the split point. */
export const E9 = 1e9;
/** `hi` of 2^64 - 1 (18446744073709551615). */
export const MAX_HI = 18446744073;
/** `lo` of 2^64 - 1. */
export const MAX_LO = 709551615;

/**
 * The decimal text of `hi * 10^9 + lo`, exact at any size.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDecimal } from "./decimal.ts";
 *
 * assert.equal(formatDecimal(9007199, 254740993), "9007199254740993");
 * ```
 */
export function formatDecimal(hi: number, lo: number): string {
  return hi === 0 ? String(lo) : String(hi) + String(lo).padStart(9, "0");
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareDecimal(
  aHi: number,
  aLo: number,
  bHi: number,
  bLo: number,
): number {
  return aHi !== bHi ? aHi - bHi : aLo - bLo;
}

/**
 * `(a - b) mod 2^64` read as a signed 64-bit integer, as a double: a
 * counter that wrapped past 2^64 - 1 rises by a little, a gauge that fell
 * (or a counter that was reset) goes negative. This is the rule engine's
 * wrapping arithmetic, and how the metrics tell a wrap from a reset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signedDelta } from "./decimal.ts";
 *
 * // 4 - (2^64 - 6): the counter wrapped and rose by 10
 * assert.equal(signedDelta(0, 4, 18446744073, 709551610), 10);
 * ```
 */
export function signedDelta(
  aHi: number,
  aLo: number,
  bHi: number,
  bLo: number,
): number {
  // Work on the split form so that a small difference across the wrap
  // stays exact (as one double, 2^64 - 6 has already lost its 6).
  let dh = aHi - bHi;
  let dl = aLo - bLo;
  if (dl < 0) {
    dl += E9;
    dh -= 1;
  }
  if (dh > 9223372036 || (dh === 9223372036 && dl >= 854775808)) {
    dh -= 18446744073; // at or above 2^63: subtract 2^64
    dl -= 709551616;
  } else if (dh < -9223372037 || (dh === -9223372037 && dl < 145224192)) {
    dh += 18446744073; // below -2^63: add 2^64
    dl += 709551616;
  }
  return dh * E9 + dl;
}

/** `hi` of 2^63, the smallest increase that is a counter reset. */
const RESET_HI = 9223372036;
/** `lo` of 2^63. */
const RESET_LO = 854775808;

/**
 * `(a - b) mod 2^64`, exactly, written to `out[0]` (`hi`) and `out[1]`
 * (`lo`): a counter's increase, a wrap past 2^64 - 1 counting as the
 * little it rose. Returns whether it is below 2^63; an increase of 2^63
 * or more is a counter reset (docs/spec/signal-rules.md §1), which the
 * rule engine and the metrics tell apart the same way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { increaseOf } from "./decimal.ts";
 *
 * const out = new Float64Array(2);
 * // 4 after 2^64 - 6: the counter wrapped and rose by 10
 * assert.equal(increaseOf(out, 0, 4, 18446744073, 709551610), true);
 * assert.deepEqual([...out], [0, 10]);
 * // 5 after 7: a reset (2^64 - 2 is no increase)
 * assert.equal(increaseOf(out, 0, 5, 0, 7), false);
 * assert.deepEqual([...out], [18446744073, 709551614]);
 * ```
 */
export function increaseOf(
  out: Float64Array,
  aHi: number,
  aLo: number,
  bHi: number,
  bLo: number,
): boolean {
  let dh = aHi - bHi;
  let dl = aLo - bLo;
  if (dl < 0) {
    dl += E9;
    dh -= 1;
  }
  if (dh < 0) {
    dh += MAX_HI; // add 2^64
    dl += MAX_LO + 1;
    if (dl >= E9) {
      dl -= E9;
      dh += 1;
    }
  }
  out[0] = dh;
  out[1] = dl;
  return dh < RESET_HI || (dh === RESET_HI && dl < RESET_LO);
}

/** The value as a double (rounded above 2^53), for charts and rates. */
export function decimalToNumber(hi: number, lo: number): number {
  return hi * E9 + lo;
}
