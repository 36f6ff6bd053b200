/**
 * The marker lines of events.log: `<<Event start>>` and `<<Event end>>`
 * after the row of the sample on which a rule changed state, and
 * `<<Gap>>` where samples or rows were lost during an event.
 *
 * @module
 */

import {
  DROPPED_FIELD,
  EVENT_END,
  EVENT_MARKER,
  EVENT_START,
  FROM_FIELD,
  GAP,
  LOST_FIELD,
  PEAK,
  PEAK_FIELD,
  PEAK_UNKNOWN,
  RULE_FIELD,
  STOPPED_FIELD,
  TIME_FIELD,
  TO_FIELD,
  UNKNOWN_TIME,
} from "../events/markers.ts";
import type { Instant } from "./event.ts";
import { unquoteName } from "./header.ts";
import { isoTime } from "./reference_time.ts";

/** An event marker, read. */
export interface EventMarker {
  readonly kind: "start" | "end";
  /** The marker's time as written (`2026-11-21T14:50:01Z`). */
  readonly time: string;
  /** The rule's name, unquoted. */
  readonly rule: string;
}

/** A gap marker, read. */
export interface GapMarker {
  /** `dropped`: samples the source lost; `lost`: rows the agent did not write. */
  readonly kind: "dropped" | "lost";
  readonly count: number;
  /** Its `Time` text: the sample time of the row after the loss, to the second. */
  readonly time: string;
  /**
   * A blind period's own line has its span (see events/markers.ts
   * {@linkcode FROM_FIELD}); a mark before a row (during an event, in a
   * history dump) has none.
   */
  readonly span?: GapSpan;
}

/** Where a blind period's own line says it began and ended. */
export interface GapSpan {
  /** The last record before the loss (`...T14:02:00.120Z`); null: unknown. */
  readonly from: Instant | null;
  /** The first record after it, or when the agent stopped still blind. */
  readonly to: Instant;
  /** The agent stopped while the source was still blind. */
  readonly stopped: boolean;
}

const EVENT = new RegExp(
  `^(${RegExp.escape(EVENT_START)}|${
    RegExp.escape(EVENT_END)
  }) ${TIME_FIELD}: ([^,]*), ${RULE_FIELD}: (.*)$`,
);
const GAP_LINE = new RegExp(
  `^${
    RegExp.escape(GAP)
  } ${TIME_FIELD}: ([^,]*), (${DROPPED_FIELD}|${LOST_FIELD}): (\\d+)(?:, ${FROM_FIELD}: ([^,]*), (${TO_FIELD}|${STOPPED_FIELD}): ([^,]*?))?\\s*$`,
);

/** A `<<Peak>>` line, read: the rule's peak over the event that ends next. */
export interface PeakMarker {
  /** The rule's name, unquoted. */
  readonly rule: string;
  /** In the rule's own units (per second for a rate); NaN for `unknown`. */
  readonly peak: number;
}

const PEAK_LINE = new RegExp(
  `^${
    RegExp.escape(PEAK)
  } ${RULE_FIELD}: (.*), ${PEAK_FIELD}: (${PEAK_UNKNOWN}|-?[0-9.e+-]+)(/s)?\\s*$`,
);

/** Whether a line opens with a peak marker (it may still be malformed). */
export function isPeakMarker(text: string): boolean {
  return text.startsWith(PEAK);
}

/** Reads a `<<Peak>>` line; undefined if it is malformed. */
export function parsePeakMarker(text: string): PeakMarker | undefined {
  const m = PEAK_LINE.exec(text);
  if (!m) return undefined;
  const peak = m[2] === PEAK_UNKNOWN ? NaN : Number(m[2]);
  if (m[2] !== PEAK_UNKNOWN && !Number.isFinite(peak)) return undefined;
  return { rule: unquoteName(m[1]), peak };
}

/** Whether a line opens like an event marker (it may still be malformed). */
export function isEventMarker(text: string): boolean {
  return text.startsWith(EVENT_MARKER);
}

/** Whether a line opens with a gap marker (it may still be malformed). */
export function isGapMarker(text: string): boolean {
  return text.startsWith(GAP);
}

/**
 * Reads an `<<Event start>>` / `<<Event end>>` line; undefined if it is
 * malformed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEventMarker } from "./markers.ts";
 *
 * assert.deepEqual(
 *   parseEventMarker('<<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100"'),
 *   { kind: "end", time: "2026-11-21T14:50:01Z", rule: "ECN > 100" },
 * );
 * ```
 */
export function parseEventMarker(text: string): EventMarker | undefined {
  const m = EVENT.exec(text);
  if (!m) return undefined;
  return {
    kind: m[1] === EVENT_START ? "start" : "end",
    // Copies: a regex match is a slice that would keep the line alive.
    time: (" " + m[2]).slice(1),
    rule: unquoteName(m[3]),
  };
}

/**
 * Reads a `<<Gap>>` line; undefined if it is malformed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGapMarker } from "./markers.ts";
 *
 * assert.deepEqual(
 *   parseGapMarker("<<Gap>> Time: 2026-11-21T14:02:03Z, Dropped samples: 5, From: 2026-11-21T14:02:00.120Z, To: 2026-11-21T14:02:03.456Z"),
 *   {
 *     kind: "dropped",
 *     count: 5,
 *     time: "2026-11-21T14:02:03Z",
 *     span: { from: { sec: 1795269720, ns: 120e6 }, to: { sec: 1795269723, ns: 456e6 }, stopped: false },
 *   },
 * );
 * ```
 */
export function parseGapMarker(text: string): GapMarker | undefined {
  const m = GAP_LINE.exec(text);
  if (!m) return undefined;
  const gap = {
    kind: m[2] === LOST_FIELD ? "lost" : "dropped",
    count: Number(m[3]),
    // Copies: a regex match is a slice that would keep the line alive.
    time: (" " + m[1]).slice(1),
  } as const;
  if (m[4] === undefined) return gap;
  const from = m[4] === UNKNOWN_TIME ? null : markerInstant(m[4]);
  const to = markerInstant(m[6]);
  if (to === null || (from === null && m[4] !== UNKNOWN_TIME)) return undefined;
  return { ...gap, span: { from, to, stopped: m[5] === STOPPED_FIELD } };
}

/** A marker's `YYYY-MM-DDTHH:MM:SSZ` as an instant; null if unreadable. */
export function markerInstant(text: string): Instant | null {
  const ms = Date.parse(text.trim());
  if (!Number.isFinite(ms)) return null;
  const sec = Math.floor(ms / 1000);
  return { sec, ns: (ms - sec * 1000) * 1e6 };
}

/**
 * The whole second a marker time stands for, when the text is exactly
 * how the writers print that second (so it can be kept as a number and
 * printed back the same); NaN otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalMarkerSecond } from "./markers.ts";
 *
 * assert.equal(canonicalMarkerSecond("2026-11-21T14:50:00Z"), 1795272600);
 * assert.ok(Number.isNaN(canonicalMarkerSecond("2026-11-21 14:50")));
 * ```
 */
export function canonicalMarkerSecond(text: string): number {
  const t = markerInstant(text);
  if (t === null || t.ns !== 0 || isoTime(t.sec, 0, 0) !== text) return NaN;
  return t.sec;
}
