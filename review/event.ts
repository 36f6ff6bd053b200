/**
 * One event as the review reads it back from events.log, and the small
 * facts derived from it (duration, sort order, what "peak" means).
 *
 * @module
 */

import type { Instant } from "../base/units.ts";

import type { HeaderSignal, RuleKind } from "./header.ts";
import type { TimeFormat } from "./reference_time.ts";
import type { ChartSeries } from "./window.ts";

/**
 * `ended`: both markers are in the log. `open`: the log ends while it is
 * active (it may still be going on), or the file after was skipped. `interrupted`: the agent restarted
 * (a new header block and history dump) before its end marker; it lasted
 * at least until its last row.
 */
export type EventState = "ended" | "open" | "interrupted";

export type { Instant };

/** Where in the log files an event's traceback window lies. */
export interface WindowLocation {
  /** The monitor's files, oldest first; the indexes below point into it. */
  readonly files: readonly string[];
  /** File, line and byte offset where the window starts (its column-name row or first row). */
  readonly startFile: number;
  /** Line (1-based) in that file where the window starts. */
  readonly startLine: number;
  /** Byte offset of that line, where a reread seeks to in a file that is not compressed. */
  readonly startOffset: number;
  /**
   * File and line where the window ends: the end marker, or for an event
   * cut by a restart the line where the restart shows (the new history
   * dump or start marker, not part of the window); line 0 of a file when
   * a file was skipped (the window ends with the file before, read as far
   * as it can be); null at the end of the log.
   */
  readonly endFile: number | null;
  /** Line in {@linkcode endFile} where the window ends (see there). */
  readonly endLine: number | null;
  /** Column names of the rows (`timestamp` first). */
  readonly columns: readonly string[];
  /** Index of the rule's column in them; -1 if unknown. */
  readonly column: number;
  /** The start sample's timestamp as the rows' clock gives it (null without one). */
  readonly startRow: Instant | null;
}

/** Downsampled chart data of the rule's column over the traceback window. */
export interface EventChart {
  /** Rows before the start (the history dump), up to and with the start sample. */
  readonly before: ChartSeries;
  /** Rows after the start sample, up to the end (or the last row). */
  readonly during: ChartSeries;
  /**
   * The start sample's time on the series' clock (ms): wall time, or for
   * a counter clock the time since the history dump began.
   */
  readonly originMs: number;
}

/**
 * Events in timeline order, read one at a time: a review may hold
 * millions, kept compactly and made into {@linkcode ReviewEvent} objects
 * only while they are written out. An array of events is one too.
 */
export interface EventList extends Iterable<ReviewEvent> {
  /** How many events the list holds. */
  readonly length: number;
  /** The event at `index` (0-based); undefined outside the list. */
  at(index: number): ReviewEvent | undefined;
}

