/**
 * Reads events.log files back into events: header blocks, history dumps,
 * rows and markers, streamed line by line. Memory stays bounded whatever
 * the size of the log: per event a summary and, when charts are wanted, a
 * fixed number of downsampled points.
 *
 * The log's grammar (ours and the reference application's): a header
 * block per start; a column-name row opening each history dump; rows;
 * `<<Event start>>` / `<<Event end>>` markers after the row of the sample
 * on which the rule changed state; `<<Gap>>` markers. A rotation or a
 * reopen (SIGHUP) puts a header block in the middle of an event, followed
 * by more rows; a restart puts a header block and then a new dump.
 *
 * @module
 */

import { parse as parseCsv } from "csv-parse/sync";
import {
  compareDecimal,
  decimalToNumber,
  formatDecimal,
  signedDelta,
} from "./decimal.ts";
import {
  type EventState,
  firesLow,
  type Instant,
  type ReviewEvent,
} from "./event.ts";
import type { LogFamily } from "./files.ts";
import { ioReason } from "./files.ts";
import {
  HEADER_PREFIX,
  HeaderParser,
  type HeaderRule,
  type LogHeader,
  unquoteName,
} from "./header.ts";
import { openLogSource, readLines } from "./lines.ts";
import {
  detectTimeFormat,
  TimeDecoder,
  type TimeFormat,
} from "./reference_time.ts";
import { clip, describeRowProblem, parseRow } from "./row.ts";
import { type ChartSeries, GrowingSeries, RecentSeries } from "./window.ts";

/** How to read. */
export interface ReadOptions {
  /** The timestamp encoding; undefined: detected per header block. */
  readonly timeFormat?: TimeFormat;
  /**
   * Keep chart data for events of this monitor and rule (at most
   * {@linkcode maxCharts} events in all). Undefined: no charts.
   */
  readonly chartFor?: (monitor: string, rule: string) => boolean;
  /** Most events with charts (default 500). */
  readonly maxCharts?: number;
  /** Points per chart before the start and after it (default 150, 300). */
  readonly chartPoints?: readonly [number, number];
  /** Told the bytes read from disk as reading goes. */
  readonly onProgress?: (bytes: number) => void;
  /** Told about oddities that do not stop the review (one line each). */
  readonly onNote?: (note: string) => void;
}

/** What the review read from one file. */
export interface FileSummary {
  readonly path: string;
  readonly monitor: string;
  readonly lines: number;
  readonly rows: number;
  /** Header blocks (starts of the agent). */
  readonly blocks: number;
  readonly gzip: boolean;
  readonly timeFormats: readonly TimeFormat[];
}

/** Everything read. */
export interface ReviewLog {
  /** In timeline order, numbered from 1. */
  readonly events: ReviewEvent[];
  readonly files: readonly FileSummary[];
  /** Charts left out because {@linkcode ReadOptions.maxCharts} was reached. */
  readonly chartsLeftOut: number;
}

/** Rows of history kept when the header gives no depth (2 x 1024). */
const DEFAULT_HISTORY_ROWS = 2048;
/** Most rows of history whose positions are kept for `--event` windows. */
const MAX_POSITION_ROWS = 65536;

/**
 * Reads every family (each monitor's files, oldest first) and returns the
 * events in timeline order. Throws an Error `Cannot review FILE: line N:
 * ...` for a file that cannot be read or is not an events log.
 */
export async function readReview(
  families: readonly LogFamily[],
  options: ReadOptions = {},
): Promise<ReviewLog> {
  const events: ReviewEvent[] = [];
  const files: FileSummary[] = [];
  const budget = { charts: options.maxCharts ?? 500, leftOut: 0 };
  for (const family of families) {
    const reader = new FamilyReader(family, options, budget, events);
    for (let i = 0; i < family.files.length; i++) {
      files.push(await reader.readFile(i));
    }
    reader.finish();
  }
  events.sort((a, b) =>
    compareStart(a.start, b.start) || a.monitor.localeCompare(b.monitor) ||
    a.window.files.indexOf(a.file) - b.window.files.indexOf(b.file) ||
    a.line - b.line
  );
  events.forEach((e, i) => e.id = i + 1);
  return { events, files, chartsLeftOut: budget.leftOut };
}

