/**
 * `dpu-traceback review [FILE|DIR]...`: what fired, when, for how long,
 * how bad, and what the counters did just before, read from events.log.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { VERSION } from "../../config/version.ts";
import { matchesFilter, matchesNames, parseTimeOption } from "./filters.ts";
import { formatCsv, formatJson } from "./export.ts";
import { resolveInputs } from "./files.ts";
import { reportChunks } from "./html.ts";
import {
  createProgress,
  type Progress,
  type ProgressTarget,
} from "./progress.ts";
import { readReview, type ReviewLog } from "./read.ts";
import { TIME_FORMATS, type TimeFormat } from "./reference_time.ts";
import { formatReviewTable, formatSummary } from "./table.ts";
import { type TracebackFormat, writeTraceback } from "./traceback.ts";

/** Where the review writes. */
export interface ReviewIo {
  /** Standard output (the table, exports, traceback). */
  readonly out: (text: string) => Promise<void>;
  /** A one-line error (the caller prefixes the program name). */
  readonly error: (message: string) => void;
  /** A one-line warning. */
  readonly warn: (message: string) => void;
  /** A one-line notice (where a report was written). */
  readonly info: (message: string) => void;
  /** Where a progress bar may go (drawn only if it is a terminal). */
  readonly progress?: ProgressTarget;
  /** Writes a file (the HTML report) piece by piece; default: to disk. */
  readonly writeFile?: (
    path: string,
    chunks: Iterable<string>,
  ) => Promise<void>;
}

/** `review --help`. */
export const REVIEW_USAGE = `Usage:
  dpu-traceback review [FILE|DIR]... [options]

Lists the events in events.log files: monitor, rule, start, end, duration,
samples, the peak of the rule's column and of its rate, rows recorded.
FILE is one log (ours or the reference application's; gzip is fine); DIR
merges every events.log, <monitor>-events.log and their rotated files
(.1 .. .N, logrotate's -YYYYMMDD[-EPOCH][.gz]) into one timeline.
Default: events.log. Times are UTC.

Options:
      --rule TEXT        only rules whose name contains TEXT (any case; repeatable)
      --monitor NAME     only this monitor (repeatable)
      --since TIME       only events still going at or after TIME
      --until TIME       only events started at or before TIME
                         TIME: ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds
      --event N          print event N's traceback window (N from the table)
      --json             print JSON instead of the table (with --event: the window)
      --csv              print CSV instead of the table (with --event: the window)
      --html FILE        also write a self-contained HTML report with charts ("-": to stdout)
      --timestamps auto|ns|reference|counter
                         how the timestamp column is encoded (default auto: detected)
  -h, --help             this text

Exit codes: 0 ok, 1 a file cannot be read or is not an events log, 2 usage error.
`;

/** What the command line asked for. */
interface ReviewArgs {
  readonly paths: string[];
  readonly rules: string[];
  readonly monitors: string[];
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly event?: number;
  readonly format: "table" | "json" | "csv";
  readonly html?: string;
  readonly timeFormat?: TimeFormat;
  readonly help: boolean;
}

/**
 * Parses review's arguments (after `review`). Throws a TypeError with a
 * one-line message on a usage error.
 */
export function parseReviewArgs(args: readonly string[]): ReviewArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        rule: { type: "string", multiple: true },
        monitor: { type: "string", multiple: true },
        since: { type: "string" },
        until: { type: "string" },
        event: { type: "string" },
        json: { type: "boolean" },
        csv: { type: "boolean" },
        html: { type: "string" },
        timestamps: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new TypeError(
      error instanceof Error ? error.message.split("\n")[0] : String(error),
    );
  }
  const { values, positionals } = parsed;
  if (values.json && values.csv) {
    throw new TypeError("--json and --csv are two outputs; give one of them");
  }
  if (values.html === "-" && (values.json || values.csv || values.event)) {
    throw new TypeError(
      "--html - writes the report to stdout; it cannot share it with --json, --csv or --event",
    );
  }
  let event: number | undefined;
  if (values.event !== undefined) {
    if (!/^[1-9][0-9]*$/.test(values.event)) {
      throw new TypeError(
        `--event must be an event number from the table (1, 2, ...), got "${values.event}"`,
      );
    }
    event = Number(values.event);
  }
  let timeFormat: TimeFormat | undefined;
  if (values.timestamps !== undefined && values.timestamps !== "auto") {
    if (!(TIME_FORMATS as readonly string[]).includes(values.timestamps)) {
      throw new TypeError(
        `--timestamps must be one of auto, ${
          TIME_FORMATS.join(", ")
        }, got "${values.timestamps}"`,
      );
    }
    timeFormat = values.timestamps as TimeFormat;
  }
  const sinceMs = values.since === undefined
    ? undefined
    : parseTimeOption("--since", values.since);
  const untilMs = values.until === undefined
    ? undefined
    : parseTimeOption("--until", values.until);
  if (sinceMs !== undefined && untilMs !== undefined && untilMs < sinceMs) {
    throw new TypeError("--until is before --since");
  }
  if (values.html === "") throw new TypeError("--html needs a FILE");
  return {
    paths: positionals.length > 0 ? positionals : ["events.log"],
    rules: values.rule ?? [],
    monitors: values.monitor ?? [],
    sinceMs,
    untilMs,
    event,
    format: values.json ? "json" : values.csv ? "csv" : "table",
    html: values.html,
    timeFormat,
    help: values.help ?? false,
  };
}

