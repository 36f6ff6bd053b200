/**
 * Text from a log put into a one-line message: control characters (a
 * NUL-padded block after a crash, a stray escape sequence) are shown as
 * `?` so they never reach the terminal, and long text is cut.
 *
 * @module
 */

/**
 * `text` with control characters and U+FFFD (bytes that were not UTF-8)
 * shown as `?`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { printable } from "./message_text.ts";
 *
 * assert.equal(printable("a\u0000\u001b[2Jb"), "a??[2Jb");
 * ```
 */
export function printable(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\x00-\x1f\x7f-\x9f\ufffd]/g, "?");
}

/**
 * At most 40 characters of `text`, printable, for messages.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clip } from "./message_text.ts";
 *
 * assert.equal(clip("x".repeat(50)), "x".repeat(40) + "...");
 * ```
 */
export function clip(text: string): string {
  const shown = printable(text);
  return shown.length > 40 ? shown.slice(0, 40) + "..." : shown;
}
