/**
 * Parsing configuration text, once, into a {@linkcode ConfigDocument}: the
 * plain value that is validated, and where each part of it is in the text,
 * so that every message can name its line.
 *
 * JSON and YAML go through the same path, the `yaml` package, which reads
 * JSON too: a `.json` file is held to JSON (its lexical tokens are checked as
 * they are read, and its plain scalars resolve by the JSON schema), anything
 * else is YAML 1.2. Integer literals a `number` cannot hold exactly arrive as
 * `bigint`s with the digits written in the file. A key given twice is an
 * error, as are the bounds of `limits.ts`: flow nesting is counted while the
 * text is read, so a megabyte of `[` is refused before it is parsed.
 *
 * @module
 */

import {
  Composer,
  CST,
  type Document,
  isAlias,
  isMap,
  isSeq,
  Lexer,
  LineCounter,
  type Node,
  Parser,
  visit,
} from "yaml";
import { errorMessage } from "../base/error_message.ts";
import { findDuplicateKey, keyName } from "./duplicate_keys.ts";
import { type ConfigPath, fileError, formatPath } from "./errors.ts";
import { MAX_NESTING } from "./limits.ts";
import { checkShape } from "./shape.ts";

/** How a file's text is parsed. */
export type Syntax = "json" | "yaml";

/** Where something is in a file: its 1-based line, and an offset to order by. */
export interface Place {
  /** 1-based line; 0 when the document has no text (built in code). */
  readonly line: number;
  /**
   * Offset that orders problems as a reader meets them: the start of a
   * value or key, or the end of the collection a missing key belongs to.
   */
  readonly order: number;
}

/** A parsed configuration file. */
export interface ConfigDocument {
  /** The file's name, as the operator gave it. */
  readonly file: string;
  /** The plain value: objects, arrays, strings, numbers, booleans, null, bigints. */
  readonly value: unknown;
  /**
   * Where `path` points: its value, or with `key` its key. A path that
   * goes past what the file has points at the deepest part that exists,
   * ordered after everything in it.
   */
  place(path: ConfigPath, key?: boolean): Place;
}

/**
 * Picks the syntax from a file name: `.json` (any case) is JSON, everything
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
 * A document built in code, without text: its places have no line.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainDocument } from "./document.ts";
 *
 * const doc = plainDocument("(gpu: auto)", { monitors: [] });
 * assert.deepEqual(doc.place(["monitors"]), { line: 0, order: 0 });
 * ```
 */
export function plainDocument(file: string, value: unknown): ConfigDocument {
  return { file, value, place: () => ({ line: 0, order: 0 }) };
}

/**
 * Parses configuration text. Throws a `SyntaxError` naming the line and
 * column where the text does not parse, and a `RangeError` past a bound.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDocumentText } from "./document.ts";
 *
 * // Past 2^53 a JSON number would lose digits; it arrives as an exact bigint.
 * const json = parseDocumentText('{"comparison_value": 9007199254740993}', "rules.json");
 * assert.deepEqual(json.value, { comparison_value: 9007199254740993n });
 * const yaml = parseDocumentText("monitors:\n  - depth: 1024\n", "config.yaml");
 * assert.deepEqual(yaml.value, { monitors: [{ depth: 1024 }] });
 * assert.equal(yaml.place(["monitors", 0, "depth"]).line, 2);
 * assert.throws(() => parseDocumentText('{"a": [1,]}', "x.json"), {
 *   name: "SyntaxError",
 *   message: "Cannot load config x.json:1: invalid JSON at column 10: a comma before ] (JSON has no trailing commas)",
 * });
 * ```
 */
