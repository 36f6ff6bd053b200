/**
 * Exact unsigned 64-bit arithmetic on (lo, hi) pairs of 32-bit halves.
 *
 * A JS `number` is exact only up to 2^53 and BigInt allocates, so the
 * per-sample path keeps every counter as two uint32 halves and does the
 * arithmetic here. Results that are themselves u64 land in a caller-owned
 * `Uint32Array` at an offset, so nothing allocates.
 *
 * @module
 */

const TWO_32 = 4294967296;

/** `a > b` for u64 values given as halves. */
export function gtU64(
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): boolean {
  return aHi > bHi || (aHi === bHi && aLo > bLo);
}

/** `a < b` for u64 values given as halves. */
export function ltU64(
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): boolean {
  return aHi < bHi || (aHi === bHi && aLo < bLo);
}

/** `a >= b` for u64 values given as halves. */
export function geU64(
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): boolean {
  return aHi > bHi || (aHi === bHi && aLo >= bLo);
}

/** Writes `(a - b) mod 2^64` to `out[at]` (lo) and `out[at + 1]` (hi). */
export function subU64(
  out: Uint32Array,
  at: number,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): void {
  const borrow = aLo < bLo ? 1 : 0;
  out[at] = aLo - bLo; // Uint32Array stores mod 2^32
  out[at + 1] = aHi - bHi - borrow;
}

/** Writes `(a + b) mod 2^64` to `out[at]` (lo) and `out[at + 1]` (hi). */
export function addU64(
  out: Uint32Array,
  at: number,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
): void {
  const lo = aLo + bLo;
  out[at] = lo;
  out[at + 1] = aHi + bHi + (lo >= TWO_32 ? 1 : 0);
}

/**
 * Writes `(a + n) mod 2^64` to `out[at..at+1]`, for a non-negative safe
 * integer `n` (a simulator step, a period in ns).
 */
export function addNumberU64(
  out: Uint32Array,
  at: number,
  aLo: number,
  aHi: number,
  n: number,
): void {
  const nHi = Math.floor(n / TWO_32);
  addU64(out, at, aLo, aHi, n - nHi * TWO_32, nHi);
}

/**
 * The u64 as a float: exact below 2^53, nearest double above. For
 * aggregation and display only, never for comparisons.
 */
export function toNumberU64(lo: number, hi: number): number {
  return hi * TWO_32 + lo;
}

/**
 * Splits a u64 into `q = floor(v / 1e9)` and `r = v mod 1e9`, both exact
 * numbers (q < 1.85e10). Long division by 16-bit digits keeps every
 * intermediate below 2^53. Returns q; r is written to `rem[0]`.
 */
export function divmod1e9(lo: number, hi: number, rem: Float64Array): number {
  let r = 0;
  let q = 0;
  // Four 16-bit digits, most significant first.
  let cur = r * 65536 + (hi >>> 16);
  let d = Math.floor(cur / 1e9);
  r = cur - d * 1e9;
  q = d;
  cur = r * 65536 + (hi & 0xffff);
  d = Math.floor(cur / 1e9);
  r = cur - d * 1e9;
  q = q * 65536 + d;
  cur = r * 65536 + (lo >>> 16);
  d = Math.floor(cur / 1e9);
  r = cur - d * 1e9;
  q = q * 65536 + d;
  cur = r * 65536 + (lo & 0xffff);
  d = Math.floor(cur / 1e9);
  r = cur - d * 1e9;
  q = q * 65536 + d;
  rem[0] = r;
  return q;
}

/**
 * Writes a wall-clock time in milliseconds since the epoch (a float, as
 * `performance.timeOrigin + performance.now()` gives) as nanoseconds since
 * the epoch to `out[at..at+1]`, without BigInt. Negative times read as 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { msToNsU64 } from "./u64.ts";
 *
 * const out = new Uint32Array(2);
 * msToNsU64(out, 0, 1_000.5); // 1.0005 s after the epoch
 * assert.deepEqual([...out], [1_000_500_000, 0]); // ns: lo, hi
 * ```
 */
