/**
 * One event, found by its key (monitor, rule, start to the ns) in its
 * monitor's log and the log's rotated files, at a cost in proportion to
 * the event, not to the files: what the agent's event page and its rows
 * need, where a log is hundreds of megabytes and a person waits.
 *
 * How: the file is picked by the time of its first row (files oldest
 * first by their rotated names). In it, a binary search seeks to byte
 * offsets and reads a few kilobytes at each to find a row's time, until
 * it has the stretch where the event's start row lies; a forward scan
 * from there finds the `<<Event start>>` marker of the rule that follows
 * the row of exactly that time. Then the review's own reader
 * (family_reader.ts) reads the header block that governs the event and
 * the event's window: the history dump before it, its rows, its peak and
 * end marker (on into the next file if the log rotated meanwhile), so the
 * event, its peaks and its chart are what `review --event TIME --rule
 * NAME` makes of the same files.
 *
 * Why the search works although a log's rows are not sorted: a history
 * dump repeats up to 2 x depth samples from before its event, so times go
 * back, but never by more than the history's span H. An event's start row
 * is the newest sample when it was written, so every row before its marker
 * is at most T + H and every row after it at least T - H. A probe whose
 * first row is before T - H is therefore before the marker.
 *
 * A gzip-compressed rotated file cannot be seeked: it is streamed from its
 * start until the event has been read (bounded by the file), and the
 * result says so.
 *
 * @module
 */

import { formatTimePoint, NS_PER_SECOND } from "../base/time_point.ts";
import type { EventKey } from "../events/event_link.ts";
import { HEADER_PREFIX } from "../events/header_names.ts";
import { BlockFile, type FileOpener } from "./block_file.ts";
import { Blocks } from "./blocks.ts";
import { ChartBudget } from "./chart_budget.ts";
import { ColumnNames, isColumnRow } from "./columns.ts";
import { fileProblem, ioReason } from "./errors.ts";
import type { ReviewEvent } from "./event.ts";
import { EventStore } from "./event_store.ts";
import {
  DEFAULT_DEPTH,
  FamilyReader,
  historyRows,
  MAX_POSITION_ROWS,
} from "./family_reader.ts";
import { type LogFamily, rotatedFamily } from "./files.ts";
import { HeaderParser, type LogHeader } from "./header.ts";
import { readLines } from "./lines.ts";
import { isEventMarker, parseEventMarker } from "./markers.ts";
import {
  detectTimeFormat,
  isWallClock,
  TimeDecoder,
} from "./reference_time.ts";
import { parseRow } from "./row.ts";

/** How {@linkcode findEvent} reads. */
export interface FindOptions {
  /**
   * Points of the chart before the start and after it, as the review's
   * HTML report has them by default (150, 300): a pixel column each, min
   * and max kept, so a page stays small whatever the event's length.
   */
  readonly chartPoints?: readonly [number, number];
  /**
   * False: no chart (`event.chart` unset), for a caller that draws its own
   * picture or none; the window is read the same. Default true.
   */
  readonly chart?: boolean;
  /** Opens files (tests count or fail reads with their own). */
  readonly open?: FileOpener;
}

/** The event, found. */
export interface FoundEvent {
  readonly kind: "found";
  readonly key: EventKey;
  /**
   * As the review reads it (with its chart and where its window lies, for
   * readWindow and eventRows), numbered 0: it is not in a timeline. In a
   * file that was seeked, line numbers (`line`, `window.startLine`,
   * `window.endLine`) count from the window's first line (1), not from
   * the file's: see {@linkcode lines}.
   */
  readonly event: ReviewEvent;
  /** The file holding its start marker. */
  readonly file: string;
  /** `seek`: found by seeking; `stream`: a compressed file, read from its start. */
  readonly read: "seek" | "stream";
  /** `file`: line numbers are the file's; `window`: they count from the window's first line. */
  readonly lines: "file" | "window";
  /**
   * Byte offset of the header block that governs the event (the nearest
   * before it found: met while searching, or the file's first).
   */
  readonly headerOffset: number;
  /** Bytes read from disk to find and read it, all files together. */
  readonly bytesRead: number;
  /** One line for a page or a log: what was found where. */
  readonly message: string;
}

