/**
 * The replay source: samples read from a CSV capture, delivered as fast as
 * the monitor takes them, ending at end of file.
 *
 * Operators use it to try rules offline on a captured `events.log` table or
 * any `timestamp,<column>,...` CSV, and we use it to check our rule engine
 * against NVIDIA's reference application on the same counters.
 *
 * @module
 */

import { type CsvError, parse } from "csv-parse/stream";
import type { ColumnConfig } from "../config/types.ts";
import { parseU64 } from "../base/u64.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import type { Collector } from "./collector.ts";

/** Options of {@linkcode ReplayCollector}. */
export interface ReplayOptions {
  /** CSV capture to read; named as given in error messages. */
  readonly path: string;
  /** The monitor's columns, matched to the CSV header by name. */
  readonly columns: readonly ColumnConfig[];
  /**
   * Most rows delivered without letting the event loop run (default
   * {@linkcode DEFAULT_YIELD_EVERY}), so signal handlers and the metrics
   * endpoint keep running during a long replay. Each file read lets it run
   * too, so explicit yields only happen when that is not enough.
   */
  readonly yieldEvery?: number;
}

/** Default {@linkcode ReplayOptions.yieldEvery}. */
export const DEFAULT_YIELD_EVERY = 4096;

/** The header column that carries each sample's timestamp (ns, u64). */
export const TIMESTAMP_COLUMN = "timestamp";

// Bytes per file read: large enough that the read op is noise next to the
// parsing, small enough that the rows parsed ahead of delivery stay few.
const CHUNK_BYTES = 64 * 1024;
// Header names listed in a "header has no column" message before eliding.
const MAX_LISTED_NAMES = 50;
// Longest field value quoted in full in an error message.
const MAX_QUOTED_VALUE = 64;

/**
 * Replays a CSV capture into a monitor: one sample per data row, in file
 * order, then resolves at end of file.
 *
 * The header is `timestamp,<name>,<name>,...` (`", "` separators and quoted
 * names are fine). Configured columns are found by name in any order; extra
 * CSV columns are ignored. Values are decimal u64 (timestamps in ns since
 * the Unix epoch). Blank lines are skipped.
 *
 * The file is streamed, never read whole. A problem rejects with a one-line
 * message naming the file and line: `TypeError` for the header,
 * `SyntaxError` for malformed CSV or values, the `Deno.errors` class for
 * I/O. Every row before the bad one has been committed by then.
 *
 * @example Replay a capture into a monitor
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReplayCollector } from "./replay.ts";
 * import { Monitor } from "../rules/monitor.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".csv" });
 * await Deno.writeTextFile(
 *   path,
 *   "timestamp, port_0_rx_bytes, ignored\n" +
 *     "1000, 3, 0\n" +
 *     "2000, 9, 0\n" +
 *     "3000, 1, 0\n",
 * );
 * const columns = [{ name: "port_0_rx_bytes", dataId: "0x1020000100000000" }];
 * const starts: number[] = [];
 * const monitor = new Monitor(
 *   {
 *     name: "nic",
 *     depth: 1,
 *     columns,
 *     rules: [{ name: "rx > 5", column: 0, comparisonType: "gt", comparisonValue: 5n }],
 *   },
 *   {
 *     columnNames() {},
 *     row() {},
 *     eventStart: (rule) => starts.push(rule),
 *     eventEnd() {},
 *     gap() {},
 *   },
 * );
 * const replay = new ReplayCollector({ path, columns });
 * await replay.run(monitor, AbortSignal.timeout(60_000)); // resolves at end of file
 * assert.equal(replay.rows, 3);
 * assert.equal(monitor.samples, 3);
 * assert.deepEqual(starts, [0]); // the 9 started one event
 * await Deno.remove(path);
 * ```
 */
export class ReplayCollector implements Collector {
  /** Source kind, for messages. */
  readonly source = "replay";
  /** The CSV capture. */
  readonly path: string;
  /** The monitor's columns, in record order. */
  readonly columns: readonly ColumnConfig[];
  /** Most rows delivered between turns of the event loop. */
  readonly yieldEvery: number;
  #rows = 0;

  /** Checks the options; the file is opened by {@linkcode run}. */
  constructor(options: ReplayOptions) {
    const yieldEvery = options.yieldEvery ?? DEFAULT_YIELD_EVERY;
    if (!Number.isSafeInteger(yieldEvery) || yieldEvery < 1) {
      throw new RangeError(
        `Cannot replay ${options.path}: yieldEvery must be an integer >= 1, got ${yieldEvery}`,
      );
    }
    this.path = options.path;
    this.columns = options.columns;
    this.yieldEvery = yieldEvery;
  }

