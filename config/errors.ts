/**
 * Turning configuration problems into one-line errors.
 *
 * Every message reads `Cannot load config FILE: PATH WHAT, got VALUE`, where
 * PATH uses the keys as written in the file (`monitors[1].data-ids[3].data_id`)
 * and VALUE is looked up in the raw parsed document, never taken from the
 * validator, so that the operator sees what they wrote.
 *
 * @module
 */

import type { z } from "zod";
import { terminalSafe } from "../base/terminal_text.ts";
import { MAX_MESSAGE_CHARS } from "./limits.ts";

/** A path into a parsed document: object keys and array indices. */
export type ConfigPath = readonly (string | number)[];

/**
 * What kind of problem a value has; decides the error class.
 * `type` becomes a `TypeError`, `range` a `RangeError`.
 */
export type ProblemKind = "type" | "range";

/** A file being validated: its name for messages and its raw parsed value. */
export interface ConfigSource {
  /** File name as the operator gave it. */
  readonly file: string;
  /** The document as parsed, before validation (see `document.ts`). */
  readonly doc: unknown;
}

/** The longest `got` value we print; whole objects can be large. */
const MAX_VALUE_CHARS = 120;

/** The longest key printed in a path, and the longest path. */
const MAX_PATH_KEY_CHARS = 40;
const MAX_PATH_CHARS = 100;

/** The longest file name printed; its end says most. */
const MAX_FILE_CHARS = 100;

/** Keys that can be printed bare in a path; anything else is quoted. */
const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Formats a path the way an operator would point at the value.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatPath } from "./errors.ts";
 *
 * assert.equal(
 *   formatPath(["monitors", 1, "data-ids", 3, "data_id"]),
 *   "monitors[1].data-ids[3].data_id",
 * );
 * assert.equal(formatPath([]), "top level");
 * ```
 */
export function formatPath(path: ConfigPath): string {
  if (path.length === 0) return "top level";
  let out = "";
  for (const segment of path) {
    let next: string;
    if (typeof segment === "number") next = `[${segment}]`;
    else if (!PLAIN_KEY.test(segment)) {
      next = `[${quoteText(segment, MAX_PATH_KEY_CHARS)}]`;
    } else {
      const key = cutText(segment, MAX_PATH_KEY_CHARS);
      next = out === "" ? key : `.${key}`;
    }
    // A path 100 levels deep says no more than its first few.
    if (out !== "" && out.length + next.length > MAX_PATH_CHARS) {
      return `${out}…`;
    }
    out += next;
  }
  return out;
}

/**
 * `text` cut to at most `max` characters (UTF-16 code units), the last of
 * them an ellipsis when anything was cut. A surrogate pair is never split.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { cutText } from "./errors.ts";
 *
 * assert.equal(cutText("short", 10), "short");
 * assert.equal(cutText("x".repeat(10_000_000), 5), "xxxx…");
 * assert.equal(cutText("ab\u{1F600}cd", 4), "ab…"); // not half an emoji
 * ```
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + "…";
}

/**
 * A string as a JSON literal for a message, cut to about `max` characters
 * (the ellipsis inside the quotes), with anything a terminal could act on
 * (controls, U+2028/U+2029, bidi controls) escaped.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { quoteText } from "./errors.ts";
 *
 * assert.equal(quoteText("gte"), '"gte"');
 * assert.equal(quoteText("k".repeat(10_000_000), 8), '"kkkkkkk…"');
 * assert.equal(quoteText("a\u202eb"), '"a\\u202eb"');
 * ```
 */
export function quoteText(text: string, max = MAX_VALUE_CHARS): string {
  return terminalSafe(JSON.stringify(cutText(text, max)));
}

/**
 * Looks a value up by path in a raw parsed document. Returns `undefined`
 * when any step is missing. This is the one place `got …` values come from.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { lookup } from "./errors.ts";
 *
 * assert.equal(lookup({ rules: [{ name: "a" }] }, ["rules", 0, "name"]), "a");
 * ```
 */
