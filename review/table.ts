/**
 * The review's plain-text table: one line per event, what an operator
 * reads first after an incident.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import { type EventList, firesLow, type ReviewEvent } from "./event.ts";
import { formatCount, formatDuration, formatUtc } from "../base/units.ts";
import { measureText, peakCell as formatPeak } from "../base/peak_text.ts";
import type { BlindPeriod } from "./blind_periods.ts";
import { formatBlindPeriods } from "./blind_table.ts";

/** The START cell: the start sample's time, `<=` if the start was not read. */
export function startCell(e: ReviewEvent): string {
  if (e.start === null) return "?";
  return (e.startKnown ? "" : "<= ") + formatUtc(e.start);
}

/** The END cell: the time (date left out if the start's), or the state. */
export function endCell(e: ReviewEvent): string {
  if (e.state === "open") return "open (log ends)";
  if (e.state === "interrupted") return "cut by restart";
  if (e.end === null) return "?";
  const end = formatUtc(e.end);
  const start = e.start === null ? "" : formatUtc(e.start);
  return end.slice(0, 10) === start.slice(0, 10) ? end.slice(11) : end;
}

/**
 * The DURATION cell; `>=` when the end is not in the log; a negative one
 * (the wall clock was stepped back during the event, e.g. by NTP) says
 * so rather than hiding the sign.
 */
export function durationCell(e: ReviewEvent): string {
  if (e.durationS === null) return "?";
  const text = formatDuration(e.durationS);
  if (e.durationS < 0) return `${text} (clock stepped back)`;
  return e.state === "ended" && e.startKnown ? text : `>= ${text}`;
}

/**
 * The PEAK cell: the rule's peak in its own units, as the closing table,
 * the events API and the alerts write it (`min` before the peak of a rule
 * that fires low, `/s` after a rate's, a ratio as a percentage); `-`
 * without one.
 */
export function peakCell(e: ReviewEvent): string {
  return formatPeak({
    peak: e.rulePeak ?? NaN,
    peakKind: firesLow(e) ? "min" : "max",
    peakUnit: e.kind === "rate" ? "/s" : e.kind === "ratio" ? "%" : "",
  });
}

/**
 * What the rule's peak measures, in words: `rate per second`, `ratio`,
 * `increase per sample`, `value`, `rise over the depth` (dt_gt, dt_lt),
 * `rise per sample` (inc_gt).
 */
export function signalName(e: ReviewEvent): string {
  switch (e.kind) {
    case "rate":
      return "rate per second";
    case "ratio":
      return "ratio";
    case "increase":
      return "increase per sample";
    case "dt_gt":
    case "dt_lt":
      return "rise over the depth";
    case "inc_gt":
      return "rise per sample";
    default:
      return "value";
  }
}

/**
 * The rule column's own extreme over the event, exact, labelled so that
 * it is not taken for the rule's peak: `column max 7712359953`.
 */
export function columnPeakCell(e: ReviewEvent): string {
  if (e.columnPeak === null) return "-";
  return `column ${firesLow(e) ? "min" : "max"} ${e.columnPeak}`;
}

/**
 * The rule column's most extreme sample-to-sample rate, per second, as
 * every rate reads (measureText), labelled as the column's:
 * `column max 90125/s per sample`.
 */
export function peakRateCell(e: ReviewEvent): string {
  if (e.columnPeakRate === null) return "-";
  return `column ${firesLow(e) ? "min" : "max"} ${
    measureText(e.columnPeakRate, "/s")
  } per sample`;
}

/**
 * The BLIND cell: blind periods in the event's traceback window and the
 * samples lost in them (`1 (5 lost)`), `-` without.
 */
export function blindCell(e: ReviewEvent): string {
  if (e.blindPeriods === 0) return "-";
  return `${formatCount(e.blindPeriods)} (${formatCount(e.blindSamples)} lost)`;
}

const HEAD = [
  "#",
  "MONITOR",
  "RULE",
  "START (UTC)",
  "END",
  "DURATION",
  "SAMPLES",
  "PEAK",
  "ROWS",
];
const RIGHT = [true, false, false, false, false, true, true, true, true];
// With blind periods in the review, a column for them before ROWS (which
// stays last: its cell is never padded).
const BLIND_HEAD = [...HEAD.slice(0, -1), "BLIND", HEAD[HEAD.length - 1]];
const BLIND_RIGHT = [...RIGHT.slice(0, -1), false, true];