/** Why there is no event to show. */
export interface MissingEvent {
  /**
   * `not-found`: no such event in the files there; `rotated-away`: its
   * start is before the oldest file's first row; `no-log`: the log (and
   * every rotated file) is missing or unreadable; `unknown-monitor`: the
   * key names a monitor that is not configured (see
   * {@linkcode unknownMonitor}).
   */
  readonly kind: "not-found" | "rotated-away" | "no-log" | "unknown-monitor";
  readonly key: EventKey;
  /** One line for the page and the API, naming the files. */
  readonly message: string;
  /** Bytes read from disk to find that out. */
  readonly bytesRead: number;
}

/** What {@linkcode findEvent} finds. */
export type EventLookup = FoundEvent | MissingEvent;

/** Bytes read at each probe of the binary search. */
const PROBE_BYTES = 4 * 1024;
/** A probe reads on this far for a row (past a header block). */
const PROBE_MAX_BYTES = 64 * 1024;
/** Blocks of a scan or a window read. */
const SCAN_BYTES = 32 * 1024;
/** The search stops when the stretch left is this short: the scan reads it. */
const SEARCH_SPAN = 16 * 1024;
/** Most of a file's start read for its first row and header. */
const HEAD_MAX_BYTES = 1 << 20;
/**
 * Slack on the history's span: samples come late and sources drop some,
 * so a dump of 2 x depth samples spans more than 2 x depth periods.
 */
const SPAN_SLACK_NS = NS_PER_SECOND;

const utf8 = new TextDecoder();
const HEADER_BYTES = new TextEncoder().encode(HEADER_PREFIX);

/**
 * Finds the event `key` names in `log` (its monitor's `event_log`) and its
 * rotated files, reading only around it, and reads it as the review does
 * (chart included). Never throws for what the files hold or lack: every
 * outcome is a result with a one-line message.
 *
 * @example Usage
 * ```ts ignore
 * import { parseEventId } from "../events/event_link.ts";
 *
 * const id = parseEventId("nic/ECN%20storm/2026-11-21T14:50:00.300000001Z");
 * if (id.ok) {
 *   const found = await findEvent("/var/log/dpu-traceback/nic-events.log", id.key);
 *   if (found.kind === "found") console.log(found.event.rulePeak, found.event.chart);
 *   else console.log(found.message); // "its rows were rotated away: ..."
 * }
 * ```
 */
export async function findEvent(
  log: string,
  key: EventKey,
  options: FindOptions = {},
): Promise<EventLookup> {
  const counter = { bytes: 0 };
  const onRead = (n: number) => counter.bytes += n;
  const missing = (
    kind: MissingEvent["kind"],
    message: string,
  ): MissingEvent => ({ kind, key, message, bytesRead: counter.bytes });
  let family: LogFamily;
  try {
    family = await rotatedFamily(log);
  } catch (error) {
    return missing(
      "no-log",
      `the events log ${log} cannot be read: its directory: ${ioReason(error)}`,
    );
  }
  const files: (BlockFile | null)[] = [];
  const problems: string[] = [];
  try {
    for (const path of family.files) {
      try {
        files.push(await BlockFile.open(path, onRead, options.open));
      } catch (error) {
        files.push(null);
        problems.push(`${path}: ${ioReason(error)}`);
      }
    }
    if (files.every((f) => f === null)) {
      const gone = problems.every((p) =>
        p.endsWith("no such file or directory")
      );
      return missing(
        "no-log",
        gone
          ? `the events log ${log} is missing: its rows were deleted or never written`
          : `the events log ${log} cannot be read: ${problems.join("; ")}`,
      );
    }
    const heads: (FileHead | null)[] = [];
    for (const file of files) {
      heads.push(file === null ? null : await readHead(file));
    }
    const t = splitNs(key.startNs);
    // The newest file whose first row is at or before the start.
    let pick = -1;
    for (let i = heads.length - 1; i >= 0; i--) {
      const first = heads[i]?.firstRow;
      if (first != null && compare(first, t) <= 0) {
        pick = i;
        break;
      }
    }
    const where = family.files.filter((_, i) => files[i] !== null).join(", ");
    const what = `no event of rule ${JSON.stringify(key.rule)} of monitor ${
      JSON.stringify(key.monitor)
    } started at ${formatTimePoint(key.startNs)}`;
    if (pick < 0) {
      const oldest = heads.findIndex((h) => h?.firstRow != null);
      if (oldest < 0) {
        return missing("not-found", `${what} in ${where}: they hold no rows`);
      }
      const first = heads[oldest]!.firstRow!;
      return missing(
        "rotated-away",
        `its rows were rotated away: the oldest log, ${
          family.files[oldest]
        }, begins at ${formatTimePoint(joinNs(first))}`,
      );
    }
    const lookup = new Lookup(family, files, heads, key, options, counter);
    // The start row may also be in the file before: the picked file's
    // first rows may be a dump reaching back past it.
    const order = [pick];
    const before = pick - 1;
    if (before >= 0 && heads[before] !== null) {
      const span = heads[pick]!.spanNs;
      if (compare(t, splitNs(joinNs(heads[pick]!.firstRow!) + span)) < 0) {
        order.push(before);
      }
    }
    for (const i of order) {
      const found = await lookup.searchFile(i);
      if (found !== null) return found;
    }
    const liveGone = files[files.length - 1] === null
      ? `; ${log} itself is missing`
      : "";
    return missing("not-found", `${what} in ${where}${liveGone}`);
  } catch (error) {
    const problem = fileProblem(error);
    if (problem === undefined) throw error;
    return missing(
      "no-log",
      `the events log ${log} cannot be read: ${problem}`,
    );
  } finally {
    for (const file of files) file?.close();
  }
}

