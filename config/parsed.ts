/**
 * The outcome of parsing one value outside a document, apart from the zod
 * schemas of values.ts, so that a parser that needs no schema (durations,
 * read by the endpoint's event pages) does not load zod on its thread.
 *
 * @module
 */

import type { ProblemKind } from "./errors.ts";

/** The outcome of parsing one value outside a document. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | {
    readonly ok: false;
    readonly problem: string;
    readonly kind: ProblemKind;
  };

/**
 * Wraps a parsed value as a success.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ok } from "./parsed.ts";
 *
 * assert.deepEqual(ok(3), { ok: true, value: 3 });
 * ```
 */
export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

/**
 * Wraps a problem as a failure; `kind` picks TypeError ("type", the default)
 * or RangeError ("range") for the message built from it.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { bad } from "./parsed.ts";
 *
 * assert.deepEqual(bad("must not be negative", "range"), { ok: false, problem: "must not be negative", kind: "range" });
 * ```
 */
export function bad<T>(problem: string, kind: ProblemKind = "type"): Parsed<T> {
  return { ok: false, problem, kind };
}