function cells(e: ReviewEvent, blind: boolean): string[] {
  const row = [
    String(e.id),
    // Names come from the log and its file name; the other cells are
    // made here from numbers.
    terminalSafe(e.monitor),
    terminalSafe(e.rule),
    startCell(e),
    endCell(e),
    durationCell(e),
    formatCount(e.samples),
    peakCell(e),
    `${formatCount(e.historyRows)}+${formatCount(e.rows)}`,
  ];
  if (blind) row.splice(row.length - 1, 0, blindCell(e));
  return row;
}

function line(row: readonly string[], widths: readonly number[]): string {
  const right = row.length === RIGHT.length ? RIGHT : BLIND_RIGHT;
  let text = "";
  for (let c = 0; c < row.length; c++) {
    const cell = c === row.length - 1
      ? row[c]
      : right[c]
      ? row[c].padStart(widths[c])
      : row[c].padEnd(widths[c]);
    text += c === 0 ? cell : "  " + cell;
  }
  return text.trimEnd() + "\n";
}

/**
 * Table lines per piece {@linkcode tableChunks} yields: small, so that a
 * piece being built never outlives a young-generation collection (what
 * survives one makes V8 grow its heap).
 */
const LINES_PER_CHUNK = 50;

/** How many of the events are in which state. */
interface StateCounts {
  open: number;
  cut: number;
}

/**
 * The table, columns aligned (numbers right-aligned), in pieces of a few
 * lines: one pass over the events for the column widths, one to write,
 * so that no more than a piece is ever held. With `summary`, the line
 * under the table follows: how many events, how many shown, their states;
 * with blind periods in it, a BLIND column says which events' windows
 * hold some, and the list of them follows the line.
 * Terminal controls in names are shown as `\uXXXX`.
 */
export function* tableChunks(
  events: EventList,
  summary?: {
    readonly all: EventList;
    readonly files: number;
    readonly blindPeriods?: readonly BlindPeriod[];
  },
): Generator<string> {
  const counts: StateCounts = { open: 0, cut: 0 };
  const blind = (summary?.blindPeriods?.length ?? 0) > 0;
  if (events.length === 0) yield "No events.\n";
  else {
    const head = blind ? BLIND_HEAD : HEAD;
    const widths = head.map((h) => h.length);
    for (const e of events) {
      const row = cells(e, blind);
      for (let c = 0; c < row.length; c++) {
        if (row[c].length > widths[c]) widths[c] = row[c].length;
      }
      count(counts, e);
    }
    let piece = line(head, widths);
    let lines = 1;
    for (const e of events) {
      piece += line(cells(e, blind), widths);
      if (++lines === LINES_PER_CHUNK) {
        yield piece;
        piece = "";
        lines = 0;
      }
    }
    if (piece !== "") yield piece;
  }
  if (summary !== undefined) {
    yield "\n" +
      summaryLine(summary.all.length, events.length, counts, summary.files);
    if (blind) yield "\n" + formatBlindPeriods(summary.blindPeriods!);
  }
}

function count(counts: StateCounts, e: ReviewEvent): void {
  if (e.state === "open") counts.open++;
  else if (e.state === "interrupted") counts.cut++;
}

/**
 * The table as one string (for a few events; see {@linkcode tableChunks}).
 *
 * @example
 * ```ts ignore
 * console.log(formatReviewTable(review.events));
 * ```
 */
export function formatReviewTable(events: EventList): string {
  return [...tableChunks(events)].join("");
}

/** One line under the table: how many events, how many shown, their states. */
function summaryLine(
  all: number,
  shown: number,
  counts: StateCounts,
  files: number,
): string {
  const parts = [
    shown === all
      ? `${all} event${all === 1 ? "" : "s"}`
      : `${shown} of ${all} events`,
  ];
  if (counts.open > 0) parts.push(`${counts.open} open at the end of the log`);
  if (counts.cut > 0) parts.push(`${counts.cut} cut by a restart`);
  return `${parts.join(", ")}; ${files} file${
    files === 1 ? "" : "s"
  } read. ROWS: history before the start + rows during.\n`;
}
