/**
 * What a rule says about itself on alerts and the metrics endpoint: its
 * `severity` and its `summary`, for both kinds of rule.
 *
 * @module
 */

import { z } from "zod";
import { MAX_SEVERITY_CHARS, MAX_SUMMARY_CHARS } from "./limits.ts";
import { nameProblem } from "./names.ts";
import { outOfRange } from "./values.ts";

/**
 * A severity: a lowercase token of letters, digits and `_`, starting with
 * a letter, at most {@linkcode MAX_SEVERITY_CHARS} characters. Alert
 * routing matches it as a label value, so `Critical` and `critical` must
 * not both exist.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { severity } from "./rule_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(severity, "critical"), { ok: true, value: "critical" });
 * assert.equal(parseValue(severity, "Critical").ok, false);
 * ```
 */
export const severity: z.ZodString = z.string({ error: severityProblem })
  .regex(new RegExp(`^[a-z][a-z0-9_]{0,${MAX_SEVERITY_CHARS - 1}}$`), {
    error: severityProblem,
  });

function severityProblem(
  issue: { input?: unknown; code?: string },
): string | undefined {
  return issue.input === undefined ||
      (issue.code !== "invalid_type" && issue.code !== "invalid_format")
    ? undefined
    : `must be a lowercase word such as critical, warning or info (a-z, 0-9 and _, starting with a letter, at most ${MAX_SEVERITY_CHARS} characters)`;
}

/**
 * A summary: one line of printable text (the characters a rule name may
 * hold, see names.ts), at most {@linkcode MAX_SUMMARY_CHARS} characters.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { summary } from "./rule_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(summary, "ECN marks above 1M/s on port 0"), {
 *   ok: true,
 *   value: "ECN marks above 1M/s on port 0",
 * });
 * assert.equal(parseValue(summary, "two\nlines").ok, false);
 * ```
 */
export const summary: z.ZodType<string> = z.string()
  .refine((s) => s !== "", { error: "must not be empty", abort: true })
  .refine(
    (s) => [...s].length <= MAX_SUMMARY_CHARS,
    outOfRange(
      `is longer than ${MAX_SUMMARY_CHARS} characters; a summary is one line`,
    ),
  )
  .check((ctx) => {
    // Only a refused character: the name length limit is not a summary's.
    const problem = nameProblem(ctx.value);
    if (problem === undefined || !problem.startsWith("contains")) return;
    ctx.issues.push({
      code: "custom",
      message: problem.replace(/; names must be printable text$/, "") +
        "; a summary must be one line of printable text",
      input: ctx.value,
      continue: true,
    });
  });