function compareStart(a: Instant | null, b: Instant | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a.sec - b.sec || a.ns - b.ns;
}

/** A header block and what follows from it. */
interface Block {
  readonly header: LogHeader | null;
  readonly monitor: string;
  /** Rule name -> its header entry and column (-1: unknown). */
  readonly rules: ReadonlyMap<string, { rule: HeaderRule; col: number }>;
}

/** The columns rows have, from a column-name row or a header. */
interface Columns {
  readonly names: readonly string[];
  /** Columns some rule watches. */
  readonly tracked: readonly number[];
  /** Rate of each tracked column at the last row (per second; NaN: unknown). */
  readonly rates: Float64Array;
  /** Recent history of each tracked column, for charts. */
  readonly recent: (RecentSeries | null)[];
}

/** An event being read. */
interface Open {
  readonly block: Block;
  readonly rule: string;
  readonly headerRule?: HeaderRule;
  readonly col: number;
  readonly low: boolean;
  readonly file: string;
  readonly line: number;
  readonly start: Instant | null;
  readonly startKnown: boolean;
  readonly startMarker: string | null;
  /** Row-clock time of the start sample (NaN without rows). */
  readonly startRowSec: number;
  readonly startRowNs: number;
  /** Row clock -> wall clock, ns (0 for wall-clock rows). */
  readonly wallOffsetNs: number;
  readonly timeFormat: TimeFormat;
  readonly historyRows: number;
  readonly windowFile: number;
  readonly windowLine: number;
  readonly windowOffset: number;
  rows: number;
  dropped: number;
  lost: number;
  lastSec: number;
  lastNs: number;
  hasPeak: boolean;
  peakHi: number;
  peakLo: number;
  peakSec: number;
  peakNs: number;
  peakRate: number;
  peakRateSec: number;
  peakRateNs: number;
  readonly before: ChartSeries | null;
  readonly during: GrowingSeries | null;
}

const MARKER = /^<<Event (start|end)>> Time: ([^,]*), Rule: (.*)$/;
const GAP = /^<<Gap>> Time: ([^,]*), (Dropped samples|Lost rows): (\d+)\s*$/;
const utf8 = new TextDecoder();

/** Reads one monitor's files in order, carrying open events across them. */
class FamilyReader {
  readonly #family: LogFamily;
  readonly #options: ReadOptions;
  readonly #budget: { charts: number; leftOut: number };
  readonly #events: ReviewEvent[];
  readonly #open: Open[] = [];
  #block: Block | null = null;
  #headerParser: HeaderParser | null = null;
  #columns: Columns | null = null;
  #decoder: TimeDecoder | null = null;
  // Active events seen a header block: a rotation or reopen (more rows
  // follow) or a restart (a new dump follows). Decided by the next line.
  #limbo = false;
  #row = new Float64Array(2);
  #prevRow = new Float64Array(2);
  #hasPrev = false;
  #sec = 0;
  #ns = 0;
  #seenContent = false; // this file had a header or column row
  // Positions (file, line, offset) of recent rows of the segment, for
  // the start of an event's window; a ring.
  #positions = new Float64Array(3 * DEFAULT_HISTORY_ROWS);
  #positionRows = DEFAULT_HISTORY_ROWS;
  #segmentRows = 0;
  #segmentOpen = false; // a dump (or rows without one) is being read
  #segmentFirstSec = 0;
  #segmentFirstNs = 0;
  #segmentFile = 0;
  #segmentLine = 0;
  #segmentOffset = 0;
  #fileIndex = 0;
  #path = "";
  #rows = 0;
  #blocks = 0;
  #formats = new Set<TimeFormat>();

  constructor(
    family: LogFamily,
    options: ReadOptions,
    budget: { charts: number; leftOut: number },
    events: ReviewEvent[],
  ) {
    this.#family = family;
    this.#options = options;
    this.#budget = budget;
    this.#events = events;
  }

