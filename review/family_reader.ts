/**
 * Reads one monitor's files, oldest first, line by line, into events:
 * header blocks, history dumps, rows and markers, carrying events that
 * are still active from one file into the next.
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

import type { BlindPeriods } from "./blind_periods.ts";
import { type Block, type Blocks, EventContexts } from "./blocks.ts";
import type { ChartBudget } from "./chart_budget.ts";
import { type ColumnNames, isColumnRow } from "./columns.ts";
import { decimalToNumber, signedDelta } from "./decimal.ts";
import { NotAnEventsLogError } from "./errors.ts";
import { type EventState, firesLow, type Instant } from "./event.ts";
import type { EventStore } from "./event_store.ts";
import type { LogFamily } from "./files.ts";
import { HEADER_PREFIX } from "../events/header.ts";
import { HeaderParser } from "./header.ts";
import { MAX_LINE_BYTES, openLogSource, readLines } from "./lines.ts";
import {
  type GapMarker,
  isEventMarker,
  isGapMarker,
  isPeakMarker,
  markerInstant,
  parseEventMarker,
  parseGapMarker,
  parsePeakMarker,
} from "./markers.ts";
import { clip } from "./message_text.ts";
import {
  closeEvent,
  type OpenEvent,
  openEvent,
  trackSample,
  type WindowEnd,
} from "./open_event.ts";
import { RowPositions } from "./positions.ts";
import {
  clockDeltaNs,
  detectTimeFormat,
  isWallClock,
  TimeDecoder,
  type TimeFormat,
} from "./reference_time.ts";
import { describeRowProblem, parseRow } from "./row.ts";
import { RecentSeries } from "./window.ts";

/** What the readers of a review share. */
export interface ReaderShared {
  readonly store: EventStore;
  /** Chart budget; undefined: no charts. */
  readonly charts?: ChartBudget;
  /** Points per chart before the start. */
  readonly beforePoints: number;
  readonly columnNames: ColumnNames;
  /** Header blocks by what they say, so that restarts share one. */
  readonly blocks: Blocks;
  /** Where the sources' losses are listed; undefined: not listed. */
  readonly blind?: BlindPeriods;
  readonly timeFormat?: TimeFormat;
  readonly onProgress?: (bytes: number) => void;
  readonly onNote?: (note: string) => void;
}

/** What was read from one file. */
export interface FileCounts {
  readonly lines: number;
  readonly rows: number;
  /** Header blocks (starts of the agent, rotations, reopens). */
  readonly blocks: number;
  readonly gzip: boolean;
  readonly timeFormats: readonly TimeFormat[];
  /** The monitor as the file names it (or its header). */
  readonly monitor: string;
}

/** The columns rows have, from a column-name row or a header. */
interface Columns {
  readonly names: readonly string[];
  readonly block: Block | null;
  /** Columns some rule watches. */
  readonly tracked: readonly number[];
  /** Rate of each tracked column at the last row (per second; NaN: unknown). */
  readonly rates: Float64Array;
  /** Recent history of each tracked column, for charts. */
  readonly recent: (RecentSeries | null)[];
}

/** The depth the review takes when a header gives none. */
export const DEFAULT_DEPTH = 1024;
/** Most rows of history whose positions are kept for `--event` windows. */
export const MAX_POSITION_ROWS = 65536;

/**
 * The rows of history kept before each event of a log of `depth` (two
 * history dumps), at most {@linkcode MAX_POSITION_ROWS}: what an event's
 * window holds before it, for the review and the event lookup alike.
 */
export function historyRows(depth: number | undefined): number {
  return Math.min(2 * (depth ?? DEFAULT_DEPTH), MAX_POSITION_ROWS);
}

const utf8 = new TextDecoder();
const NO_COLUMNS: readonly string[] = Object.freeze([]);

