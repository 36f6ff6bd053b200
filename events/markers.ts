/**
 * The words of events.log's marker lines, which the writer (events/log.ts)
 * prints and `review` reads back: one copy, so the two cannot drift.
 *
 * ```text
 * <<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "ECN > 100"
 * <<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100"
 * <<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 12
 * <<Gap>> Time: 2026-11-21T14:50:00Z, Lost rows: 3400
 * <<Gap>> Time: 2026-11-21T14:02:03Z, Dropped samples: 5, From: 2026-11-21T14:02:00.120Z, To: 2026-11-21T14:02:03.456Z
 * <<Gap>> Time: 2026-11-21T14:05:00Z, Dropped samples: 9, From: 2026-11-21T14:04:58.001Z, Stopped: 2026-11-21T14:05:00.250Z
 * ```
 *
 * @module
 */

/**
 * What both event markers open with. A reader takes any line that starts
 * with it for an event marker, so a damaged one is reported as such.
 */
export const EVENT_MARKER = "<<Event ";
/** Opens a line where a rule became active. */
export const EVENT_START = `${EVENT_MARKER}start>>`;
/** Opens a line where a rule became inactive. */
export const EVENT_END = `${EVENT_MARKER}end>>`;
/** Opens a line where samples or rows were lost during an event. */
export const GAP = "<<Gap>>";
/**
 * Ours: the line before an `<<Event end>>` that gives the event's peak in
 * the rule's own signal and units (per second for a `rate`, a fraction for
 * a `ratio`), as the closing table, the metrics and the alerts show it.
 */
export const PEAK = "<<Peak>>";
export const PEAK_FIELD = "Peak";
/** What {@linkcode PEAK_FIELD} says when no sample of the event had a known signal. */
export const PEAK_UNKNOWN = "unknown";
/** Names the marker's wall time (UTC, to the second) after the opener. */
export const TIME_FIELD = "Time";
/** Names the rule, quoted as in the header, in an event marker. */
export const RULE_FIELD = "Rule";
/** A gap's count of samples the source lost. */
export const DROPPED_FIELD = "Dropped samples";
/** A gap's count of rows the agent could not write (disk full, too slow). */
export const LOST_FIELD = "Lost rows";
/**
 * Ours: a blind period's start, after its count: the sample time (UTC, ms)
 * of the last record before the loss, or {@linkcode UNKNOWN_TIME}. Only
 * the line written when the monitor learns of a loss outside an event
 * has it; a gap mark before a row (during an event, in a history dump)
 * does not.
 */
export const FROM_FIELD = "From";
/** The blind period's end: the sample time (UTC, ms) of the first record after it. */
export const TO_FIELD = "To";
/** In place of {@linkcode TO_FIELD}: the agent stopped, still blind, at this wall time. */
export const STOPPED_FIELD = "Stopped";
/** What {@linkcode FROM_FIELD} says when no record came before the loss. */
export const UNKNOWN_TIME = "unknown";
