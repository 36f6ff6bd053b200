/**
 * `review`'s command line: its options, its help text, and the parser that
 * turns them into a {@linkcode ReviewRequest}.
 *
 * @module
 */

import { LOG_DIR } from "../deploy/permissions.ts";
import { epochMs, parseTimePoint, type TimePoint } from "../base/time_point.ts";
import type { EventTime } from "../review/event_at.ts";
import { TIME_FORMATS, type TimeFormat } from "../review/reference_time.ts";
import { DEFAULT_REVIEW_FILE, type ReviewRequest } from "../review/review.ts";
import { checkSlice, parseSliceBound, type Slice } from "../review/slice.ts";
import { parseOptions } from "./parse_options.ts";
import { asUsageError, UsageError } from "./usage_error.ts";

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
      --event TIME       the same for the event that started at TIME (with --rule NAME,
                         of that rule): what the agent's /api/v1/events/ID and its
                         alerts give, to the ns; a coarser TIME covers more (to the
                         second: that second), and must cover only one event
      --from WHEN        with --event: only the rows from WHEN on
      --to WHEN          with --event: only the rows up to WHEN (a TIME: all the time it
                         names); WHEN is a TIME or an offset from the event's start
                         sample, as the offset_s column counts: +1.5s, -200ms, +250us,
                         -0.000300 (seconds); a slice that keeps no row exits 2
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

const REVIEW_OPTIONS = {
  rule: { type: "string", multiple: true },
  monitor: { type: "string", multiple: true },
  since: { type: "string" },
  until: { type: "string" },
  event: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  json: { type: "boolean" },
  csv: { type: "boolean" },
  html: { type: "string" },
  timestamps: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * Parses review's arguments (after `review`). Throws a {@linkcode UsageError}
 * with a one-line message on a usage error.
 */
export function parseReviewArgs(
  args: readonly string[],
): ReviewRequest & { readonly help: boolean } {
  const { values, positionals } = parseOptions(args, REVIEW_OPTIONS);
  if (values.json && values.csv) {
    throw new UsageError("--json and --csv are two outputs; give one of them");
  }
  if (values.html === "-" && (values.json || values.csv || values.event)) {
    throw new UsageError(
      "--html - writes the report to stdout; it cannot share it with --json, --csv or --event",
    );
  }
  let event: number | undefined;
  let eventAt: EventTime | undefined;
  if (values.event !== undefined) {
    // Up to 8 digits is a number from the table; a time in Unix seconds
    // has 10 (any time since 2001).
    if (/^[0-9]{1,8}$/.test(values.event)) {
      event = Number(values.event);
      if (event === 0) {
        throw new UsageError(
          `--event must be an event number from the table (1, 2, ...) or its start time (ISO-8601 or Unix seconds), got "${values.event}"`,
        );
      }
    } else {
      try {
        eventAt = {
          text: values.event,
          ...parseTimePoint("--event", values.event),
        };
      } catch (error) {
        // A time with a field out of range: say which.
        if (error instanceof RangeError) throw asUsageError(error);
        throw new UsageError(
          `--event must be an event number from the table (1, 2, ...) or its start time (ISO-8601 or Unix seconds), got ${
            JSON.stringify(values.event)
          }`,
        );
      }
    }
  }
  let timeFormat: TimeFormat | undefined;
  if (values.timestamps !== undefined && values.timestamps !== "auto") {
    if (!(TIME_FORMATS as readonly string[]).includes(values.timestamps)) {
      throw new UsageError(
        `--timestamps must be one of auto, ${
          TIME_FORMATS.join(", ")
        }, got "${values.timestamps}"`,
      );
    }
    timeFormat = values.timestamps as TimeFormat;
  }
  const since = values.since === undefined
    ? undefined
    : timeOption("--since", values.since);
  const until = values.until === undefined
    ? undefined
    : timeOption("--until", values.until);
  // --until keeps starts before the end of the time it names.
  if (
    since !== undefined && until !== undefined &&
    until.ns + until.spanNs <= since.ns
  ) {
    throw new UsageError("--until is before --since");
  }
  const sinceMs = since === undefined ? undefined : epochMs(since.ns);
  const slice = sliceOption(values.from, values.to, values.event);
  if (values.html === "") throw new UsageError("--html needs a FILE");
  return {
    paths: positionals.length > 0 ? positionals : [DEFAULT_REVIEW_FILE],
    defaultPaths: positionals.length === 0,
    rules: values.rule ?? [],
    monitors: values.monitor ?? [],
    sinceMs,
    until,
    event,
    eventAt,
    slice,
    format: values.json ? "json" : values.csv ? "csv" : "table",
    html: values.html,
    timeFormat,
    help: values.help ?? false,
  };
}

/**
 * `--from` and `--to`, which cut an event's window (so need `--event`),
 * or a {@linkcode UsageError} saying what is wrong; undefined without
 * either.
 */
function sliceOption(
  from: string | undefined,
  to: string | undefined,
  event: string | undefined,
): Slice | undefined {
  if (from === undefined && to === undefined) return undefined;
  if (event === undefined) {
    throw new UsageError(
      `${
        from === undefined ? "--to" : "--from"
      } cuts an event's traceback window; give the event too (--event N or --event TIME)`,
    );
  }
  try {
    const slice: Slice = {
      ...(from === undefined ? {} : { from: parseSliceBound("--from", from) }),
      ...(to === undefined ? {} : { to: parseSliceBound("--to", to) }),
    };
    checkSlice(slice);
    return slice;
  } catch (error) {
    throw asUsageError(error);
  }
}

/** A review time option, or a {@linkcode UsageError} saying what is wrong. */
function timeOption(option: string, value: string): TimePoint {
  try {
    return parseTimePoint(option, value);
  } catch (error) {
    throw asUsageError(error);
  }
}
