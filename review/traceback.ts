/**
 * `review --event N`: one event's traceback window, the rows the log
 * holds from the history before its start to its end, with decoded times,
 * each row's offset from the start, the signal the rule tested (computed
 * again from the rows, see signal_column.ts), the rule column's rate per
 * sample, and every column; or the slice of them `--from` and `--to` ask
 * for. Read again from the log (from the window's byte offset when the
 * file is not compressed), streamed: a window of millions of rows costs
 * no memory.
 *
 * @module
 */

import { stringify } from "csv-stringify/sync";
import { terminalSafe } from "../base/terminal_text.ts";
import { quoteColumnName } from "../events/header.ts";
import { csvCell } from "./csv_cell.ts";
import { formatDecimal, signedDelta } from "./decimal.ts";
import type { Instant, ReviewEvent } from "./event.ts";
import { isGapMarker, parseGapMarker } from "./markers.ts";
import { clockDeltaNs, isoTime, isWallClock } from "./reference_time.ts";
import { ruleText } from "./rule_text.ts";
import { jsonTerminalSafe, toJsonEvent } from "./export.ts";
import { type SignalCell, SignalColumn } from "./signal_column.ts";
import { RowSlice, type Slice, SliceError, sliceText } from "./slice.ts";
import {
  columnPeakCell,
  durationCell,
  endCell,
  peakCell,
  peakRateCell,
  signalName,
} from "./table.ts";
import { countOf, formatCount, formatUtc } from "../base/units.ts";
import { readWindow, type WindowNote } from "./window_rows.ts";

/** How `--event` prints: text (default), `--csv` or `--json`. */
export type TracebackFormat = "text" | "csv" | "json";

/** Writes text to the output, waiting while it is behind. */
export type Write = (text: string) => Promise<void>;

/** What to show of the window. */
export interface TracebackOptions {
  /** `--from` / `--to`: the rows to show; every row without. */
  readonly slice?: Slice;
  /**
   * Most rows to write (every row without): a download stays bounded
   * whatever the event's length. When the window has more, reading stops
   * there and the output ends with a note saying so (text and CSV a
   * `# ` line; JSON a `row_limit` field, there whenever this is given).
   */
  readonly maxRows?: number;
}

/**
 * A window of more rows than this says, in its text header, how to show
 * only part of it: nobody reads 36,000 rows of raw counters.
 */
export const SLICE_HINT_ROWS = 10_000;

/** What a slice keeps of a window, counted before anything is written. */
interface SliceCounts {
  readonly slice: Slice;
  before: number;
  shown: number;
  after: number;
  /** The window's first and last rows, and the first and last shown. */
  first: Instant | null;
  last: Instant | null;
  shownFirst: Instant | null;
  shownLast: Instant | null;
}

/**
 * Writes event `e`'s window to `write` in `format`. `total` is how many
 * events the review has (for "Event 3 of 12"). With `options.slice`, the
 * window is read twice: once to count what the slice keeps (a slice that
 * keeps no row, or cannot apply to this event's clock, throws a
 * {@linkcode SliceError} before anything is written), then to write it.
 * Throws an Error `Cannot review FILE: ...` if the file cannot be read
 * again. Names and marker lines come from the log: terminal controls in
 * them are shown as `\uXXXX` in every format, and CSV text a spreadsheet
 * would evaluate gets a leading `'`.
 */