/**
 * The answer when `key` names a monitor that is not configured here:
 * `configured` lists those that are.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { unknownMonitor } from "./event_lookup.ts";
 *
 * const answer = unknownMonitor({ monitor: "gpu", rule: "hot", startNs: 0n }, ["nic"]);
 * assert.equal(answer.kind, "unknown-monitor");
 * assert.equal(answer.message, 'no monitor "gpu" is configured here (monitors: "nic")');
 * ```
 */
export function unknownMonitor(
  key: EventKey,
  configured: readonly string[],
): MissingEvent {
  return {
    kind: "unknown-monitor",
    key,
    message: `no monitor ${JSON.stringify(key.monitor)} is configured here (${
      configured.length === 0
        ? "none is"
        : `monitors: ${configured.map((m) => JSON.stringify(m)).join(", ")}`
    })`,
    bytesRead: 0,
  };
}

/** A time as [seconds, nanoseconds]: exact, and cheap to compare per row. */
type Time = readonly [number, number];

function splitNs(ns: bigint): Time {
  let sec = ns / NS_PER_SECOND;
  let frac = ns % NS_PER_SECOND;
  if (frac < 0n) {
    sec -= 1n;
    frac += NS_PER_SECOND;
  }
  return [Number(sec), Number(frac)];
}

function joinNs(t: Time): bigint {
  return BigInt(t[0]) * NS_PER_SECOND + BigInt(t[1]);
}

function compare(a: Time, b: Time): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** What a file's start says. */
interface FileHead {
  /** Its first row's time (null: none found, or not wall-clock time). */
  readonly firstRow: Time | null;
  /** The history's span by its first header (2 x depth x period), with slack. */
  readonly spanNs: bigint;
  /** Its first header block (null: the file does not begin with one). */
  readonly header: LogHeader | null;
}

