/**
 * Parsing configuration text into a raw document: plain objects, arrays,
 * strings, booleans, null and numbers, except that an integer literal a
 * `number` cannot hold exactly becomes a `bigint` with the exact value
 * written in the file. Validation happens later, on this raw value.
 *
 * `.json` files go through `JSON.parse` (so syntax errors read like JSON
 * errors); anything else goes through the `yaml` package, which also reads
 * JSON. Either way a key given twice is an error, as are the bounds of
 * `shape.ts` (nesting, key length), checked before anything recurses.
 *
 * @module
 */

import { type Node, parseDocument, visit } from "yaml";
import { errorMessage } from "../base/error_message.ts";
import {
  type DuplicateKey,
  findDuplicateJsonKey,
  findDuplicateYamlKey,
} from "./duplicate_keys.ts";
import { fileError, formatPath, limitError, syntaxError } from "./errors.ts";
import { MAX_NESTING } from "./limits.ts";
import { checkFlowNesting, checkShape } from "./shape.ts";

/** How a file's text is parsed. */
export type Syntax = "json" | "yaml";

/**
 * Picks the parser from a file name: `.json` (any case) is JSON, everything
 * else YAML.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { syntaxOf } from "./document.ts";
 *
 * assert.equal(syntaxOf("rules.json"), "json");
 * assert.equal(syntaxOf("/etc/dpu-traceback/config.yaml"), "yaml");
 * ```
 */
export function syntaxOf(file: string): Syntax {
  return /\.json$/i.test(file) ? "json" : "yaml";
}

/**
 * Parses configuration text. Throws a `SyntaxError` with line and column
 * when the text does not parse.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDocumentText } from "./document.ts";
 *
 * // Past 2^53 a JSON number would lose digits; it arrives as an exact bigint.
 * assert.deepEqual(
 *   parseDocumentText('{"comparison_value": 9007199254740993}', "rules.json"),
 *   { comparison_value: 9007199254740993n },
 * );
 * assert.deepEqual(parseDocumentText("depth: 1024", "config.yaml"), { depth: 1024 });
 * ```
 */
export function parseDocumentText(text: string, file: string): unknown {
  return syntaxOf(file) === "json"
    ? parseJson(text, file)
    : parseYaml(text, file);
}

function parseJson(text: string, file: string): unknown {
  // JSON.parse rejects a byte order mark; editors on some systems add one.
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let plain: unknown;
  try {
    // Without a reviver V8 parses any depth; with one it recurses, so the
    // shape is checked on this first.
    plain = JSON.parse(body);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const offset = jsonErrorOffset(body, error.message);
    const { line, column } = lineAndColumn(body, offset);
    return raise(
      syntaxError(
        file,
        "invalid JSON",
        line,
        column,
        jsonReason(error.message),
        { cause: error },
      ),
    );
  }
  checkShape(plain, file);
  const duplicate = findDuplicateJsonKey(body);
  if (duplicate !== undefined) {
    throw duplicateError(file, "invalid JSON", body, duplicate);
  }
  // Only a literal of 16 or more digits can be past 2^53; the reviver is
  // slow, and a number cannot change otherwise.
  return /[0-9]{16}/.test(body) ? JSON.parse(body, exactIntegers) : plain;
}

/** The error for a key given twice, at the second copy. */
function duplicateError(
  file: string,
  what: string,
  text: string,
  duplicate: DuplicateKey,
): SyntaxError {
  const { line, column } = lineAndColumn(text, duplicate.offset);
  const first = lineAndColumn(text, duplicate.firstOffset);
  return syntaxError(
    file,
    what,
    line,
    column,
    `${
      formatPath(duplicate.path)
    } is given twice (first at line ${first.line}); keys must be unique, or the second copy would silently replace the first`,
  );
}

/**
 * JSON.parse reviver: an integer literal outside the safe range becomes a
 * bigint taken from the literal's source text, so no digit is lost.
 */
function exactIntegers(
  this: unknown,
  _key: string,
  value: unknown,
  context?: { source?: string },
): unknown {
  if (
    typeof value === "number" && !Number.isSafeInteger(value) &&
    context?.source !== undefined && /^-?[0-9]+$/.test(context.source)
  ) {
    return BigInt(context.source);
  }
  return value;
}

