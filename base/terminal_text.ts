/**
 * Text from outside (a log's rule and column names, a monitor's name, a
 * file name) made safe to print on a terminal: anything that could move
 * the cursor, clear the screen, set the clipboard (OSC 52) or reorder
 * what the operator reads is shown as a visible escape instead.
 *
 * @module
 */

/**
 * What a terminal may act on rather than show: C0 controls and DEL, C1
 * controls (a UTF-8 terminal may still honour U+009B as CSI), the line
 * and paragraph separators, and the bidirectional marks, embeddings,
 * overrides and isolates that make text read in another order than it is.
 * A regular expression's character class, as text: config/names.ts
 * refuses in a name exactly what this escapes in output.
 */
export const TERMINAL_UNSAFE_CLASS =
  "[\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]";

const UNSAFE = new RegExp(TERMINAL_UNSAFE_CLASS, "g");

/**
 * `text` with every character a terminal could act on (C0 and C1
 * controls, DEL, U+2028/U+2029, bidi marks, overrides and isolates)
 * written as `\uXXXX`, so the operator sees that something was there
 * and nothing happens to the screen. The escape is JSON's own: applied to
 * JSON text it leaves the data unchanged. A backslash already in `text`
 * is kept as it is. Safe to apply twice.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { terminalSafe } from "./terminal_text.ts";
 *
 * assert.equal(terminalSafe("a\x1b[2Jb"), "a\\u001b[2Jb");
 * assert.equal(terminalSafe("rx \u202eyb"), "rx \\u202eyb");
 * assert.equal(terminalSafe("µs · ok"), "µs · ok");
 * assert.equal(JSON.parse(terminalSafe(JSON.stringify("\x9b"))), "\x9b");
 * ```
 */
export function terminalSafe(text: string): string {
  return text.replace(
    UNSAFE,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}
