/**
 * The review's list of blind periods, under its table of events: when
 * each monitor's source lost samples, so that "no event then" is not
 * read where the agent saw nothing.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import { formatCount, formatDuration, formatUtc } from "../base/units.ts";
import { type BlindPeriod, blindSeconds } from "./blind_periods.ts";

const HEAD = ["MONITOR", "FROM (UTC)", "TO", "DURATION", "LOST"];
const RIGHT = [false, false, false, true, true];

/** The FROM cell: the last sample before the loss, `?` if unknown. */
function fromCell(p: BlindPeriod): string {
  return p.from === null ? "?" : formatUtc(p.from);
}

/** The TO cell: the first sample after it (date left out if FROM's), or the stop. */
function toCell(p: BlindPeriod): string {
  if (p.to === null) return "?";
  const to = formatUtc(p.to);
  const from = p.from === null ? "" : formatUtc(p.from);
  const text = to.slice(0, 10) === from.slice(0, 10) ? to.slice(11) : to;
  return p.stopped ? `${text} (agent stopped)` : text;
}

/** The DURATION cell; `>=` when the agent stopped still blind. */
function durationCell(p: BlindPeriod): string {
  const s = blindSeconds(p);
  if (s === null) return "?";
  return (p.stopped ? ">= " : "") + formatDuration(s);
}

/**
 * The blind periods as a titled, aligned list; empty when there are none.
 * Names are shown terminal-safe.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatBlindPeriods } from "./blind_table.ts";
 *
 * assert.equal(formatBlindPeriods([]), "");
 * assert.equal(
 *   formatBlindPeriods([{
 *     monitor: "nic",
 *     from: { sec: 1795269720, ns: 120e6 },
 *     to: { sec: 1795269723, ns: 456e6 },
 *     stopped: false,
 *     dropped: 33360,
 *     file: "events.log",
 *     line: 40,
 *   }]),
 *   "Blind periods: the source lost samples, and no rule saw them.\n" +
 *     "MONITOR  FROM (UTC)               TO            DURATION    LOST\n" +
 *     "nic      2026-11-21 14:02:00.120  14:02:03.456   3.336 s  33,360\n",
 * );
 * ```
 */
export function formatBlindPeriods(periods: readonly BlindPeriod[]): string {
  if (periods.length === 0) return "";
  const rows = periods.map((p) => [
    terminalSafe(p.monitor),
    fromCell(p),
    toCell(p),
    durationCell(p),
    formatCount(p.dropped),
  ]);
  const widths = HEAD.map((h, c) =>
    Math.max(h.length, ...rows.map((r) => r[c].length))
  );
  const line = (row: readonly string[]) =>
    row.map((cell, c) =>
      RIGHT[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])
    ).join("  ").trimEnd() + "\n";
  return "Blind periods: the source lost samples, and no rule saw them.\n" +
    line(HEAD) + rows.map(line).join("");
}
