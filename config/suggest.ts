/**
 * Nearest names, for messages that say what was probably meant: a key, a
 * rule type, a column. Distance is optimal string alignment (Levenshtein
 * plus swapped neighbours), case-insensitive, and a name counts as near
 * when at most about a third of it differs.
 *
 * @module
 */

import { withHint } from "./errors.ts";

/**
 * The names in `candidates` nearest to `name`, nearest first (ties in
 * their given order), at most `max` of them.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { nearest } from "./suggest.ts";
 *
 * assert.deepEqual(nearest("comparision_type", ["name", "comparison_type"]), ["comparison_type"]);
 * assert.deepEqual(nearest("port_0_rx_byte", ["port_0_rx_bytes", "port_0_tx_bytes", "depth"]), [
 *   "port_0_rx_bytes",
 *   "port_0_tx_bytes",
 * ]);
 * assert.deepEqual(nearest("colour", ["name", "depth"]), []);
 * ```
 *
 * @param name What was written.
 * @param candidates What could have been meant.
 * @param max How many to give at most.
 * @returns The near candidates.
 */
export function nearest(
  name: string,
  candidates: readonly string[],
  max = Infinity,
): string[] {
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  return candidates
    .map((candidate, i) => ({
      candidate,
      i,
      d: distance(wanted, candidate.toLowerCase(), limit),
    }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, max)
    .map(({ candidate }) => candidate);
}

/**
 * Optimal string alignment distance of `a` and `b`, or `limit + 1` once it
 * is sure to pass `limit` (names can be long; only near ones matter).
 */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const cols = b.length + 1;
  let before = new Array<number>(cols).fill(0);
  let previous = Array.from({ length: cols }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    let best = row[0];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, before[j - 2] + 1);
      }
      row[j] = v;
      best = Math.min(best, v);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = row;
  }
  return previous[cols - 1];
}

/**
 * The problem of a key a schema does not know: the keys it may be, and as
 * a hint (see `withHint` in errors.ts) the nearest known key, or what a
 * word operators reach for (`aliases`) is written as.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { unknownKeyProblem } from "./suggest.ts";
 *
 * const [problem, hint] = unknownKeyProblem("comparision_type", ["name", "comparison_type"]).split("\u001e");
 * assert.equal(problem, "is not a known key; expected one of name, comparison_type");
 * assert.equal(hint, 'did you mean "comparison_type"?');
 * assert.equal(
 *   unknownKeyProblem("treshold", ["name", "above"], { threshold: "above or below" }).split("\u001e")[1],
 *   "did you mean above or below?",
 * );
 * ```
 *
 * @param key The key written.
 * @param known The keys allowed where it is.
 * @param aliases Words operators reach for, and what to write instead.
 * @returns The problem, phrased to follow the key in a message.
 */
export function unknownKeyProblem(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string {
  const [guess] = nearest(key, [...known, ...Object.keys(aliases)], 1);
  const meant = guess === undefined
    ? ""
    : Object.hasOwn(aliases, guess) && !known.includes(guess)
    ? `did you mean ${aliases[guess]}?`
    : `did you mean "${guess}"?`;
  return withHint(
    `is not a known key; expected one of ${known.join(", ")}`,
    meant,
  );
}
