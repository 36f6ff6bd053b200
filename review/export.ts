/**
 * The review as data: `--json` and `--csv`. u64 values (peaks, times in
 * nanoseconds) are decimal strings, exact at any size; counts and rates
 * are numbers.
 *
 * @module
 */

import { stringify } from "csv-stringify/sync";
import { terminalSafe } from "../base/terminal_text.ts";
import { csvCell } from "./csv_cell.ts";
import {
  type EventList,
  firesLow,
  type Instant,
  type ReviewEvent,
} from "./event.ts";
import type { FileSummary } from "./read.ts";
import { type BlindPeriod, blindSeconds } from "./blind_periods.ts";
import { SIGNAL_KEYS } from "../config/signal_keys.ts";
import type { SignalKind } from "../config/types.ts";
import { formatDecimal } from "./decimal.ts";
import { isoTime } from "./reference_time.ts";

/** One event of `--json` (and one row of `--csv`, flattened). */
export interface JsonEvent {
  readonly id: number;
  readonly monitor: string;
  readonly rule: string;
  /** The rule's column, as the header names it; null if unknown. */
  readonly column: string | null;
  /**
   * As the header prints it (`differential_greater_than`); null without a
   * header, and for a signal rule (see {@linkcode JsonEvent.signal}).
   */
  readonly comparison_type: string | null;
  /** Exact decimal; null for a signal rule. */
  readonly comparison_value: string | null;
  /**
   * A signal rule's signal (`value`, `increase`, `rate`, `ratio`); null
   * for the reference's rule types. The fields to `denominator` are null
   * for those too.
   */
  readonly signal: string | null;
  /** The window of `rate` and `ratio`, ns; null for the others. */
  readonly window_ns: number | null;
  /** `above` or `below`: which way the signal fires. */
  readonly direction: string | null;
  /** As the header prints them: exact decimal u64, or a float (per second for `rate`). */
  readonly threshold: string | null;
  readonly clear: string | null;
  /** `for`, ns; null when the rule starts on M of N. */
  readonly for_ns: number | null;
  /** `3 of 5`: raised on at least M of the last N samples. */
  readonly m_of_n: string | null;
  readonly keep_firing_for_ns: number | null;
  /** A ratio's denominator column (its data ID if the header does not name it). */
  readonly denominator: string | null;
  readonly severity: string | null;
  readonly summary: string | null;
  /** ISO-8601 UTC, microseconds: the start sample's time. */
  readonly start: string | null;
  /** ISO-8601 UTC; null unless the event ended in the log. */
  readonly end: string | null;
  /** Nanoseconds since the epoch, exact (decimal string). */
  readonly start_ns: string | null;
  readonly end_ns: string | null;
  /** `ended`, `open` (at the end of the log) or `interrupted` (restart). */
  readonly state: string;
  /** False if the start marker was in a file not read. */
  readonly start_known: boolean;
  readonly duration_s: number | null;
  readonly samples: number;
  readonly rows: number;
  readonly history_rows: number;
  readonly dropped_samples: number;
  readonly lost_rows: number;
  /**
   * Blind periods (the source lost samples; see `blind_periods` in the
   * document) in the event's traceback window, its history included.
   */
  readonly blind_periods: number;
  /** Samples lost in them. */
  readonly blind_samples: number;
  /**
   * The rule's peak over the event, in its own signal and units (per
   * second for a rate, a fraction for a ratio): the number the closing
   * table, the events API and the alerts give. Null if the log does not
   * say (the event is open, or the log predates `<<Peak>>` lines).
   */
  readonly peak: number | null;
  /**
   * `max` or `min`: which extreme `peak`, `column_peak` and
   * `column_peak_rate_per_s` are.
   */
  readonly peak_kind: "max" | "min";
  /** `/s` for a rate's peak, empty otherwise. */
  readonly peak_unit: "/s" | "";
  /** Exact decimal: the rule column's own extreme over the event. */
  readonly column_peak: string | null;
  readonly column_peak_time: string | null;
  /** The rule column's most extreme sample-to-sample rate, per second. */
  readonly column_peak_rate_per_s: number | null;
  readonly column_peak_rate_time: string | null;
  readonly start_marker: string | null;
  readonly end_marker: string | null;
  readonly file: string;
  readonly line: number;
  /** `ns`, `reference` or `counter`. */
  readonly time_format: string;
}

