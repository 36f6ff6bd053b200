/**
 * Bounds on a parsed document's shape, checked before anything walks it:
 * how deep lists and objects nest ({@linkcode MAX_NESTING}) and how long
 * keys are ({@linkcode MAX_KEY_CHARS}). Validation, messages and integer
 * narrowing all recurse through the document, and a key is compared
 * against every known key; both stay cheap once these hold.
 *
 * @module
 */

import { CST, Lexer } from "yaml";
import { type ConfigPath, limitError, quoteText } from "./errors.ts";
import { MAX_KEY_CHARS, MAX_NESTING } from "./limits.ts";

/**
 * Flow nesting ({@linkcode checkFlowNesting}) past which YAML text is not
 * parsed at all. Up to it, {@linkcode checkShape} names the place.
 */
const FLOW_SCAN_LIMIT = 8 * MAX_NESTING;

/**
 * Throws a `RangeError` naming `file`, the line and the column when YAML
 * text opens more than 256 `[` or `{` collections inside each other. The
 * `yaml` parser recurses into them and takes seconds over a megabyte of
 * brackets; its lexer, stopped here at the first one too many, does not.
 * Shallower nesting past {@linkcode MAX_NESTING} is left to
 * {@linkcode checkShape}, which names the field.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkFlowNesting } from "./shape.ts";
 *
 * checkFlowNesting("rules: [{ name: r }]\n", "a.yaml");
 * assert.throws(() => checkFlowNesting("a: " + "[".repeat(500_000), "a.yaml"), {
 *   name: "RangeError",
 *   message: "Cannot load config a.yaml: lists and objects nest more than 32 deep (at line 1, column 260)",
 * });
 * ```
 *
 * @param text YAML text.
 * @param file Its name, for the message.
 */
export function checkFlowNesting(text: string, file: string): void {
  let depth = 0;
  let offset = 0;
  let line = 1;
  let lineStart = 0;
  for (const token of new Lexer().lex(text)) {
    switch (CST.tokenType(token)) {
      // The lexer's own markers, not text of the file.
      case "doc-mode":
      case "flow-error-end":
      case "scalar":
        continue;
      case "newline":
        line++;
        lineStart = offset + token.length;
        break;
      case "flow-map-start":
      case "flow-seq-start":
        if (++depth > FLOW_SCAN_LIMIT) {
          throw limitError(
            file,
            undefined,
            `lists and objects nest more than ${MAX_NESTING} deep (at line ${line}, column ${
              offset - lineStart + 1
            })`,
          );
        }
        break;
      case "flow-map-end":
      case "flow-seq-end":
        if (depth > 0) depth--;
        break;
    }
    offset += token.length;
  }
}

/**
 * Throws a `RangeError` naming `file` and the place when `doc` nests
 * lists and objects more than {@linkcode MAX_NESTING} deep, holds a key
 * longer than {@linkcode MAX_KEY_CHARS}, or (through YAML aliases)
 * contains itself. Stops at the first problem in document order, so a
 * document nested a million deep costs no more than one 33 deep.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkShape } from "./shape.ts";
 *
 * checkShape({ monitors: [{ rules: [{ name: "r" }] }] }, "a.yaml");
 * let deep: unknown = 1;
 * for (let i = 0; i < 100; i++) deep = [deep];
 * assert.throws(() => checkShape({ rules: deep }, "a.json"), {
 *   name: "RangeError",
 *   message: /^Cannot load config a\.json: rules(\[0\])+ is nested more than 32 lists and objects deep/,
 * });
 * ```
 *
 * @param doc The parsed document.
 * @param file Its name, for the message.
 */
export function checkShape(doc: unknown, file: string): void {
  const problem = new ShapeWalk().problem(doc);
  if (problem !== undefined) {
    throw limitError(file, problem.path, problem.what);
  }
}

interface Problem {
  readonly path: ConfigPath;
  readonly what: string;
}

class ShapeWalk {
  /** Containers on the way down, to tell an alias cycle. */
  readonly #above = new Set<object>();
  /** Containers already checked, with their height (an alias reuses one). */
  readonly #height = new Map<object, number>();
  readonly #path: (string | number)[] = [];

  problem(doc: unknown): Problem | undefined {
    const result = this.#visit(doc, 0);
    return typeof result === "number" ? undefined : result;
  }

  /** The height of `value` (0 for a scalar), or the first problem in it. */
  #visit(value: unknown, depth: number): number | Problem {
    if (typeof value !== "object" || value === null) return 0;
    if (this.#above.has(value)) {
      return {
        path: [...this.#path],
        what: "contains itself (a YAML alias inside its own anchor)",
      };
    }
    const known = this.#height.get(value);
    if (known !== undefined && depth + known <= MAX_NESTING) return known;
    if (depth + 1 > MAX_NESTING) {
      return {
        path: [...this.#path],
        what:
          `is nested more than ${MAX_NESTING} lists and objects deep; a configuration needs at most 5`,
      };
    }
    this.#above.add(value);
    let height = 0;
    try {
      const entries = Array.isArray(value)
        ? value.entries()
        : Object.entries(value);
      for (const [key, item] of entries) {
        if (typeof key === "string" && key.length > MAX_KEY_CHARS) {
          return {
            path: [...this.#path],
            what: `has a key of ${key.length} characters (${
              quoteText(key, 20)
            }); keys are at most ${MAX_KEY_CHARS}`,
          };
        }
        this.#path.push(key);
        const below = this.#visit(item, depth + 1);
        this.#path.pop();
        if (typeof below !== "number") return below;
        height = Math.max(height, below);
      }
    } finally {
      this.#above.delete(value);
    }
    this.#height.set(value, height + 1);
    return height + 1;
  }
}
