/**
 * Byte-level formatting for events.log: u64 decimals and UTC timestamps
 * written straight into a caller's `Uint8Array`, so logging a sample
 * allocates no strings.
 *
 * @module
 */

import { divmod1e9 } from "../rules/u64.ts";

const ZERO = 48;
const scratchRem = new Float64Array(1);

/** Longest decimal u64 ("18446744073709551615"). */
export const MAX_U64_DIGITS = 20;

/** Length of {@linkcode writeUtcSecond}'s output (`YYYY-MM-DDTHH:MM:SSZ`). */
export const UTC_SECOND_LENGTH = 20;

/** Writes a non-negative safe integer in decimal at `pos`; returns the end. */
export function writeUint(buf: Uint8Array, pos: number, n: number): number {
  let digits = 1;
  for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
  const end = pos + digits;
  for (let i = end - 1; i >= pos; i--) {
    const q = Math.floor(n / 10);
    buf[i] = ZERO + (n - q * 10);
    n = q;
  }
  return end;
}

/** Writes `n` as exactly `width` digits, zero-padded, at `pos`. */
export function writePadded(
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
 * import { writeU64 } from "./format.ts";
 * const buf = new Uint8Array(20);
 * const end = writeU64(buf, 0, 0xffffffff, 0xffffffff);
 * new TextDecoder().decode(buf.subarray(0, end)); // "18446744073709551615"
 * ```
 */
export function writeU64(
  buf: Uint8Array,
  pos: number,
  lo: number,
  hi: number,
): number {
  if (hi < 0x200000) return writeUint(buf, pos, hi * 4294967296 + lo);
  const q = divmod1e9(lo, hi, scratchRem);
  return writePadded(buf, writeUint(buf, pos, q), scratchRem[0], 9);
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