/** V8's reason without its own position or source excerpt. */
function jsonReason(message: string): string {
  return lowerFirst(
    message
      .replace(/ in JSON at position \d+.*$/s, "")
      // `Unexpected token 'x', "…excerpt…" is not valid JSON`
      .replace(/^(Unexpected token '.+?'), (?:\.\.\.)?".*$/s, "$1")
      .replace(/ at position \d+.*$/s, ""),
  );
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * Where JSON.parse stopped. V8 gives `at position N` for most errors but
 * only an excerpt for `Unexpected token`; then the shortest prefix of the
 * text that fails for a reason other than running out of input ends at the
 * offending character (a prefix cut inside a valid document only ever fails
 * at its own end).
 */
function jsonErrorOffset(text: string, message: string): number {
  const at = /at position (\d+)/.exec(message);
  if (at !== null) return Number(at[1]);
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (failsWithin(text.slice(0, mid))) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}

function failsWithin(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return false;
  } catch (error) {
    const message = errorMessage(error);
    const at = /at position (\d+)/.exec(message);
    if (at !== null) return Number(at[1]) < prefix.length;
    return !/Unexpected end of JSON input/.test(message);
  }
}

function parseYaml(text: string, file: string): unknown {
  checkFlowNesting(text, file);
  let doc;
  try {
    // intAsBigInt: every integer arrives exact; safe ones become numbers below.
    // uniqueKeys: duplicates are found below, with their path.
    doc = parseDocument(text, {
      intAsBigInt: true,
      prettyErrors: true,
      uniqueKeys: false,
    });
  } catch (error) {
    throw envHint(error, file);
  }
  const problem = doc.errors[0];
  if (problem !== undefined) {
    const start = problem.linePos?.[0];
    const { line, column } = start === undefined
      ? lineAndColumn(text, problem.pos[0])
      : { line: start.line, column: start.col };
    const reason = problem.message.replace(/ at line \d+, column \d+:.*$/s, "");
    // The parser recurses into flow collections and reports running out
    // of stack as an error of the text.
    if (/call stack/i.test(reason)) {
      return raise(
        limitError(
          file,
          undefined,
          `lists and objects nest more than ${MAX_NESTING} deep (at line ${line}, column ${column})`,
        ),
      );
    }
    return raise(
      syntaxError(file, "invalid YAML", line, column, lowerFirst(reason)),
    );
  }
  const duplicate = findDuplicateYamlKey(doc);
  if (duplicate !== undefined) {
    return raise(duplicateError(file, "invalid YAML", text, duplicate));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // Unresolvable or excessive aliases surface only when converting.
    const alias = firstBadAlias(doc);
    const { line, column } = lineAndColumn(text, alias?.range?.[0] ?? 0);
    return raise(
      syntaxError(
        file,
        "invalid YAML",
        line,
        column,
        lowerFirst(errorMessage(error)),
        { cause: error },
      ),
    );
  }
  checkShape(value, file);
  return narrowIntegers(value, new Set());
}

/** The first alias whose anchor is missing, else the first alias at all. */
function firstBadAlias(
  doc: ReturnType<typeof parseDocument>,
): Node | undefined {
  let first: Node | undefined;
  let bad: Node | undefined;
  visit(doc, {
    Alias(_key, node) {
      first ??= node;
      if (bad === undefined && node.resolve(doc) === undefined) bad = node;
    },
  });
  return bad ?? first;
}

/** Safe integers back to `number`; the rest stay exact `bigint`s. */
function narrowIntegers(value: unknown, seen: Set<object>): unknown {
  if (typeof value === "bigint") {
    return value >= -BigInt(Number.MAX_SAFE_INTEGER) &&
        value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value;
  }
  if (typeof value !== "object" || value === null || seen.has(value)) {
    return value;
  }
  // Aliases share objects; convert each once.
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      value[i] = narrowIntegers(value[i], seen);
    }
  } else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      record[key] = narrowIntegers(record[key], seen);
    }
  }
  return value;
}

/**
 * The `yaml` package reads `process.env.LOG_TOKENS` while parsing; without
 * env permission Deno refuses, with a message that would puzzle an operator.
 */
function envHint(error: unknown, file: string): unknown {
  if (error instanceof Deno.errors.NotCapable) {
    return fileError(
      file,
      "reading YAML needs environment access; run with --allow-env (or --allow-env=LOG_TOKENS,LOG_STREAM)",
      { cause: error },
    );
  }
  return error;
}

/**
 * 1-based line and column of a character offset.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { lineAndColumn } from "./document.ts";
 *
 * assert.deepEqual(lineAndColumn("a\nbc", 3), { line: 2, column: 2 });
 * ```
 */
export function lineAndColumn(
  text: string,
  offset: number,
): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const lineStart = before.lastIndexOf("\n") + 1;
  let line = 1;
  for (
    let i = before.indexOf("\n");
    i !== -1;
    i = before.indexOf("\n", i + 1)
  ) {
    line++;
  }
  return { line, column: before.length - lineStart + 1 };
}

function raise(error: Error): never {
  throw error;
}