export function msToNsU64(out: Uint32Array, at: number, ms: number): void {
  const wall = ms > 0 ? ms : 0;
  const s = Math.floor(wall / 1000);
  const ns = Math.min(999_999_999, Math.round((wall - s * 1000) * 1e6));
  mulAdd1e9U64(out, at, s, ns);
}

/**
 * Writes `(a * 1e9 + b) mod 2^64` to `out[at..at+1]`, for integers
 * `0 <= a <= 1.9e10` and `0 <= b < 2^32`: how RTC timestamps (seconds,
 * nanoseconds) become ns since the epoch, and how {@linkcode parseU64}
 * joins its two digit groups.
 */
export function mulAdd1e9U64(
  out: Uint32Array,
  at: number,
  a: number,
  b: number,
): void {
  // 1e9 = 15258 * 65536 + 51712; each partial product stays below 2^53.
  const aLoPart = a * 51712 + b; // < 2^48 + 2^32
  const aHiPart = a * 15258; // times 65536, < 2^46
  // total = aHiPart * 65536 + aLoPart
  const hiPartLo16 = aHiPart % 65536;
  const hiPartHigh = (aHiPart - hiPartLo16) / 65536;
  // aHiPart * 65536 = hiPartHigh * 2^32 + hiPartLo16 * 65536
  const low = hiPartLo16 * 65536 + aLoPart; // < 2^49
  const carry = Math.floor(low / TWO_32);
  out[at] = low - carry * TWO_32;
  out[at + 1] = hiPartHigh + carry;
}

/**
 * Parses a decimal u64 (1..20 digits, < 2^64) into `out[at..at+1]` without
 * BigInt. Returns false, leaving `out` untouched, if `text` is not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseU64 } from "./u64.ts";
 *
 * const out = new Uint32Array(2);
 * assert.equal(parseU64("18446744073709551615", out, 0), true); // 2^64 - 1
 * assert.deepEqual([...out], [0xffffffff, 0xffffffff]); // lo, hi
 * assert.equal(parseU64("18446744073709551616", out, 0), false); // not below 2^64
 * assert.equal(parseU64("-1", out, 0), false);
 * assert.deepEqual([...out], [0xffffffff, 0xffffffff]); // left untouched
 * ```
 */
export function parseU64(text: string, out: Uint32Array, at: number): boolean {
  const n = text.length;
  if (n === 0 || n > 20) return false;
  let q = 0; // leading digits (all but the last 9), exact below 2^53
  let r = 0; // last up-to-9 digits
  const split = n > 9 ? n - 9 : 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
    if (i < split) q = q * 10 + c;
    else r = r * 10 + c;
  }
  // q <= 18446744073 for a valid u64; reject early what cannot fit.
  if (q > 18446744073) return false;
  if (q === 18446744073 && r > 709551615) return false;
  mulAdd1e9U64(out, at, q, r);
  return true;
}

const scratchRem = new Float64Array(1);

/**
 * Formats a u64 in decimal. Allocates a string: for messages, tests and
 * exposition, not for the per-sample path (the events writer formats digits
 * straight into its byte buffer instead).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatU64 } from "./u64.ts";
 *
 * assert.equal(formatU64(1, 0x200000), "9007199254740993"); // 2^53 + 1, exact
 * assert.equal(formatU64(0xffffffff, 0xffffffff), "18446744073709551615");
 * ```
 */
export function formatU64(lo: number, hi: number): string {
  if (hi < 0x200000) return String(toNumberU64(lo, hi));
  const q = divmod1e9(lo, hi, scratchRem);
  return String(q) + String(scratchRem[0]).padStart(9, "0");
}

/**
 * Splits a bigint in [0, 2^64) into halves, for configuration-time values.
 * Throws RangeError outside that range.
 */
export function bigintToU64(value: bigint, out: Uint32Array, at: number): void {
  if (value < 0n || value >= 1n << 64n) {
    throw new RangeError(
      `Cannot represent ${value} as an unsigned 64-bit integer`,
    );
  }
  out[at] = Number(value & 0xffffffffn);
  out[at + 1] = Number(value >> 32n);
}
