/**
 * One cell of the review's CSV (`--csv`, `--event N --csv`) as it is safe
 * to write: the CSV goes to a terminal or into a spreadsheet, and its
 * text (rule, column, monitor and file names) comes from a log anyone
 * with write access to the log directory may have written.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";

/**
 * What a spreadsheet would read as a formula: `=`, `+`, `-`, `@`, or a tab
 * or carriage return (that some strip before looking at the rest).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A plain decimal number (`-3.5`, `+2`, `-1e-7`): data, not a formula. */
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * `value` ready for a CSV cell. Text that a spreadsheet would take for a
 * formula (`=HYPERLINK(...)`, `@SUM(...)`, `-2+3`) gets a leading `'`, so
 * it is shown as text rather than evaluated; a number, or text that is
 * one (`-3.5`: a negative rate or offset), is left as it is. Terminal
 * controls in text are shown as `\uXXXX` (see
 * {@linkcode terminalSafe}). Values other than text pass unchanged.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { csvCell } from "./csv_cell.ts";
 *
 * assert.equal(csvCell('=HYPERLINK("http://x")'), `'=HYPERLINK("http://x")`);
 * assert.equal(csvCell("-3.5"), "-3.5");
 * assert.equal(csvCell(-3.5), -3.5);
 * assert.equal(csvCell("rx\x1b[2J"), "rx\\u001b[2J");
 * ```
 */
export function csvCell<T>(value: T): T | string {
  if (typeof value !== "string") return value;
  const text = FORMULA_START.test(value) && !NUMBER.test(value)
    ? "'" + value
    : value;
  return terminalSafe(text);
}
