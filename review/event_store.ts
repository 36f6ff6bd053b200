/**
 * The events a review has read, kept compactly: a flapping rule leaves
 * hundreds of thousands of events, and an object per event with its
 * instants, window and strings costs about a kilobyte, so they are kept
 * as rows of numbers in fixed-size typed-array chunks (184 bytes an
 * event) plus one shared {@linkcode EventContext} per monitor, rule and
 * configuration. {@linkcode ReviewEvent} objects are made one at a time,
 * while they are written out.
 *
 * @module
 */

import { formatDecimal } from "./decimal.ts";
import type {
  EventChart,
  EventList,
  EventState,
  Instant,
  ReviewEvent,
} from "./event.ts";
import type { HeaderSignal, RuleKind } from "./header.ts";
import { canonicalMarkerSecond, markerInstant } from "./markers.ts";
import { isoTime, type TimeFormat } from "./reference_time.ts";

/** What the events of one rule in one configuration share. */
export interface EventContext {
  readonly monitor: string;
  readonly rule: string;
  readonly kind?: RuleKind;
  readonly typeName?: string;
  readonly threshold?: string;
  /** A signal rule's definition, as the header gives it. */
  readonly signal?: HeaderSignal;
  /** Name of the rule's column, if known. */
  readonly column?: string;
  readonly device?: string;
  readonly depth?: number;
  readonly samplePeriodNs?: number;
  readonly timeFormat: TimeFormat;
  /** The monitor's files, oldest first. */
  readonly files: readonly string[];
  /** Column names of the rows (`timestamp` first). */
  readonly columns: readonly string[];
  /** Index of the rule's column in them; -1 if unknown. */
  readonly columnIndex: number;
}

/** One event as the reader hands it over; see {@linkcode ReviewEvent}. */
export interface EventRecord {
  /** From {@linkcode EventStore.context}. */
  readonly context: number;
  /** Index in the context's files of the file with the start marker. */
  readonly file: number;
  readonly line: number;
  readonly start: Instant | null;
  readonly startKnown: boolean;
  readonly startMarker: string | null;
  /** Its end: the last row when ended, else the end marker's time. */
  readonly endMarker: string | null;
  readonly last: Instant | null;
  readonly state: EventState;
  readonly durationS: number | null;
  readonly rows: number;
  readonly historyRows: number;
  readonly droppedSamples: number;
  readonly lostRows: number;
  readonly blindPeriods: number;
  readonly blindSamples: number;
  /** The rule's peak from the log's `<<Peak>>` line; null if none. */
  readonly rulePeak: number | null;
  /** The column's extreme as `hi * 10^9 + lo` (see decimal.ts); null if none. */
  readonly columnPeak: readonly [number, number] | null;
  readonly columnPeakAt: Instant | null;
  readonly columnPeakRate: number | null;
  readonly columnPeakRateAt: Instant | null;
  readonly windowStartFile: number;
  readonly windowStartLine: number;
  readonly windowStartOffset: number;
  readonly windowEndFile: number | null;
  readonly windowEndLine: number | null;
  readonly startRow: Instant | null;
}

/** Events per chunk: chunks never move, so the store grows without copying. */
const CHUNK = 4096;

// Numbers kept per event that need a double; NaN stands for null.
const F_START = 0; // seconds of the start
const F_LAST = 1;
const F_DURATION = 2;
const F_ROWS = 3;
const F_DROPPED = 4;
const F_LOST = 5;
const F_PEAK_HI = 6;
const F_PEAK_AT = 7;
const F_RATE = 8;
const F_RATE_AT = 9;
const F_WINDOW_OFFSET = 10;
const F_START_ROW = 11;
const F_RULE_PEAK = 12;
const F_BLIND_SAMPLES = 13;
const NF = 14;
// Numbers below 2^32: nanoseconds (always < 10^9), indexes, line
// numbers, marker seconds (whole seconds to 2106), flags.
const U_CONTEXT = 0;
const U_FILE = 1;
const U_LINE = 2;
const U_START_NS = 3;
const U_LAST_NS = 4;
const U_PEAK_LO = 5;
const U_PEAK_AT_NS = 6;
const U_RATE_AT_NS = 7;
const U_HISTORY = 8;
const U_WINDOW_FILE = 9;
const U_WINDOW_LINE = 10;
const U_WINDOW_END_FILE = 11;
const U_WINDOW_END_LINE = 12;
const U_START_ROW_NS = 13;
const U_START_MARKER = 14;
const U_END_MARKER = 15;
const U_FLAGS = 16;
const U_BLIND = 17;
const NU = 18;

