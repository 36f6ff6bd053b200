/**
 * Durations in rules (`window`, `for`, `keep_firing_for`): a number and a
 * unit as an operator writes them (`500us`, `1.5ms`), held as whole
 * nanoseconds.
 *
 * What is accepted, and why:
 * - units `ns`, `us`, `µs`, `ms`, `s`, `m` or `min` (minutes), `h`. The
 *   micro sign (U+00B5) and the Greek mu (U+03BC) look the same, so both
 *   spell micro;
 * - one space between the number and the unit (`10 ms`), because that is
 *   how `check-config` prints durations (base/units.ts's `formatDuration`
 *   with `exact`, which writes only what this reads back) and an operator
 *   copies from it;
 * - a decimal mantissa when the result is a whole number of nanoseconds
 *   (`1.5ms`, not `1.5ns`); no sign, exponent or digit grouping;
 * - a plain `0` (number or string) is zero, any other plain number is
 *   refused: `500` could mean any unit;
 * - at most {@linkcode MAX_RULE_DURATION_NS} (7 days).
 *
 * @module
 */

import { quoteText } from "./errors.ts";
import { MAX_RULE_DURATION_NS } from "./limits.ts";
import { bad, ok, type Parsed } from "./parsed.ts";

/** Nanoseconds per unit, by every accepted spelling. */
const UNITS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1_000,
  "\u00b5s": 1_000,
  "\u03bcs": 1_000,
  ms: 1_000_000,
  s: 1_000_000_000,
  m: 60_000_000_000,
  min: 60_000_000_000,
  h: 3_600_000_000_000,
};

const UNIT_LIST = "ns, us, µs, ms, s, m (minutes) or h";
const EXAMPLE = 'e.g. "500us" or "10ms"';
const DURATION = /^([0-9]+)(?:\.([0-9]+))?( ?)([^\s0-9.]*)$/;
/** Longer text is no duration the bound allows; BigInt stays cheap. */
const MAX_TEXT = 64;

/**
 * Parses a duration to whole nanoseconds (see the module for the syntax).
 * Problems are phrased to follow the field's path.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDuration } from "./durations.ts";
 *
 * assert.deepEqual(parseDuration("500us"), { ok: true, value: 500_000 });
 * assert.deepEqual(parseDuration("1.5ms"), { ok: true, value: 1_500_000 });
 * assert.deepEqual(parseDuration(0), { ok: true, value: 0 });
 * assert.deepEqual(parseDuration(500), {
 *   ok: false,
 *   problem: 'needs a unit, e.g. "500us" or "10ms" (ns, us, µs, ms, s, m (minutes) or h)',
 *   kind: "type",
 * });
 * ```
 */
export function parseDuration(value: unknown): Parsed<number> {
  if (value === undefined) return bad("is required");
  if (value === 0) return ok(0);
  if (typeof value === "number" || typeof value === "bigint") {
    return bad(`needs a unit, ${EXAMPLE} (${UNIT_LIST})`);
  }
  if (typeof value !== "string") {
    return bad(`must be a duration, ${EXAMPLE}`);
  }
  if (value.length > MAX_TEXT) {
    return bad(`is too long for a duration, ${EXAMPLE}`);
  }
  if (value.startsWith("-")) return bad("must not be negative", "range");
  const match = DURATION.exec(value);
  if (match === null) {
    if (/^\s*\d+\s+of\s+\d+/.test(value)) {
      return bad(`must be a duration, ${EXAMPLE}; M of N is for \`for\` only`);
    }
    return bad(`must be a number and a unit, ${EXAMPLE} (${UNIT_LIST})`);
  }
  const [, whole, fraction = "", space, unit] = match;
  if (unit === "") {
    if (space === "" && /^0+$/.test(whole) && /^0*$/.test(fraction)) {
      return ok(0);
    }
    return bad(`needs a unit, ${EXAMPLE} (${UNIT_LIST})`);
  }
  if (!Object.hasOwn(UNITS, unit)) {
    return bad(`has an unknown unit ${quoteText(unit)}; use ${UNIT_LIST}`);
  }
  const total = BigInt(whole + fraction) * BigInt(UNITS[unit]);
  const divisor = 10n ** BigInt(fraction.length);
  if (total % divisor !== 0n) {
    return bad("is not a whole number of nanoseconds");
  }
  const ns = total / divisor;
  if (ns > BigInt(MAX_RULE_DURATION_NS)) {
    return bad('must be at most 7 days ("168h")', "range");
  }
  return ok(Number(ns));
}

/**
 * Parses a rule's window: a duration longer than 0 (a rate over no time
 * has no value).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseWindow } from "./durations.ts";
 *
 * assert.deepEqual(parseWindow("1ms"), { ok: true, value: 1_000_000 });
 * assert.equal(parseWindow("0ms").ok, false);
 * ```
 */
export function parseWindow(value: unknown): Parsed<number> {
  const parsed = parseDuration(value);
  if (parsed.ok && parsed.value === 0) {
    return bad(`must be longer than 0, ${EXAMPLE}`, "range");
  }
  return parsed;
}
