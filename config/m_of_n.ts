/**
 * A signal rule's `for`: how long its raise condition must hold before it
 * starts, either a duration (`500us`) or "M of N" (`3 of 5`, also `3 of 5
 * samples`): the condition held on at least M of the last N samples.
 *
 * Words may be separated by more than one space. Whether N fits the ring
 * (N <= 2 x depth) depends on the monitor and is checked when the rule is
 * resolved (normalize.ts).
 *
 * @module
 */

import { parseDuration } from "./durations.ts";
import { bad, ok, type Parsed } from "./values.ts";

/** Start when the raise condition held on at least `m` of the last `n` samples. */
export interface MOfN {
  /** How many of the samples must raise (1 <= m <= n). */
  readonly m: number;
  /** How many of the latest samples are looked at, the newest included. */
  readonly n: number;
}

const M_OF_N = /^([0-9]+) +of +([0-9]+)(?: +samples?)?$/;
const EXAMPLE = 'e.g. "3 of 5"';

/**
 * Parses "M of N" with 1 <= M <= N.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMOfN } from "./m_of_n.ts";
 *
 * assert.deepEqual(parseMOfN("3 of 5 samples"), { ok: true, value: { m: 3, n: 5 } });
 * assert.deepEqual(parseMOfN("5 of 3"), {
 *   ok: false,
 *   problem: "needs M <= N: 5 of the last 3 samples can never hold",
 *   kind: "range",
 * });
 * ```
 */
export function parseMOfN(value: unknown): Parsed<MOfN> {
  if (value === undefined) return bad("is required");
  const match = typeof value === "string" ? M_OF_N.exec(value) : null;
  if (match === null) {
    return bad(`must be "M of N" with whole numbers, ${EXAMPLE}`);
  }
  const m = Number(match[1]);
  const n = Number(match[2]);
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n)) {
    return bad("is too large: N can be at most 2 x depth", "range");
  }
  if (n === 0) {
    return bad("needs N >= 1: the rule looks at the last N samples", "range");
  }
  if (m === 0) {
    return bad("needs M >= 1: 0 of N would hold on every sample", "range");
  }
  if (m > n) {
    return bad(
      `needs M <= N: ${m} of the last ${n} samples can never hold`,
      "range",
    );
  }
  return ok({ m, n });
}

/**
 * Parses a rule's `for`: a duration in nanoseconds (a number), or M of N
 * when the text has the word `of`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseFor } from "./m_of_n.ts";
 *
 * assert.deepEqual(parseFor("500us"), { ok: true, value: 500_000 });
 * assert.deepEqual(parseFor("3 of 5"), { ok: true, value: { m: 3, n: 5 } });
 * ```
 */
export function parseFor(value: unknown): Parsed<number | MOfN> {
  if (typeof value === "string" && /(?:^|\s)of(?:\s|$)/.test(value)) {
    return parseMOfN(value);
  }
  const duration = parseDuration(value);
  if (duration.ok || typeof value !== "string") return duration;
  // "3/5": the operator may have meant M of N.
  return /^[0-9]+ *\/ *[0-9]+$/.test(value)
    ? bad(`must be a duration or "M of N", ${EXAMPLE} or "500us"`)
    : duration;
}
