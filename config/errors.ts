/**
 * Configuration problems as one-line errors, all in one style:
 *
 * ```
 * Cannot load config FILE:LINE: PATH WHAT, got VALUE
 * ```
 *
 * PATH uses the keys as written in the file and names the rule or column an
 * index points at (`monitors[0].rules[2] ("ecn_burst").above`); VALUE is
 * looked up in the parsed document, never taken from the validator, so the
 * operator sees what they wrote. Problems of the text itself read
 * `FILE:LINE: invalid JSON at column N: ...`, and those of the file as a
 * whole `FILE: ...`. The class says what kind of problem it is: a
 * `TypeError` for a value of the wrong kind, a `RangeError` for one out of
 * range, a `SyntaxError` for text that does not parse.
 *
 * @module
 */

import type { z } from "zod";
import { terminalSafe } from "../base/terminal_text.ts";
import type { ConfigDocument } from "./document.ts";
import { MAX_MESSAGE_CHARS } from "./limits.ts";

/**
 * Separates a problem from a hint that follows the value in a message
 * (`..., got "gte"; did you mean "gt"?`); see {@linkcode withHint}.
 */
export const HINT = "\u001e";

/**
 * `problem` with `hint` (what was probably meant) to follow the `got`
 * part of its message; with no hint, `problem` alone.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { withHint } from "./errors.ts";
 *
 * assert.equal(withHint("must be one of gt, lt", "").includes("\u001e"), false);
 * assert.equal(withHint("must be one of gt, lt", 'did you mean "gt"?').split("\u001e")[1], 'did you mean "gt"?');
 * ```
 */
export function withHint(problem: string, hint: string): string {
  return hint === "" ? problem : `${problem}${HINT}${hint}`;
}

/** A path into a parsed document: object keys and array indices. */
export type ConfigPath = readonly (string | number)[];

/**
 * What kind of problem a value has; decides the error class.
 * `type` becomes a `TypeError`, `range` a `RangeError`.
 */
export type ProblemKind = "type" | "range";

/** The longest `got` value we print; whole objects can be large. */
const MAX_VALUE_CHARS = 120;
/** The longest key printed in a path, the longest path, the longest name in it. */
const MAX_PATH_KEY_CHARS = 40;
const MAX_PATH_CHARS = 100;
const MAX_PATH_NAME_CHARS = 40;
/** The longest file name printed; its end says most. */
const MAX_FILE_CHARS = 100;
/** Keys that can be printed bare in a path; anything else is quoted. */
const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;
/** Lists whose entries are named in a path by their `name`. */
const NAMED_LISTS: ReadonlySet<string | undefined> = new Set([
  "rules",
  "columns",
  "data-ids",
  undefined, // a --data-ids file's top-level list
]);

/**
 * Formats a path the way an operator would point at the value. Given the
 * document, an entry of a rules or columns list is named by its `name`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatPath } from "./errors.ts";
 *
 * assert.equal(formatPath(["monitors", 1, "data-ids", 3, "data_id"]), "monitors[1].data-ids[3].data_id");
 * assert.equal(formatPath([]), "top level");
 * const doc = { monitors: [{ rules: [{ name: "drops", above: -1 }] }] };
 * assert.equal(formatPath(["monitors", 0, "rules", 0, "above"], doc), 'monitors[0].rules[0] ("drops").above');
 * ```
 */