/** One event: a rule's start marker and, if the log has it, its end. */
export interface ReviewEvent {
  /** Position in the reviewed timeline (1-based), before any filter. */
  id: number;
  /** The monitor: from the log's name (`nic-events.log`), else its header's `Device`, else the name's stem. */
  readonly monitor: string;
  /** The file holding its start marker. */
  readonly file: string;
  /** Line of its start marker in that file (0 if it started before the file). */
  readonly line: number;
  /** The rule's name, as its markers quote it. */
  readonly rule: string;
  /** The rule's type and threshold as the header gives them (undefined without a header). */
  readonly kind?: RuleKind;
  /** The type as the header prints it (`differential_greater_than`, `rate over 1000000ns`). */
  readonly typeName?: string;
  /** The threshold as the header prints it: exact decimal text. */
  readonly threshold?: string;
  /** A signal rule's definition, as the header gives it. */
  readonly signal?: HeaderSignal;
  /** Name of the rule's column (undefined if the header does not say). */
  readonly column?: string;
  /** The header's `Device`. */
  readonly device?: string;
  /** The header's sample history depth. */
  readonly depth?: number;
  /** The header's diag sample period, ns. */
  readonly samplePeriodNs?: number;
  /** How the rows' timestamps are encoded. */
  readonly timeFormat: TimeFormat;
  /** Start: the start sample's time (or the marker's whole second without wall-clock rows). */
  readonly start: Instant | null;
  /** Whether the start marker is in the log (false: it started before the first file read). */
  readonly startKnown: boolean;
  /** The start marker's `Time` text (`2026-11-21T14:50:00Z`); null without the marker. */
  readonly startMarker: string | null;
  /** End: the end sample's time; null unless `state` is `ended`. */
  readonly end: Instant | null;
  /** The end marker's `Time` text; null without the marker. */
  readonly endMarker: string | null;
  /** Time of the last row recorded during the event (null without rows). */
  readonly last: Instant | null;
  /** Whether it ended, is open at the end of the log, or was cut by a restart. */
  readonly state: EventState;
  /**
   * Seconds from the start sample to the end sample (or to the last row if
   * not ended); negative if the clock was stepped back during the event.
   */
  readonly durationS: number | null;
  /** Samples from the start sample to the end (rows + dropped + lost). */
  readonly samples: number;
  /** Rows the log holds after the start sample, up to the end. */
  readonly rows: number;
  /** Rows of the history dump before the start (with the start sample). */
  readonly historyRows: number;
  /** Samples the source lost during the event (`<<Gap>> ... Dropped samples`). */
  readonly droppedSamples: number;
  /** Rows the agent could not write during the event (`<<Gap>> ... Lost rows`). */
  readonly lostRows: number;
  /**
   * Blind periods (losses of samples by the source, see blind_periods.ts)
   * in its traceback window: its history dump and its rows; 0 if none.
   */
  readonly blindPeriods: number;
  /** Samples lost in them. */
  readonly blindSamples: number;
  /**
   * The rule's peak over the event, as the agent computed it and wrote it
   * in the `<<Peak>>` line before the end marker: in the rule's own signal
   * and units (per second for a `rate`, a fraction for a `ratio`), the
   * same number the closing table, the events API and the alerts give.
   * Null when the event did not end in the log, the log predates the
   * line, or no sample of the event had a known signal.
   */
  readonly rulePeak: number | null;
  /**
   * The rule column's most extreme value during the event, exact decimal,
   * in the rule's direction: highest for gt, dt_gt, inc_gt and signal
   * rules `above`, lowest for lt, dt_lt and signal rules `below`. Null if
   * the column is unknown or no row was recorded.
   */
  readonly columnPeak: string | null;
  /** When the peak was sampled (null if none). */
  readonly columnPeakAt: Instant | null;
  /** The most extreme per-second rate of the column, same direction (null if none). */
  readonly columnPeakRate: number | null;
  /** When the peak rate was reached (null if none). */
  readonly columnPeakRateAt: Instant | null;
  /** Where its traceback window lies in the log files. */
  readonly window: WindowLocation;
  /** Chart data, when asked for (the HTML report). */
  chart?: EventChart;
}

/**
 * Whether the rule fires on low values (lt, dt_lt, a signal rule `below`):
 * its peak is a minimum. Takes a header's rule or an event.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firesLow } from "./event.ts";
 *
 * assert.equal(firesLow({ kind: "dt_lt" }), true);
 * assert.equal(firesLow({ kind: "rate", signal: { direction: "below" } }), true);
 * assert.equal(firesLow({ kind: "value", signal: { direction: "above" } }), false);
 * assert.equal(firesLow(undefined), false); // not in the header: a maximum
 * ```
 */
export function firesLow(
  rule:
    | {
      readonly kind?: RuleKind;
      readonly signal?: Pick<HeaderSignal, "direction">;
    }
    | undefined,
): boolean {
  if (rule?.signal !== undefined) return rule.signal.direction === "below";
  return rule?.kind === "lt" || rule?.kind === "dt_lt";
}

/** Milliseconds since the epoch of an instant (rounded to the microsecond). */
export function instantMs(t: Instant): number {
  return t.sec * 1000 + t.ns / 1e6;
}

/** The latest time the event is known to cover: its end, else its last row, else its start. */
export function lastKnown(e: ReviewEvent): Instant | null {
  return e.end ?? e.last ?? e.start;
}