/** Reads one monitor's files in order, carrying open events across them. */
export class FamilyReader {
  readonly #family: LogFamily;
  readonly #shared: ReaderShared;
  readonly #open: OpenEvent[] = [];
  readonly #contexts: EventContexts;
  #block: Block | null = null;
  #headerParser: HeaderParser | null = null;
  #columns: Columns | null = null;
  #decoder: TimeDecoder | null = null;
  // Active events saw a header block: a rotation or reopen (more rows
  // follow) or a restart (a new dump follows). Decided by the next line.
  #limbo = false;
  // Where that header block began: where a restart cuts them.
  #limboAt: WindowEnd = { file: 0, line: 0 };
  #row = new Float64Array(2);
  #prevRow = new Float64Array(2);
  #hasPrev = false;
  #sec = 0;
  #ns = 0;
  // The last row's time on the charts' clock: ms since the first row of
  // the dump, from exact nanosecond differences (absolute ms as a double
  // would be a quarter of a microsecond off, enough to misplace a mark).
  #chartMs = 0;
  #segmentFirstSec = 0;
  #segmentFirstNs = 0;
  readonly #positions = new RowPositions(historyRows(undefined));
  #seenContent = false; // this file had a header or column row
  #fileIndex = 0;
  #path = "";
  #lines = 0;
  #rows = 0;
  #blocks = 0;
  #formats = new Set<TimeFormat>();
  // Whether this file's rows have put the decoder's format in #formats:
  // recorded when a decoder is made, or at the first row of a file that
  // goes on with the last file's decoder (a rotation), not at every row.
  #formatNoted = false;
  // A loss marked before a row (no span on its line), waiting for that
  // row, whose time is where the loss ended: its count (0: none), line,
  // Time text, and the row before it.
  #gapCount = 0;
  #gapLine = 0;
  #gapTime = "";
  #gapFrom: Instant | null = null;
  // Losses in the history dump being read while no event was active:
  // every event that starts from this dump has them in its window.
  #dumpBlind = 0;
  #dumpBlindSamples = 0;

  /** A reader of `family`'s files, its events going to `shared.store`. */
  constructor(family: LogFamily, shared: ReaderShared) {
    this.#family = family;
    this.#shared = shared;
    this.#contexts = new EventContexts(shared.store, family.files);
  }

  /** Lines read of the file being read (for a message when it fails). */
  get linesRead(): number {
    return this.#lines;
  }

  /**
   * Reads file `index` of the family. Throws what opening or reading it
   * throws (an I/O error, a DamagedFileError) and a NotAnEventsLogError
   * if it does not begin like an events log.
   */
  async readFile(index: number): Promise<FileCounts> {
    this.beginFile(index);
    const source = await openLogSource(
      this.#path,
      0,
      this.#shared.onProgress,
    );
    try {
      await this.readPart(source.chunks);
    } finally {
      source.close();
    }
    return this.counts(source.gzip);
  }

  /**
   * Starts reading file `index` of the family, whose lines then come
   * through {@linkcode readPart}: the whole file, or (for one event,
   * event_lookup.ts) parts of it, its header block and the event's window.
   */
  beginFile(index: number): void {
    this.#fileIndex = index;
    this.#path = this.#family.files[index];
    this.#lines = 0;
    this.#rows = 0;
    this.#blocks = 0;
    this.#formats = new Set();
    this.#formatNoted = false;
    this.#seenContent = false;
  }

  /**
   * Reads `chunks`, more of the file begun with {@linkcode beginFile}, in
   * order: from its start, or from byte `at.offset` whose line is numbered
   * `at.line`. Stops early, between lines, once `stop` says so.
   */
  async readPart(
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    at: { readonly line: number; readonly offset: number } = {
      line: 1,
      offset: 0,
    },
    stop?: () => boolean,
  ): Promise<void> {
    await readLines(
      chunks,
      (buf, start, end, line, offset, terminated) => {
        this.#lines = line;
        this.#line(buf, start, end, line, offset, terminated);
        if (stop?.()) return false;
      },
      {
        firstLine: at.line,
        firstOffset: at.offset,
        onLongLine: (line) => {
          this.#lines = line;
          this.#bad(line, `line longer than ${MAX_LINE_BYTES} bytes`);
        },
      },
    );
  }

