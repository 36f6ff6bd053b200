/**
 * `review --event N`: one event's traceback window, the rows the log
 * holds from the history before its start to its end, with decoded times,
 * each row's offset from the start and the rule column's rate. Read again
 * from the log (from the window's byte offset when the file is not
 * compressed), streamed: a window of millions of rows costs no memory.
 *
 * @module
 */

import { stringify } from "csv-stringify/sync";
import { errorMessage } from "../base/error_message.ts";
import { terminalSafe } from "../base/terminal_text.ts";
import { HEADER_PREFIX, quoteColumnName } from "../events/header.ts";
import { ColumnNames, isColumnRow } from "./columns.ts";
import { csvCell } from "./csv_cell.ts";
import { formatDecimal, signedDelta } from "./decimal.ts";
import type { ReviewEvent } from "./event.ts";
import { DamagedFileError, ioReason } from "./errors.ts";
import { HeaderParser } from "./header.ts";
import { openLogSource, readLines } from "./lines.ts";
import {
  clockDeltaNs,
  isoTime,
  isWallClock,
  TimeDecoder,
} from "./reference_time.ts";
import { parseRow } from "./row.ts";
import { ruleText } from "./rule_text.ts";
import { jsonTerminalSafe, toJsonEvent } from "./export.ts";
import {
  columnPeakCell,
  durationCell,
  endCell,
  peakCell,
  peakRateCell,
  signalName,
} from "./table.ts";
import { countOf, formatCount, formatUtc } from "../base/units.ts";

/** How `--event` prints: text (default), `--csv` or `--json`. */
export type TracebackFormat = "text" | "csv" | "json";

/** Writes text to the output, waiting while it is behind. */
export type Write = (text: string) => Promise<void>;

const utf8 = new TextDecoder();

/**
 * Writes event `e`'s window to `write` in `format`. `total` is how many
 * events the review has (for "Event 3 of 12"). Throws an Error `Cannot
 * review FILE: ...` if the file cannot be read again. Names and marker
 * lines come from the log: terminal controls in them are shown as
 * `\uXXXX` in every format, and CSV text a spreadsheet would evaluate
 * gets a leading `'`.
 */
