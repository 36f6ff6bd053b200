/**
 * What a rule says about itself on alerts and the metrics endpoint: its
 * `severity` and its `summary`, for both kinds of rule.
 *
 * @module
 */

import { MAX_SEVERITY_CHARS, MAX_SUMMARY_CHARS } from "./limits.ts";
import { nameProblem } from "./names.ts";
import { bad, ok, type Parsed } from "./values.ts";

const SEVERITY = new RegExp(`^[a-z][a-z0-9_]{0,${MAX_SEVERITY_CHARS - 1}}$`);

/**
 * Parses a severity: a lowercase token of letters, digits and `_`,
 * starting with a letter, at most {@linkcode MAX_SEVERITY_CHARS}
 * characters. Alert routing matches it as a label value, so `Critical`
 * and `critical` must not both exist.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSeverity } from "./rule_labels.ts";
 *
 * assert.deepEqual(parseSeverity("critical"), { ok: true, value: "critical" });
 * assert.equal(parseSeverity("Critical").ok, false);
 * ```
 */
export function parseSeverity(value: unknown): Parsed<string> {
  if (value === undefined) return bad("is required");
  if (typeof value === "string" && SEVERITY.test(value)) {
    return ok(value);
  }
  return bad(
    `must be a lowercase word such as critical, warning or info (a-z, 0-9 and _, starting with a letter, at most ${MAX_SEVERITY_CHARS} characters)`,
  );
}

/**
 * Parses a summary: one line of printable text (the characters a rule
 * name may hold, see names.ts), at most {@linkcode MAX_SUMMARY_CHARS}
 * characters.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSummary } from "./rule_labels.ts";
 *
 * assert.deepEqual(parseSummary("ECN marks above 1M/s on port 0"), {
 *   ok: true,
 *   value: "ECN marks above 1M/s on port 0",
 * });
 * assert.equal(parseSummary("two\nlines").ok, false);
 * ```
 */
export function parseSummary(value: unknown): Parsed<string> {
  if (value === undefined) return bad("is required");
  if (typeof value !== "string") return bad("must be a string");
  if (value === "") return bad("must not be empty");
  let chars = 0;
  for (const _ of value) {
    if (++chars > MAX_SUMMARY_CHARS) {
      return bad(
        `is longer than ${MAX_SUMMARY_CHARS} characters; a summary is one line`,
        "range",
      );
    }
  }
  // Within the bound, only a refused character is a problem; the name
  // length limit does not apply to a summary.
  const problem = nameProblem(value);
  if (problem !== undefined && problem.startsWith("contains")) {
    return bad(
      problem.replace(/; names must be printable text$/, "") +
        "; a summary must be one line of printable text",
    );
  }
  return ok(value);
}
