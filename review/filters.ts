/**
 * Which events a review shows: `--rule`, `--monitor`, `--since` and
 * `--until`. Filters only hide events; they keep the numbers the whole
 * timeline gave them, so `--event N` means the same event with or without.
 *
 * @module
 */

import {
  type EventState,
  type Instant,
  instantMs,
  lastKnown,
  type ReviewEvent,
} from "./event.ts";

/** What to keep. Empty lists and undefined bounds keep everything. */
export interface EventFilter {
  /** Keep events whose rule name contains one of these (any case). */
  readonly rules: readonly string[];
  /** Keep events of these monitors (exact name, any case). */
  readonly monitors: readonly string[];
  /** Keep events still going at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
  /** Keep events that started at or before this time (ms since the epoch). */
  readonly untilMs?: number;
}

const ISO =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses a `--since` / `--until` value: an ISO-8601 date or date and time
 * (`2026-11-21`, `2026-11-21T14:50`, `2026-11-21 14:50:00.5`, with `Z` or
 * an offset; without one it is UTC, as the log's times are) or Unix
 * seconds (`1795272600`). A date alone is the start of that day, or with
 * `endOfDay` (for `--until`) its last millisecond, so that
 * `--until 2026-11-21` keeps the whole day. Throws a TypeError naming the
 * option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTimeOption } from "./filters.ts";
 *
 * assert.equal(parseTimeOption("--since", "2026-11-21T14:50"), 1795272600000); // UTC
 * assert.equal(parseTimeOption("--since", "1795272600.5"), 1795272600500);
 * assert.equal(parseTimeOption("--until", "2026-11-21", true), 1795305599999);
 * assert.throws(() => parseTimeOption("--since", "yesterday"), TypeError);
 * ```
 */
export function parseTimeOption(
  option: string,
  text: string,
  endOfDay = false,
): number {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const m = ISO.exec(value);
  if (m) {
    const iso = m[2] === undefined
      ? `${m[1]}T00:00:00${m[3] ?? "Z"}`
      : `${m[1]}T${m[2]}${m[3] ?? "Z"}`;
    const ms = Date.parse(iso.toUpperCase());
    if (Number.isFinite(ms)) {
      return m[2] === undefined && endOfDay ? ms + 86_400_000 - 1 : ms;
    }
  }
  throw new TypeError(
    `${option} must be an ISO-8601 time (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds, got "${text}"`,
  );
}

/**
 * Whether `event` passes: its rule and monitor match, it had not ended
 * before `since` (an open event is still going) and had started by
 * `until`. An event whose start is not in the log passes `until`.
 */
export function matchesFilter(
  event: ReviewEvent,
  filter: EventFilter,
): boolean {
  return matchesNames(event.monitor, event.rule, filter) &&
    startsByUntil(event.start, filter) &&
    goesOnUntilSince(lastKnown(event), event.state, filter);
}

/**
 * Whether an event that started at `start` passes `--until` (what is
 * known when it starts); an unknown start passes.
 */
export function startsByUntil(
  start: Instant | null,
  filter: Pick<EventFilter, "untilMs">,
): boolean {
  // Whole milliseconds: "--until 14:50:00" keeps a start at 14:50:00.0004.
  return filter.untilMs === undefined || start === null ||
    Math.floor(instantMs(start)) <= filter.untilMs;
}

/**
 * Whether an event last known at `last` (its end, else its last row,
 * else its start) in `state` passes `--since` (known when it is over);
 * an open event is still going and passes.
 */
export function goesOnUntilSince(
  last: Instant | null,
  state: EventState,
  filter: Pick<EventFilter, "sinceMs">,
): boolean {
  return filter.sinceMs === undefined || state === "open" || last === null ||
    instantMs(last) >= filter.sinceMs;
}

/**
 * Whether a monitor and rule pass the filter's `--monitor` and `--rule`
 * (what is known when an event starts, before its times are).
 */
export function matchesNames(
  monitor: string,
  rule: string,
  filter: Pick<EventFilter, "rules" | "monitors">,
): boolean {
  if (filter.rules.length > 0) {
    const name = rule.toLowerCase();
    if (!filter.rules.some((r) => name.includes(r.toLowerCase()))) return false;
  }
  if (filter.monitors.length > 0) {
    const name = monitor.toLowerCase();
    if (!filter.monitors.some((m) => m.toLowerCase() === name)) return false;
  }
  return true;
}
