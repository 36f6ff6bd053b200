/**
 * Times an operator or a client writes (`review --since`, `--until`,
 * `--event`, the events API's `since`), read exactly: nanoseconds since the
 * Unix epoch, as events.log's rows hold them, and how much time the text
 * names (a day, a minute, a second, down to one nanosecond).
 *
 * @module
 */

/** A time as written: when it starts, exactly, and how long the text names. */
export interface TimePoint {
  /** Nanoseconds since the Unix epoch (exact). */
  readonly ns: bigint;
  /**
   * How much time the text names from `ns` on, in ns: a day for a date
   * alone, a minute for `HH:MM`, a second for whole seconds, 10^(9 - k)
   * for k fraction digits (1 from the ninth digit on).
   */
  readonly spanNs: bigint;
}

/** ns in one second. */
export const NS_PER_SECOND = 1_000_000_000n;
/** ns in one day: what a date alone names. */
export const NS_PER_DAY = 86_400n * NS_PER_SECOND;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const UNIX = /^(\d+)(?:\.(\d+))?$/;
// Unix seconds up to the year 33658: more digits are milliseconds or
// nonsense, and would name a time no log holds.
const MAX_UNIX_DIGITS = 12;
const FORMS =
  "give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds";

/**
 * Reads a time: ISO-8601 / RFC 3339 (`2026-11-21`, `2026-11-21T14:50`,
 * `2026-11-21 14:50:00.123456789`, `24:00` the next midnight, `T` and `Z`
 * in any case, with `Z` or an offset `+02:00` / `+0200`; UTC without one,
 * as events.log's times are) or Unix seconds with up to 12 digits and any
 * fraction (`1795272600.25`).
 * Fraction digits past the ninth are below a nanosecond and dropped.
 * Throws a TypeError (not a time) or a RangeError (a field out of range:
 * `2026-02-31`, `25:00`) whose one-line message names `option` and
 * quotes `text`: `--since "yesterday": not a time; give ...`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTimePoint } from "./time_point.ts";
 *
 * const t = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z
 * assert.deepEqual(parseTimePoint("--since", "2026-11-21T14:50"), { ns: t, spanNs: 60_000_000_000n });
 * assert.deepEqual(
 *   parseTimePoint("--event", "2026-11-21T16:50:00.000000300+02:00"),
 *   { ns: t + 300n, spanNs: 1n },
 * );
 * assert.deepEqual(parseTimePoint("since", "1795272600.5"), { ns: t + 500_000_000n, spanNs: 100_000_000n });
 * assert.throws(() => parseTimePoint("--since", "2026-02-31"), RangeError);
 * assert.throws(
 *   () => parseTimePoint("--since", "yesterday"),
 *   { name: "TypeError", message: `--since "yesterday": not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds` },
 * );
 * ```
 */
export function parseTimePoint(option: string, text: string): TimePoint {
  const value = text.trim();
  const where = `${option} ${quote(text)}`;
  const unix = UNIX.exec(value);
  if (unix) {
    if (unix[1].length > MAX_UNIX_DIGITS) {
      throw new RangeError(
        `${where}: Unix seconds have at most ${MAX_UNIX_DIGITS} digits (milliseconds? give seconds)`,
      );
    }
    const [fraction, spanNs] = fractionNs(unix[2], NS_PER_SECOND);
    return { ns: BigInt(unix[1]) * NS_PER_SECOND + fraction, spanNs };
  }
  const m = ISO.exec(value);
  if (!m) throw new TypeError(`${where}: not a time; ${FORMS}`);
  const [, y, mo, d, h, mi, s, digits, zone] = m;
  const year = Number(y), month = Number(mo), day = Number(d);
  if (month < 1 || month > 12) {
    throw new RangeError(`${where}: there is no month ${mo}`);
  }
  if (day < 1 || day > daysInMonth(year, month)) {
    throw new RangeError(`${where}: ${y}-${mo} has no day ${d}`);
  }
  let seconds = BigInt(daysFromCivil(year, month, day)) * 86_400n;
  let spanNs = NS_PER_DAY;
  let fraction = 0n;
  if (h !== undefined) {
    // 24:00 is ISO-8601's end of a day: the next midnight.
    const endOfDay = h === "24" && Number(mi) === 0 && Number(s ?? 0) === 0 &&
      /^0*$/.test(digits ?? "");
    if (Number(h) > 23 && !endOfDay) {
      throw new RangeError(`${where}: there is no hour ${h}`);
    }
    if (Number(mi) > 59) {
      throw new RangeError(`${where}: there is no minute ${mi}`);
    }
    if (s !== undefined && Number(s) > 59) {
      throw new RangeError(`${where}: there is no second ${s}`);
    }
    seconds += BigInt(Number(h) * 3600 + Number(mi) * 60 + Number(s ?? 0));
    [fraction, spanNs] = s === undefined
      ? [0n, 60n * NS_PER_SECOND]
      : fractionNs(digits, NS_PER_SECOND);
  }
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(-2));
    if (hours > 23 || minutes > 59) {
      throw new RangeError(`${where}: there is no zone offset ${zone}`);
    }
    const offset = BigInt(hours * 3600 + minutes * 60);
    // 16:50+02:00 is 14:50 UTC: subtract the offset.
    seconds += zone[0] === "+" ? -offset : offset;
  }
  return { ns: seconds * NS_PER_SECOND + fraction, spanNs };
}

/**
 * `ns` as RFC 3339 UTC with all nine fraction digits, which
 * {@linkcode parseTimePoint} reads back as exactly that nanosecond.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatTimePoint, parseTimePoint } from "./time_point.ts";
 *
 * const text = formatTimePoint(1_795_272_600_300_000_001n);
 * assert.equal(text, "2026-11-21T14:50:00.300000001Z");
 * assert.deepEqual(parseTimePoint("--event", text), { ns: 1_795_272_600_300_000_001n, spanNs: 1n });
 * assert.equal(formatTimePoint(-1n), "1969-12-31T23:59:59.999999999Z");
 * ```
 */
export function formatTimePoint(ns: bigint): string {
  let seconds = ns / NS_PER_SECOND;
  let fraction = ns % NS_PER_SECOND;
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += NS_PER_SECOND;
  }
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, -5);
  return `${whole}.${String(fraction).padStart(9, "0")}Z`;
}

/**
 * `ns` as milliseconds since the epoch, with the fraction (as close as a
 * float gets: within a microsecond for any time this millennium).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { epochMs } from "./time_point.ts";
 *
 * assert.equal(epochMs(1_795_272_600_500_250_000n), 1_795_272_600_500.25);
 * assert.equal(epochMs(-1_500_000n), -1.5);
 * ```
 */
export function epochMs(ns: bigint): number {
  return Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
}

// Fraction digits as ns, and the span the last digit names (`unit` when
// there are none).
function fractionNs(
  digits: string | undefined,
  unit: bigint,
): [bigint, bigint] {
  if (digits === undefined) return [0n, unit];
  const kept = digits.slice(0, 9);
  return [
    BigInt(kept.padEnd(9, "0")),
    10n ** BigInt(9 - kept.length),
  ];
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) {
    return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return leap ? 29 : 28;
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
// (H. Hinnant's days_from_civil): integers only, so no Date quirks (two-
// digit years, rolled-over days).
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) +
    day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

// The value as written, JSON-quoted (one line) and cut short.
function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