/** In a u32 field: null (or, for a marker, a text kept aside). */
const NONE = 0xffffffff;

const STATES: readonly EventState[] = ["ended", "open", "interrupted"];
const START_KNOWN = 4;

/**
 * Every event read, in the order they closed, and the contexts they
 * share.
 *
 * @example
 * ```ts ignore
 * const store = new EventStore();
 * const i = store.add({ context: store.context(ctx), ... });
 * store.event(i, 1).rule;
 * ```
 */
export class EventStore {
  readonly #contexts: EventContext[] = [];
  readonly #contextIds = new Map<EventContext, number>();
  readonly #f: Float64Array[] = [];
  readonly #u: Uint32Array[] = [];
  // Marker times that do not print back from their second (rare).
  readonly #startMarkers = new Map<number, string>();
  readonly #endMarkers = new Map<number, string>();
  readonly #charts = new Map<number, EventChart>();
  #length = 0;

  /** Events stored. */
  get length(): number {
    return this.#length;
  }

  /** The id of `context` (the same object gives the same id). */
  context(context: EventContext): number {
    let id = this.#contextIds.get(context);
    if (id === undefined) {
      id = this.#contexts.length;
      this.#contexts.push(context);
      this.#contextIds.set(context, id);
    }
    return id;
  }

  /** Stores an event; returns its index. */
  add(r: EventRecord): number {
    const i = this.#length++;
    const k = i % CHUNK;
    if (k === 0) {
      this.#f.push(new Float64Array(CHUNK * NF));
      this.#u.push(new Uint32Array(CHUNK * NU));
    }
    const f = this.#f[this.#f.length - 1];
    const u = this.#u[this.#u.length - 1];
    const o = k * NF;
    const p = k * NU;
    putInstant(f, o + F_START, u, p + U_START_NS, r.start);
    putInstant(f, o + F_LAST, u, p + U_LAST_NS, r.last);
    f[o + F_DURATION] = r.durationS ?? NaN;
    f[o + F_ROWS] = r.rows;
    f[o + F_DROPPED] = r.droppedSamples;
    f[o + F_LOST] = r.lostRows;
    f[o + F_BLIND_SAMPLES] = r.blindSamples;
    u[p + U_BLIND] = r.blindPeriods;
    f[o + F_PEAK_HI] = r.columnPeak === null ? NaN : r.columnPeak[0];
    u[p + U_PEAK_LO] = r.columnPeak === null ? 0 : r.columnPeak[1];
    putInstant(f, o + F_PEAK_AT, u, p + U_PEAK_AT_NS, r.columnPeakAt);
    f[o + F_RATE] = r.columnPeakRate ?? NaN;
    putInstant(f, o + F_RATE_AT, u, p + U_RATE_AT_NS, r.columnPeakRateAt);
    f[o + F_WINDOW_OFFSET] = r.windowStartOffset;
    f[o + F_RULE_PEAK] = r.rulePeak ?? NaN;
    putInstant(f, o + F_START_ROW, u, p + U_START_ROW_NS, r.startRow);
    u[p + U_CONTEXT] = r.context;
    u[p + U_FILE] = r.file;
    u[p + U_LINE] = r.line;
    u[p + U_HISTORY] = r.historyRows;
    u[p + U_WINDOW_FILE] = r.windowStartFile;
    u[p + U_WINDOW_LINE] = r.windowStartLine;
    u[p + U_WINDOW_END_FILE] = r.windowEndFile ?? 0;
    u[p + U_WINDOW_END_LINE] = r.windowEndLine ?? NONE;
    u[p + U_START_MARKER] = this.#marker(this.#startMarkers, i, r.startMarker);
    u[p + U_END_MARKER] = this.#marker(this.#endMarkers, i, r.endMarker);
    u[p + U_FLAGS] = STATES.indexOf(r.state) | (r.startKnown ? START_KNOWN : 0);
    return i;
  }

