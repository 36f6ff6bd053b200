/**
 * An event's rows for download, `/events/ID/rows.csv` and `rows.json`:
 * the traceback `review --event N --csv` / `--json` writes (traceback.ts:
 * the column names, timestamps decoded, the signal the rule tested, every
 * column as the log has it, markers as records of their own in JSON),
 * streamed as text chunks straight from the log, and bounded: at most a
 * number of rows, then a note that says the rest was left out.
 *
 * @module
 */

import type { FoundEvent } from "./event_lookup.ts";
import { writeTraceback } from "./traceback.ts";

/** How many rows a download holds at most. */
export interface RowLimits {
  /** Most rows (default {@linkcode DEFAULT_MAX_ROWS}). */
  readonly maxRows?: number;
}

/**
 * Rows per download by default: a 60 s event at 10 kHz (600,000 rows and
 * its history) whole, about 100 MB of CSV at most.
 */
export const DEFAULT_MAX_ROWS = 1_000_000;

/**
 * The rows of `found`'s window as CSV (a header row, then a row per
 * sample; a last `# ` line if the limit cut it) or as JSON (`{"event",
 * "slice", "columns", "rows", "markers", "row_limit"}`), in chunks, read
 * from the log as the consumer takes them: a slow client holds one
 * chunk of rows in memory, not the window. Throws an Error `Cannot review
 * FILE: ...` if the log can no longer be read (rotated and compressed, or
 * deleted, since it was found): find it again.
 *
 * @example Usage
 * ```ts ignore
 * const found = await findEvent(log, key);
 * if (found.kind === "found") {
 *   for await (const chunk of eventRows(found, "csv", { maxRows: 100_000 })) {
 *     await writer.write(chunk);
 *   }
 * }
 * ```
 */
export async function* eventRows(
  found: FoundEvent,
  format: "csv" | "json",
  limits: RowLimits = {},
): AsyncGenerator<string> {
  const maxRows = Math.max(0, Math.floor(limits.maxRows ?? DEFAULT_MAX_ROWS));
  // writeTraceback pushes; the consumer pulls. One piece waits at a time:
  // the writer is held until the consumer has taken it.
  const pieces: string[] = [];
  let wake = () => {};
  let resume = () => {};
  let finished = false;
  let cancelled = false;
  let failure: unknown = null;
  const writing = writeTraceback(found.event, 1, format, (text) => {
    if (cancelled) return Promise.reject(new Cancelled());
    pieces.push(text);
    wake();
    return new Promise<void>((resolve) => resume = resolve);
  }, { maxRows }).catch((error) => {
    if (!cancelled) failure = error;
  }).finally(() => {
    finished = true;
    wake();
  });
  try {
    while (true) {
      const text = pieces.shift();
      if (text !== undefined) {
        yield text;
        resume();
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => wake = resolve);
    }
    if (failure !== null) throw failure;
  } finally {
    // A consumer that stopped early (a client gone): the next write
    // fails, which stops reading the log.
    cancelled = true;
    resume();
    await writing;
  }
}

/** What a write gets once the consumer is gone. */
class Cancelled extends Error {}