  /** What was read of the file begun last; `gzip`: whether it was compressed. */
  counts(gzip: boolean): FileCounts {
    return {
      lines: this.#lines,
      rows: this.#rows,
      blocks: this.#blocks,
      gzip,
      timeFormats: [...this.#formats],
      monitor: this.#block?.monitor ?? this.#family.monitor ??
        this.#family.stem,
    };
  }

  /**
   * File `index` (being read) could not be read to its end and is
   * skipped from here: what happened after is not known, so events still
   * active stay open (their end is not in the files read), their windows
   * ending with what was read, and the next file starts afresh.
   */
  skipRest(index: number): void {
    this.#settleGap(null);
    this.#headerParser = null;
    this.#limbo = false;
    // Line 0 of a file: its start. The window ends before the file, or,
    // if some of it was read, before the next one.
    const at: WindowEnd = {
      file: this.#lines > 0 ? index + 1 : index,
      line: 0,
    };
    for (const open of this.#open.splice(0)) {
      this.#close(open, "open", null, at);
    }
    this.#hasPrev = false;
    this.#decoder = null;
    this.#positions.reset();
  }

  /** The end of the monitor's last file: what is still active is open. */
  finish(): void {
    this.#settleGap(null);
    this.#endHeader();
    for (const open of this.#open.splice(0)) this.#close(open, "open", null);
  }

  #note(line: number, what: string): void {
    this.#shared.onNote?.(`${this.#path}: line ${line}: ${what}`);
  }

  // A line that does not belong: before anything of an events log, the
  // file is not one; after, it is damage (NUL padding after a crash, a
  // stray write) and is skipped.
  #bad(line: number, what: string): void {
    if (!this.#seenContent) {
      throw new NotAnEventsLogError(
        `line ${line}: ${what}: not an events log`,
      );
    }
    this.#note(line, `${what}; skipped`);
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
    // A loss's mark is followed by its row; anything else, and it has none.
    if (this.#gapCount > 0) this.#settleGap(null);
    if (text.startsWith(HEADER_PREFIX)) {
      this.#startHeader(text, line);
      return;
    }
    if (isColumnRow(text)) {
      this.#columnRow(text, line, offset);
      return;
    }
    if (!this.#seenContent) {
      if (text.trim() === "") return;
      throw new NotAnEventsLogError(
        `line ${line}: not an events log: expected "${HEADER_PREFIX} ..." or a "timestamp, ..." row, got "${
          clip(text)
        }"`,
      );
    }
    if (isEventMarker(text)) {
      const marker = parseEventMarker(text);
      if (marker === undefined) {
        this.#bad(line, `malformed event marker "${clip(text)}"`);
      } else if (marker.kind === "start") {
        this.#eventStart(marker.rule, marker.time, line);
      } else this.#eventEnd(marker.rule, marker.time, line);
      return;
    }
    if (isPeakMarker(text)) {
      const peak = parsePeakMarker(text);
      if (peak === undefined) {
        this.#bad(line, `malformed peak marker "${clip(text)}"`);
        return;
      }
      // It comes right before its event's end marker.
      const open = this.#open.find((o) => o.rule === peak.rule);
      if (open === undefined) {
        this.#note(
          line,
          `"${clip(peak.rule)}" has a peak but no event of it is open`,
        );
      } else open.rulePeak = peak.peak;
      return;
    }
    if (isGapMarker(text)) {
      const gap = parseGapMarker(text);
      if (gap === undefined) {
        this.#bad(line, `malformed gap marker "${clip(text)}"`);
        return;
      }
      this.#continueOrCut(false);
      for (const open of this.#open) {
        if (gap.kind === "lost") open.lost += gap.count;
        else open.dropped += gap.count;
      }
      if (gap.kind === "dropped") this.#blindGap(gap, line);
      return;
    }
    if (text.trim() === "") return;
    const restart = text.indexOf(HEADER_PREFIX);
    if (restart > 0) {
      // A row cut short by a crash, then the next start's header.
      this.#note(line, "a line cut short by a restart; its start ignored");
      this.#startHeader(text.slice(restart), line);
      return;
    }
    this.#bad(line, `not an events log line: "${clip(text)}"`);
  }

