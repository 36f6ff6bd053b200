/**
 * The review's plain-text table: one line per event, what an operator
 * reads first after an incident.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import { type EventList, firesLow, type ReviewEvent } from "./event.ts";
import { formatCount, formatDuration, formatSi, formatUtc } from "./units.ts";

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

/** The PEAK cell: exact, with `min` for rules that fire on low values. */
export function peakCell(e: ReviewEvent): string {
  if (e.peak === null) return "-";
  return firesLow(e) ? `min ${e.peak}` : e.peak;
}

/**
 * The PEAK RATE cell, per second, SI-scaled; `min` for rules that fire on
 * low values, whose most extreme rate is the lowest.
 */
export function peakRateCell(e: ReviewEvent): string {
  if (e.peakRate === null) return "-";
  const rate = `${formatSi(e.peakRate)}/s`;
  return firesLow(e) ? `min ${rate}` : rate;
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
  "PEAK RATE",
  "ROWS",
];
const RIGHT = [true, false, false, false, false, true, true, true, true, true];

function cells(e: ReviewEvent): string[] {
  return [
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
    peakRateCell(e),
    `${formatCount(e.historyRows)}+${formatCount(e.rows)}`,
  ];
}

function line(row: readonly string[], widths: readonly number[]): string {
  let text = "";
  for (let c = 0; c < row.length; c++) {
    const cell = c === row.length - 1
      ? row[c]
      : RIGHT[c]
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
 * under the table follows: how many events, how many shown, their states.
 * Terminal controls in names are shown as `\uXXXX`.
 */
export function* tableChunks(
  events: EventList,
  summary?: { readonly all: EventList; readonly files: number },
): Generator<string> {
  const counts: StateCounts = { open: 0, cut: 0 };
  if (events.length === 0) yield "No events.\n";
  else {
    const widths = HEAD.map((h) => h.length);
    for (const e of events) {
      const row = cells(e);
      for (let c = 0; c < row.length; c++) {
        if (row[c].length > widths[c]) widths[c] = row[c].length;
      }
      count(counts, e);
    }
    let piece = line(HEAD, widths);
    let lines = 1;
    for (const e of events) {
      piece += line(cells(e), widths);
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
