/**
 * Which events a review shows: `--rule`, `--monitor`, `--since` and
 * `--until`. Filters only hide events; they keep the numbers the whole
 * timeline gave them, so `--event N` means the same event with or without.
 *
 * @module
 */

import { instantMs, type ReviewEvent } from "./event.ts";

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
 * seconds (`1795272600`). Throws a TypeError naming the option.
 *
 * @example
 * ```ts
 * import { parseTimeOption } from "./filters.ts";
 * parseTimeOption("--since", "2026-11-21T14:50"); // 1795272600000
 * parseTimeOption("--since", "1795272600.5"); // 1795272600500
 * ```
 */
export function parseTimeOption(option: string, text: string): number {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const m = ISO.exec(value);
  if (m) {
    const iso = m[2] === undefined
      ? `${m[1]}T00:00:00${m[3] ?? "Z"}`
      : `${m[1]}T${m[2]}${m[3] ?? "Z"}`;
    const ms = Date.parse(iso.toUpperCase());
    if (Number.isFinite(ms)) return ms;
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
  if (!matchesNames(event.monitor, event.rule, filter)) return false;
  if (filter.sinceMs !== undefined && event.state !== "open") {
    const last = event.end ?? event.last ?? event.start;
    if (last !== null && instantMs(last) < filter.sinceMs) return false;
  }
  if (filter.untilMs !== undefined && event.start !== null) {
    // Whole milliseconds: "--until 14:50:00" keeps a start at 14:50:00.0004.
    if (Math.floor(instantMs(event.start)) > filter.untilMs) return false;
  }
  return true;
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
