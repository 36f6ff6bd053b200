/**
 * The review's plain-text table: one line per event, what an operator
 * reads first after an incident.
 *
 * @module
 */

import type { ReviewEvent } from "./event.ts";
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

/** The DURATION cell; `>=` when the end is not in the log. */
export function durationCell(e: ReviewEvent): string {
  if (e.durationS === null) return "?";
  const text = formatDuration(e.durationS);
  return e.state === "ended" && e.startKnown ? text : `>= ${text}`;
}

/** The PEAK cell: exact, with `min` for rules that fire on low values. */
export function peakCell(e: ReviewEvent): string {
  if (e.peak === null) return "-";
  return e.kind === "lt" || e.kind === "dt_lt" ? `min ${e.peak}` : e.peak;
}

/** The PEAK RATE cell, per second, SI-scaled. */
export function peakRateCell(e: ReviewEvent): string {
  return e.peakRate === null ? "-" : `${formatSi(e.peakRate)}/s`;
}

/**
 * The table, columns aligned; numbers are right-aligned.
 *
 * @example
 * ```ts ignore
 * console.log(formatReviewTable(review.events));
 * ```
 */
export function formatReviewTable(events: readonly ReviewEvent[]): string {
  if (events.length === 0) return "No events.\n";
  const head = [
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
  const right = [
    true,
    false,
    false,
    false,
    false,
    true,
    true,
    true,
    true,
    true,
  ];
  const rows = events.map((e) => [
    String(e.id),
    e.monitor,
    e.rule,
    startCell(e),
    endCell(e),
    durationCell(e),
    formatCount(e.samples),
    peakCell(e),
    peakRateCell(e),
    `${formatCount(e.historyRows)}+${formatCount(e.rows)}`,
  ]);
  const all = [head, ...rows];
  const widths = head.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  return all.map((r) =>
    r.map((cell, c) =>
      c === r.length - 1
        ? cell
        : right[c]
        ? cell.padStart(widths[c])
        : cell.padEnd(widths[c])
    ).join("  ").trimEnd()
  ).join("\n") + "\n";
}

/** One line under the table: how many events, how many shown, their states. */
export function formatSummary(
  all: readonly ReviewEvent[],
  shown: readonly ReviewEvent[],
  files: number,
): string {
  const open = shown.filter((e) => e.state === "open").length;
  const cut = shown.filter((e) => e.state === "interrupted").length;
  const parts = [
    shown.length === all.length
      ? `${all.length} event${all.length === 1 ? "" : "s"}`
      : `${shown.length} of ${all.length} events`,
  ];
  if (open > 0) parts.push(`${open} open at the end of the log`);
  if (cut > 0) parts.push(`${cut} cut by a restart`);
  return `${parts.join(", ")}; ${files} file${
    files === 1 ? "" : "s"
  } read. ROWS: history before the start + rows during.\n`;
}
