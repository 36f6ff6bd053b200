/**
 * The column-name row (`timestamp, <name>, ...`) that opens every history
 * dump. A flapping rule writes one per event, hundreds of thousands in a
 * log, nearly always the same text: parsed once per distinct text, and
 * every event of it shares one array of names.
 *
 * @module
 */

import { parse as parseCsv } from "csv-parse/sync";
import { errorMessage } from "../base/error_message.ts";

/** Whether a line is a column-name row. */
export function isColumnRow(text: string): boolean {
  return /^\s*"?timestamp"?\s*,/.test(text);
}

/** Distinct rows remembered; a log has a handful (one per configuration). */
const CACHE_SIZE = 64;

/**
 * Parses column-name rows, remembering the last few by their text: the
 * same text gives the same (frozen) array.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ColumnNames } from "./columns.ts";
 *
 * const names = new ColumnNames();
 * const a = names.parse('timestamp, "rx, port 0", ecn');
 * assert.deepEqual(a, ["timestamp", "rx, port 0", "ecn"]);
 * assert.equal(names.parse('timestamp, "rx, port 0", ecn'), a); // the same array
 * ```
 */
export class ColumnNames {
  readonly #cache = new Map<string, readonly string[]>();
  readonly #interned = new Map<string, readonly string[]>();

  /**
   * The same (frozen) array for equal lists of names, e.g. those a header
   * block gives, block after block.
   */
  intern(names: readonly string[]): readonly string[] {
    return remember(this.#interned, names.join("\u0000"), () => names);
  }

  /**
   * The names in `text`, CSV-quoted as the writers quote them. Throws a
   * SyntaxError with a one-line message if the row is not valid CSV.
   */
  parse(text: string): readonly string[] {
    return remember(this.#cache, text, () => {
      try {
        return (parseCsv(text, { ltrim: true, rtrim: true }) as string[][])[
          0
        ] ??
          [];
      } catch (error) {
        throw new SyntaxError(
          `malformed column-name row (${errorMessage(error).split("\n")[0]})`,
          { cause: error },
        );
      }
    });
  }
}

/** `cache`'s array for `key`, made by `make` (and frozen) if not there. */
function remember(
  cache: Map<string, readonly string[]>,
  key: string,
  make: () => readonly string[],
): readonly string[] {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const names = Object.freeze([...make()]);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, names);
  return names;
}
