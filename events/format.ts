/**
 * Byte-level formatting for events.log: u64 decimals and UTC timestamps
 * written straight into a caller's `Uint8Array`, so logging a sample
 * allocates no strings.
 *
 * @module
 */

import { divmod1e9 } from "../base/u64.ts";

const ZERO = 48;
const scratchRem = new Float64Array(1);

/** Longest decimal u64 ("18446744073709551615"). */
export const MAX_U64_DIGITS = 20;

/** Length of {@linkcode writeUtcSecond}'s output (`YYYY-MM-DDTHH:MM:SSZ`). */
export const UTC_SECOND_LENGTH = 20;

/** Decimal digits of an integer 0 <= n < 2^32, by comparison (no division). */
function digitsUint32(n: number): number {
  if (n < 100000) {
    if (n < 100) return n < 10 ? 1 : 2;
    return n < 1000 ? 3 : n < 10000 ? 4 : 5;
  }
  if (n < 10000000) return n < 1000000 ? 6 : 7;
  return n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
}

/**
 * Writes an integer 0 <= n < 2^32 in decimal at `pos`; returns the end.
 * `>>> 0` keeps the quotient an unsigned 32-bit integer, so each digit costs
 * one division the compiler can turn into a multiplication.
 */
function writeUint32(buf: Uint8Array, pos: number, n: number): number {
  const end = pos + digitsUint32(n);
  for (let i = end - 1; i > pos; i--) {
    const q = (n / 10) >>> 0;
    buf[i] = ZERO + n - q * 10;
    n = q;
  }
  buf[pos] = ZERO + n;
  return end;
}

/** Writes 0 <= n < 1e9 as exactly nine digits, zero-padded. */
function writeNineDigits(buf: Uint8Array, pos: number, n: number): number {
  for (let i = pos + 8; i >= pos; i--) {
    const q = (n / 10) >>> 0;
    buf[i] = ZERO + n - q * 10;
    n = q;
  }
  return pos + 9;
}

/** Writes a non-negative safe integer in decimal at `pos`; returns the end. */
export function writeUint(buf: Uint8Array, pos: number, n: number): number {
  if (n < 4294967296) return writeUint32(buf, pos, n);
  const q = billions(n, scratchRem);
  const r = scratchRem[0];
  return writeNineDigits(buf, writeUint(buf, pos, q), r);
}

/**
 * `floor(n / 1e9)` of a safe integer `n`, exactly; `n mod 1e9` goes to
 * `rem[0]`.
 */
function billions(n: number, rem: Float64Array): number {
  let q = Math.floor(n / 1e9);
  let r = n - q * 1e9;
  // The float quotient can round across an integer: correct it.
  if (r < 0) {
    q--;
    r += 1e9;
  } else if (r >= 1e9) {
    q++;
    r -= 1e9;
  }
  rem[0] = r;
  return q;
}

/** Writes `n` as exactly `width` digits, zero-padded, at `pos`. */
function writePadded(
  buf: Uint8Array,
  pos: number,
  n: number,
  width: number,
): number {
  for (let i = pos + width - 1; i >= pos; i--) {
    const q = Math.floor(n / 10);
    buf[i] = ZERO + (n - q * 10);
    n = q;
  }
  return pos + width;
}

/**
 * Writes the u64 `hi * 2^32 + lo` in decimal at `pos`; returns the end.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeU64 } from "./format.ts";
 *
 * const buf = new Uint8Array(20);
 * const end = writeU64(buf, 0, 0xffffffff, 0xffffffff);
 * assert.equal(end, 20);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, end)), "18446744073709551615");
 * ```
 */
export function writeU64(
  buf: Uint8Array,
  pos: number,
  lo: number,
  hi: number,
): number {
  if (hi === 0) return writeUint32(buf, pos, lo);
  if (hi < 0x200000) return writeUint(buf, pos, hi * 4294967296 + lo);
  // Beyond 2^53 a double is not exact: divide the halves by 1e9 exactly.
  const q = divmod1e9(lo, hi, scratchRem);
  const r = scratchRem[0]; // before writeUint, which uses the scratch too
  return writeNineDigits(buf, writeUint(buf, pos, q), r);
}