/** Field order of `--csv`. */
export const CSV_FIELDS: readonly (keyof JsonEvent)[] = [
  "id",
  "monitor",
  "rule",
  "column",
  "comparison_type",
  "comparison_value",
  "signal",
  "window_ns",
  "direction",
  "threshold",
  "clear",
  "for_ns",
  "m_of_n",
  "keep_firing_for_ns",
  "denominator",
  "severity",
  "summary",
  "start",
  "end",
  "start_ns",
  "end_ns",
  "state",
  "start_known",
  "duration_s",
  "samples",
  "rows",
  "history_rows",
  "dropped_samples",
  "lost_rows",
  "peak",
  "peak_kind",
  "peak_unit",
  "column_peak",
  "column_peak_time",
  "column_peak_rate_per_s",
  "column_peak_rate_time",
  "start_marker",
  "end_marker",
  "file",
  "line",
  "time_format",
];

function iso(t: Instant | null): string | null {
  return t === null ? null : isoTime(t.sec, t.ns, 6);
}

function ns(t: Instant | null): string | null {
  return t === null ? null : formatDecimal(t.sec, Math.round(t.ns));
}

type RuleFields = Pick<
  JsonEvent,
  | "comparison_type"
  | "comparison_value"
  | "signal"
  | "window_ns"
  | "direction"
  | "threshold"
  | "clear"
  | "for_ns"
  | "m_of_n"
  | "keep_firing_for_ns"
  | "denominator"
  | "severity"
  | "summary"
>;

/** The rule's definition, as the log's header gives it. */
function ruleFields(e: ReviewEvent): RuleFields {
  const s = e.signal;
  if (s === undefined) {
    // A signal rule whose condition cannot be read has no comparison type.
    const signal = (SIGNAL_KEYS as readonly (string | undefined)[])
        .includes(e.kind)
      ? e.kind as SignalKind
      : null;
    return {
      comparison_type: signal !== null ? null : e.typeName ?? null,
      comparison_value: signal !== null ? null : e.threshold ?? null,
      signal,
      window_ns: null,
      direction: null,
      threshold: null,
      clear: null,
      for_ns: null,
      m_of_n: null,
      keep_firing_for_ns: null,
      denominator: null,
      severity: null,
      summary: null,
    };
  }
  const windowed = s.signal === "rate" || s.signal === "ratio";
  return {
    comparison_type: null,
    comparison_value: null,
    signal: s.signal,
    window_ns: windowed ? s.windowNs : null,
    direction: s.direction,
    threshold: s.threshold,
    clear: s.clear,
    for_ns: s.mOfN === undefined ? s.forNs : null,
    m_of_n: s.mOfN === undefined ? null : `${s.mOfN.m} of ${s.mOfN.n}`,
    keep_firing_for_ns: s.keepFiringForNs,
    denominator: s.denominator ?? s.denominatorDataId ?? null,
    severity: s.severity ?? null,
    summary: s.summary ?? null,
  };
}

/** An event as `--json` and `--csv` write it. */
export function toJsonEvent(e: ReviewEvent): JsonEvent {
  return {
    id: e.id,
    monitor: e.monitor,
    rule: e.rule,
    column: e.column ?? null,
    ...ruleFields(e),
    start: iso(e.start),
    end: iso(e.end),
    start_ns: ns(e.start),
    end_ns: ns(e.end),
    state: e.state,
    start_known: e.startKnown,
    duration_s: e.durationS === null ? null : Number(e.durationS.toFixed(9)),
    samples: e.samples,
    rows: e.rows,
    history_rows: e.historyRows,
    dropped_samples: e.droppedSamples,
    lost_rows: e.lostRows,
    blind_periods: e.blindPeriods,
    blind_samples: e.blindSamples,
    peak: e.rulePeak,
    peak_kind: firesLow(e) ? "min" : "max",
    peak_unit: e.kind === "rate" ? "/s" : "",
    column_peak: e.columnPeak,
    column_peak_time: iso(e.columnPeakAt),
    column_peak_rate_per_s: e.columnPeakRate,
    column_peak_rate_time: iso(e.columnPeakRateAt),
    start_marker: e.startMarker,
    end_marker: e.endMarker,
    file: e.file,
    line: e.line,
    time_format: e.timeFormat,
  };
}

/** One blind period of `--json`. */
export interface JsonBlindPeriod {
  readonly monitor: string;
  /** ISO-8601 UTC, microseconds: the last sample before the loss; null if unknown. */
  readonly from: string | null;
  /** The first sample after it, or when the agent stopped (`stopped`). */
  readonly to: string | null;
  readonly stopped: boolean;
  readonly duration_s: number | null;
  readonly dropped_samples: number;
  readonly file: string;
  readonly line: number;
}