export function lookup(doc: unknown, path: ConfigPath): unknown {
  let value = doc;
  for (const segment of path) {
    if (typeof segment === "number") {
      if (!Array.isArray(value) || segment >= value.length) return undefined;
      value = value[segment];
    } else {
      if (!isRecord(value) || !Object.hasOwn(value, segment)) return undefined;
      value = value[segment];
    }
  }
  return value;
}

/**
 * Renders a raw value as JSON on one line, for the `got …` part of a message.
 * Integers too large for a `number` arrive as `bigint` and print as their
 * digits; a missing value prints as `nothing`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatValue } from "./errors.ts";
 *
 * assert.equal(formatValue("gte"), '"gte"');
 * assert.equal(formatValue(9007199254740993n), "9007199254740993");
 * ```
 */
export function formatValue(value: unknown): string {
  if (value === undefined) return "nothing";
  // A 1 MiB string is cut before it is escaped, not after.
  if (typeof value === "string") return quoteText(value, MAX_VALUE_CHARS - 2);
  return cutText(terminalSafe(toJson(value, new Set())), MAX_VALUE_CHARS);
}

/**
 * JSON.stringify, except that bigints print as their digits, non-finite
 * numbers as `Infinity`/`NaN`, and cycles (YAML aliases can make them) as
 * `[Circular]`: the message must never fail to render. Only the start is
 * wanted, so long strings and lists are left unfinished past `room`
 * characters rather than rendered whole and cut.
 */
function toJson(
  value: unknown,
  seen: Set<object>,
  room = MAX_VALUE_CHARS,
): string {
  switch (typeof value) {
    case "bigint":
      return cutText(value.toString(), room + 1);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : String(value);
    case "string":
      return JSON.stringify(cutText(value, room + 1));
    case "boolean":
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (seen.has(value)) return "[Circular]";
      seen.add(value);
      try {
        const array = Array.isArray(value);
        let out = array ? "[" : "{";
        let first = true;
        for (const [k, v] of array ? value.entries() : Object.entries(value)) {
          if (out.length > room) return out;
          if (v === undefined && !array) continue;
          out += first ? "" : ",";
          first = false;
          if (!array) out += `${JSON.stringify(cutText(String(k), room))}:`;
          out += v === undefined ? "null" : toJson(v, seen, room - out.length);
        }
        return out + (array ? "]" : "}");
      } finally {
        seen.delete(value);
      }
    }
    default:
      return String(value);
  }
}

/**
 * Builds the error for a value problem at `path` in `source`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { configError } from "./errors.ts";
 *
 * const source = { file: "rules.json", doc: { rules: [{ comparison_type: "gte" }] } };
 * const err = configError(source, ["rules", 0, "comparison_type"], "must be one of gt, lt", "type");
 * assert.ok(err instanceof TypeError);
 * assert.equal(
 *   err.message,
 *   'Cannot load config rules.json: rules[0].comparison_type must be one of gt, lt, got "gte"',
 * );
 * ```
 */
export function configError(
  source: ConfigSource,
  path: ConfigPath,
  what: string,
  kind: ProblemKind,
): TypeError | RangeError {
  const message = line(
    `Cannot load config ${fileName(source.file)}: ${formatPath(path)} ${
      oneLine(what)
    }`,
    `, got ${formatValue(lookup(source.doc, path))}`,
  );
  return kind === "range" ? new RangeError(message) : new TypeError(message);
}

/**
 * Builds the error for text that does not parse, with a 1-based position.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { syntaxError } from "./errors.ts";
 *
 * const err = syntaxError("a.json", "invalid JSON", 2, 9, "expected double-quoted property name");
 * assert.ok(err instanceof SyntaxError);
 * assert.equal(
 *   err.message,
 *   "Cannot load config a.json: invalid JSON at line 2, column 9: expected double-quoted property name",
 * );
 * ```
 */
export function syntaxError(
  file: string,
  what: string,
  line: number,
  column: number,
  detail: string,
  options?: ErrorOptions,
): SyntaxError {
  return new SyntaxError(
    cap(
      `Cannot load config ${
        fileName(file)
      }: ${what} at line ${line}, column ${column}: ${oneLine(detail)}`,
    ),
    options,
  );
}

