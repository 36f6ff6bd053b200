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
 * Parses a decimal u64 (1 to 20 digits, below 2^64) into `out[at]` (hi)
 * and `out[at + 1]` (lo). False, leaving `out` alone, if it is not one.
 *
 * @example
 * ```ts
 * import { parseDecimal } from "./decimal.ts";
 * const out = new Float64Array(2);
 * parseDecimal("18446744073709551615", out, 0); // true; out is [18446744073, 709551615]
 * ```
 */
export function parseDecimal(
  text: string,
  out: Float64Array,
  at: number,
): boolean {
  const n = text.length;
  if (n === 0 || n > 20) return false;
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
    lo = lo * 10 + c;
    const carry = lo >= E9 ? Math.floor(lo / E9) : 0;
    lo -= carry * E9;
    hi = hi * 10 + carry;
  }
  if (hi > MAX_HI || (hi === MAX_HI && lo > MAX_LO)) return false;
  out[at] = hi;
  out[at + 1] = lo;
  return true;
}

/**
 * The decimal text of `hi * 10^9 + lo`, exact at any size.
 *
 * @example
 * ```ts
 * import { formatDecimal } from "./decimal.ts";
 * formatDecimal(9007199, 254740993); // "9007199254740993"
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
 * import { signedDelta } from "./decimal.ts";
 * // 4 - (2^64 - 6): the counter wrapped and rose by 10
 * signedDelta(0, 4, 18446744073, 709551610); // 10
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

/** The value as a double (rounded above 2^53), for charts and rates. */
export function decimalToNumber(hi: number, lo: number): number {
  return hi * E9 + lo;
}
