/**
 * The objects and lists of a configuration as zod schemas: every object is
 * strict, so a typo such as `comparision_type` is an error naming the key
 * meant rather than a setting silently ignored, and every list says how
 * many of what it holds.
 *
 * @module
 */

import { z } from "zod";
import { unknownKeyProblem } from "./suggest.ts";

/** Options of {@linkcode strict}. */
export interface StrictOptions {
  /** Words operators reach for, and what to write instead. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Keys known but refused here, with why (a value there is an error). */
  readonly refuse?: Readonly<Record<string, string>>;
}

/**
 * A strict object: an unknown key is named with the nearest known one, a
 * refused key with why, and a value that is no object says so.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { strict } from "./objects.ts";
 * import { parseValue } from "./values.ts";
 *
 * const tls = strict({ ca_file: z.string().optional() }, { refuse: { server_name: "is not supported" } });
 * assert.deepEqual(parseValue(tls, { ca_fil: "/ca.pem" }), {
 *   ok: false,
 *   problem: 'is not a known key; expected one of ca_file; did you mean "ca_file"?',
 *   kind: "type",
 * });
 * assert.equal(parseValue(tls, { server_name: "x" }).ok, false);
 * ```
 */
export function strict<T extends z.core.$ZodLooseShape>(
  shape: T,
  options: StrictOptions = {},
): z.ZodObject<T, z.core.$strict> {
  const known = Object.keys(shape);
  // A refused key takes no value: z.never(), with why as its message.
  const refusedShape = Object.fromEntries(
    Object.entries(options.refuse ?? {}).map((
      [key, why],
    ) => [key, z.never({ error: why }).optional()]),
  );
  return z.strictObject({ ...shape, ...refusedShape } as T, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") {
        return unknownKeyProblem(issue.keys[0], known, options.aliases);
      }
      if (issue.code === "invalid_type" && issue.input !== undefined) {
        return "must be an object (keys and values)";
      }
      return undefined;
    },
  });
}

/**
 * A list of `min` to `max` items, counting them in words (`must list at
 * least 1 monitor`); counts out of range are `RangeError`s.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { list } from "./objects.ts";
 * import { parseValue } from "./values.ts";
 *
 * const monitors = list(z.string(), ["monitor", "monitors"], 1, 64);
 * assert.deepEqual(parseValue(monitors, []), { ok: false, problem: "must list at least 1 monitor", kind: "range" });
 * ```
 */
export function list<T extends z.ZodType>(
  item: T,
  [one, many]: readonly [string, string],
  min = 0,
  max = Infinity,
): z.ZodArray<T> {
  let schema = z.array(item);
  if (min > 0) {
    schema = schema.min(min, {
      error: `must list at least ${min} ${min === 1 ? one : many}`,
    });
  }
  if (max < Infinity) {
    schema = schema.max(max, { error: `must list at most ${max} ${many}` });
  }
  return schema;
}