/**
 * Builds an error about the file as a whole (not one value in it).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileError } from "./errors.ts";
 *
 * assert.equal(fileError("x.yaml", "file not found").message, "Cannot load config x.yaml: file not found");
 * ```
 */
export function fileError(
  file: string,
  what: string,
  options?: ErrorOptions,
): Error {
  return new Error(
    cap(`Cannot load config ${fileName(file)}: ${oneLine(what)}`),
    options,
  );
}

/**
 * Builds the error for a value or file past one of the bounds in
 * `limits.ts`: the file, where in it (if anywhere), and what the bound is.
 * No `got` part: the value is what is too large to print.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { limitError } from "./errors.ts";
 *
 * const err = limitError("a.json", ["rules"], "is nested more than 32 lists and objects deep");
 * assert.ok(err instanceof RangeError);
 * assert.equal(
 *   err.message,
 *   "Cannot load config a.json: rules is nested more than 32 lists and objects deep",
 * );
 * assert.equal(limitError("/dev/zero", undefined, "is too large").message, "Cannot load config /dev/zero: is too large");
 * ```
 */
export function limitError(
  file: string,
  path: ConfigPath | undefined,
  what: string,
  options?: ErrorOptions,
): RangeError {
  const where = path === undefined ? "" : `${formatPath(path)} `;
  return new RangeError(
    cap(`Cannot load config ${fileName(file)}: ${where}${oneLine(what)}`),
    options,
  );
}

/**
 * Builds the error for a problem with a document as a whole that is not
 * about one value, such as combining two sources of data IDs.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { documentError } from "./errors.ts";
 *
 * const err = documentError("a.yaml", "is not usable here");
 * assert.ok(err instanceof TypeError);
 * assert.equal(err.message, "Cannot load config a.yaml: is not usable here");
 * ```
 */
export function documentError(file: string, what: string): TypeError {
  return new TypeError(
    cap(`Cannot load config ${fileName(file)}: ${oneLine(what)}`),
  );
}

/**
 * The message fragment for a key the schema does not know, with a
 * suggestion when one of the known keys is a likely intended spelling.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { unknownKeyProblem } from "./errors.ts";
 *
 * assert.equal(
 *   unknownKeyProblem("comparision_type", ["name", "comparison_type"]),
 *   'is not a known key (did you mean "comparison_type"?); expected one of name, comparison_type',
 * );
 * ```
 */
export function unknownKeyProblem(
  key: string,
  known: readonly string[],
  suggestAlso: readonly string[] = [],
): string {
  const guess = closest(key, [...known, ...suggestAlso]);
  const hint = guess === undefined ? "" : ` (did you mean "${guess}"?)`;
  return `is not a known key${hint}; expected one of ${known.join(", ")}`;
}

/** Finds a candidate within a small edit distance, if any. */
function closest(
  key: string,
  candidates: readonly string[],
): string | undefined {
  const wanted = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(key.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: Levenshtein plus adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(
        d[(i - 1) * cols + j] + 1,
        d[i * cols + j - 1] + 1,
        d[(i - 1) * cols + j - 1] + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2] + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1];
}

/**
 * The position of `path` in document order, for picking the first problem:
 * each step is the index of the array element or of the key among its
 * object's keys (parsers keep keys in file order). A missing key sorts after
 * its siblings.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { documentOrder } from "./errors.ts";
 *
 * // "a" is the second key, and 1 its second element.
 * assert.deepEqual(documentOrder({ b: 1, a: [0, 1] }, ["a", 1]), [1, 1]);
 * ```
 */
export function documentOrder(doc: unknown, path: ConfigPath): number[] {
  const order: number[] = [];
  let value = doc;
  for (const segment of path) {
    if (typeof segment === "number") {
      order.push(segment);
      value = Array.isArray(value) ? value[segment] : undefined;
    } else if (isRecord(value)) {
      const keys = Object.keys(value);
      const index = keys.indexOf(segment);
      order.push(index === -1 ? keys.length : index);
      value = index === -1 ? undefined : value[segment];
    } else {
      order.push(Number.MAX_SAFE_INTEGER);
      value = undefined;
    }
  }
  return order;
}

