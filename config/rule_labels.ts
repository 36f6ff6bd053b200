/**
 * What a rule says about itself on alerts and the metrics endpoint: its
 * `severity`, its `summary` and its `runbook_url`, for both kinds of rule.
 *
 * @module
 */

import { z } from "zod";
import {
  MAX_RUNBOOK_URL_CHARS,
  MAX_SEVERITY_CHARS,
  MAX_SUMMARY_CHARS,
} from "./limits.ts";
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

const RUNBOOK_URL_PROBLEM =
  `must be an http:// or https:// URL of at most ${MAX_RUNBOOK_URL_CHARS} characters, e.g. https://wiki.example.com/runbooks/ecn-storm`;

/**
 * A runbook's address: an absolute `http://` or `https://` URL with a
 * host, at most {@linkcode MAX_RUNBOOK_URL_CHARS} characters, no spaces or
 * other characters a URL must escape, and no user or password (it goes on
 * every alert of the rule and on `/metrics`). Kept as written: alerts
 * and `rule_info` carry the operator's text, not a re-encoded one.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { runbookUrl } from "./rule_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(runbookUrl, "https://wiki.example.com/runbooks/ecn-storm#port-0"), {
 *   ok: true,
 *   value: "https://wiki.example.com/runbooks/ecn-storm#port-0",
 * });
 * assert.equal(parseValue(runbookUrl, "wiki/ecn-storm").ok, false);
 * ```
 */
export const runbookUrl: z.ZodType<string> = z.string()
  .refine(
    (s) => [...s].length <= MAX_RUNBOOK_URL_CHARS,
    outOfRange(RUNBOOK_URL_PROBLEM),
  )
  .check((ctx) => {
    const problem = runbookUrlProblem(ctx.value);
    if (problem === undefined) return;
    ctx.issues.push({ code: "custom", message: problem, input: ctx.value });
  });

/** Why `text` is no runbook URL, or undefined when it is one. */
function runbookUrlProblem(text: string): string | undefined {
  // Printable ASCII without spaces: what a URL holds once escaped. A space
  // or a line break would end the link in a chat message or an e-mail.
  // The host right after `//`: WHATWG parsing reads `http:///x` as
  // `http://x/`, which is not what was written.
  if (!/^https?:\/\/[^/?#][\x21-\x7e]*$/i.test(text)) {
    return RUNBOOK_URL_PROBLEM;
  }
  const url = URL.parse(text);
  if (url === null || url.hostname === "") return RUNBOOK_URL_PROBLEM;
  if (url.username !== "" || url.password !== "") {
    return "must not hold a user or password (it is shown on every alert of the rule and on /metrics); link a page that asks for them";
  }
  return undefined;
}