  /** Attaches chart data to event `i` (undefined: takes it away). */
  setChart(i: number, chart: EventChart | undefined): void {
    if (chart === undefined) this.#charts.delete(i);
    else this.#charts.set(i, chart);
  }

  /** Events with chart data. */
  get charts(): number {
    return this.#charts.size;
  }

  /** Event `i`'s start as [seconds, nanoseconds]; NaN seconds if unknown. */
  startOf(i: number): [number, number] {
    const c = (i / CHUNK) | 0;
    const k = i % CHUNK;
    return [this.#f[c][k * NF + F_START], this.#u[c][k * NU + U_START_NS]];
  }

  /**
   * Indexes of every event in timeline order: by start (unknown last),
   * then monitor, then where in the files it starts.
   */
  timelineOrder(): Uint32Array {
    const n = this.#length;
    const order = new Uint32Array(n);
    const sec = new Float64Array(n);
    const ns = new Uint32Array(n);
    const monitor = new Uint32Array(n);
    const file = new Uint32Array(n);
    const line = new Uint32Array(n);
    const monitors = [...new Set(this.#contexts.map((c) => c.monitor))].sort();
    const rank = this.#contexts.map((c) => monitors.indexOf(c.monitor));
    for (let i = 0; i < n; i++) {
      const f = this.#f[(i / CHUNK) | 0];
      const u = this.#u[(i / CHUNK) | 0];
      const o = (i % CHUNK) * NF;
      const p = (i % CHUNK) * NU;
      order[i] = i;
      sec[i] = f[o + F_START];
      ns[i] = u[p + U_START_NS];
      monitor[i] = rank[u[p + U_CONTEXT]];
      file[i] = u[p + U_FILE];
      line[i] = u[p + U_LINE];
    }
    return order.sort((a, b) => {
      const sa = sec[a];
      const sb = sec[b];
      if (sa !== sb) {
        if (sa !== sa) return sb !== sb ? 0 : 1; // NaN: unknown, last
        if (sb !== sb) return -1;
        return sa - sb;
      }
      return ns[a] - ns[b] || monitor[a] - monitor[b] || file[a] - file[b] ||
        line[a] - line[b] || a - b;
    });
  }

  /** Event `i` as an object, numbered `id`. */
  event(i: number, id: number): ReviewEvent {
    const f = this.#f[(i / CHUNK) | 0];
    const u = this.#u[(i / CHUNK) | 0];
    const o = (i % CHUNK) * NF;
    const p = (i % CHUNK) * NU;
    const c = this.#contexts[u[p + U_CONTEXT]];
    const flags = u[p + U_FLAGS];
    const peakHi = f[o + F_PEAK_HI];
    const rulePeak = f[o + F_RULE_PEAK];
    const rate = f[o + F_RATE];
    const duration = f[o + F_DURATION];
    const endLine = u[p + U_WINDOW_END_LINE];
    const rows = f[o + F_ROWS];
    const dropped = f[o + F_DROPPED];
    const lost = f[o + F_LOST];
    const state = STATES[flags & 3];
    const last = getInstant(f, o + F_LAST, u, p + U_LAST_NS);
    const endMarker = markerText(this.#endMarkers, i, u[p + U_END_MARKER]);
    const event: ReviewEvent = {
      id,
      monitor: c.monitor,
      file: c.files[u[p + U_FILE]],
      line: u[p + U_LINE],
      rule: c.rule,
      kind: c.kind,
      typeName: c.typeName,
      threshold: c.threshold,
      signal: c.signal,
      column: c.column,
      device: c.device,
      depth: c.depth,
      samplePeriodNs: c.samplePeriodNs,
      timeFormat: c.timeFormat,
      start: getInstant(f, o + F_START, u, p + U_START_NS),
      startKnown: (flags & START_KNOWN) !== 0,
      startMarker: markerText(this.#startMarkers, i, u[p + U_START_MARKER]),
      // The end sample is the last row; without rows, the marker says.
      end: state === "ended" ? last ?? markerInstant(endMarker ?? "") : null,
      endMarker,
      last,
      state,
      durationS: duration === duration ? duration : null,
      samples: rows + dropped + lost,
      rows,
      historyRows: u[p + U_HISTORY],
      droppedSamples: dropped,
      lostRows: lost,
      blindPeriods: u[p + U_BLIND],
      blindSamples: f[o + F_BLIND_SAMPLES],
      rulePeak: rulePeak === rulePeak ? rulePeak : null,
      columnPeak: peakHi === peakHi
        ? formatDecimal(peakHi, u[p + U_PEAK_LO])
        : null,
      columnPeakAt: getInstant(f, o + F_PEAK_AT, u, p + U_PEAK_AT_NS),
      columnPeakRate: rate === rate ? rate : null,
      columnPeakRateAt: getInstant(f, o + F_RATE_AT, u, p + U_RATE_AT_NS),
      window: {
        files: c.files,
        startFile: u[p + U_WINDOW_FILE],
        startLine: u[p + U_WINDOW_LINE],
        startOffset: f[o + F_WINDOW_OFFSET],
        endFile: endLine === NONE ? null : u[p + U_WINDOW_END_FILE],
        endLine: endLine === NONE ? null : endLine,
        columns: c.columns,
        column: c.columnIndex,
        startRow: getInstant(f, o + F_START_ROW, u, p + U_START_ROW_NS),
      },
    };
    const chart = this.#charts.get(i);
    if (chart !== undefined) event.chart = chart;
    return event;
  }

  // A marker time as its whole second, or NONE (null, or a text that
  // does not print back from its second: kept aside).
  #marker(texts: Map<number, string>, i: number, text: string | null) {
    if (text === null) return NONE;
    const sec = canonicalMarkerSecond(text);
    if (sec >= 0 && sec < NONE) return sec;
    texts.set(i, text);
    return NONE;
  }
}

function putInstant(
  f: Float64Array,
  at: number,
  u: Uint32Array,
  nsAt: number,
  t: Instant | null,
): void {
  f[at] = t === null ? NaN : t.sec;
  u[nsAt] = t === null ? 0 : t.ns;
}

function getInstant(
  f: Float64Array,
  at: number,
  u: Uint32Array,
  nsAt: number,
): Instant | null {
  const sec = f[at];
  return sec === sec ? { sec, ns: u[nsAt] } : null;
}

function markerText(
  texts: Map<number, string>,
  i: number,
  sec: number,
): string | null {
  if (sec !== NONE) return isoTime(sec, 0, 0);
  return texts.get(i) ?? null;
}

/**
 * The store's events in timeline order, numbered from 1 in that order.
 */
export class Timeline implements EventList {
  readonly #store: EventStore;
  readonly #order: Uint32Array;

  /** The store's events as they stand (ordered once, now). */
  constructor(store: EventStore) {
    this.#store = store;
    this.#order = store.timelineOrder();
  }

  /** Events in the timeline. */
  get length(): number {
    return this.#order.length;
  }

  /** The event at `index` (0-based), numbered `index + 1`. */
  at(index: number): ReviewEvent | undefined {
    if (!(index >= 0 && index < this.#order.length)) return undefined;
    return this.#store.event(this.#order[index], index + 1);
  }

  /** The events in order, each made as it is asked for. */
  *[Symbol.iterator](): Iterator<ReviewEvent> {
    for (let k = 0; k < this.#order.length; k++) {
      yield this.#store.event(this.#order[k], k + 1);
    }
  }
}

/**
 * The events of `list` that `keep` accepts, as a list (their positions
 * only: 4 bytes an event).
 */
export function filterEvents(
  list: EventList,
  keep: (e: ReviewEvent) => boolean,
): EventList {
  let positions = new Uint32Array(Math.max(16, Math.min(list.length, 1024)));
  let n = 0;
  let k = 0;
  for (const e of list) {
    if (keep(e)) {
      if (n === positions.length) {
        const bigger = new Uint32Array(positions.length * 2);
        bigger.set(positions);
        positions = bigger;
      }
      positions[n++] = k;
    }
    k++;
  }
  const kept = positions.subarray(0, n);
  if (n === list.length) return list;
  return {
    length: n,
    at: (index) => index >= 0 && index < n ? list.at(kept[index]) : undefined,
    *[Symbol.iterator]() {
      for (let i = 0; i < n; i++) yield list.at(kept[i])!;
    },
  };
}