/**
 * Writes u64s as {@linkcode writeU64} does, remembering for each of its
 * `slots` (a row's columns) the digits above the last nine. A timestamp
 * in ns keeps them for a second, a byte counter for a gigabyte, so a row
 * copies them instead of dividing them out again: the events log's rows
 * were the sampling thread's largest cost after waking up.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { U64Writer } from "./format.ts";
 *
 * const writer = new U64Writer(1);
 * const buf = new Uint8Array(20);
 * const text = (lo: number, hi: number) =>
 *   new TextDecoder().decode(buf.subarray(0, writer.write(buf, 0, lo, hi, 0)));
 * assert.equal(text(0xffffffff, 0xffffffff), "18446744073709551615");
 * assert.equal(text(0xfffffffe, 0xffffffff), "18446744073709551614"); // the same high digits
 * assert.equal(text(7, 0), "7");
 * ```
 */
export class U64Writer {
  readonly #q: Float64Array;
  readonly #length: Uint8Array;
  readonly #digits: Uint8Array;

  /** A writer remembering the high digits of `slots` columns. */
  constructor(slots: number) {
    this.#q = new Float64Array(slots).fill(-1);
    this.#length = new Uint8Array(slots);
    this.#digits = new Uint8Array(slots * MAX_QUOTIENT_DIGITS);
  }

  /** Writes the u64 `hi * 2^32 + lo` of column `slot` at `pos`; returns the end. */
  write(
    buf: Uint8Array,
    pos: number,
    lo: number,
    hi: number,
    slot: number,
  ): number {
    if (hi === 0) return writeUint32(buf, pos, lo);
    // Above 2^32, so the quotient by 1e9 is at least 4: nine low digits,
    // zero-padded, after it.
    // Below 2^53 a double is exact; beyond, the halves are divided.
    const q = hi < 0x200000
      ? billions(hi * 4294967296 + lo, scratchRem)
      : divmod1e9(lo, hi, scratchRem);
    const r = scratchRem[0];
    const at = slot * MAX_QUOTIENT_DIGITS;
    const digits = this.#digits;
    if (q === this.#q[slot]) {
      const length = this.#length[slot];
      for (let i = 0; i < length; i++) buf[pos + i] = digits[at + i];
      pos += length;
    } else {
      const end = writeUint(buf, pos, q);
      for (let i = pos; i < end; i++) digits[at + i - pos] = buf[i];
      this.#q[slot] = q;
      this.#length[slot] = end - pos;
      pos = end;
    }
    return writeNineDigits(buf, pos, r);
  }
}

/** Digits of the largest u64 divided by 1e9 (18446744073). */
const MAX_QUOTIENT_DIGITS = 11;

/** Length of {@linkcode writeUtcMillis}'s output (`YYYY-MM-DDTHH:MM:SS.mmmZ`). */
export const UTC_MILLIS_LENGTH = 24;

/**
 * Writes the UTC time of `unixMs`, truncated to the millisecond, as
 * `YYYY-MM-DDTHH:MM:SS.mmmZ` (what `Date#toISOString` prints) without a
 * `Date`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeUtcMillis } from "./format.ts";
 *
 * const buf = new Uint8Array(24);
 * const end = writeUtcMillis(buf, 0, Date.UTC(2026, 10, 21, 14, 2, 3, 456) + 0.9);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, end)), "2026-11-21T14:02:03.456Z");
 * ```
 */
export function writeUtcMillis(
  buf: Uint8Array,
  pos: number,
  unixMs: number,
): number {
  const ms = Math.floor(unixMs);
  // The second's text, then its Z moved after the milliseconds.
  pos = writeUtcSecond(buf, pos, ms) - 1;
  buf[pos++] = 46; // .
  pos = writePadded(buf, pos, ms - Math.floor(ms / 1000) * 1000, 3);
  buf[pos++] = 90; // Z
  return pos;
}

/**
 * Writes the UTC time of `unixMs`, truncated to the second, as
 * `YYYY-MM-DDTHH:MM:SSZ` (the reference's marker time) without a `Date`.
 */
export function writeUtcSecond(
  buf: Uint8Array,
  pos: number,
  unixMs: number,
): number {
  const secs = Math.floor(unixMs / 1000);
  const days = Math.floor(secs / 86400);
  const sod = secs - days * 86400;
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) -
      Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(sod / 3600);
  const minute = Math.floor((sod - hour * 3600) / 60);
  const second = sod - hour * 3600 - minute * 60;
  pos = writePadded(buf, pos, year, 4);
  buf[pos++] = 45; // -
  pos = writePadded(buf, pos, month, 2);
  buf[pos++] = 45;
  pos = writePadded(buf, pos, day, 2);
  buf[pos++] = 84; // T
  pos = writePadded(buf, pos, hour, 2);
  buf[pos++] = 58; // :
  pos = writePadded(buf, pos, minute, 2);
  buf[pos++] = 58;
  pos = writePadded(buf, pos, second, 2);
  buf[pos++] = 90; // Z
  return pos;
}