// A row's time from its first field, or null for a counter clock (no
// wall time to compare a key with). The reference encoding is decoded
// without its one-second correction: a probe sees single rows.
function rowTime(fields: Float64Array): Time | null {
  const format = detectTimeFormat(fields[0], fields[1]);
  if (!isWallClock(format)) return null;
  const decoder = new TimeDecoder(format);
  decoder.decode(fields[0], fields[1]);
  return [decoder.sec, decoder.ns];
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function spanOf(header: LogHeader | null): bigint {
  const depth = BigInt(header?.depth ?? DEFAULT_DEPTH);
  // Without a period, a millisecond: the slowest sampling the agent has.
  const period = BigInt(header?.samplePeriodNs ?? 1_000_000);
  return 2n * (2n * depth * period) + BigInt(SPAN_SLACK_NS);
}

// The file's first header and first row, from at most HEAD_MAX_BYTES of
// its start (decompressed, for a gzip file).
async function readHead(file: BlockFile): Promise<FileHead> {
  let parser: HeaderParser | null = null;
  let header: LogHeader | null = null;
  let firstRow: Time | null = null;
  const fields = new Float64Array(2 * 4096);
  await readLines(
    file.stream(0, PROBE_BYTES),
    (buf, start, end, _line, offset, terminated) => {
      if (offset > HEAD_MAX_BYTES || !terminated) return false;
      if (start === end) return;
      if (isDigit(buf[start])) {
        if (parseRow(buf, start, end, fields) > 0) {
          firstRow = rowTime(fields);
          return false;
        }
        return;
      }
      const text = utf8.decode(buf.subarray(start, end));
      if (parser !== null) {
        if (parser.accept(text)) return;
        header ??= parser.header();
        parser = null;
      }
      if (text.startsWith(HEADER_PREFIX) && header === null) {
        parser = new HeaderParser(text);
      }
    },
    { onLongLine: () => {} },
  );
  if (parser !== null) header ??= (parser as HeaderParser).header();
  return { firstRow, header, spanNs: spanOf(header) };
}

/** Where the forward scan found the start marker, and what it needs. */
interface Hit {
  /** Offset where the review's window starts (a column-name row, a header, or a row). */
  readonly windowStart: number;
  /** Offset of the nearest header block before the marker met by the scan; -1: none. */
  readonly header: number;
}

/** One lookup's state: the files, what was learnt of them, the key. */
class Lookup {
  readonly #family: LogFamily;
  readonly #files: readonly (BlockFile | null)[];
  readonly #heads: readonly (FileHead | null)[];
  readonly #key: EventKey;
  readonly #t: Time;
  readonly #options: FindOptions;
  readonly #counter: { bytes: number };
  // Header blocks met by probes, per file: offsets of their first line.
  readonly #headers = new Map<number, number[]>();

  constructor(
    family: LogFamily,
    files: readonly (BlockFile | null)[],
    heads: readonly (FileHead | null)[],
    key: EventKey,
    options: FindOptions,
    counter: { bytes: number },
  ) {
    this.#family = family;
    this.#files = files;
    this.#heads = heads;
    this.#key = key;
    this.#t = splitNs(key.startNs);
    this.#options = options;
    this.#counter = counter;
  }

  /** The event in file `i` (read on into later files), or null if it is not there. */
  async searchFile(i: number): Promise<FoundEvent | null> {
    const file = this.#files[i]!;
    if (file.gzip) return await this.#readEvent(i, null);
    let span = this.#heads[i]!.spanNs;
    // A later header may have a deeper history than the first: widen and
    // search again while the scan cannot see the window's start.
    for (let tries = 0; tries < 8; tries++) {
      const lo = await this.#search(i, span);
      const hit = await this.#scan(i, lo, span);
      if (hit === "absent") return null;
      if (hit !== "widen") return await this.#readEvent(i, hit);
      if (lo === 0) break;
      span *= 4n;
    }
    // The whole file was scanned and the window is still not in sight.
    return await this.#readEvent(i, null);
  }

  // The largest offset found whose first row is before T - span: before
  // the start marker (see the module's doc).
  async #search(i: number, span: bigint): Promise<number> {
    const file = this.#files[i]!;
    const before = splitNs(this.#key.startNs - span);
    let lo = 0;
    let hi = file.size;
    while (hi - lo > SEARCH_SPAN) {
      const mid = Math.floor((lo + hi) / 2);
      const probe = await this.#probe(i, mid, hi);
      if (probe !== null && compare(probe.time, before) < 0) lo = probe.offset;
      else hi = mid; // later, or cannot tell: the scan goes on from lo
    }
    return lo;
  }

  // The first row wholly after `at` (and before `limit`): its time and offset.
  async #probe(
    i: number,
    at: number,
    limit: number,
  ): Promise<{ time: Time; offset: number } | null> {
    const file = this.#files[i]!;
    const fields = new Float64Array(2 * 4096);
    let found: { time: Time; offset: number } | null = null;
    const headers = this.#headers.get(i) ?? [];
    this.#headers.set(i, headers);
    await readLines(
      file.stream(at, PROBE_BYTES),
      (buf, start, end, line, offset, terminated) => {
        if (offset >= limit || offset - at > PROBE_MAX_BYTES) return false;
        // The first piece may be the tail of a line; a later one is cut
        // by the end of what was read.
        if ((line === 1 && at > 0) || !terminated || start === end) return;
        if (isDigit(buf[start])) {
          if (parseRow(buf, start, end, fields) < 1) return;
          const time = rowTime(fields);
          if (time === null) return;
          found = { time, offset };
          return false;
        }
        if (startsWithHeader(buf, start, end)) headers.push(offset);
      },
      { firstOffset: at, onLongLine: () => {} },
    );
    return found;
  }

  // From `lo` on: the start marker of the key's rule right after its row,
  // "absent" once rows are past T + span (or the file ends), "widen" if
  // the marker is there but the window's start is before `lo`.
  async #scan(
    i: number,
    lo: number,
    span: bigint,
  ): Promise<Hit | "absent" | "widen"> {
    const file = this.#files[i]!;
    const t = this.#t;
    const after = splitNs(this.#key.startNs + span);
    const fields = new Float64Array(2 * 4096);
    // Offsets of the rows since the last dump or header (a ring), to
    // place a window that starts inside a run of rows.
    const ring = new Float64Array(MAX_POSITION_ROWS + 1);
    let rows = 0;
    let segStart = -1; // the last column-name row or header block; -1: none since lo
    let header = -1;
    let capacity = capacityOf(this.#heads[i]!.header);
    let parser: HeaderParser | null = null;
    let lastRow: Time | null = null;
    let result: Hit | "absent" | "widen" = "absent";
    await readLines(
      file.stream(lo, SCAN_BYTES),
      (buf, start, end, _line, offset, terminated) => {
        if (!terminated || start === end) return;
        const c = buf[start];
        if (isDigit(c) && parser === null) {
          if (parseRow(buf, start, end, fields) < 1) return;
          const time = rowTime(fields);
          if (time !== null && compare(time, after) > 0) return false;
          lastRow = time;
          ring[rows % ring.length] = offset;
          rows++;
          return;
        }
        const text = utf8.decode(buf.subarray(start, end));
        if (parser !== null) {
          if (parser.accept(text)) return;
          capacity = capacityOf(parser.header());
          parser = null;
          if (isDigit(c)) {
            if (parseRow(buf, start, end, fields) < 1) return;
            lastRow = rowTime(fields);
            ring[rows % ring.length] = offset;
            rows++;
            return;
          }
        }
        if (text.startsWith(HEADER_PREFIX)) {
          parser = new HeaderParser(text);
          header = segStart = offset;
          rows = 0;
          lastRow = null;
          return;
        }
        if (isColumnRow(text)) {
          segStart = offset;
          rows = 0;
          lastRow = null;
          return;
        }
        if (!isEventMarker(text) || lastRow === null) return;
        const marker = parseEventMarker(text);
        if (
          marker?.kind !== "start" || marker.rule !== this.#key.rule ||
          compare(lastRow, t) !== 0
        ) return;
        // The review's window: the dump (or the rows after a header) if it
        // has at most `capacity` rows, else the last `capacity` rows.
        if (rows > capacity) {
          result = {
            windowStart: ring[(rows - capacity) % ring.length],
            header,
          };
        } else if (segStart >= 0) result = { windowStart: segStart, header };
        else result = "widen";
        return false;
      },
      { firstOffset: lo, onLongLine: () => {} },
    );
    return result;
  }

  // The nearest header block at or before `offset` that is known: met by
  // the scan or a probe, or the file's first.
  #nearestHeader(i: number, offset: number): number {
    let best = this.#heads[i]!.header === null ? -1 : 0;
    for (const h of this.#headers.get(i) ?? []) {
      if (h <= offset && h > best) best = h;
    }
    return best;
  }

  // Reads the event with the review's reader: from the hit (a seeked
  // file), or file `i` from its start (a compressed file, or a window the
  // scan could not place); on into later files while it goes on.
  async #readEvent(i: number, hit: Hit | null): Promise<FoundEvent | null> {
    const [beforePoints, duringPoints] = this.#options.chartPoints ??
      [150, 300];
    const store = new EventStore();
    const key = this.#key;
    const charts = this.#options.chart === false ? undefined : new ChartBudget(
      store,
      { rules: [key.rule], monitors: [] },
      64,
      duringPoints,
    );
    const reader = new FamilyReader(this.#family, {
      store,
      charts,
      beforePoints,
      columnNames: new ColumnNames(),
      blocks: new Blocks(),
    });
    let target = -1;
    let checked = 0;
    const stop = () => {
      for (; checked < store.length; checked++) {
        const [sec, ns] = store.startOf(checked);
        if (sec !== this.#t[0] || ns !== this.#t[1]) continue;
        const e = store.event(checked, 0);
        if (e.rule === key.rule && e.startKnown) target = checked;
      }
      return target >= 0;
    };
    const file = this.#files[i]!;
    reader.beginFile(i);
    let headerOffset = 0;
    if (hit === null) {
      await reader.readPart(file.stream(0, SCAN_BYTES), undefined, stop);
    } else {
      headerOffset = hit.header >= 0
        ? hit.header
        : this.#nearestHeader(i, hit.windowStart);
      if (headerOffset >= 0 && headerOffset < hit.windowStart) {
        const end = await headerEnd(file, headerOffset);
        await reader.readPart(
          boundedStream(file, headerOffset, end),
          { line: 1, offset: headerOffset },
        );
      }
      await reader.readPart(
        file.stream(hit.windowStart, SCAN_BYTES),
        { line: 1, offset: hit.windowStart },
        stop,
      );
    }
    // Still open at the end of the file: the log rotated while it went on.
    for (let j = i + 1; !stop() && j < this.#files.length; j++) {
      const next = this.#files[j];
      if (next === null) break;
      reader.beginFile(j);
      await reader.readPart(next.stream(0, SCAN_BYTES), undefined, stop);
    }
    if (!stop()) {
      reader.finish();
      stop();
    }
    charts?.settle();
    if (target < 0) return null;
    const event = store.event(target, 0);
    const seeked = hit !== null;
    return {
      kind: "found",
      key,
      event,
      file: this.#family.files[i],
      read: seeked ? "seek" : "stream",
      lines: seeked ? "window" : "file",
      headerOffset: Math.max(0, headerOffset),
      bytesRead: this.#counter.bytes,
      message: `event of rule ${JSON.stringify(key.rule)} of monitor ${
        JSON.stringify(key.monitor)
      } started at ${formatTimePoint(key.startNs)}: ${event.state}, in ${
        this.#family.files[i]
      } from byte ${event.window.startOffset}${
        seeked ? "" : " (a compressed file, read from its start)"
      }`,
    };
  }
}

