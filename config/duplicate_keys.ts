/**
 * Finding a key given twice in one object. A document's `toJS()` keeps the
 * last copy without a word, so a second `"rules": []` at the end of a file
 * would silently disable every rule.
 *
 * @module
 */

import { isMap, isScalar, isSeq } from "yaml";
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

/**
 * The first key a parsed document (JSON or YAML) gives twice in one
 * mapping, in document order. Keys compare as they become object keys
 * (`1` and `"1"`, `"a"` and `"\u0061"` are one key there). Aliases are not
 * followed: their anchors are checked where they stand.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDocument } from "yaml";
 * import { findDuplicateKey } from "./duplicate_keys.ts";
 *
 * const doc = parseDocument("monitors:\n  - name: a\n    name: b\n", { uniqueKeys: false });
 * assert.deepEqual(findDuplicateKey(doc), { path: ["monitors", 0, "name"], offset: 26, firstOffset: 14 });
 * ```
 *
 * @param doc A document parsed with `uniqueKeys: false`.
 * @returns The duplicate, or undefined if every key is unique.
 */
export function findDuplicateKey(
  doc: { readonly contents: unknown },
): DuplicateKey | undefined {
  return walk(doc.contents, []);
}

function walk(node: unknown, path: ConfigPath): DuplicateKey | undefined {
  if (isMap(node)) {
    const seen = new Map<string, number>();
    for (const pair of node.items) {
      const key = keyName(pair.key);
      if (key === undefined) continue;
      const offset = (pair.key as { range?: number[] }).range?.[0] ?? 0;
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

/**
 * A map key as `toJS` names the property: its scalar value as a string,
 * null as `""`; undefined for a key that is not a scalar.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { Scalar } from "yaml";
 * import { keyName } from "./duplicate_keys.ts";
 *
 * assert.equal(keyName(new Scalar(1)), "1");
 * assert.equal(keyName(new Scalar(null)), "");
 * ```
 */
export function keyName(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  return key.value === null ? "" : String(key.value);
}
