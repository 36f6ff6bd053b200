/**
 * Bounds on a parsed document's shape, checked before anything walks it:
 * how deep lists and objects nest ({@linkcode MAX_NESTING}) and how long
 * keys are ({@linkcode MAX_KEY_CHARS}). Validation and messages recurse
 * through the document, and a key is compared against every known key;
 * both stay cheap once these hold.
 *
 * @module
 */

import type { ConfigDocument } from "./document.ts";
import { configError, type ConfigPath, quoteText } from "./errors.ts";
import { MAX_KEY_CHARS, MAX_NESTING } from "./limits.ts";

/**
 * Throws a `RangeError` naming the file, line and place when a document
 * nests lists and objects more than {@linkcode MAX_NESTING} deep, holds a
 * key longer than {@linkcode MAX_KEY_CHARS}, or (through YAML aliases)
 * contains itself. Stops at the first problem in document order, so a
 * document nested a million deep costs no more than one 33 deep.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkShape } from "./shape.ts";
 * import { plainDocument } from "./document.ts";
 *
 * checkShape(plainDocument("a.yaml", { monitors: [{ rules: [{ name: "r" }] }] }));
 * let deep: unknown = 1;
 * for (let i = 0; i < 100; i++) deep = [deep];
 * assert.throws(() => checkShape(plainDocument("a.json", { rules: deep })), {
 *   name: "RangeError",
 *   message: /^Cannot load config a\.json: rules(\[0\])+ is nested more than 32 lists and objects deep/,
 * });
 * ```
 *
 * @param doc The parsed document.
 */
export function checkShape(doc: ConfigDocument): void {
  const problem = new ShapeWalk().problem(doc.value);
  if (problem !== undefined) {
    throw configError(doc, problem.path, problem.what, "range", { got: false });
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
