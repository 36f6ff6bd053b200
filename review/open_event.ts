/**
 * An event while it is being read: from its start marker to its end
 * marker (or the restart or end of the log that cuts it), the running
 * facts of its rows: how many, the last, the most extreme value and rate
 * of the rule's column, and the samples lost.
 *
 * @module
 */

import { compareDecimal } from "./decimal.ts";
import type { EventState, Instant } from "./event.ts";
import type { EventRecord } from "./event_store.ts";
import type { FilePosition } from "./positions.ts";
import {
  clockDeltaNs,
  isWallClock,
  type TimeFormat,
} from "./reference_time.ts";
import type { ChartDraft } from "./chart_budget.ts";

/** What an event's start fixes. */
export interface EventStart {
  readonly context: number;
  readonly rule: string;
  /** The rule's column (-1: unknown). */
  readonly col: number;
  /** Whether the rule fires on low values: its peaks are minimums. */
  readonly low: boolean;
  readonly timeFormat: TimeFormat;
  /** File index and line of the start marker (line 0: not read). */
  readonly file: number;
  readonly line: number;
  readonly start: Instant | null;
  readonly startKnown: boolean;
  readonly startMarker: string | null;
  /**
   * The start sample's row time (row clock); NaN seconds without rows.
   * For a counter clock, also where wall time is anchored.
   */
  readonly rowSec: number;
  readonly rowNs: number;
  /** The wall time of the row-clock anchor, for a counter clock. */
  readonly anchorWall: Instant | null;
  readonly historyRows: number;
  readonly window: FilePosition;
}

/** An event being read. */
export interface OpenEvent extends EventStart {
  rows: number;
  dropped: number;
  lost: number;
  /** Losses of samples in its window (history and during), and their samples. */
  blindPeriods: number;
  blindSamples: number;
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
  /** The rule's peak from its `<<Peak>>` line (NaN until read). */
  rulePeak: number;
  /** Chart data, if the report may show it (see chart_budget.ts). */
  chart: ChartDraft | null;
}

/** A new open event with no rows yet, last seen at its start sample. */
export function openEvent(start: EventStart): OpenEvent {
  return {
    ...start,
    rows: 0,
    dropped: 0,
    lost: 0,
    blindPeriods: 0,
    blindSamples: 0,
    lastSec: start.rowSec,
    lastNs: start.rowNs,
    hasPeak: false,
    peakHi: 0,
    peakLo: 0,
    peakSec: 0,
    peakNs: 0,
    peakRate: NaN,
    peakRateSec: 0,
    peakRateNs: 0,
    rulePeak: NaN,
    chart: null,
  };
}

/**
 * Counts a sample of the event at row time `sec` + `ns` with the rule
 * column's value `hi * 10^9 + lo` and rate (NaN: unknown), keeping the
 * extremes in the rule's direction. `asRow` false: the start sample,
 * which counts towards the peaks but is not a row "during".
 */
export function trackSample(
  open: OpenEvent,
  sec: number,
  ns: number,
  hi: number,
  lo: number,
  rate: number,
  asRow = true,
): void {
  if (asRow) {
    open.rows++;
    open.lastSec = sec;
    open.lastNs = ns;
  }
  if (open.col < 0) return;
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
  if (
    rate === rate &&
    (open.peakRate !== open.peakRate ||
      (open.low ? rate < open.peakRate : rate > open.peakRate))
  ) {
    open.peakRate = rate;
    open.peakRateSec = sec;
    open.peakRateNs = ns;
  }
}

/** Where an event's window ends; see {@linkcode EventRecord}. */
export interface WindowEnd {
  readonly file: number;
  readonly line: number;
}

/**
 * The finished event. `endMarker`: its end marker's time text (ended
 * only); `windowEnd`: the end marker's or the restart's line, null at the
 * end of the log.
 */
export function closeEvent(
  open: OpenEvent,
  state: EventState,
  endMarker: string | null,
  windowEnd: WindowEnd | null,
): EventRecord {
  const hasRows = open.rowSec === open.rowSec;
  const last = hasRows ? wallTime(open, open.lastSec, open.lastNs) : null;
  const durationS = hasRows
    ? clockDeltaNs(
      open.timeFormat,
      open.lastSec,
      open.lastNs,
      open.rowSec,
      open.rowNs,
    ) / 1e9
    : null;
  return {
    context: open.context,
    file: open.file,
    line: open.line,
    start: open.start,
    startKnown: open.startKnown,
    startMarker: open.startMarker,
    endMarker,
    last,
    state,
    durationS,
    rows: open.rows,
    historyRows: open.historyRows,
    droppedSamples: open.dropped,
    lostRows: open.lost,
    blindPeriods: open.blindPeriods,
    blindSamples: open.blindSamples,
    rulePeak: open.rulePeak === open.rulePeak ? open.rulePeak : null,
    columnPeak: open.hasPeak ? [open.peakHi, open.peakLo] : null,
    columnPeakAt: open.hasPeak
      ? wallTime(open, open.peakSec, open.peakNs)
      : null,
    columnPeakRate: open.peakRate === open.peakRate ? open.peakRate : null,
    columnPeakRateAt: open.peakRate === open.peakRate
      ? wallTime(open, open.peakRateSec, open.peakRateNs)
      : null,
    windowStartFile: open.window.file,
    windowStartLine: open.window.line,
    windowStartOffset: open.window.offset,
    windowEndFile: windowEnd?.file ?? null,
    windowEndLine: windowEnd?.line ?? null,
    startRow: hasRows ? { sec: open.rowSec, ns: open.rowNs } : null,
  };
}

/**
 * The wall time of row time `sec` + `ns`: itself for wall-clock rows; for
 * a counter, the anchor's wall time moved by the (wrapping) counter
 * difference, or null without an anchor.
 */
export function wallTime(
  start: Pick<EventStart, "timeFormat" | "rowSec" | "rowNs" | "anchorWall">,
  sec: number,
  ns: number,
): Instant | null {
  if (isWallClock(start.timeFormat)) return { sec, ns };
  const anchor = start.anchorWall;
  if (anchor === null) return null;
  const total = anchor.ns +
    clockDeltaNs("counter", sec, ns, start.rowSec, start.rowNs);
  const carry = Math.floor(total / 1e9);
  const rest = Math.round(total - carry * 1e9);
  return rest === 1e9
    ? { sec: anchor.sec + carry + 1, ns: 0 }
    : { sec: anchor.sec + carry, ns: rest };
}