export async function writeTraceback(
  e: ReviewEvent,
  total: number,
  format: TracebackFormat,
  write: Write,
): Promise<void> {
  const w = e.window;
  const col = w.column;
  let names = w.columns;
  const ruleColumn = col > 0 ? names[col] : undefined;
  const wall = isWallClock(e.timeFormat);
  const origin = w.startRow;
  // Output goes straight to `write` (stdio() buffers it): the rows a
  // chunk of input gives, as one piece.
  const drain = async (out: string[]) => {
    if (out.length > 0) await write(out.splice(0).join(""));
  };

  const heads = () => [
    "time",
    "offset_s",
    ruleColumn === undefined ? "rate_per_s" : `${ruleColumn}/s`,
    ...names.slice(1),
  ];
  if (format === "text") {
    await write(describe(e, total));
    // Quoted as the log quotes its column-name row: a name may hold ", ".
    await write(
      "\n" + terminalSafe(heads().map(quoteColumnName).join(", ")) + "\n",
    );
  } else if (format === "csv") {
    await write(
      stringify([heads().map(csvCell)], { record_delimiter: "unix" }),
    );
  } else {
    // JSON's own escapes: the names read back unchanged.
    await write(jsonTerminalSafe(
      `{"event":${JSON.stringify(toJsonEvent(e))},\n"columns":${
        JSON.stringify(heads())
      },\n"rows":[`,
    ));
  }

  const markers: { file: string; line: number; text: string }[] = [];
  let fields = new Float64Array(2 * Math.max(1, names.length));
  const prev = new Float64Array(2);
  let hasPrev = false;
  let prevSec = 0;
  let prevNs = 0;
  const decoder = new TimeDecoder(e.timeFormat);
  let firstRow = true;
  // The header block being read, ended as the reader ends it.
  let header: HeaderParser | null = null;
  let done = false;
  // Line 0: the window ends with the file before (that one was skipped).
  const lastFile = w.endFile === null
    ? w.files.length - 1
    : w.endLine === 0
    ? w.endFile - 1
    : w.endFile;
  // An event cut by a restart: its window ends before the restart's line.
  const cutAt = e.state === "interrupted" ? w.endLine : null;
  const columnNames = new ColumnNames();
  for (let f = w.startFile; f <= lastFile && !done; f++) {
    const path = w.files[f];
    let source;
    try {
      source = await openLogSource(path, f === w.startFile ? w.startOffset : 0);
    } catch (error) {
      throw new Error(`Cannot review ${path}: ${ioReason(error)}`, {
        cause: error,
      });
    }
    const seeked = f === w.startFile && !source.gzip;
    // Lines are handed over synchronously; output is queued and written
    // between chunks, so the handler collects and the loop awaits.
    const out: string[] = [];
    try {
      await readLines(
        {
          async *[Symbol.asyncIterator]() {
            for await (const chunk of source.chunks) {
              yield chunk;
              await drain(out);
            }
          },
        },
        (buf, start, end, line, _offset, terminated) => {
          if (f === w.startFile && line < w.startLine) return;
          if (cutAt !== null && f === w.endFile && line === cutAt) {
            done = true;
            return false;
          }
          if (!terminated || start === end) return;
          const c = buf[start];
          const isRow = c >= 48 && c <= 57;
          if (header !== null) {
            if (
              !isRow && header.accept(utf8.decode(buf.subarray(start, end)))
            ) return;
            header = null;
          }
          const past = f > w.startFile || line > w.startLine;
          if (isRow) {
            const n = parseRow(buf, start, end, fields);
            if (n !== names.length) return;
            decoder.decode(fields[0], fields[1]);
            const sec = decoder.sec;
            const ns = decoder.ns;
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
            const offset = origin === null ? "" : (clockDeltaNs(
              e.timeFormat,
              sec,
              ns,
              origin.sec,
              origin.ns,
            ) / 1e9).toFixed(6);
            const time = wall
              ? isoTime(sec, ns, 9)
              : `${sec}.${String(ns).padStart(9, "0")}`;
            const values: string[] = [];
            for (let k = 1; k < n; k++) {
              values.push(formatDecimal(fields[2 * k], fields[2 * k + 1]));
            }
            const rateText = Number.isNaN(rate) ? "" : String(rate);
            if (format === "text") {
              out.push(
                `${time}, ${offset}, ${rateText}, ${values.join(", ")}\n`,
              );
            } else if (format === "csv") {
              // No cell can need quoting, nor a leading ': times,
              // numbers and decimals (a leading - is a negative number).
              out.push(`${time},${offset},${rateText},${values.join(",")}\n`);
            } else {
              out.push(
                (firstRow ? "\n" : ",\n") +
                  JSON.stringify([
                    time,
                    offset === "" ? null : Number(offset),
                    Number.isNaN(rate) ? null : rate,
                    ...values,
                  ]),
              );
            }
            firstRow = false;
            return;
          }
          const text = utf8.decode(buf.subarray(start, end));
          if (text.startsWith(HEADER_PREFIX)) {
            header = new HeaderParser(text);
            const note =
              `# ${path} line ${line}: a new header block (log rotated, reopened or agent restarted)`;
            if (format === "text") out.push(terminalSafe(note) + "\n");
            else markers.push({ file: path, line, text: note.slice(2) });
            return;
          }
          if (isColumnRow(text)) {
            if (past && w.endLine === null && !firstRow) {
              done = true; // a new dump: the event was cut before it
              return false;
            }
            try {
              names = columnNames.parse(text);
              fields = new Float64Array(2 * names.length);
            } catch {
              // Keep the names the review read.
            }
            hasPrev = false;
            decoder.reset();
            return;
          }
          if (text.startsWith("<<")) {
            if (format === "text") out.push(terminalSafe(text) + "\n");
            else markers.push({ file: path, line, text });
          }
          if (f === w.endFile && line === w.endLine) {
            done = true;
            return false;
          }
        },
        {
          firstLine: seeked ? w.startLine : 1,
          // Damage the review warned about (NUL padding): not rows.
          onLongLine: () => {},
        },
      );
      await drain(out);
    } catch (error) {
      if (!(error instanceof DamagedFileError)) {
        throw new Error(`Cannot review ${path}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      // A compressed file cut short (the review skipped its rest): the
      // window shows what could be read.
      await drain(out);
      const note = `${path}: ${error.message}; the window stops here`;
      if (format === "text") await write(`# ${terminalSafe(note)}\n`);
      else markers.push({ file: path, line: 0, text: note });
      done = true;
    } finally {
      source.close();
    }
  }
  if (format === "json") {
    await write(
      `\n],\n"markers":${jsonTerminalSafe(JSON.stringify(markers))}}\n`,
    );
  }
}

/** The text block above the rows. */
function describe(e: ReviewEvent, total: number): string {
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
  // Names, marker times and paths come from the log and the disk.
  return lines.map(terminalSafe).join("\n") + "\n";
}