export async function writeTraceback(
  e: ReviewEvent,
  total: number,
  format: TracebackFormat,
  write: Write,
  options: TracebackOptions = {},
): Promise<void> {
  const w = e.window;
  const col = w.column;
  const names = w.columns;
  const ruleColumn = col > 0 ? names[col] : undefined;
  const wall = isWallClock(e.timeFormat);
  const origin = w.startRow;
  const slice = options.slice === undefined
    ? null
    : new RowSlice(options.slice, {
      id: e.id,
      timeFormat: e.timeFormat,
      origin,
    });
  const counts = slice === null ? null : await countSlice(e, slice);
  if (counts !== null && counts.shown === 0) {
    throw new SliceError(missText(e, counts));
  }
  const signal = new SignalColumn(e);
  const timeText = (sec: number, ns: number) =>
    wall ? isoTime(sec, ns, 9) : `${sec}.${String(ns).padStart(9, "0")}`;
  const offsetText = (sec: number, ns: number) =>
    origin === null
      ? ""
      : (clockDeltaNs(e.timeFormat, sec, ns, origin.sec, origin.ns) / 1e9)
        .toFixed(6);

  const heads = () => [
    "time",
    "offset_s",
    signal.heading,
    ruleColumn === undefined
      ? "rate/sample (/s)"
      : `${ruleColumn} rate/sample (/s)`,
    ...names.slice(1),
  ];
  if (format === "text") {
    await write(describe(e, total, counts, signal.heading, offsetText));
    // Quoted as the log quotes its column-name row: a name may hold ", ".
    await write(
      "\n" + terminalSafe(heads().map(quoteColumnName).join(", ")) + "\n",
    );
  } else if (format === "csv") {
    await write(
      stringify([heads().map(csvCell)], { record_delimiter: "unix" }),
    );
  } else {
    const shown = counts === null ? null : {
      from: counts.slice.from?.text ?? null,
      to: counts.slice.to?.text ?? null,
      rows: counts.shown,
      rows_before: counts.before,
      rows_after: counts.after,
    };
    // JSON's own escapes: the names read back unchanged.
    await write(jsonTerminalSafe(
      `{"event":${JSON.stringify(toJsonEvent(e))},\n"slice":${
        JSON.stringify(shown)
      },\n"columns":${JSON.stringify(heads())},\n"rows":[`,
    ));
  }

  // Output goes straight to `write` (stdio() buffers it): the rows a
  // chunk of input gives, as one piece.
  const out: string[] = [];
  const markers: { file: string; line: number; text: string }[] = [];
  const prev = new Float64Array(2);
  let hasPrev = false;
  let prevSec = 0;
  let prevNs = 0;
  let firstRow = true;
  const maxRows = options.maxRows ?? Infinity;
  let written = 0;
  let limited = false;
  // Markers between rows show with the slice when a row next to them
  // does: those after a shown row at once, those before one when it comes.
  let lastShown = slice === null;
  const waiting: WindowNote[] = [];
  const show = (note: WindowNote) => {
    if (format === "text") {
      out.push(
        (note.kind === "marker" ? "" : "# ") + terminalSafe(note.text) + "\n",
      );
    } else {
      markers.push({
        file: note.file,
        line: note.kind === "damaged" ? 0 : note.line,
        text: note.text,
      });
    }
  };
  await readWindow(e, {
    columns(rowNames) {
      signal.columns(rowNames);
      hasPrev = false;
    },
    row(fields, sec, ns) {
      let rate = NaN;
      if (col > 0) {
        const dtNs = clockDeltaNs(e.timeFormat, sec, ns, prevSec, prevNs);
        if (hasPrev && dtNs > 0) {
          rate = signedDelta(
            fields[2 * col],
            fields[2 * col + 1],
            prev[0],
            prev[1],
          ) * 1e9 / dtNs;
        }
        prev[0] = fields[2 * col];
        prev[1] = fields[2 * col + 1];
      }
      hasPrev = true;
      prevSec = sec;
      prevNs = ns;
      // The signal needs every row, shown or not: its windows reach back.
      const cell = signal.next(fields, sec, ns);
      if (slice !== null && slice.place(sec, ns) !== 0) {
        lastShown = false;
        waiting.length = 0;
        return;
      }
      if (written === maxRows) {
        // Only now is it known that rows were left out.
        limited = true;
        return false;
      }
      written++;
      for (const note of waiting.splice(0)) show(note);
      lastShown = true;
      const offset = offsetText(sec, ns);
      const time = timeText(sec, ns);
      const n = names.length;
      const values: string[] = [];
      for (let k = 1; k < n; k++) {
        values.push(formatDecimal(fields[2 * k], fields[2 * k + 1]));
      }
      const rateText = Number.isNaN(rate) ? "" : String(rate);
      if (format === "text") {
        // `-` where unknown: an empty cell reads as a missing column.
        out.push(
          `${time}, ${offset}, ${cell === null ? "-" : cell}, ${
            rateText || "-"
          }, ${values.join(", ")}\n`,
        );
      } else if (format === "csv") {
        // No cell can need quoting, nor a leading ': times, numbers and
        // decimals (a leading - is a negative number).
        out.push(
          `${time},${offset},${cellText(cell)},${rateText},${
            values.join(",")
          }\n`,
        );
      } else {
        out.push(
          (firstRow ? "\n" : ",\n") +
            JSON.stringify([
              time,
              offset === "" ? null : Number(offset),
              cell,
              Number.isNaN(rate) ? null : rate,
              ...values,
            ]),
        );
      }
      firstRow = false;
    },
    note(note) {
      if (note.kind === "marker" && isGapMarker(note.text)) {
        const gap = parseGapMarker(note.text);
        if (gap !== undefined) signal.gap(gap);
      }
      if (note.kind === "damaged" || lastShown) show(note);
      else waiting.push(note);
    },
    async flush() {
      if (out.length > 0) await write(out.splice(0).join(""));
    },
  });
  const limitText = limited
    ? `the first ${countOf(written, "row")} of the window (of ${
      formatCount(e.historyRows + e.rows)
    }) are shown; the rest is left out (at most ${formatCount(maxRows)} rows)`
    : "";
  if (format === "json") {
    const limit = options.maxRows === undefined
      ? ""
      : `,\n"row_limit":${
        JSON.stringify({
          max_rows: options.maxRows,
          reached: limited,
          note: limited ? limitText : null,
        })
      }`;
    await write(
      `\n],\n"markers":${jsonTerminalSafe(JSON.stringify(markers))}${limit}}\n`,
    );
  } else if (limited) await write(`# ${limitText}\n`);
}

