/**
 * Rule and column names: the text events.log quotes in its header, its
 * column-name rows and its event markers, and that `review` must read
 * back exactly. The writer splits nothing, but the reader splits lines on
 * line breaks (a marker's `Rule: (.*)` also stops at U+2028 and U+2029),
 * and UTF-8 cannot carry a lone surrogate, so a name holding one would
 * come back as another name. Controls and bidirectional formatting are
 * refused too: they survive the round trip but make a name print as
 * something else in a terminal, a table or a metric label.
 *
 * @module
 */

import { z } from "zod";
import { MAX_NAME_CHARS } from "./limits.ts";
import { TERMINAL_UNSAFE_CLASS } from "../base/terminal_text.ts";

/** What a refused character is, for the message. */
function characterKind(code: number): string | undefined {
  if (code === 0x0a || code === 0x0d) return "a line break";
  if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) {
    return "a control character";
  }
  if (code === 0x2028) return "a line separator";
  if (code === 0x2029) return "a paragraph separator";
  if (code === 0x202d || code === 0x202e) return "a bidi override";
  if (code >= 0x202a && code <= 0x202c) return "a bidi embedding";
  if (code >= 0x2066 && code <= 0x2069) return "a bidi isolate";
  if (code === 0x200e || code === 0x200f || code === 0x061c) {
    return "a bidi mark";
  }
  if (code >= 0xd800 && code <= 0xdfff) return "a lone surrogate";
  return undefined;
}

/**
 * Characters {@linkcode characterKind} names, to find the first fast:
 * what a terminal could act on (the class terminalSafe escapes), and
 * lone surrogates.
 */
const REFUSED = new RegExp(`${TERMINAL_UNSAFE_CLASS}|\\p{Surrogate}`, "v");

/**
 * Why `name` cannot be a rule or column name, or undefined if it can: the
 * first refused character, as `U+XXXX (what it is) at index N` (N counts
 * characters from 0), or its length.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { nameProblem } from "./names.ts";
 *
 * assert.equal(nameProblem("Rx Bytes/s > 1MeBs"), undefined);
 * assert.equal(
 *   nameProblem("rx \u202Eyb"),
 *   "contains U+202E (a bidi override) at index 3; names must be printable text",
 * );
 * assert.equal(nameProblem("a\uD800"), "contains U+D800 (a lone surrogate) at index 1; names must be printable text");
 * ```
 */
export function nameProblem(name: string): string | undefined {
  const found = REFUSED.exec(name);
  if (found !== null) {
    const code = found[0].charCodeAt(0);
    const hex = code.toString(16).toUpperCase().padStart(4, "0");
    const index = [...name.slice(0, found.index)].length;
    return `contains U+${hex} (${
      characterKind(code)
    }) at index ${index}; names must be printable text`;
  }
  let chars = 0;
  for (const _ of name) {
    if (++chars > MAX_NAME_CHARS) {
      return `is longer than ${MAX_NAME_CHARS} characters`;
    }
  }
  return undefined;
}

/**
 * A rule or column name: 1 to {@linkcode MAX_NAME_CHARS} characters of
 * printable text (see {@linkcode nameProblem}).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { printableName } from "./names.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(printableName, 'pcie, max "read" ns'), { ok: true, value: 'pcie, max "read" ns' });
 * assert.equal(parseValue(printableName, "line\u2028break").ok, false);
 * assert.equal(parseValue(printableName, "").ok, false);
 * ```
 */
export const printableName: z.ZodString = z.string()
  .refine((s) => s !== "", { error: "must not be empty", abort: true })
  .check((ctx) => {
    const problem = nameProblem(ctx.value);
    if (problem === undefined) return;
    ctx.issues.push({
      code: "custom",
      message: problem,
      params: { kind: problem.startsWith("is longer") ? "range" : "type" },
      input: ctx.value,
      continue: true,
    });
  });
