/**
 * One event as the review reads it back from events.log, and the small
 * facts derived from it (duration, sort order, what "peak" means).
 *
 * @module
 */

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

/** A point in time: whole seconds and nanoseconds (wall-clock UTC). */
export interface Instant {
  readonly sec: number;
  readonly ns: number;
}

/** Where in the log files an event's traceback window lies. */
export interface WindowLocation {
  /** The monitor's files, oldest first; the indexes below point into it. */
  readonly files: readonly string[];
  /** File, line and byte offset where the window starts (its column-name row or first row). */
  readonly startFile: number;
  readonly startLine: number;
  readonly startOffset: number;
  /**
   * File and line where the window ends: the end marker, or for an event
   * cut by a restart the line where the restart shows (the new history
   * dump or start marker, not part of the window); line 0 of a file when
   * a file was skipped (the window ends with the file before, read as far
   * as it can be); null at the end of the log.
   */
  readonly endFile: number | null;
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
  readonly length: number;
  /** The event at `index` (0-based); undefined outside the list. */
  at(index: number): ReviewEvent | undefined;
}

/** One event: a rule's start marker and, if the log has it, its end. */
export interface ReviewEvent {
  /** Position in the reviewed timeline (1-based), before any filter. */
  id: number;
  readonly monitor: string;
  /** The file holding its start marker. */
  readonly file: string;
  /** Line of its start marker in that file (0 if it started before the file). */
  readonly line: number;
  readonly rule: string;
  /** The rule's type and threshold as the header gives them (undefined without a header). */
  readonly kind?: RuleKind;
  readonly typeName?: string;
  readonly threshold?: string;
  /** A signal rule's definition, as the header gives it. */
  readonly signal?: HeaderSignal;
  /** Name of the rule's column (undefined if the header does not say). */
  readonly column?: string;
  readonly device?: string;
  readonly depth?: number;
  readonly samplePeriodNs?: number;
  readonly timeFormat: TimeFormat;
  /** Start: the start sample's time (or the marker's whole second without wall-clock rows). */
  readonly start: Instant | null;
  /** Whether the start marker is in the log (false: it started before the first file read). */
  readonly startKnown: boolean;
  readonly startMarker: string | null;
  /** End: the end sample's time; null unless `state` is `ended`. */
  readonly end: Instant | null;
  readonly endMarker: string | null;
  /** Time of the last row recorded during the event (null without rows). */
  readonly last: Instant | null;
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
   * The rule column's most extreme value during the event, exact decimal,
   * in the rule's direction: highest for gt, dt_gt, inc_gt and signal
   * rules `above`, lowest for lt, dt_lt and signal rules `below`. Null if
   * the column is unknown or no row was recorded.
   */
  readonly peak: string | null;
  readonly peakAt: Instant | null;
  /** The most extreme per-second rate of the column, same direction (null if none). */
  readonly peakRate: number | null;
  readonly peakRateAt: Instant | null;
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