/** A signal cell in CSV: the number or decimal, empty where unknown. */
function cellText(cell: SignalCell): string {
  return cell === null ? "" : String(cell);
}

/** Reads the window once to count the rows `slice` keeps and leaves out. */
async function countSlice(
  e: ReviewEvent,
  slice: RowSlice,
): Promise<SliceCounts> {
  const c: SliceCounts = {
    slice: slice.slice,
    before: 0,
    shown: 0,
    after: 0,
    first: null,
    last: null,
    shownFirst: null,
    shownLast: null,
  };
  let lastSec = 0;
  let lastNs = 0;
  let shownSec = 0;
  let shownNs = 0;
  await readWindow(e, {
    columns() {},
    row(_fields, sec, ns) {
      // Times as numbers while counting: no object per row.
      if (c.first === null) c.first = { sec, ns };
      lastSec = sec;
      lastNs = ns;
      const place = slice.place(sec, ns);
      if (place < 0) c.before++;
      else if (place > 0) c.after++;
      else {
        c.shown++;
        if (c.shownFirst === null) c.shownFirst = { sec, ns };
        shownSec = sec;
        shownNs = ns;
      }
    },
    note() {},
    flush: () => Promise.resolve(),
  });
  if (c.first !== null) c.last = { sec: lastSec, ns: lastNs };
  if (c.shownFirst !== null) c.shownLast = { sec: shownSec, ns: shownNs };
  return c;
}

/** The one line a slice that keeps no row of `e`'s window gets. */
function missText(e: ReviewEvent, c: SliceCounts): string {
  const head = `${
    sliceText(c.slice)
  }: no row of event ${e.id}'s window is in that slice`;
  if (c.first === null || c.last === null) {
    return `${head}; the window has no rows`;
  }
  const rows = c.before + c.after;
  return `${head}; its ${countOf(rows, "row")} run from ${
    rowPlace(e, c.first)
  } to ${rowPlace(e, c.last)}`;
}

/** A row's time as the operator can give it back: the time and the offset. */
function rowPlace(e: ReviewEvent, t: Instant): string {
  const origin = e.window.startRow;
  const offset = origin === null ? "" : signedSeconds(
    clockDeltaNs(e.timeFormat, t.sec, t.ns, origin.sec, origin.ns),
  );
  if (!isWallClock(e.timeFormat)) return offset === "" ? "?" : offset;
  const time = isoTime(t.sec, t.ns, 9);
  return offset === "" ? time : `${time} (${offset})`;
}

/** ns as `+0.000300 s`, signed as an offset bound is written. */
function signedSeconds(ns: number): string {
  return `${ns < 0 ? "-" : "+"}${(Math.abs(ns) / 1e9).toFixed(6)} s`;
}

