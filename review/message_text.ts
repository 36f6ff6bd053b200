/**
 * Text from a log put into a one-line message: cut short, and made safe
 * for a terminal (a NUL-padded block after a crash, a stray escape
 * sequence) by the one function that does that, base/terminal_text.ts's
 * terminalSafe, so a message shows what was there as `\u0000`.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";

/** The characters of the log's text a message quotes at most. */
const MAX_QUOTED = 40;

/**
 * At most 40 characters of `text`, terminal-safe, for messages: cut
 * first, so an escape is never cut in half.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clip } from "./message_text.ts";
 *
 * assert.equal(clip("x".repeat(50)), "x".repeat(40) + "...");
 * assert.equal(clip("a\u0000\u001b[2Jb"), "a\\u0000\\u001b[2Jb");
 * ```
 */
export function clip(text: string): string {
  return text.length > MAX_QUOTED
    ? terminalSafe(text.slice(0, MAX_QUOTED)) + "..."
    : terminalSafe(text);
}
