/**
 * Which events a review shows: `--rule`, `--monitor`, `--since` and
 * `--until`. Filters only hide events; they keep the numbers the whole
 * timeline gave them, so `--event N` means the same event with or without.
 *
 * @module
 */

import { NS_PER_SECOND, type TimePoint } from "../base/time_point.ts";
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
  /**
   * Keep events that started within or before the time `--until` names,
   * exactly as written: `2026-11-21` keeps that whole day, `14:50` that
   * minute, `14:50:00.000000000` up to that nanosecond.
   */
  readonly until?: TimePoint;
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
  filter: Pick<EventFilter, "until">,
): boolean {
  const until = filter.until;
  if (until === undefined || start === null) return true;
  const startNs = BigInt(start.sec) * NS_PER_SECOND +
    BigInt(Math.round(start.ns));
  return startNs < until.ns + until.spanNs;
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