/**
 * The text block above the rows. `counts`: what a slice keeps, null
 * without one; `signalHeading`: the signal column's; `offsetText`: a
 * row's offset_s.
 */
function describe(
  e: ReviewEvent,
  total: number,
  counts: SliceCounts | null,
  signalHeading: string,
  offsetText: (sec: number, ns: number) => string,
): string {
  const lines = [
    `Event ${e.id} of ${total}: ${e.monitor}, rule "${e.rule}"`,
  ];
  const text = ruleText(e);
  const rule = text === undefined
    ? "(not in the header)"
    : text + (e.depth === undefined ? "" : `, history depth ${e.depth}`);
  lines.push(`  rule      ${rule}`);
  if (e.signal?.summary !== undefined) {
    lines.push(`  summary   ${e.signal.summary}`);
  }
  lines.push(
    `  start     ${e.start === null ? "?" : formatUtc(e.start, 9) + " UTC"}${
      e.startKnown ? "" : " (or earlier: its start is not in the files read)"
    }${e.startMarker === null ? "" : ` (marker ${e.startMarker})`}`,
  );
  lines.push(
    `  end       ${e.end === null ? endCell(e) : formatUtc(e.end, 9) + " UTC"}${
      e.endMarker === null ? "" : ` (marker ${e.endMarker})`
    }`,
  );
  lines.push(
    `  duration  ${durationCell(e)}, ${countOf(e.samples, "sample")}` +
      (e.droppedSamples > 0
        ? `, ${formatCount(e.droppedSamples)} lost by the source`
        : "") +
      (e.lostRows > 0 ? `, ${countOf(e.lostRows, "row")} not written` : ""),
  );
  lines.push(`  peak      ${peakCell(e)} (the rule's ${signalName(e)})`);
  lines.push(
    `  column    ${columnPeakCell(e)}${
      e.columnPeakAt === null ? "" : ` at ${formatUtc(e.columnPeakAt, 6)}`
    }; ${peakRateCell(e)}${
      e.columnPeakRateAt === null
        ? ""
        : ` at ${formatUtc(e.columnPeakRateAt, 6)}`
    }`,
  );
  lines.push(
    `  signal    ${signalHeading}: what the rule tested, row by row, computed again from the rows (- where they cannot tell)`,
  );
  const w = e.window;
  const to = w.endLine === null
    ? ""
    : `${
      w.endFile === w.startFile ? "" : w.files[w.endFile!] + " "
    }line ${w.endLine}`;
  lines.push(
    `  window    ${w.files[w.startFile]} line ${w.startLine}` +
      (w.endLine === null
        ? " to the end of the log"
        : w.endLine === 0
        ? ` to the end of what could be read of ${w.files[w.endFile! - 1]}`
        : e.state === "interrupted"
        ? ` up to the restart at ${to}`
        : ` to ${to}`) +
      `: ${countOf(e.historyRows, "row")} before the start, ${
        formatCount(e.rows)
      } during`,
  );
  const rows = e.historyRows + e.rows;
  if (counts !== null) {
    const a = counts.shownFirst!;
    const b = counts.shownLast!;
    const offsets = e.window.startRow === null
      ? ""
      : `offset ${offsetText(a.sec, a.ns)} s to ${offsetText(b.sec, b.ns)} s`;
    const times = isWallClock(e.timeFormat)
      ? `${formatUtc(a, 9)} to ${formatUtc(b, 9)} UTC`
      : "";
    lines.push(
      `  slice     ${sliceText(counts.slice)}: ${
        countOf(counts.shown, "row")
      } shown (${[offsets, times].filter((t) => t !== "").join(", ")}); ${
        formatCount(counts.before)
      } before and ${formatCount(counts.after)} after left out`,
    );
  } else if (rows > SLICE_HINT_ROWS) {
    lines.push(
      `  slice     all ${
        formatCount(rows)
      } rows; to show part of them, add --from and --to: offsets from the start sample (--from -1ms --to +5ms)${
        isWallClock(e.timeFormat) ? " or times, as --since takes them" : ""
      }`,
    );
  }
  // Names, marker times and paths come from the log and the disk.
  return lines.map(terminalSafe).join("\n") + "\n";
}