/** Most warnings printed one by one; the rest are counted. */
const MAX_NOTES = 20;

/**
 * Runs `review` with `args` (the words after `review`) and returns the exit
 * code: 0, 1 if a file cannot be read or is not an events log, 2 on a
 * usage error.
 *
 * @example
 * ```ts ignore
 * const code = await runReview(["/var/log/dpu-traceback", "--rule", "ECN"], stdio());
 * ```
 */
export async function runReview(
  args: readonly string[],
  io: ReviewIo,
): Promise<number> {
  let options: ReviewArgs;
  try {
    options = parseReviewArgs(args);
  } catch (error) {
    io.error(
      `${
        error instanceof Error ? error.message : String(error)
      } Try 'dpu-traceback review --help'.`,
    );
    return 2;
  }
  if (options.help) {
    await io.out(REVIEW_USAGE);
    return 0;
  }
  const filter = {
    rules: options.rules,
    monitors: options.monitors,
    sinceMs: options.sinceMs,
    untilMs: options.untilMs,
  };
  let notes = 0;
  let progress: Progress | undefined;
  let review: ReviewLog;
  try {
    const families = await resolveInputs(options.paths);
    let total = 0;
    for (const family of families) {
      for (const path of family.files) total += (await Deno.stat(path)).size;
    }
    progress = io.progress === undefined
      ? undefined
      : createProgress(total, io.progress);
    review = await readReview(families, {
      timeFormat: options.timeFormat,
      chartFor: options.html === undefined
        ? undefined
        : (monitor, rule) => matchesNames(monitor, rule, filter),
      onProgress: progress === undefined ? undefined : (n) => progress!.add(n),
      onNote: (note) => {
        if (++notes <= MAX_NOTES) {
          progress?.done();
          io.warn(note);
        }
      },
    });
  } catch (error) {
    progress?.done();
    io.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
  progress?.done();
  if (notes > MAX_NOTES) {
    io.warn(`${notes - MAX_NOTES} more warnings like the above`);
  }

  const all = review.events;
  const shown = all.filter((e) => matchesFilter(e, filter));
  try {
    if (options.html !== undefined) {
      const page = reportChunks(shown, {
        files: review.files,
        total: all.length,
        filters: describeFilters(options),
        chartsLeftOut: review.chartsLeftOut,
        generator: `dpu-traceback ${VERSION}`,
        nowMs: Date.now(),
      });
      if (options.html === "-") {
        for (const text of page) await io.out(text);
        return 0;
      }
      try {
        await (io.writeFile ?? writeChunks)(options.html, page);
      } catch (error) {
        io.error(
          `Cannot write ${options.html}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
        return 1;
      }
      io.info(`report written to ${options.html} (${shown.length} events)`);
    }
    if (options.event !== undefined) {
      const event = all[options.event - 1];
      if (event === undefined) {
        io.error(
          `--event ${options.event}: there ${
            all.length === 1 ? "is 1 event" : `are ${all.length} events`
          } in ${options.paths.join(", ")}`,
        );
        return 2;
      }
      const format: TracebackFormat = options.format === "table"
        ? "text"
        : options.format;
      await writeTraceback(event, all.length, format, io.out);
      return 0;
    }
    if (options.format === "json") {
      await io.out(formatJson(shown, review.files));
    } else if (options.format === "csv") {
      await io.out(formatCsv(shown));
    } else {
      await io.out(
        formatReviewTable(shown) + "\n" +
          formatSummary(all, shown, review.files.length),
      );
    }
  } catch (error) {
    io.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
  return 0;
}

/** Writes `chunks` to a new `path`, one piece at a time. */
async function writeChunks(
  path: string,
  chunks: Iterable<string>,
): Promise<void> {
  const encoder = new TextEncoder();
  const file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  try {
    for (const text of chunks) {
      const bytes = encoder.encode(text);
      for (let done = 0; done < bytes.length;) {
        done += await file.write(bytes.subarray(done));
      }
    }
  } finally {
    file.close();
  }
}

function describeFilters(options: ReviewArgs): string[] {
  const words: string[] = [];
  if (options.rules.length) {
    words.push(
      `rule contains ${options.rules.map((r) => `"${r}"`).join(" or ")}`,
    );
  }
  if (options.monitors.length) {
    words.push(`monitor ${options.monitors.join(" or ")}`);
  }
  if (options.sinceMs !== undefined) {
    words.push(`since ${new Date(options.sinceMs).toISOString()}`);
  }
  if (options.untilMs !== undefined) {
    words.push(`until ${new Date(options.untilMs).toISOString()}`);
  }
  return words;
}

/**
 * The process's own streams: stdout for output (waiting while a pipe is
 * full), and the given one-line reporters for messages; the progress bar
 * on stderr.
 */
export function stdio(
  report: Pick<ReviewIo, "error" | "warn" | "info">,
): ReviewIo {
  const encoder = new TextEncoder();
  let closed = false;
  return {
    ...report,
    out: async (text) => {
      if (closed) return;
      const bytes = encoder.encode(text);
      try {
        for (let done = 0; done < bytes.length;) {
          done += await Deno.stdout.write(bytes.subarray(done));
        }
      } catch (error) {
        // The reader went away (| head): what it did not read is not wanted.
        if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
        closed = true;
      }
    },
    progress: {
      write: (text) => {
        Deno.stderr.writeSync(encoder.encode(text));
      },
      isTerminal: () => Deno.stderr.isTerminal(),
    },
  };
}