export function formatPath(path: ConfigPath, doc?: unknown): string {
  if (path.length === 0) return "top level";
  let out = "";
  let shown = 0;
  let value = doc;
  for (const [i, segment] of path.entries()) {
    let next: string;
    let name = "";
    if (typeof segment === "number") {
      next = `[${segment}]`;
      const entry = Array.isArray(value) ? value[segment] : undefined;
      const list = i === 0 ? undefined : path[i - 1];
      if (
        NAMED_LISTS.has(typeof list === "string" ? list : undefined) &&
        isRecord(entry) && typeof entry.name === "string" &&
        entry.name !== "" && path[i + 1] !== "name"
      ) {
        name = ` (${quoteText(entry.name, MAX_PATH_NAME_CHARS)})`;
      }
    } else if (!PLAIN_KEY.test(segment)) {
      next = `[${quoteText(segment, MAX_PATH_KEY_CHARS)}]`;
    } else {
      const key = cutText(segment, MAX_PATH_KEY_CHARS);
      next = out === "" ? key : `.${key}`;
    }
    // A path 100 levels deep says no more than its first few.
    if (out !== "" && shown + next.length > MAX_PATH_CHARS) return `${out}…`;
    out += next + name;
    shown += next.length;
    value = lookup(value, [segment]);
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
 * Looks a value up by path in a parsed document. Returns `undefined` when
 * any step is missing. This is the one place `got …` values come from.
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
 * The error for a problem with what `path` points at in `doc`: its value,
 * or with `options.key` its key. The value written there ends the message
 * unless `options.got` is false (a bound whose value is too large to
 * print, or that the message already quotes).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { configError } from "./errors.ts";
 * import { parseDocumentText } from "./document.ts";
 *
 * const doc = parseDocumentText('{"rules": [\n  {"name": "drops", "comparison_type": "gte"}]}', "rules.json");
 * const err = configError(doc, ["rules", 0, "comparison_type"], "must be one of gt, lt", "type");
 * assert.ok(err instanceof TypeError);
 * assert.equal(
 *   err.message,
 *   'Cannot load config rules.json:2: rules[0] ("drops").comparison_type must be one of gt, lt, got "gte"',
 * );
 * ```
 */
export function configError(
  doc: ConfigDocument,
  path: ConfigPath,
  what: string,
  kind: ProblemKind,
  options: { readonly key?: boolean; readonly got?: boolean } = {},
): TypeError | RangeError {
  const [problem, hint] = what.split(HINT);
  const message = line(
    `${prefix(doc.file, doc.place(path, options.key).line)}${
      formatPath(path, doc.value)
    } ${oneLine(problem)}`,
    `${
      options.got === false
        ? ""
        : `, got ${formatValue(lookup(doc.value, path))}`
    }${hint === undefined ? "" : `; ${oneLine(hint)}`}`,
  );
  return kind === "range" ? new RangeError(message) : new TypeError(message);
}

/**
 * An error of `Class` about the file as a whole, or about the text at
 * `line` (1-based; 0 for none): text that does not parse (`SyntaxError`),
 * a file or text past a bound of `limits.ts` (`RangeError`, no `got` part:
 * the value is what is too large to print), a file that cannot be read
 * (`Error`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileError } from "./errors.ts";
 *
 * const syntax = fileError(SyntaxError, "a.json", 2, "invalid JSON at column 9: a comma before }");
 * assert.ok(syntax instanceof SyntaxError);
 * assert.equal(syntax.message, "Cannot load config a.json:2: invalid JSON at column 9: a comma before }");
 * assert.equal(fileError(Error, "x.yaml", 0, "file not found").message, "Cannot load config x.yaml: file not found");
 * ```
 */
export function fileError<E extends Error>(
  Class: new (message: string, options?: ErrorOptions) => E,
  file: string,
  line: number,
  what: string,
  options?: ErrorOptions,
): E {
  return new Class(cap(`${prefix(file, line)}${oneLine(what)}`), options);
}

/**
 * The error for a validator's first problem as the file is read: of its
 * issues, the one placed earliest. Where the document matched none of a
 * union's shapes (a rule of no one kind), the issues of the shape it comes
 * closest to (fewest problems) stand for it. Too-small and too-big values
 * are `RangeError`s, as are custom issues with `params.kind: "range"`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { issueError } from "./errors.ts";
 * import { parseDocumentText } from "./document.ts";
 *
 * const doc = parseDocumentText("depth: 0\nname: x\n", "a.yaml");
 * const err = issueError(doc, [
 *   { code: "custom", path: ["name"], message: "is odd", input: "x" },
 *   { code: "too_small", origin: "number", minimum: 1, path: ["depth"], message: "must be at least 1", input: 0 },
 * ]);
 * assert.ok(err instanceof RangeError);
 * assert.equal(err.message, "Cannot load config a.yaml:1: depth must be at least 1, got 0");
 * ```
 */
export function issueError(
  doc: ConfigDocument,
  issues: readonly z.core.$ZodIssue[],
): TypeError | RangeError {
  const { path, what, kind, key } = firstProblem(
    issues,
    (p) => doc.place(p.path, p.key).order,
  );
  return configError(doc, path, what, kind, { key });
}

/** One problem a validator found, where and of what kind. */
export interface Problem {
  /** Where: the value's path, or with `key` the key's. */
  readonly path: ConfigPath;
  /** What, phrased to follow the path (a hint after {@linkcode HINT}). */
  readonly what: string;
  /** TypeError or RangeError. */
  readonly kind: ProblemKind;
  /** Whether the problem is the key at `path`, not its value. */
  readonly key: boolean;
}

/**
 * The first of a validator's problems by `order` (the lowest; ties and
 * the default keep the validator's order): a union whose closest shape
 * explains it stands for that shape's problems (see
 * {@linkcode issueError}).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstProblem } from "./errors.ts";
 *
 * const problem = firstProblem([
 *   { code: "unrecognized_keys", keys: ["treshold"], path: ["rules", 0], message: "is not a known key", input: {} },
 * ]);
 * assert.deepEqual(problem, { path: ["rules", 0, "treshold"], what: "is not a known key", kind: "type", key: true });
 * ```
 */
export function firstProblem(
  issues: readonly z.core.$ZodIssue[],
  order: (problem: Problem) => number = () => 0,
): Problem {
  let first: { problem: Problem; at: number } | undefined;
  for (const problem of problems(issues, [])) {
    const at = order(problem);
    if (first === undefined || at < first.at) first = { problem, at };
  }
  if (first === undefined) throw new TypeError("firstProblem needs an issue");
  return first.problem;
}

/** The message of a union whose closest shape explains a failure best. */
export const CLOSEST_SHAPE = "(the closest shape explains it)";

function* problems(
  issues: readonly z.core.$ZodIssue[],
  base: ConfigPath,
): Generator<Problem> {
  for (const issue of issues) {
    const path = [...base, ...issue.path.map((s) => s as string | number)];
    if (issue.code === "invalid_union" && issue.message === CLOSEST_SHAPE) {
      const score = (branch: readonly z.core.$ZodIssue[]) =>
        branch.reduce(
          (n, i) => n + (i.code === "unrecognized_keys" ? i.keys.length : 1),
          0,
        );
      const closest = issue.errors.reduce((a, b) =>
        score(b) < score(a) ? b : a
      );
      yield* problems(closest, path);
    } else if (issue.code === "unrecognized_keys") {
      yield {
        path: [...path, issue.keys[0]],
        what: issue.message,
        kind: "type",
        key: true,
      };
    } else {
      const range = issue.code === "too_small" || issue.code === "too_big" ||
        (issue.code === "custom" && issue.params?.kind === "range");
      yield {
        path,
        what: issue.message,
        kind: range ? "range" : "type",
        key: false,
      };
    }
  }
}

/** `Cannot load config FILE:LINE: `, the line left out when unknown. */
function prefix(file: string, line: number): string {
  return `Cannot load config ${fileName(file)}${line > 0 ? `:${line}` : ""}: `;
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
