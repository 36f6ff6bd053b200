/**
 * The one-line text of anything thrown: an Error's message, or the thrown
 * value as a string.
 *
 * @module
 */

/**
 * The message to show for a caught value. Code may throw anything (a
 * worker's `ErrorEvent`, a string from a library); this is the one place
 * that decides how it reads.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorMessage } from "./error_message.ts";
 *
 * assert.equal(errorMessage(new RangeError("out of range")), "out of range");
 * assert.equal(errorMessage("plain text"), "plain text");
 * assert.equal(errorMessage(42), "42");
 * ```
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