  /** Reads file `index` of the family. */
  async readFile(index: number): Promise<FileSummary> {
    const path = this.#family.files[index];
    this.#fileIndex = index;
    this.#path = path;
    this.#rows = 0;
    this.#blocks = 0;
    this.#formats = new Set();
    this.#seenContent = false;
    let source;
    try {
      source = await openLogSource(path, 0, this.#options.onProgress);
    } catch (error) {
      throw new Error(`Cannot review ${path}: ${ioReason(error)}`);
    }
    let lines = 0;
    try {
      lines = await readLines(
        source.chunks,
        (buf, start, end, line, offset, terminated) =>
          this.#line(buf, start, end, line, offset, terminated),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        reason.startsWith("Cannot review ")
          ? reason
          : `Cannot review ${path}: ${
            error instanceof RangeError
              ? `${reason}: not an events log`
              : ioReason(error)
          }`,
      );
    } finally {
      source.close();
    }
    return {
      path,
      monitor: this.#block?.monitor ?? this.#family.monitor ??
        this.#family.stem,
      lines,
      rows: this.#rows,
      blocks: this.#blocks,
      gzip: source.gzip,
      timeFormats: [...this.#formats],
    };
  }

  /** The end of the monitor's last file: what is still active is open. */
  finish(): void {
    this.#endHeader();
    for (const open of this.#open.splice(0)) this.#close(open, "open", null);
  }

  #fail(line: number, what: string): never {
    throw new Error(`Cannot review ${this.#path}: line ${line}: ${what}`);
  }

  #note(line: number, what: string): void {
    this.#options.onNote?.(`${this.#path}: line ${line}: ${what}`);
  }

  #line(
    buf: Uint8Array,
    start: number,
    end: number,
    line: number,
    offset: number,
    terminated: boolean,
  ): void {
    if (start === end) return;
    const c = buf[start];
    if (!terminated) {
      // The writer ends every line: this one was cut (a crash, a copy
      // taken while the agent was writing).
      this.#note(line, "the file ends in the middle of a line; ignored");
      return;
    }
    if (c >= 48 && c <= 57 && this.#headerParser === null) {
      this.#dataRow(buf, start, end, line, offset);
      return;
    }
    const text = utf8.decode(buf.subarray(start, end));
    if (this.#headerParser !== null) {
      if (this.#headerParser.accept(text)) return;
      this.#endHeader();
      if (c >= 48 && c <= 57) {
        this.#dataRow(buf, start, end, line, offset);
        return;
      }
    }
    this.#textLine(text, line, offset);
  }

  #textLine(text: string, line: number, offset: number): void {
    if (text.startsWith(HEADER_PREFIX)) {
      this.#startHeader(text);
      return;
    }
    if (/^\s*"?timestamp"?\s*,/.test(text)) {
      this.#columnRow(text, line, offset);
      return;
    }
    if (!this.#seenContent) {
      if (text.trim() === "") return;
      this.#fail(
        line,
        `not an events log: expected "${HEADER_PREFIX} ..." or a "timestamp, ..." row, got "${
          clip(printable(text))
        }"`,
      );
    }
    if (text.startsWith("<<Event ")) {
      const m = MARKER.exec(text);
      if (!m) this.#fail(line, `malformed event marker "${clip(text)}"`);
      const name = unquoteName(m[3]);
      if (m[1] === "start") this.#eventStart(name, m[2], line);
      else this.#eventEnd(name, m[2], line);
      return;
    }
    if (text.startsWith("<<Gap>>")) {
      const m = GAP.exec(text);
      if (!m) this.#fail(line, `malformed gap marker "${clip(text)}"`);
      this.#continueOrCut(false);
      const n = Number(m[3]);
      for (const open of this.#open) {
        if (m[2] === "Lost rows") open.lost += n;
        else open.dropped += n;
      }
      return;
    }
    if (text.trim() === "") return;
    const restart = text.indexOf(HEADER_PREFIX);
    if (restart > 0) {
      // A row cut short by a crash, then the next start's header.
      this.#note(line, "a line cut short by a restart; its start ignored");
      this.#startHeader(text.slice(restart));
      return;
    }
    this.#fail(line, `not an events log line: "${clip(printable(text))}"`);
  }

  #startHeader(text: string): void {
    this.#endHeader();
    this.#seenContent = true;
    this.#blocks++;
    this.#headerParser = new HeaderParser(text);
    if (this.#open.length > 0) this.#limbo = true;
  }

  /** Ends a header block being read, if any. */
  #endHeader(): void {
    const parser = this.#headerParser;
    if (parser === null) return;
    this.#headerParser = null;
    const header = parser.header();
    const rules = new Map<string, { rule: HeaderRule; col: number }>();
    for (const rule of header.rules) {
      const k = header.columns.findIndex((c) => c.dataId === rule.dataId);
      if (!rules.has(rule.name)) {
        rules.set(rule.name, { rule, col: k < 0 ? -1 : k + 1 });
      }
    }
    this.#block = {
      header,
      monitor: this.#family.monitor ?? header.device ?? this.#family.stem,
      rules,
    };
    const depth = header.depth ?? DEFAULT_HISTORY_ROWS / 2;
    this.#positionRows = Math.max(1, Math.min(2 * depth, MAX_POSITION_ROWS));
    if (!this.#limbo) {
      // Rows may follow without a column-name row (a file that begins
      // inside an event): the header names the columns.
      this.#setColumns(["timestamp", ...header.columns.map((c) => c.name)]);
      this.#decoder = null;
      this.#hasPrev = false;
      this.#segmentRows = 0;
      this.#segmentOpen = false;
    }
  }

  // After a header block inside an event: more rows of the same run
  // (rotation, reopen) continue it; a new dump or start means a restart.
  #continueOrCut(restart: boolean): void {
    if (!this.#limbo) return;
    this.#limbo = false;
    if (!restart) return;
    for (const open of this.#open.splice(0)) {
      this.#close(open, "interrupted", null);
    }
  }

  #setColumns(names: string[]): void {
    const block = this.#block;
    const tracked = new Set<number>();
    for (const { col } of block?.rules.values() ?? []) {
      if (col > 0 && col < names.length) tracked.add(col);
    }
    const charts = this.#options.chartFor !== undefined;
    const depth = block?.header?.depth ?? DEFAULT_HISTORY_ROWS / 2;
    const [beforePoints] = this.#options.chartPoints ?? [150, 300];
    const recent: (RecentSeries | null)[] = names.map((_, c) =>
      charts && tracked.has(c)
        ? new RecentSeries(beforePoints, 2 * depth)
        : null
    );
    this.#columns = {
      names,
      tracked: [...tracked].sort((a, b) => a - b),
      rates: new Float64Array(names.length).fill(NaN),
      recent,
    };
    if (this.#row.length !== 2 * names.length) {
      this.#row = new Float64Array(2 * names.length);
      this.#prevRow = new Float64Array(2 * names.length);
    }
    if (this.#positions.length !== 3 * this.#positionRows) {
      this.#positions = new Float64Array(3 * this.#positionRows);
    }
  }

  #columnRow(text: string, line: number, offset: number): void {
    let names: string[];
    try {
      names = (parseCsv(text, { ltrim: true, rtrim: true }) as string[][])[0];
    } catch (error) {
      this.#fail(
        line,
        `malformed column-name row (${
          error instanceof Error ? error.message.split("\n")[0] : error
        })`,
      );
    }
    this.#endHeader();
    this.#seenContent = true;
    if (this.#limbo) this.#continueOrCut(true);
    else if (this.#open.length > 0) {
      this.#note(line, "a history dump while events were active; they are cut");
      for (const open of this.#open.splice(0)) {
        this.#close(open, "interrupted", null);
      }
    }
    if (this.#block === null) {
      // No header (a log cut at the front): rules and monitor unknown.
      this.#block = {
        header: null,
        monitor: this.#family.monitor ?? this.#family.stem,
        rules: new Map(),
      };
    }
    this.#setColumns(names);
    this.#hasPrev = false;
    this.#decoder?.reset();
    this.#segmentRows = 0;
    this.#segmentOpen = true;
    this.#segmentFile = this.#fileIndex;
    this.#segmentLine = line;
    this.#segmentOffset = offset;
  }

  #dataRow(
    buf: Uint8Array,
    start: number,
    end: number,
    line: number,
    offset: number,
  ): void {
    const columns = this.#columns;
    if (columns === null || !this.#seenContent && this.#open.length === 0) {
      this.#fail(
        line,
        columns === null
          ? "a data row before any column-name row: not an events log"
          : "not an events log: expected a header block or a column-name row first",
      );
    }
    this.#continueOrCut(false);
    const row = this.#prevRow;
    const n = parseRow(buf, start, end, row);
    if (n !== columns.names.length) {
      const text = utf8.decode(buf.subarray(start, end));
      const restart = text.indexOf(HEADER_PREFIX);
      if (restart > 0) {
        this.#note(line, "a row cut short by a restart; ignored");
        this.#startHeader(text.slice(restart));
        return;
      }
      this.#fail(line, describeRowProblem(text, columns.names.length));
    }
    this.#prevRow = this.#row;
    this.#row = row;
    const prev = this.#prevRow;
    let decoder = this.#decoder;
    if (decoder === null) {
      const format = this.#options.timeFormat ??
        detectTimeFormat(row[0], row[1]);
      decoder = this.#decoder = new TimeDecoder(format);
    }
    this.#formats.add(decoder.format);
    decoder.decode(row[0], row[1]);
    const sec = decoder.sec;
    const ns = decoder.ns;
    const hasPrev = this.#hasPrev;
    // Exact integer nanoseconds: a difference of two doubles of seconds
    // would put rounding noise into every rate.
    const dtNs = hasPrev ? (sec - this.#sec) * 1e9 + (ns - this.#ns) : 0;
    const tMs = sec * 1000 + ns / 1e6;
    const rates = columns.rates;
    for (const c of columns.tracked) {
      const i = 2 * c;
      const rate = dtNs > 0
        ? signedDelta(row[i], row[i + 1], prev[i], prev[i + 1]) * 1e9 / dtNs
        : NaN;
      rates[c] = rate;
      columns.recent[c]?.add(tMs, decimalToNumber(row[i], row[i + 1]), rate);
    }
    for (const open of this.#open) {
      open.rows++;
      open.lastSec = sec;
      open.lastNs = ns;
      const c = open.col;
      if (c < 0) continue;
      const hi = row[2 * c];
      const lo = row[2 * c + 1];
      const cmp = open.hasPeak
        ? compareDecimal(hi, lo, open.peakHi, open.peakLo)
        : 1;
      if (!open.hasPeak || (open.low ? cmp < 0 : cmp > 0)) {
        open.hasPeak = true;
        open.peakHi = hi;
        open.peakLo = lo;
        open.peakSec = sec;
        open.peakNs = ns;
      }
      const rate = rates[c];
      if (
        rate === rate &&
        (open.peakRate !== open.peakRate ||
          (open.low ? rate < open.peakRate : rate > open.peakRate))
      ) {
        open.peakRate = rate;
        open.peakRateSec = sec;
        open.peakRateNs = ns;
      }
      open.during?.add(tMs, decimalToNumber(hi, lo), rate);
    }
    if (!this.#segmentOpen) {
      // Rows without a dump before them (a file that begins inside an event).
      this.#segmentOpen = true;
      this.#segmentFile = this.#fileIndex;
      this.#segmentLine = line;
      this.#segmentOffset = offset;
    }
    if (this.#segmentRows === 0) {
      this.#segmentFirstSec = sec;
      this.#segmentFirstNs = ns;
    }
    const p = 3 * (this.#segmentRows % this.#positionRows);
    this.#positions[p] = this.#fileIndex;
    this.#positions[p + 1] = line;
    this.#positions[p + 2] = offset;
    this.#segmentRows++;
    this.#rows++;
    this.#hasPrev = true;
    this.#sec = sec;
    this.#ns = ns;
  }

  #eventStart(name: string, markerTime: string, line: number): void {
    this.#continueOrCut(true);
    if (this.#open.some((o) => o.rule === name)) {
      this.#note(
        line,
        `"${name}" starts again without an end; the second start is ignored`,
      );
      return;
    }
    const block = this.#block!;
    const entry = block.rules.get(name);
    const col = entry !== undefined && this.#columns !== null &&
        entry.col < this.#columns.names.length
      ? entry.col
      : -1;
    const format = this.#decoder?.format ??
      this.#options.timeFormat ?? "ns";
    const marker = markerInstant(markerTime);
    const hasRow = this.#hasPrev;
    const wall = format !== "counter";
    const start = hasRow && wall ? { sec: this.#sec, ns: this.#ns } : marker;
    const wallOffsetNs = !wall && hasRow && marker !== null
      ? (marker.sec - this.#sec) * 1e9 - this.#ns
      : 0;
    let open: Open = {
      block,
      rule: name,
      headerRule: entry?.rule,
      col,
      low: firesLow(entry?.rule.kind),
      file: this.#path,
      line,
      start,
      startKnown: true,
      startMarker: markerTime,
      startRowSec: hasRow ? this.#sec : NaN,
      startRowNs: hasRow ? this.#ns : NaN,
      wallOffsetNs,
      timeFormat: format,
      // Rows of its window before the start (the start sample included).
      historyRows: Math.min(this.#segmentRows, this.#positionRows),
      ...this.#windowStart(),
      rows: 0,
      dropped: 0,
      lost: 0,
      lastSec: this.#sec,
      lastNs: this.#ns,
      hasPeak: false,
      peakHi: 0,
      peakLo: 0,
      peakSec: 0,
      peakNs: 0,
      peakRate: NaN,
      peakRateSec: 0,
      peakRateNs: 0,
      before: null,
      during: null,
    };
    if (hasRow && col > 0) {
      // The start sample itself counts towards the peaks.
      open.hasPeak = true;
      open.peakHi = this.#row[2 * col];
      open.peakLo = this.#row[2 * col + 1];
      open.peakSec = open.peakRateSec = this.#sec;
      open.peakNs = open.peakRateNs = this.#ns;
      open.peakRate = this.#columns!.rates[col];
    }
    const wantChart = this.#options.chartFor?.(block.monitor, name) ?? false;
    if (wantChart && col > 0) {
      if (this.#budget.charts > 0) {
        this.#budget.charts--;
        const [, duringPoints] = this.#options.chartPoints ?? [150, 300];
        open = {
          ...open,
          before: this.#columns!.recent[col]?.points() ?? null,
          during: new GrowingSeries(duringPoints),
        };
      } else this.#budget.leftOut++;
    }
    this.#open.push(open);
  }

  // Where an event's window starts: 2 x depth rows back (the history the
  // reference would dump for it), or the start of the dump.
  #windowStart() {
    const back = Math.min(this.#segmentRows, this.#positionRows);
    if (back === 0 || this.#segmentRows <= this.#positionRows) {
      return {
        windowFile: this.#segmentFile,
        windowLine: this.#segmentLine,
        windowOffset: this.#segmentOffset,
      };
    }
    const p = 3 * ((this.#segmentRows - back) % this.#positionRows);
    return {
      windowFile: this.#positions[p],
      windowLine: this.#positions[p + 1],
      windowOffset: this.#positions[p + 2],
    };
  }

  #eventEnd(name: string, markerTime: string, line: number): void {
    this.#continueOrCut(false);
    const i = this.#open.findIndex((o) => o.rule === name);
    if (i < 0) {
      // Its start is in a file not read (an older rotated file).
      this.#note(line, `"${name}" ends but its start is not in the files read`);
      this.#unknownStart(name, markerTime, line);
      return;
    }
    const [open] = this.#open.splice(i, 1);
    this.#close(open, "ended", markerTime, line);
  }

  #unknownStart(name: string, markerTime: string, line: number): void {
    const block = this.#block!;
    const entry = block.rules.get(name);
    const format = this.#decoder?.format ?? this.#options.timeFormat ?? "ns";
    const wall = format !== "counter";
    const rows = this.#segmentRows > 0;
    const open: Open = {
      block,
      rule: name,
      headerRule: entry?.rule,
      col: -1,
      low: firesLow(entry?.rule.kind),
      file: this.#path,
      line: 0,
      // At or before the first row read of it.
      start: rows && wall
        ? { sec: this.#segmentFirstSec, ns: this.#segmentFirstNs }
        : null,
      startKnown: false,
      startMarker: null,
      startRowSec: rows ? this.#segmentFirstSec : NaN,
      startRowNs: rows ? this.#segmentFirstNs : NaN,
      wallOffsetNs: 0,
      timeFormat: format,
      historyRows: 0,
      windowFile: this.#segmentFile,
      windowLine: rows ? this.#segmentLine : line,
      windowOffset: this.#segmentOffset,
      rows: Math.max(0, this.#segmentRows - 1),
      dropped: 0,
      lost: 0,
      lastSec: this.#sec,
      lastNs: this.#ns,
      hasPeak: false,
      peakHi: 0,
      peakLo: 0,
      peakSec: 0,
      peakNs: 0,
      peakRate: NaN,
      peakRateSec: 0,
      peakRateNs: 0,
      before: null,
      during: null,
    };
    this.#close(open, "ended", markerTime, line);
  }

  #close(
    open: Open,
    state: EventState,
    endMarker: string | null,
    endLine: number | null = null,
  ): void {
    const hasRows = open.rows > 0 || !Number.isNaN(open.startRowSec);
    const wall = (sec: number, ns: number): Instant =>
      shift(sec, ns, open.wallOffsetNs);
    const last = hasRows ? wall(open.lastSec, open.lastNs) : null;
    const header = open.block.header;
    const durationS = Number.isNaN(open.startRowSec) || !hasRows
      ? null
      : (open.lastSec - open.startRowSec) +
        (open.lastNs - open.startRowNs) / 1e9;
    let end: Instant | null = null;
    if (state === "ended") {
      end = last ?? markerInstant(endMarker ?? "");
    }
    const columnName = open.col > 0
      ? this.#columns?.names[open.col] ??
        header?.columns[open.col - 1]?.name
      : open.headerRule === undefined
      ? undefined
      : header?.columns.find((c) => c.dataId === open.headerRule!.dataId)
        ?.name;
    this.#events.push({
      id: 0,
      monitor: open.block.monitor,
      file: open.file,
      line: open.line,
      rule: open.rule,
      kind: open.headerRule?.kind,
      typeName: open.headerRule?.typeName,
      threshold: open.headerRule?.value,
      column: columnName,
      device: header?.device,
      depth: header?.depth,
      samplePeriodNs: header?.samplePeriodNs,
      timeFormat: open.timeFormat,
      start: open.start,
      startKnown: open.startKnown,
      startMarker: open.startMarker,
      end,
      endMarker,
      last,
      state,
      durationS,
      samples: open.rows + open.dropped + open.lost,
      rows: open.rows,
      historyRows: open.historyRows,
      droppedSamples: open.dropped,
      lostRows: open.lost,
      peak: open.hasPeak ? formatDecimal(open.peakHi, open.peakLo) : null,
      peakAt: open.hasPeak ? wall(open.peakSec, open.peakNs) : null,
      peakRate: open.peakRate === open.peakRate ? open.peakRate : null,
      peakRateAt: open.peakRate === open.peakRate
        ? wall(open.peakRateSec, open.peakRateNs)
        : null,
      window: {
        files: this.#family.files,
        startFile: open.windowFile,
        startLine: open.windowLine,
        startOffset: open.windowOffset,
        endFile: endLine === null ? null : this.#fileIndex,
        endLine,
        columns: this.#columns?.names ?? [],
        column: open.col,
        startRow: Number.isNaN(open.startRowSec)
          ? null
          : { sec: open.startRowSec, ns: open.startRowNs },
      },
      chart: open.during === null ? undefined : {
        before: open.before ?? new Float64Array(0),
        during: open.during.points(),
      },
    });
  }
}

/** A marker's `YYYY-MM-DDTHH:MM:SSZ` as an instant; null if unreadable. */
export function markerInstant(text: string): Instant | null {
  const ms = Date.parse(text.trim());
  if (!Number.isFinite(ms)) return null;
  const sec = Math.floor(ms / 1000);
  return { sec, ns: (ms - sec * 1000) * 1e6 };
}

function shift(sec: number, ns: number, offsetNs: number): Instant {
  if (offsetNs === 0) return { sec, ns };
  const total = ns + offsetNs;
  const carry = Math.floor(total / 1e9);
  return { sec: sec + carry, ns: Math.round(total - carry * 1e9) };
}

/** Text with control characters shown as `?`, for messages. */
function printable(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f\ufffd]/g, "?");
}
