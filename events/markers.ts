/**
 * The words of events.log's marker lines, which the writer (events/log.ts)
 * prints and `review` reads back: one copy, so the two cannot drift.
 *
 * ```text
 * <<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "ECN > 100"
 * <<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100"
 * <<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 12
 * <<Gap>> Time: 2026-11-21T14:50:00Z, Lost rows: 3400
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