export function parseDocumentText(text: string, file: string): ConfigDocument {
  const syntax = syntaxOf(file);
  const lines = new LineCounter();
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  const fail = (offset: number, detail: string): never => {
    const { line, column } = at(offset);
    throw fileError(
      SyntaxError,
      file,
      line,
      `invalid ${
        syntax === "json" ? "JSON" : "YAML"
      } at column ${column}: ${detail}`,
    );
  };
  const tokens = lexAndParse(text, syntax, lines, fail, (offset) => {
    const { line, column } = at(offset);
    throw fileError(
      RangeError,
      file,
      line,
      `is nested more than ${MAX_NESTING} lists and objects deep (at column ${column})`,
    );
  });
  const composer = new Composer({
    intAsBigInt: true,
    uniqueKeys: false,
    schema: syntax === "json" ? "json" : "core",
  });
  const docs = [...composer.compose(tokens, true, text.length)];
  const doc = docs[0];
  if (docs.length > 1) {
    fail(docs[1].range[0], "holds more than one document (--- separates them)");
  }
  const problem = doc.errors[0];
  if (problem !== undefined) {
    // The parser recurses into flow collections and reports running out
    // of stack as an error of the text.
    if (/call stack/i.test(problem.message)) {
      throw fileError(
        RangeError,
        file,
        at(problem.pos[0]).line,
        `is nested more than ${MAX_NESTING} lists and objects deep`,
      );
    }
    fail(problem.pos[0], reason(problem.code, problem.message, syntax));
  }
  const duplicate = findDuplicateKey(doc);
  if (duplicate !== undefined) {
    const first = at(duplicate.firstOffset).line;
    fail(
      duplicate.offset,
      `${
        formatPath(duplicate.path)
      } is given twice (first at line ${first}); keys must be unique, or the second copy would silently replace the first`,
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // Unresolvable or excessive aliases surface only when converting.
    fail(firstAlias(doc), lowerFirst(errorMessage(error)));
  }
  const placed: ConfigDocument = {
    file,
    value,
    place: (path, key = false) => placeOf(doc, lines, path, key),
  };
  checkShape(placed);
  return { ...placed, value: exactIntegers(value) };
}

/**
 * Lexes `text` once, counting flow nesting and, for JSON, refusing what is
 * not JSON as each token arrives, and feeds the tokens to the parser.
 */
function lexAndParse(
  text: string,
  syntax: Syntax,
  lines: LineCounter,
  fail: (offset: number, detail: string) => never,
  tooDeep: (offset: number) => never,
): CST.Token[] {
  const parser = new Parser(lines.addNewLine);
  lines.addNewLine(0);
  const tokens: CST.Token[] = [];
  const json = syntax === "json";
  let depth = 0;
  let offset = 0;
  let values = 0;
  let afterComma = false;
  for (const lexeme of new Lexer().lex(text)) {
    const type = CST.tokenType(lexeme);
    if (type === "flow-map-start" || type === "flow-seq-start") {
      // Past this the parser would take seconds; shallower nesting past
      // MAX_NESTING is named with its field by checkShape.
      if (++depth > 8 * MAX_NESTING) tooDeep(offset);
    } else if (type === "flow-map-end" || type === "flow-seq-end") {
      if (depth > 0) depth--;
    }
    if (json) {
      if (type !== null && !JSON_TOKENS.has(type)) {
        fail(offset, `${quoteToken(lexeme)} is not JSON`);
      }
      if (afterComma && (type === "flow-map-end" || type === "flow-seq-end")) {
        fail(offset, `a comma before ${lexeme} (JSON has no trailing commas)`);
      }
      if (type !== "space" && type !== "newline" && type !== "scalar") {
        afterComma = type === "comma";
      }
      if (depth === 0 && (type === null || type === "double-quoted-scalar")) {
        values++;
      }
      if (depth === 0 && type === "map-value-ind") {
        fail(offset, "a key outside { } is not JSON");
      }
      if (type === "flow-map-start" || type === "flow-seq-start") values++;
    }
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (type !== "doc-mode" && type !== "scalar" && type !== "flow-error-end") {
      offset += lexeme.length;
    }
  }
  for (const token of parser.end()) tokens.push(token);
  if (json && values === 0) fail(text.length, "the text holds no JSON value");
  return tokens;
}

/** Lexical tokens JSON text may have; plain scalars resolve by the JSON schema. */
const JSON_TOKENS: ReadonlySet<string> = new Set([
  "byte-order-mark",
  "doc-mode",
  "scalar",
  "flow-error-end",
  "space",
  "newline",
  "map-value-ind",
  "flow-map-start",
  "flow-map-end",
  "flow-seq-start",
  "flow-seq-end",
  "comma",
  "double-quoted-scalar",
]);

function quoteToken(lexeme: string): string {
  const text = lexeme.length > 20 ? lexeme.slice(0, 19) + "…" : lexeme;
  return JSON.stringify(text);
}

/** The parser's reason in the operator's words, without its own position. */
function reason(code: string, message: string, syntax: Syntax): string {
  const plain = /^Unresolved plain scalar (".*")/s.exec(message);
  if (syntax === "json" && code === "TAG_RESOLVE_FAILED" && plain !== null) {
    return `${
      plain[1]
    } is not a JSON value (strings are written in double quotes)`;
  }
  return lowerFirst(message.replace(/ at line \d+, column \d+:.*$/s, ""));
}

/**
 * Integers arrive as `bigint`s (intAsBigInt); those a `number` holds
 * exactly become numbers, the rest stay exact. The shape is checked
 * first: no cycles, at most {@linkcode MAX_NESTING} deep.
 */
function exactIntegers(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value;
  }
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      record[key] = exactIntegers(record[key]);
    }
  }
  return value;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The offset of the first alias whose anchor is missing, else of the first alias. */
function firstAlias(doc: Document): number {
  let first: number | undefined;
  let bad: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      first ??= node.range?.[0];
      if (bad === undefined && node.resolve(doc) === undefined) {
        bad = node.range?.[0];
      }
    },
  });
  return bad ?? first ?? 0;
}

/** Where `path` is in `doc`: see {@linkcode ConfigDocument.place}. */
function placeOf(
  doc: Document,
  lines: LineCounter,
  path: ConfigPath,
  key: boolean,
): Place {
  let node: unknown = doc.contents;
  let start = (node as Node | null)?.range?.[0] ?? 0;
  for (const [i, segment] of path.entries()) {
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let keyStart: number | undefined;
    if (isMap(node) && typeof segment === "string") {
      const pair = node.items.find((p) => keyName(p.key) === segment);
      next = pair?.value ?? (pair === undefined ? undefined : pair.key);
      keyStart = (pair?.key as Node | undefined)?.range?.[0];
    } else if (isSeq(node) && typeof segment === "number") {
      next = node.items[segment];
    }
    const range = (next as Node | null | undefined)?.range;
    if (range === undefined || range === null) {
      // Missing: at the start of what holds it, ordered after its contents.
      const end = (node as Node | null)?.range?.[1] ?? start;
      return { line: lines.linePos(start).line, order: end };
    }
    if (key && i === path.length - 1 && keyStart !== undefined) {
      return { line: lines.linePos(keyStart).line, order: keyStart };
    }
    node = next;
    start = range[0];
  }
  // A collection is judged once read whole: its problems come after its parts'.
  const range = (node as Node | null)?.range;
  const whole = isMap(node) || isSeq(node);
  return {
    line: lines.linePos(start).line,
    order: whole && range ? range[1] : start,
  };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
