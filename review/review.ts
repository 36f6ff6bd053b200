/**
 * Reviewing events.log files: what fired, when, for how long,
 * how bad, and what the counters did just before, read from events.log.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { matchesBlindPeriod } from "./blind_periods.ts";
import { epochMs, NS_PER_DAY, type TimePoint } from "../base/time_point.ts";
import { terminalSafe } from "../base/terminal_text.ts";
import { VERSION } from "../config/version.ts";
import { ioReason } from "./errors.ts";
import type { EventList, ReviewEvent } from "./event.ts";
import { eventStartedAt, type EventTime } from "./event_at.ts";
import { filterEvents } from "./event_store.ts";
import { csvChunks, jsonChunks } from "./export.ts";
import { resolveInputs } from "./files.ts";
import { type EventFilter, matchesFilter } from "./filters.ts";
import { reportChunks } from "./html.ts";
import {
  createProgress,
  type Progress,
  type ProgressTarget,
} from "./progress.ts";
import { readReview, type ReviewLog } from "./read.ts";
import type { TimeFormat } from "./reference_time.ts";
import { tableChunks } from "./table.ts";
import { type TracebackFormat, writeTraceback } from "./traceback.ts";
import { type Slice, SliceError } from "./slice.ts";

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

/** What to review and how to show it: `review`'s command line, parsed. */
export interface ReviewRequest {
  readonly paths: string[];
  /** No paths were given: the default applies. */
  readonly defaultPaths: boolean;
  readonly rules: string[];
  readonly monitors: string[];
  readonly sinceMs?: number;
  /** `--until` as written: kept exact, with how much time it names. */
  readonly until?: TimePoint;
  readonly event?: number;
  /**
   * `--event TIME`: the event that started then (to the precision TIME is
   * written in), of the `--rule` and `--monitor` given.
   */
  readonly eventAt?: EventTime;
  /** `--from` / `--to`: the part of the event's window to print. */
  readonly slice?: Slice;
  readonly format: "table" | "json" | "csv";
  readonly html?: string;
  readonly timeFormat?: TimeFormat;
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

/** The log `review` reads when no path is given, if it is there. */
export const DEFAULT_REVIEW_FILE = "events.log";

/**
 * Reviews the logs `request` names and writes what it asks for to `io`.
 * Returns the exit code: 0; 1 if a file was skipped or a single FILE
 * cannot be read or is not an events log; 2 when `--event N` or
 * `--event TIME` names no event (or, for TIME, several), or when
 * `--from` / `--to` keep no row of its window. `defaults`: where to look
 * without paths. Messages name files and quote the log: terminal controls
 * in them are shown as `\uXXXX`.
 *
 * @example
 * ```ts ignore
 * const code = await reviewLogs(parseReviewArgs(["--rule", "ECN"]), stdio(log), { file: "events.log", dir: LOG_DIR });
 * ```
 */
export async function reviewLogs(
  options: ReviewRequest,
  io: ReviewIo,
  defaults: ReviewDefaults,
): Promise<number> {
  io = withSafeMessages(io);
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
    until: options.until,
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
    filter.sinceMs !== undefined || filter.until !== undefined;
  const shown: EventList = filtered
    ? filterEvents(all, (e) => matchesFilter(e, filter))
    : all;
  // A rule filter asks for events: blind periods belong to no rule.
  const blindPeriods = filter.rules.length > 0
    ? []
    : log.blindPeriods.filter((p) => matchesBlindPeriod(p, filter));
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
    if (options.eventAt !== undefined || options.event !== undefined) {
      let event: ReviewEvent | undefined;
      if (options.eventAt !== undefined) {
        try {
          event = eventStartedAt(
            all,
            options.eventAt,
            filter,
            paths.join(", "),
          );
        } catch (error) {
          // None, or several: the operator's TIME names no one event.
          if (!(error instanceof RangeError)) throw error;
          io.error(error.message);
          return 2;
        }
      } else {
        event = all.at(options.event! - 1);
        if (event === undefined) {
          io.error(
            `--event ${options.event}: there ${
              all.length === 1 ? "is 1 event" : `are ${all.length} events`
            } in ${paths.join(", ")}`,
          );
          return 2;
        }
      }
      const format: TracebackFormat = options.format === "table"
        ? "text"
        : options.format;
      try {
        await writeTraceback(event, all.length, format, io.out, {
          slice: options.slice,
        });
      } catch (error) {
        // The slice keeps no row, or cannot apply to this event's clock:
        // nothing was printed, and the operator's options are at fault.
        if (!(error instanceof SliceError)) throw error;
        io.error(error.message);
        return 2;
      }
      return done;
    }
    const chunks = options.format === "json"
      ? jsonChunks(shown, log.files, blindPeriods)
      : options.format === "csv"
      ? csvChunks(shown)
      : tableChunks(shown, { all, files: log.files.length, blindPeriods });
    for (const text of chunks) await io.out(text);
  } catch (error) {
    io.error(errorMessage(error));
    return 1;
  }
  return done;
}

/**
 * `io` with its one-line messages passed through {@linkcode terminalSafe}:
 * they hold file names and text from the log (a malformed line, a parser's
 * complaint about it) and go to a terminal or the journal.
 */
function withSafeMessages(io: ReviewIo): ReviewIo {
  return {
    ...io,
    error: (message) => io.error(terminalSafe(message)),
    warn: (message) => io.warn(terminalSafe(message)),
    info: (message) => io.info(terminalSafe(message)),
  };
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

function describeFilters(options: ReviewRequest): string[] {
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
  if (options.until !== undefined) {
    // A date alone reads as its last millisecond, the day it keeps.
    const { ns, spanNs } = options.until;
    const ms = spanNs === NS_PER_DAY
      ? epochMs(ns + NS_PER_DAY) - 1
      : epochMs(ns);
    words.push(`until ${new Date(ms).toISOString()}`);
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