  /**
   * A loss of samples (see blind_periods.ts): listed now if its line has
   * its span, else once its row says where it ended.
   */
  #blindGap(gap: GapMarker, line: number): void {
    const blind = this.#shared.blind;
    if (blind === undefined) return;
    const span = gap.span;
    if (span === undefined) {
      this.#gapCount = gap.count;
      this.#gapLine = line;
      this.#gapTime = gap.time;
      this.#gapFrom = this.#hasPrev && isWallClock(this.#format())
        ? { sec: this.#sec, ns: this.#ns }
        : null;
      return;
    }
    blind.add({
      monitor: this.#monitor(),
      ...span,
      dropped: gap.count,
      file: this.#path,
      line,
    });
    this.#overlap(gap.count);
  }

  /**
   * The row after a loss's mark was read (`to`: its time, null if it has
   * none or never came): the loss is listed unless it is one listed
   * before, marked again in a history dump.
   */
  #settleGap(to: Instant | null): void {
    const count = this.#gapCount;
    const blind = this.#shared.blind;
    if (count === 0 || blind === undefined) return;
    this.#gapCount = 0;
    const monitor = this.#monitor();
    if (to === null || blind.find(monitor, to, count) < 0) {
      blind.add({
        monitor,
        from: this.#gapFrom,
        to: to ?? markerInstant(this.#gapTime),
        stopped: false,
        dropped: count,
        file: this.#path,
        line: this.#gapLine,
      });
    }
    this.#overlap(count);
  }

