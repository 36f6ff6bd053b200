/**
 * Shared by the review's tests: reading the fixtures.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveInputs } from "./files.ts";
import { type ReadOptions, readReview, type ReviewLog } from "./read.ts";

/** tests/fixtures/review/ */
export const FIXTURES: string = fileURLToPath(
  new URL("../../tests/fixtures/review/", import.meta.url),
);

/** Reads fixture files (names relative to {@linkcode FIXTURES}). */
export async function readFixtures(
  names: readonly string[],
  options: ReadOptions = {},
): Promise<ReviewLog> {
  return await readReview(
    await resolveInputs(names.map((n) => join(FIXTURES, n))),
    options,
  );
}
