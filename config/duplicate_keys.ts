/**
 * Finding a key given twice in one object. `JSON.parse` and a YAML
 * document's `toJS()` both keep the last copy without a word, so a second
 * `"rules": []` at the end of a file would silently disable every rule.
 *
 * @module
 */

import { CST, isMap, isScalar, isSeq, Lexer } from "yaml";
import type { ConfigPath } from "./errors.ts";

/** A key given a second time in the same object. */
export interface DuplicateKey {
  /** Path to the key, as it would be to its value. */
  readonly path: ConfigPath;
  /** Offset of the second copy in the text. */
  readonly offset: number;
  /** Offset of the first copy. */
  readonly firstOffset: number;
}

/** An open collection while the JSON text is read. */
interface Frame {
  /** An object, not a list. */
  readonly object: boolean;
  /** An object's keys so far, with their offsets. */
  readonly keys: Map<string, number>;
  /** The current key (of an object) or index (of a list). */
  at: string | number;
  /** Whether the next string in an object is a key. */
  keyNext: boolean;
}

/**
 * The first key JSON text gives twice in one object, in document order;
 * keys compare as `JSON.parse` decodes them (`"a"` and `"\u0061"` are one
 * key). The `yaml` package's lexer splits the text, which must already be
 * valid JSON: it only follows the structure.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { findDuplicateJsonKey } from "./duplicate_keys.ts";
 *
 * const text = '{"rules": [{"name": "a"}],\n "rules": []}';
 * assert.deepEqual(findDuplicateJsonKey(text), { path: ["rules"], offset: 28, firstOffset: 1 });
 * assert.equal(findDuplicateJsonKey('{"a": {"b": 1}, "b": [{"a": 2}]}'), undefined);
 * ```
 *
 * @param json Valid JSON text, without a byte order mark.
 * @returns The duplicate, or undefined if every key is unique.
 */
export function findDuplicateJsonKey(json: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let offset = 0;
  for (const token of new Lexer().lex(json)) {
    const top = stack.at(-1);
    switch (CST.tokenType(token)) {
      // The lexer's own markers, not text of the file.
      case "doc-mode":
      case "flow-error-end":
      case "scalar":
        continue;
      case "flow-map-start":
        stack.push({ object: true, keys: new Map(), at: "", keyNext: true });
        break;
      case "flow-seq-start":
        stack.push({ object: false, keys: new Map(), at: 0, keyNext: false });
        break;
      case "flow-map-end":
      case "flow-seq-end":
        stack.pop();
        break;
      case "comma":
        if (top?.object) top.keyNext = true;
        else if (top !== undefined) top.at = Number(top.at) + 1;
        break;
      case "map-value-ind":
        if (top !== undefined) top.keyNext = false;
        break;
      case "double-quoted-scalar":
        if (top?.object && top.keyNext) {
          const key: string = JSON.parse(token);
          top.at = key;
          const first = top.keys.get(key);
          if (first !== undefined) {
            return { path: stack.map((f) => f.at), offset, firstOffset: first };
          }
          top.keys.set(key, offset);
        }
        break;
    }
    offset += token.length;
  }
  return undefined;
}

/**
 * The first key a parsed YAML document gives twice in one mapping, in
 * document order. Keys compare as they become object keys (`1` and `"1"`
 * are one key there). Aliases are not followed: their anchors are checked
 * where they stand.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDocument } from "yaml";
 * import { findDuplicateYamlKey } from "./duplicate_keys.ts";
 *
 * const doc = parseDocument("monitors:\n  - name: a\n    name: b\n", { uniqueKeys: false });
 * assert.deepEqual(findDuplicateYamlKey(doc), { path: ["monitors", 0, "name"], offset: 26, firstOffset: 14 });
 * ```
 *
 * @param doc A document (from `parseDocument`) parsed with
 * `uniqueKeys: false`.
 * @returns The duplicate, or undefined if every key is unique.
 */
export function findDuplicateYamlKey(
  doc: { readonly contents: unknown },
): DuplicateKey | undefined {
  return walk(doc.contents, []);
}

function walk(
  node: unknown,
  path: readonly (string | number)[],
): DuplicateKey | undefined {
  if (isMap(node)) {
    const seen = new Map<string, number>();
    for (const pair of node.items) {
      if (!isScalar(pair.key)) continue;
      const value = pair.key.value;
      // As toJS() names the property: null becomes "".
      const key = value === null ? "" : String(value);
      const offset = pair.key.range?.[0] ?? 0;
      const first = seen.get(key);
      if (first !== undefined) {
        return { path: [...path, key], offset, firstOffset: first };
      }
      seen.set(key, offset);
      const found = walk(pair.value, [...path, key]);
      if (found !== undefined) return found;
    }
  } else if (isSeq(node)) {
    for (const [i, item] of node.items.entries()) {
      const found = walk(item, [...path, i]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