/**
 * Compares two {@linkcode documentOrder} results; a parent sorts before its
 * children.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareOrder } from "./errors.ts";
 *
 * assert.deepEqual([[1, 0], [0, 5], [1]].sort(compareOrder), [[0, 5], [1], [1, 0]]);
 * ```
 */
export function compareOrder(
  a: readonly number[],
  b: readonly number[],
): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

/**
 * Builds the error for the first of a validator's issues in document order.
 * The message comes from the schema (see `schema.ts`); the `got` value and
 * the "is required" wording come from the raw document.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { issueError } from "./errors.ts";
 *
 * const source = { file: "a.yaml", doc: { depth: 0 } };
 * const err = issueError(source, [
 *   { code: "custom", path: ["depth"], message: "must be at least 1", params: { kind: "range" }, input: 0 },
 * ]);
 * assert.ok(err instanceof RangeError);
 * assert.equal(err.message, "Cannot load config a.yaml: depth must be at least 1, got 0");
 * ```
 */
export function issueError(
  source: ConfigSource,
  issues: readonly z.core.$ZodIssue[],
): TypeError | RangeError {
  const problems = issues.map((issue) => {
    const base = issue.path.map((s) => typeof s === "symbol" ? String(s) : s);
    if (issue.code === "unrecognized_keys") {
      return {
        path: [...base, issue.keys[0]],
        what: issue.message,
        kind: "type" as const,
      };
    }
    const missing = issue.code === "invalid_type" &&
      lookup(source.doc, base) === undefined;
    const kind: ProblemKind = issue.code === "custom"
      ? (issue.params?.kind === "range" ? "range" : "type")
      : issue.code === "too_small" || issue.code === "too_big"
      ? "range"
      : "type";
    return { path: base, what: missing ? "is required" : issue.message, kind };
  });
  if (problems.length === 0) {
    throw new TypeError("issueError needs at least one issue");
  }
  const ordered = problems
    .map((p) => ({ p, order: documentOrder(source.doc, p.path) }))
    .sort((a, b) => compareOrder(a.order, b.order));
  const first = ordered[0].p;
  return configError(source, first.path, first.what, first.kind);
}

/** Keeps messages on one line even if a value or library text has breaks. */
function oneLine(text: string): string {
  return terminalSafe(text.replace(/\s*[\r\n\u2028\u2029]+\s*/g, " "));
}

/** A message cut to {@linkcode MAX_MESSAGE_CHARS}. */
function cap(message: string): string {
  return cutText(message, MAX_MESSAGE_CHARS);
}

/**
 * `head` and `tail` as one message of at most {@linkcode MAX_MESSAGE_CHARS},
 * cutting `head` so that `tail` (the `got` value) is kept.
 */
function line(head: string, tail: string): string {
  return cutText(head, MAX_MESSAGE_CHARS - tail.length) + tail;
}

/** A file name for a message: its end, escaped, when it is long. */
function fileName(file: string): string {
  const safe = terminalSafe(file);
  if (safe.length <= MAX_FILE_CHARS) return safe;
  let start = safe.length - (MAX_FILE_CHARS - 1);
  const first = safe.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start++;
  return "…" + safe.slice(start);
}

/** A plain object (not an array or null). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A byte count for a message, in the largest binary unit that keeps it
 * at least 1 (`1.5 GiB`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatBytes } from "./errors.ts";
 *
 * assert.equal(formatBytes(1024 * 1024 * 1024), "1 GiB");
 * assert.equal(formatBytes(1536), "1.5 KiB");
 * assert.equal(formatBytes(100), "100 bytes");
 * ```
 */
export function formatBytes(bytes: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  if (bytes < 1024) return `${bytes} bytes`;
  let value = bytes;
  let unit = "bytes";
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return `${Number(value.toFixed(1))} ${unit}`;
}
