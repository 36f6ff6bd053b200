/**
 * Reads an event's traceback window again from its log, line by line:
 * from the history before its start to its end marker (to the restart,
 * for an event cut by one), across rotations, from the window's byte
 * offset when the file is not compressed. What it finds goes to a
 * visitor: rows decoded, markers, history dumps. Streamed: a window of
 * millions of rows costs no memory, and the traceback reads it twice
 * when it must count before it writes.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { HEADER_PREFIX } from "../events/header.ts";
import { ColumnNames, isColumnRow } from "./columns.ts";
import type { ReviewEvent } from "./event.ts";
import { DamagedFileError, ioReason } from "./errors.ts";
import { HeaderParser } from "./header.ts";
import { openLogSource, readLines } from "./lines.ts";
import { TimeDecoder } from "./reference_time.ts";
import { parseRow } from "./row.ts";

/** A line of the window that is not a row. */
export interface WindowNote {
  /** The file it is in. */
  readonly file: string;
  /** Its line (1-based); 0 for a note about the file as a whole. */
  readonly line: number;
  /**
   * `marker`: a `<<...>>` line of the log, as it is; `header`: a new
   * header block starts here (a rotation or a restart), `text` says so;
   * `damaged`: the file could not be read past here, `text` says why.
   */
  readonly kind: "marker" | "header" | "damaged";
  /** The line, or the note, as text (not yet made terminal-safe). */
  readonly text: string;
}

/** What {@linkcode readWindow} hands over, in the window's order. */
export interface WindowVisitor {
  /**
   * The column names of the rows that follow: the window's own first,
   * then each history dump's (a dump after a restart starts afresh).
   */
  columns(names: readonly string[]): void;
  /**
   * A row: `fields` in the split form of decimal.ts (`hi`, `lo` per
   * field, the timestamp first; valid only during the call), its time
   * decoded to `sec` + `ns`. Return `false` to stop reading: the rest of
   * the window is not read.
   */
  row(fields: Float64Array, sec: number, ns: number): unknown;
  /** A marker line or a note, where it is among the rows. */
  note(note: WindowNote): void;
  /** Called between chunks of input: what was made may be written out. */
  flush(): Promise<void>;
}

const utf8 = new TextDecoder();

/**
 * Reads event `e`'s window and hands each part to `visitor`. Throws an
 * Error `Cannot review FILE: ...` if a file cannot be read again; a
 * compressed file cut short ends the window with a `damaged` note.
 */
export async function readWindow(
  e: ReviewEvent,
  visitor: WindowVisitor,
): Promise<void> {
  const w = e.window;
  let names = w.columns;
  visitor.columns(names);
  let fields = new Float64Array(2 * Math.max(1, names.length));
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
    try {
      // Lines are handed over synchronously; what the visitor makes of
      // them is written out between chunks.
      await readLines(
        {
          async *[Symbol.asyncIterator]() {
            for await (const chunk of source.chunks) {
              yield chunk;
              await visitor.flush();
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
            firstRow = false;
            if (visitor.row(fields, decoder.sec, decoder.ns) === false) {
              done = true;
              return false;
            }
            return;
          }
          const text = utf8.decode(buf.subarray(start, end));
          if (text.startsWith(HEADER_PREFIX)) {
            header = new HeaderParser(text);
            visitor.note({
              file: path,
              line,
              kind: "header",
              text:
                `${path} line ${line}: a new header block (log rotated, reopened or agent restarted)`,
            });
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
            decoder.reset();
            visitor.columns(names);
            return;
          }
          if (text.startsWith("<<")) {
            visitor.note({ file: path, line, kind: "marker", text });
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
      await visitor.flush();
    } catch (error) {
      if (!(error instanceof DamagedFileError)) {
        throw new Error(`Cannot review ${path}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      // A compressed file cut short (the review skipped its rest): the
      // window shows what could be read.
      await visitor.flush();
      visitor.note({
        file: path,
        line: 0,
        kind: "damaged",
        text: `${path}: ${error.message}; the window stops here`,
      });
      await visitor.flush();
      done = true;
    } finally {
      source.close();
    }
  }
}