function capacityOf(header: LogHeader | null): number {
  return historyRows(header?.depth);
}

function startsWithHeader(
  buf: Uint8Array,
  start: number,
  end: number,
): boolean {
  if (end - start < HEADER_BYTES.length) return false;
  for (let k = 0; k < HEADER_BYTES.length; k++) {
    if (buf[start + k] !== HEADER_BYTES[k]) return false;
  }
  return true;
}

// Where the header block starting at `offset` ends: the offset of its
// first line that is not part of it.
async function headerEnd(file: BlockFile, offset: number): Promise<number> {
  let parser: HeaderParser | null = null;
  let end = file.size;
  await readLines(
    file.stream(offset, PROBE_BYTES),
    (buf, start, stop, _line, at) => {
      const text = utf8.decode(buf.subarray(start, stop));
      if (parser === null) {
        parser = new HeaderParser(text);
        return;
      }
      if (!parser.accept(text)) {
        end = at;
        return false;
      }
    },
    { firstOffset: offset, onLongLine: () => {} },
  );
  return end;
}

// Bytes [from, to) of a file that is not compressed.
async function* boundedStream(
  file: BlockFile,
  from: number,
  to: number,
): AsyncGenerator<Uint8Array> {
  for (let at = from; at < to; at += SCAN_BYTES) {
    yield await file.readAt(at, Math.min(SCAN_BYTES, to - at));
  }
}