  // A loss of `count` samples lies in the window of every active event,
  // or, with none, of every event that starts from the dump being read.
  #overlap(count: number): void {
    if (this.#open.length === 0) {
      this.#dumpBlind++;
      this.#dumpBlindSamples += count;
    }
    for (const open of this.#open) {
      open.blindPeriods++;
      open.blindSamples += count;
    }
  }

  #monitor(): string {
    return this.#block?.monitor ?? this.#family.monitor ?? this.#family.stem;
  }

  #startHeader(text: string, line: number): void {
    this.#endHeader();
    this.#seenContent = true;
    this.#blocks++;
    this.#headerParser = new HeaderParser(text);
    if (this.#open.length > 0 && !this.#limbo) {
      this.#limbo = true;
      this.#limboAt = { file: this.#fileIndex, line };
    }
  }

  /** Ends a header block being read, if any. */
  #endHeader(): void {
    const parser = this.#headerParser;
    if (parser === null) return;
    this.#headerParser = null;
    const header = parser.header();
    // As configured, where the log says; else as the file or device names it.
    const monitor = header.monitor ?? this.#family.monitor ?? header.device ??
      this.#family.stem;
    this.#block = this.#shared.blocks.get(monitor, header);
    if (!this.#limbo) {
      this.#positions.capacity = historyRows(header.depth);
      // Rows may follow without a column-name row (a file that begins
      // inside an event): the header names the columns.
      this.#setColumns(this.#shared.columnNames.intern([
        "timestamp",
        ...header.columns.map((c) => c.name),
      ]));
      this.#decoder = null;
      this.#hasPrev = false;
      this.#positions.reset();
    }
  }

  // After a header block inside an event: more rows of the same run
  // (rotation, reopen) continue it; a new dump or start means a restart,
  // which cut them where its header block began.
  #continueOrCut(restart: boolean): void {
    if (!this.#limbo) return;
    this.#limbo = false;
    if (restart) this.#cutAll(this.#limboAt);
  }

  #cutAll(at: WindowEnd): void {
    for (const open of this.#open.splice(0)) {
      this.#close(open, "interrupted", null, at);
    }
  }

  #setColumns(names: readonly string[]): void {
    const block = this.#block;
    const old = this.#columns;
    if (old !== null && old.names === names && old.block === block) {
      // The same columns again (a flapping rule dumps per event): reuse.
      old.rates.fill(NaN);
      for (const c of old.tracked) old.recent[c]?.clear();
      return;
    }
    const tracked = new Set<number>();
    for (const { col } of block?.rules.values() ?? []) {
      if (col > 0 && col < names.length) tracked.add(col);
    }
    const charts = this.#shared.charts !== undefined;
    const span = this.#positions.capacity;
    this.#columns = {
      names,
      block,
      tracked: [...tracked].sort((a, b) => a - b),
      rates: new Float64Array(names.length).fill(NaN),
      recent: names.map((_, c) =>
        charts && tracked.has(c)
          ? new RecentSeries(this.#shared.beforePoints, span)
          : null
      ),
    };
    if (this.#row.length !== 2 * names.length) {
      this.#row = new Float64Array(2 * names.length);
      this.#prevRow = new Float64Array(2 * names.length);
    }
  }

  #columnRow(text: string, line: number, offset: number): void {
    let names: readonly string[];
    try {
      names = this.#shared.columnNames.parse(text);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      this.#bad(line, error.message);
      return;
    }
    this.#endHeader();
    this.#seenContent = true;
    if (this.#limbo) this.#continueOrCut(true);
    else if (this.#open.length > 0) {
      this.#note(line, "a history dump while events were active; they are cut");
      this.#cutAll({ file: this.#fileIndex, line });
    }
    if (this.#block === null) {
      // No header (a log cut at the front): rules and monitor unknown.
      this.#block = this.#shared.blocks.get(
        this.#family.monitor ?? this.#family.stem,
        null,
      );
    }
    this.#setColumns(names);
    this.#hasPrev = false;
    this.#dumpBlind = 0;
    this.#dumpBlindSamples = 0;
    this.#decoder?.reset();
    this.#positions.begin(this.#fileIndex, line, offset);
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
      throw new NotAnEventsLogError(
        columns === null
          ? `line ${line}: a data row before any column-name row: not an events log`
          : `line ${line}: not an events log: expected a header block or a column-name row first`,
      );
    }
    const row = this.#prevRow;
    const n = parseRow(buf, start, end, row);
    if (n !== columns.names.length) {
      const text = utf8.decode(buf.subarray(start, end));
      const restart = text.indexOf(HEADER_PREFIX);
      if (restart > 0) {
        this.#note(line, "a row cut short by a restart; ignored");
        this.#startHeader(text.slice(restart), line);
        return;
      }
      this.#bad(line, describeRowProblem(text, columns.names.length));
      return;
    }
    this.#continueOrCut(false);
    this.#prevRow = this.#row;
    this.#row = row;
    const prev = this.#prevRow;
    let decoder = this.#decoder;
    if (decoder === null) {
      const format = this.#shared.timeFormat ??
        detectTimeFormat(row[0], row[1]);
      decoder = this.#decoder = new TimeDecoder(format);
      this.#formats.add(format);
      this.#formatNoted = true;
    } else if (!this.#formatNoted) {
      this.#formats.add(decoder.format);
      this.#formatNoted = true;
    }
    decoder.decode(row[0], row[1]);
    const sec = decoder.sec;
    const ns = decoder.ns;
    if (this.#gapCount > 0) {
      this.#settleGap(isWallClock(decoder.format) ? { sec, ns } : null);
    }
    const positions = this.#positions;
    if (!positions.open) {
      // Rows without a dump before them (a file that begins inside an event).
      positions.begin(this.#fileIndex, line, offset);
    }
    if (positions.rows === 0) {
      this.#segmentFirstSec = sec;
      this.#segmentFirstNs = ns;
    }
    // Exact integer nanoseconds: a difference of two doubles of seconds
    // would put rounding noise into every rate.
    const dtNs = this.#hasPrev
      ? clockDeltaNs(decoder.format, sec, ns, this.#sec, this.#ns)
      : 0;
    const tMs = this.#chartMs = clockDeltaNs(
      decoder.format,
      sec,
      ns,
      this.#segmentFirstSec,
      this.#segmentFirstNs,
    ) / 1e6;
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
      const c = open.col;
      const hi = c < 0 ? 0 : row[2 * c];
      const lo = c < 0 ? 0 : row[2 * c + 1];
      const rate = c < 0 ? NaN : rates[c];
      trackSample(open, sec, ns, hi, lo, rate);
      const chart = open.chart?.during;
      if (chart) chart.add(tMs, decimalToNumber(hi, lo), rate);
    }
    positions.push(this.#fileIndex, line, offset);
    this.#rows++;
    this.#hasPrev = true;
    this.#sec = sec;
    this.#ns = ns;
  }

  #format(): TimeFormat {
    return this.#decoder?.format ?? this.#shared.timeFormat ?? "ns";
  }

  #eventStart(name: string, markerTime: string, line: number): void {
    this.#continueOrCut(true);
    if (this.#open.some((o) => o.rule === name)) {
      this.#note(
        line,
        `"${
          clip(name)
        }" starts again without an end; the second start is ignored`,
      );
      return;
    }
    const format = this.#format();
    const { id, col } = this.#contexts.get(
      this.#block!,
      this.#columns?.names ?? NO_COLUMNS,
      name,
      format,
    );
    const entry = this.#block!.rules.get(name);
    const marker = markerInstant(markerTime);
    const hasRow = this.#hasPrev;
    const wall = isWallClock(format);
    const window = this.#positions.windowStart();
    const open = openEvent({
      context: id,
      rule: name,
      col,
      low: firesLow(entry?.rule),
      timeFormat: format,
      file: this.#fileIndex,
      line,
      start: hasRow && wall ? { sec: this.#sec, ns: this.#ns } : marker,
      startKnown: true,
      startMarker: markerTime,
      rowSec: hasRow ? this.#sec : NaN,
      rowNs: hasRow ? this.#ns : NaN,
      anchorWall: !wall && hasRow ? marker : null,
      // Rows of its window before the start (the start sample included).
      historyRows: this.#positions.historyRows(),
      window,
    });
    open.blindPeriods = this.#dumpBlind;
    open.blindSamples = this.#dumpBlindSamples;
    if (hasRow && col > 0) {
      // The start sample itself counts towards the peaks.
      trackSample(
        open,
        this.#sec,
        this.#ns,
        this.#row[2 * col],
        this.#row[2 * col + 1],
        this.#columns!.rates[col],
        false,
      );
    }
    const charts = this.#shared.charts;
    if (charts !== undefined && col > 0) {
      open.chart = charts.begin(
        this.#block!.monitor,
        name,
        open.start,
        this.#columns!.recent[col],
        hasRow ? this.#chartMs : NaN,
      );
    }
    this.#open.push(open);
  }

  #eventEnd(name: string, markerTime: string, line: number): void {
    this.#continueOrCut(false);
    const i = this.#open.findIndex((o) => o.rule === name);
    if (i < 0) {
      // Its start is in a file not read (an older rotated file).
      this.#note(
        line,
        `"${clip(name)}" ends but its start is not in the files read`,
      );
      this.#unknownStart(name, markerTime, line);
      return;
    }
    const [open] = this.#open.splice(i, 1);
    this.#close(open, "ended", markerTime, {
      file: this.#fileIndex,
      line,
    });
  }

  #unknownStart(name: string, markerTime: string, line: number): void {
    const format = this.#format();
    const { id } = this.#contexts.get(
      this.#block!,
      this.#columns?.names ?? NO_COLUMNS,
      name,
      format,
    );
    const wall = isWallClock(format);
    const rows = this.#positions.rows > 0;
    const dump = this.#positions.dumpStart();
    const open = openEvent({
      context: id,
      rule: name,
      col: -1,
      low: false,
      timeFormat: format,
      file: this.#fileIndex,
      line: 0,
      // At or before the first row read of it.
      start: rows && wall
        ? { sec: this.#segmentFirstSec, ns: this.#segmentFirstNs }
        : null,
      startKnown: false,
      startMarker: null,
      rowSec: rows ? this.#segmentFirstSec : NaN,
      rowNs: rows ? this.#segmentFirstNs : NaN,
      // A counter's wall time comes from the end marker, at the last row.
      anchorWall: null,
      historyRows: 0,
      window: rows ? dump : { ...dump, line },
    });
    open.rows = Math.max(0, this.#positions.rows - 1);
    open.lastSec = this.#sec;
    open.lastNs = this.#ns;
    this.#close(open, "ended", markerTime, { file: this.#fileIndex, line });
  }

  #close(
    open: OpenEvent,
    state: EventState,
    endMarker: string | null,
    windowEnd: WindowEnd | null = null,
  ): void {
    const record = closeEvent(open, state, endMarker, windowEnd);
    const index = this.#shared.store.add(record);
    if (open.chart !== null) {
      this.#shared.charts!.finish(
        open.chart,
        index,
        record.last ?? (endMarker === null ? null : markerInstant(endMarker)) ??
          record.start,
        state,
      );
    }
  }
}
