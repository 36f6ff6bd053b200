/**
 * Shared by the review's tests: reading the fixtures.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "../tests/temp_dir.ts";
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

/**
 * Names a hostile log may carry (anyone who can write the log directory
 * can write one): a rule name that clears the screen (ESC[2J), sets the
 * clipboard (OSC 52), reverses what follows it (U+202E) and opens a CSI
 * with the C1 control U+009B; a column name that a spreadsheet would
 * evaluate; a monitor (file) name that does both.
 */
export const HOSTILE = {
  rule: "GPU \u202ehot\x1b[2J\x1b]52;c;ZXZpbA==\x07 \x9b31m",
  column: '=HYPERLINK("http://evil.example/","click")',
  monitor: "=1+1\x1b[2J",
} as const;

/** The characters no review output may print as they are (\n aside). */
export const TERMINAL_CONTROL =
  // deno-lint-ignore no-control-regex
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** `name` quoted as events.log quotes names ("" inside). */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The text of `<HOSTILE.monitor>-events.log`: one event of a rule named
 * {@linkcode HOSTILE.rule} on a column named {@linkcode HOSTILE.column},
 * whose wall clock was stepped back during it (so its duration, and some
 * rates, are negative numbers: CSV must leave them alone).
 */
export function hostileLogText(): string {
  return [
    "Telemetry monitor : dpu-traceback 0.1.0",
    "Configuration: ",
    '\tDevice: "GPU 0"',
    "\tSample history depth: 2",
    "\tDiag sample period: 100000000ns",
    "\tData IDs: [",
    "\t\t{",
    `\t\t\tName: ${quoted(HOSTILE.column)},`,
    "\t\t\tData ID: nvml gpu0.temperature",
    "\t\t},",
    "\t]",
    "\tRules: [",
    "\t\t{",
    `\t\t\tName: ${quoted(HOSTILE.rule)},`,
    "\t\t\tData ID: nvml gpu0.temperature",
    "\t\t\tComparison type: greater_than",
    "\t\t\tComparison value: 85",
    "\t\t},",
    "\t]",
    "",
    "",
    `timestamp, ${quoted(HOSTILE.column)}`,
    "1795272650000000000, 80",
    "1795272650100000000, 84",
    "1795272650200000000, 86",
    "1795272650300000000, 88",
    `<<Event start>> Time: 2026-11-21T14:50:50Z, Rule: ${quoted(HOSTILE.rule)}`,
    "1795272650400000000, 90",
    "1795272650200000000, 84",
    `<<Event end>> Time: 2026-11-21T14:50:50Z, Rule: ${quoted(HOSTILE.rule)}`,
    "",
  ].join("\n");
}

/**
 * {@linkcode hostileLogText} read by the review as
 * `<HOSTILE.monitor>-events.log` (charts included), from a temporary
 * directory removed before this returns.
 */
export async function readHostileLog(): Promise<TestReview> {
  await using dir = await tempDir("hostile_");
  const path = join(dir.path, `${HOSTILE.monitor}-events.log`);
  await Deno.writeTextFile(path, hostileLogText());
  const log = await readReview(await resolveInputs([path]), {
    charts: EVERY_EVENT,
  });
  return { ...log, events: [...log.events] };
}
