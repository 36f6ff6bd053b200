/**
 * The marker lines of events.log: `<<Event start>>` and `<<Event end>>`
 * after the row of the sample on which a rule changed state, and
 * `<<Gap>>` where samples or rows were lost during an event.
 *
 * @module
 */

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
}

const EVENT = /^<<Event (start|end)>> Time: ([^,]*), Rule: (.*)$/;
const GAP = /^<<Gap>> Time: ([^,]*), (Dropped samples|Lost rows): (\d+)\s*$/;

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
    kind: m[1] as "start" | "end",
    // Copies: a regex match is a slice that would keep the line alive.
    time: (" " + m[2]).slice(1),
    rule: unquoteName(m[3]),
  };
}

/** Reads a `<<Gap>>` line; undefined if it is malformed. */
export function parseGapMarker(text: string): GapMarker | undefined {
  const m = GAP.exec(text);
  if (!m) return undefined;
  return {
    kind: m[2] === "Lost rows" ? "lost" : "dropped",
    count: Number(m[3]),
  };
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