  /** Samples delivered to the sink so far. */
  get rows(): number {
    return this.#rows;
  }

  /**
   * Delivers every data row of the file to `sink`, then resolves; resolves
   * early once `signal` aborts. Rejects on a missing or unreadable file, a
   * bad header, malformed CSV or a value that is not a decimal u64.
   */
  async run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    if (sink.columns !== this.columns.length) {
      throw new RangeError(
        `Cannot replay ${this.path}: the sink has ${sink.columns} columns, ${this.columns.length} are configured`,
      );
    }
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch (error) {
      throw ioError(this.path, error);
    }

    // Rows the parser has produced and we have not delivered yet. They are
    // taken out in on_record rather than read from the stream's readable
    // side because a stream that errors discards what it still queues: the
    // rows before a malformed line would be lost instead of delivered.
    const pending: string[][] = [];
    const pendingLines: number[] = [];
    const csv = parse({
      bom: true,
      trim: true,
      skip_empty_lines: true,
      // Field counts are checked here, for a message that names the line.
      relax_column_count: true,
      // Explicit so that a file with mixed line endings still splits.
      record_delimiter: ["\r\n", "\n"],
      on_record: (record: string[], context: { lines: number }) => {
        pending.push(record);
        pendingLines.push(context.lines);
        return null;
      },
    });
    // The parser is pumped by hand, one awaited read at a time, instead of
    // piped from `file.readable`: no read is in flight when we close the
    // file, whatever path we leave by.
    const writer = csv.writable.getWriter();
    const scratch = new Uint32Array(2 * (1 + this.columns.length));
    let header: Header | undefined;
    let sinceYield = 0;
    try {
      for (let eof = false; !eof;) {
        if (signal.aborted) return;
        const chunk = new Uint8Array(CHUNK_BYTES);
        let n: number | null;
        try {
          n = await file.read(chunk);
        } catch (error) {
          throw ioError(this.path, error);
        }
        if (n === null) eof = true;
        // The read was a real wait on I/O, so timers, signal handlers and
        // the HTTP server have just had their turn.
        sinceYield = 0;
        const parseError = await feed(
          writer,
          n === null ? null : chunk.subarray(0, n),
        );
        for (let i = 0; i < pending.length; i++) {
          if (signal.aborted) return;
          if (header === undefined) {
            header = this.#readHeader(pending[i]);
            continue;
          }
          this.#parseRow(header, pending[i], pendingLines[i], scratch);
          // Only a whole, valid row is claimed: claiming advances the ring
          // over its oldest record, which a half-parsed row must not cost.
          const at = sink.claim();
          sink.words.set(scratch, at);
          sink.commit();
          this.#rows++;
          const backlog = sink.ready?.();
          if (backlog !== undefined) await backlog;
          if (++sinceYield >= this.yieldEvery) {
            sinceYield = 0;
            await nextMacrotask();
          }
        }
        pending.length = 0;
        pendingLines.length = 0;
        if (parseError !== undefined) {
          throw csvError(this.path, parseError, header);
        }
      }
      if (header === undefined) {
        throw new TypeError(
          `Cannot replay ${this.path}: no header (the file is empty; expected "${TIMESTAMP_COLUMN},<column>,...")`,
        );
      }
    } finally {
      file.close();
    }
  }

  /** Maps each record slot to its CSV field, or throws a TypeError. */
  #readHeader(names: readonly string[]): Header {
    const wanted = [TIMESTAMP_COLUMN, ...this.columns.map((c) => c.name)];
    const sources = new Int32Array(wanted.length);
    const missing: string[] = [];
    for (let slot = 0; slot < wanted.length; slot++) {
      const name = wanted[slot];
      const field = names.indexOf(name);
      if (field < 0) {
        if (!missing.includes(name)) missing.push(name);
        continue;
      }
      const again = names.indexOf(name, field + 1);
      if (again >= 0) {
        // Which of the two holds the counter is anyone's guess.
        throw new TypeError(
          `Cannot replay ${this.path}: header has column ${
            JSON.stringify(name)
          } twice (fields ${field + 1} and ${again + 1})`,
        );
      }
      sources[slot] = field;
    }
    if (missing.length > 0) {
      const what = missing.length === 1 ? "column" : "columns";
      throw new TypeError(
        `Cannot replay ${this.path}: header has no ${what} ${
          missing.map((m) => JSON.stringify(m)).join(", ")
        } (has ${listNames(names)})`,
      );
    }
    return { names, sources };
  }

  /** Parses one data row into `out` (record layout), or throws. */
  #parseRow(
    header: Header,
    record: readonly string[],
    line: number,
    out: Uint32Array,
  ): void {
    if (record.length !== header.names.length) {
      throw new SyntaxError(
        `Cannot replay ${this.path}: line ${line}: expected ${header.names.length} fields, got ${record.length}`,
      );
    }
    const sources = header.sources;
    for (let slot = 0; slot < sources.length; slot++) {
      const text = record[sources[slot]];
      if (!parseU64(text, out, 2 * slot)) {
        throw new SyntaxError(
          `Cannot replay ${this.path}: line ${line}, column ${
            header.names[sources[slot]]
          }: ${quoteValue(text)} is not an unsigned 64-bit decimal${
            /^\d+$/.test(text) ? " (max 18446744073709551615)" : ""
          }`,
        );
      }
    }
  }
}

