/**
 * `dpu-traceback review [FILE|DIR]...`: what fired, when, for how long,
 * how bad, and what the counters did just before, read from events.log.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { errorMessage } from "../base/error_message.ts";
import { VERSION } from "../config/version.ts";
import { LOG_DIR } from "../deploy/permissions.ts";
import { ioReason } from "./errors.ts";
import type { EventList } from "./event.ts";
import { filterEvents } from "./event_store.ts";
import { csvChunks, jsonChunks } from "./export.ts";
import { resolveInputs } from "./files.ts";
import { type EventFilter, matchesFilter, parseTimeOption } from "./filters.ts";
import { reportChunks } from "./html.ts";
import {
  createProgress,
  type Progress,
  type ProgressTarget,
} from "./progress.ts";
import { readReview, type ReviewLog } from "./read.ts";
import { TIME_FORMATS, type TimeFormat } from "./reference_time.ts";
import { tableChunks } from "./table.ts";
import { type TracebackFormat, writeTraceback } from "./traceback.ts";

/** Where the review writes. */
export interface ReviewIo {
  /** Standard output (the table, exports, traceback); may hold text back. */
  readonly out: (text: string) => Promise<void>;
  /** Writes out what {@linkcode out} holds back; called before returning. */
  readonly flush?: () => Promise<void>;
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
Default: ./events.log, else ${LOG_DIR} (the installed agent's logs).
Times are UTC.

Options:
      --rule TEXT        only rules whose name contains TEXT (any case; repeatable)
      --monitor NAME     only this monitor (repeatable)
      --since TIME       only events still going at or after TIME
      --until TIME       only events started at or before TIME
                         TIME: ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix
                         seconds; a date alone is its first moment for --since and its
                         last for --until (--until 2026-11-21 keeps that whole day)
      --event N          print event N's traceback window (N from the table)
      --json             print JSON instead of the table (with --event: the window)
      --csv              print CSV instead of the table (with --event: the window)
      --html FILE        also write a self-contained HTML report with charts ("-": to stdout)
      --timestamps auto|ns|reference|counter
                         how the timestamp column is encoded (default auto: detected)
  -h, --help             this text

A damaged line in a log (NUL padding after a crash) is a warning, and skipped.
With a DIR or several paths, a file that cannot be read, is damaged or is not
an events log is skipped with a warning and the others are reviewed; a gzip
cut short is reviewed up to the cut.

Exit codes: 0 ok; 1 a file or its rest was skipped (the review of what could
be read is printed), or a single FILE cannot be read at all or is not an
events log; 2 usage error.
`;

/** What the command line asked for. */
interface ReviewArgs {
  readonly paths: string[];
  /** No paths were given: the default applies. */
  readonly defaultPaths: boolean;
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
    throw new TypeError(argsProblem(error), { cause: error });
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
    : parseTimeOption("--until", values.until, true);
  if (sinceMs !== undefined && untilMs !== undefined && untilMs < sinceMs) {
    throw new TypeError("--until is before --since");
  }
  if (values.html === "") throw new TypeError("--html needs a FILE");
  return {
    paths: positionals.length > 0 ? positionals : [DEFAULT_FILE],
    defaultPaths: positionals.length === 0,
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

/**
 * node:util's parseArgs problem in one line of our own: its messages run
 * on with advice about `--` that is cut off mid-quote on one line.
 */
function argsProblem(error: unknown): string {
  const message = errorMessage(error);
  const code = error instanceof Error
    ? (error as Error & { code?: string }).code
    : undefined;
  const option = /'(-[^' ]*)/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined) {
    return `unknown option '${option}'`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option !== undefined) {
    return /argument missing/.test(message)
      ? `${option} needs a value`
      : `${option} takes no value`;
  }
  return message.split("\n")[0].split(". ")[0];
}

/** A usage error and where to look, as one line. */
function usageLine(message: string): string {
  const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
  return `${sentence} Try 'dpu-traceback review --help'.`;
}

/** Most warnings printed one by one; the rest are counted. */
const MAX_NOTES = 20;

/** Most events the HTML report charts (each holds a few hundred points). */
const MAX_CHARTS = 500;

/** Where `review` looks without paths: ./events.log, else the log directory. */
export interface ReviewDefaults {
  readonly file: string;
  readonly dir: string;
}

const DEFAULT_FILE = "events.log";

/**
 * Runs `review` with `args` (the words after `review`) and returns the exit
 * code: 0; 1 if a file was skipped or a single FILE cannot be read or is
 * not an events log; 2 on a usage error. `defaults`: where to look without
 * paths (for tests).
 *
 * @example
 * ```ts ignore
 * const code = await runReview(["/var/log/dpu-traceback", "--rule", "ECN"], stdio());
 * ```
 */
export async function runReview(
  args: readonly string[],
  io: ReviewIo,
  defaults: ReviewDefaults = { file: DEFAULT_FILE, dir: LOG_DIR },
): Promise<number> {
  try {
    return await reviewCommand(args, io, defaults);
  } finally {
    await io.flush?.();
  }
}

async function reviewCommand(
  args: readonly string[],
  io: ReviewIo,
  defaults: ReviewDefaults,
): Promise<number> {
  let options: ReviewArgs;
  try {
    options = parseReviewArgs(args);
  } catch (error) {
    io.error(usageLine(errorMessage(error)));
    return 2;
  }
  if (options.help) {
    await io.out(REVIEW_USAGE);
    return 0;
  }
  let paths = options.paths;
  if (options.defaultPaths) {
    const input = await defaultInput(defaults);
    if (input === undefined) {
      io.error(
        `Cannot review ${defaults.file}: no such file or directory, and no ${defaults.dir} either; name a FILE or DIR`,
      );
      return 1;
    }
    if (input !== defaults.file) {
      io.info(`no ${defaults.file} here: reviewing ${input}`);
    }
    paths = [input];
  }
  const filter: EventFilter = {
    rules: options.rules,
    monitors: options.monitors,
    sinceMs: options.sinceMs,
    untilMs: options.untilMs,
  };
  let notes = 0;
  let skipped = 0;
  let progress: Progress | undefined;
  let log: ReviewLog;
  const warnSkipped = (path: string, reason: string) => {
    skipped++;
    progress?.done();
    io.warn(`skipped ${path}: ${reason}`);
  };
  try {
    const families = await resolveInputs(
      paths,
      paths.length > 1 ? warnSkipped : undefined,
    );
    // One file named alone is the one thing asked for: if none of it can
    // be read there is nothing to review. With a DIR or several paths the
    // others are still worth reading.
    const alone = paths.length === 1 && families.length === 1 &&
      families[0].files.length === 1 && families[0].files[0] === paths[0];
    let total = 0;
    for (const family of families) {
      for (const path of family.files) {
        try {
          total += (await Deno.stat(path)).size;
        } catch {
          // Reading it will say why.
        }
      }
    }
    progress = io.progress === undefined
      ? undefined
      : createProgress(total, io.progress);
    log = await readReview(families, {
      timeFormat: options.timeFormat,
      charts: options.html === undefined ? undefined : filter,
      maxCharts: MAX_CHARTS,
      onProgress: progress === undefined ? undefined : (n) => progress!.add(n),
      onNote: (note) => {
        if (++notes <= MAX_NOTES) {
          progress?.done();
          io.warn(note);
        }
      },
      onSkip: (path, reason, partial) => {
        if (alone && !partial) {
          throw new Error(`Cannot review ${path}: ${reason}`);
        }
        warnSkipped(path, reason);
      },
    });
  } catch (error) {
    progress?.done();
    io.error(errorMessage(error));
    return 1;
  }
  progress?.done();
  if (notes > MAX_NOTES) {
    io.warn(`${notes - MAX_NOTES} more warnings like the above`);
  }
  // The review is printed; a skipped file still makes it a failure.
  const done = skipped > 0 ? 1 : 0;

  const all = log.events;
  const filtered = filter.rules.length > 0 || filter.monitors.length > 0 ||
    filter.sinceMs !== undefined || filter.untilMs !== undefined;
  const shown: EventList = filtered
    ? filterEvents(all, (e) => matchesFilter(e, filter))
    : all;
  try {
    if (options.html !== undefined) {
      const page = reportChunks(shown, {
        files: log.files,
        total: all.length,
        filters: describeFilters(options),
        chartsLeftOut: log.chartsLeftOut,
        maxCharts: MAX_CHARTS,
        generator: `dpu-traceback ${VERSION}`,
        nowMs: Date.now(),
      });
      if (options.html === "-") {
        for (const text of page) await io.out(text);
        return done;
      }
      try {
        await (io.writeFile ?? writeChunks)(options.html, page);
      } catch (error) {
        const refused = error instanceof Deno.errors.NotCapable ||
          error instanceof Deno.errors.PermissionDenied;
        io.error(
          `Cannot write ${options.html}: ${ioReason(error, "write")}${
            refused
              ? `; write the report through stdout instead: --html - > ${options.html}`
              : ""
          }`,
        );
        return 1;
      }
      io.info(`report written to ${options.html} (${shown.length} events)`);
    }
    if (options.event !== undefined) {
      const event = all.at(options.event - 1);
      if (event === undefined) {
        io.error(
          `--event ${options.event}: there ${
            all.length === 1 ? "is 1 event" : `are ${all.length} events`
          } in ${paths.join(", ")}`,
        );
        return 2;
      }
      const format: TracebackFormat = options.format === "table"
        ? "text"
        : options.format;
      await writeTraceback(event, all.length, format, io.out);
      return done;
    }
    const chunks = options.format === "json"
      ? jsonChunks(shown, log.files)
      : options.format === "csv"
      ? csvChunks(shown)
      : tableChunks(shown, { all, files: log.files.length });
    for (const text of chunks) await io.out(text);
  } catch (error) {
    io.error(errorMessage(error));
    return 1;
  }
  return done;
}

/**
 * `defaults.file` if it is there, else `defaults.dir` if that is; else
 * undefined. The installed binary may not even look at the working
 * directory: that counts as not there.
 */
async function defaultInput(
  defaults: ReviewDefaults,
): Promise<string | undefined> {
  for (const path of [defaults.file, defaults.dir]) {
    try {
      await Deno.stat(path);
      return path;
    } catch {
      // Not there, or not ours to look at.
    }
  }
  return undefined;
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
  // Output gathers in one reused buffer and is written when it is full:
  // pieces come a few lines at a time, too small to write one by one,
  // and a fresh byte array per piece is garbage outside the JS heap that
  // the collector frees too late.
  const buffer = new Uint8Array(64 * 1024);
  let used = 0;
  let closed = false;
  const flush = async () => {
    try {
      for (let done = 0; done < used && !closed;) {
        done += await Deno.stdout.write(buffer.subarray(done, used));
      }
    } catch (error) {
      // The reader went away (| head): what it did not read is not wanted.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      closed = true;
    }
    used = 0;
  };
  return {
    ...report,
    out: async (text) => {
      for (let from = 0; from < text.length && !closed;) {
        // A UTF-16 unit takes at most 3 bytes: encode what surely fits.
        const room = Math.floor((buffer.length - used) / 3);
        if (room === 0) {
          await flush();
          continue;
        }
        let end = Math.min(text.length, from + room);
        // Never between the two halves of a surrogate pair.
        const last = text.charCodeAt(end - 1);
        if (end < text.length && last >= 0xd800 && last < 0xdc00) end--;
        const part = from === 0 && end === text.length
          ? text
          : text.slice(from, end);
        const { read, written } = encoder.encodeInto(
          part,
          buffer.subarray(used),
        );
        from += read;
        used += written;
      }
      if (used > buffer.length / 2) await flush();
    },
    flush,
    progress: {
      write: (text) => {
        Deno.stderr.writeSync(encoder.encode(text));
      },
      isTerminal: () => Deno.stderr.isTerminal(),
    },
  };
}