/** A blind period as `--json` writes it. */
export function toJsonBlindPeriod(p: BlindPeriod): JsonBlindPeriod {
  const s = blindSeconds(p);
  return {
    monitor: p.monitor,
    from: iso(p.from),
    to: iso(p.to),
    stopped: p.stopped,
    duration_s: s === null ? null : Number(s.toFixed(6)),
    dropped_samples: p.dropped,
    file: p.file,
    line: p.line,
  };
}

/**
 * Events per piece {@linkcode jsonChunks} and {@linkcode csvChunks} yield:
 * few, so that a piece being built never outlives a young-generation
 * collection (what survives one makes V8 grow its heap).
 */
const EVENTS_PER_CHUNK = 10;

/**
 * The `--json` document, `{"events": [...], "files": [...]}`, with
 * `"blind_periods": [...]` between them when the review lists some, in
 * pieces of a few events, so that no more than a piece is ever held. Names from
 * the log are exact; what JSON.stringify leaves raw and a terminal could
 * act on (C1 controls, bidi overrides) is written as a `\uXXXX` escape.
 */
export function* jsonChunks(
  events: EventList,
  files: readonly FileSummary[],
  blindPeriods: readonly BlindPeriod[] = [],
): Generator<string> {
  let piece = '{\n  "events": [';
  let n = 0;
  for (const e of events) {
    piece += (n === 0 ? "\n    " : ",\n    ") +
      JSON.stringify(toJsonEvent(e), null, 2).replaceAll("\n", "\n    ");
    if (++n % EVENTS_PER_CHUNK === 0) {
      yield jsonTerminalSafe(piece);
      piece = "";
    }
  }
  const fileList = files.map((f) => ({
    path: f.path,
    monitor: f.monitor,
    lines: f.lines,
    rows: f.rows,
    header_blocks: f.blocks,
    gzip: f.gzip,
    time_formats: f.timeFormats,
  }));
  const blind = blindPeriods.length === 0 ? "" : '  "blind_periods": ' +
    JSON.stringify(blindPeriods.map(toJsonBlindPeriod), null, 2)
      .replaceAll("\n", "\n  ") +
    ",\n";
  yield jsonTerminalSafe(
    piece + (n === 0 ? "],\n" : "\n  ],\n") + blind + '  "files": ' +
      JSON.stringify(fileList, null, 2).replaceAll("\n", "\n  "),
  ) + "\n}\n";
}

/**
 * JSON text with what a terminal could act on written as JSON's own
 * `\uXXXX` escapes, so the data reads back unchanged. Such characters
 * can only be inside strings (JSON.stringify escapes C0 controls, not C1
 * controls or bidi overrides); the newlines between values are the
 * layout, kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonTerminalSafe } from "./export.ts";
 *
 * const json = JSON.stringify({ rule: "\u202ehot\x9b" }, null, 2);
 * assert.equal(jsonTerminalSafe(json), '{\n  "rule": "\\u202ehot\\u009b"\n}');
 * assert.deepEqual(JSON.parse(jsonTerminalSafe(json)), { rule: "\u202ehot\x9b" });
 * ```
 */
export function jsonTerminalSafe(json: string): string {
  return json.split("\n").map(terminalSafe).join("\n");
}

/**
 * The `--json` document as one string (for a few events; see
 * {@linkcode jsonChunks}).
 *
 * @example
 * ```ts ignore
 * JSON.parse(formatJson(review.events, review.files)).events[0].columnPeak; // "18446744073709551610"
 * ```
 */
export function formatJson(
  events: EventList,
  files: readonly FileSummary[],
): string {
  return [...jsonChunks(events, files)].join("");
}

const CSV_OPTIONS = {
  record_delimiter: "unix",
  cast: { boolean: (b: boolean) => String(b) },
} as const;

/**
 * The `--csv` table, a header row then one row per event, in pieces.
 * Text that a spreadsheet would evaluate gets a leading `'` and terminal
 * controls show as `\uXXXX` (see {@linkcode csvCell}): names come from
 * the log.
 */
export function* csvChunks(events: EventList): Generator<string> {
  let rows: unknown[][] = [CSV_FIELDS as string[]];
  for (const e of events) {
    const j = toJsonEvent(e);
    rows.push(CSV_FIELDS.map((k) => csvCell(j[k] ?? "")));
    if (rows.length === EVENTS_PER_CHUNK) {
      yield stringify(rows, CSV_OPTIONS);
      rows = [];
    }
  }
  if (rows.length > 0) yield stringify(rows, CSV_OPTIONS);
}

/** The `--csv` table as one string (for a few events). */
export function formatCsv(events: EventList): string {
  return [...csvChunks(events)].join("");
}
