/**
 * Shared by the review's tests: reading the fixtures.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ReviewEvent } from "./event.ts";
import { resolveInputs } from "./files.ts";
import type { EventFilter } from "./filters.ts";
import { type ReadOptions, readReview, type ReviewLog } from "./read.ts";

/** tests/fixtures/review/ */
export const FIXTURES: string = fileURLToPath(
  new URL("../tests/fixtures/review/", import.meta.url),
);

/** A filter that shows every event (charts for all, in a report). */
export const EVERY_EVENT: EventFilter = { rules: [], monitors: [] };

/** A review with its events as an array, for tests. */
export interface TestReview extends ReviewLog {
  readonly events: ReviewEvent[];
}

/** Reads fixture files (names relative to {@linkcode FIXTURES}). */
export async function readFixtures(
  names: readonly string[],
  options: ReadOptions = {},
): Promise<TestReview> {
  const log = await readReview(
    await resolveInputs(names.map((n) => join(FIXTURES, n))),
    options,
  );
  return { ...log, events: [...log.events] };
}

/** `data` (text as UTF-8) gzip-compressed, as logrotate compresses a log. */
export async function gzip(data: string | Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(
      new Blob([data as BlobPart]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
}