/** The header as read, and the CSV field behind each record slot. */
interface Header {
  readonly names: readonly string[];
  /** Slot 0 is the timestamp, slot k + 1 configured column k. */
  readonly sources: Int32Array;
}

/**
 * Passes a chunk (or the end, `null`) through the parser; returns the
 * parser's error, if any, instead of throwing it.
 */
async function feed(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  chunk: Uint8Array | null,
): Promise<unknown> {
  try {
    if (chunk === null) await writer.close();
    else await writer.write(chunk);
  } catch (error) {
    if (writer.desiredSize !== null) return error;
  }
  // An error raised while parsing a chunk does not fail that write: the
  // stream just errors, and closing an errored stream fails with a generic
  // TypeError. The parser's own error is the stream's stored error, which
  // `closed` rejects with.
  if (writer.desiredSize === null) {
    return await writer.closed.then(() => undefined, (error) => error);
  }
  return undefined;
}

/** A zero-delay timer: unlike a microtask, it lets I/O and timers run. */
function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function quoteValue(text: string): string {
  return text.length > MAX_QUOTED_VALUE
    ? `${JSON.stringify(text.slice(0, MAX_QUOTED_VALUE))}...`
    : JSON.stringify(text);
}

function listNames(names: readonly string[]): string {
  // Quote only what would otherwise read ambiguously in a comma list.
  const shown = names.slice(0, MAX_LISTED_NAMES).map((n) =>
    n === "" || /[\s,"]/.test(n) ? JSON.stringify(n) : n
  );
  if (names.length > MAX_LISTED_NAMES) {
    shown.push(`... ${names.length - MAX_LISTED_NAMES} more`);
  }
  return shown.length === 0 ? "nothing" : shown.join(", ");
}

/** Re-throws an I/O error as its own class with a one-line message. */
function ioError(path: string, error: unknown): Error {
  if (!(error instanceof Error)) {
    return new Error(`Cannot replay ${path}: ${String(error)}`, {
      cause: error,
    });
  }
  let what: string;
  if (error instanceof Deno.errors.NotFound) what = "no such file";
  else if (error instanceof Deno.errors.PermissionDenied) {
    what = "permission denied";
  } else if (error instanceof Deno.errors.IsADirectory) what = "is a directory";
  else what = oneLine(error.message);
  const Class = error.constructor as ErrorConstructor;
  return new Class(`Cannot replay ${path}: ${what}`, { cause: error });
}

/** Turns a csv-parse error into a SyntaxError naming line and column. */
function csvError(
  path: string,
  error: unknown,
  header: Header | undefined,
): Error {
  if (!(error instanceof Error) || !("code" in error)) {
    // Not the parser's: one of ours from on_record, or a stream failure.
    return error instanceof Error
      ? error
      : new Error(String(error), { cause: error });
  }
  const e = error as CsvError;
  const line = typeof e.lines === "number" ? `line ${e.lines}` : "";
  let column = "";
  if (typeof e.column === "number") {
    const name = header?.names[e.column];
    column = `, column ${name ?? `field ${e.column + 1}`}`;
  }
  let what: string;
  switch (e.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      what = "quoted field not closed before end of file";
      break;
    case "CSV_INVALID_CLOSING_QUOTE":
    case "CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE":
      what = "unexpected character after a closing quote";
      break;
    case "INVALID_OPENING_QUOTE":
      what = "quote inside an unquoted field";
      break;
    case "CSV_MAX_RECORD_SIZE":
      what = "line too long (is this a CSV capture?)";
      break;
    default:
      what = oneLine(e.message);
  }
  const where = line === "" ? "" : `${line}${column}: `;
  return new SyntaxError(`Cannot replay ${path}: ${where}${what}`, {
    cause: error,
  });
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}
