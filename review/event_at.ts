/**
 * `review --event TIME --rule NAME`: an event named by when it started and
 * by its rule, the way the agent's `/api/v1/events/ID` and its alerts
 * point at it (event numbers change as logs rotate; a start time does not).
 *
 * @module
 */

import {
  formatTimePoint,
  NS_PER_DAY,
  NS_PER_SECOND,
  type TimePoint,
} from "../base/time_point.ts";
import type { Instant, ReviewEvent } from "./event.ts";
import { type EventFilter, matchesNames } from "./filters.ts";
import { markerInstant } from "./markers.ts";

/** `--event TIME`: the text as given and the time it names. */
export interface EventTime extends TimePoint {
  readonly text: string;
}

/** Most events an ambiguity error lists; the rest are counted. */
const MAX_LISTED = 10;

/**
 * The one event that started within the time `at` names, whose monitor
 * and rule pass `filter`. "Started" is its start sample's time, exact to
 * the ns (what the agent hands out: nine fraction digits name exactly
 * one sample); a TIME to the second or coarser also takes the start
 * marker's second (what a person copies from the marker line). Of those,
 * events whose rule is exactly one of `filter.rules` win (`--rule` alone
 * matches any rule containing the text). Throws a RangeError with a
 * one-line message when none started then, or when several did (listing
 * their exact start times, which name each alone). `where`: the files
 * reviewed, for the message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventStartedAt } from "./event_at.ts";
 * import type { ReviewEvent } from "./event.ts";
 * import { parseTimePoint } from "../base/time_point.ts";
 *
 * const event = (id: number, ms: number) =>
 *   ({
 *     id,
 *     monitor: "nic",
 *     rule: "rx drops",
 *     start: { sec: 1795272600, ns: ms * 1e6 },
 *     startMarker: "2026-11-21T14:50:00Z",
 *   }) as ReviewEvent;
 * const events = [event(1, 100), event(2, 400)];
 * const filter = { rules: ["rx drops"], monitors: [] };
 * const at = (text: string) => ({ text, ...parseTimePoint("--event", text) });
 * assert.equal(eventStartedAt(events, at("2026-11-21T14:50:00.400000000Z"), filter, "e.log").id, 2);
 * assert.throws(
 *   () => eventStartedAt(events, at("2026-11-21T14:50:00Z"), filter, "e.log"),
 *   {
 *     name: "RangeError",
 *     message: '--event 2026-11-21T14:50:00Z: 2 events of rule "rx drops" started in that second in e.log: ' +
 *       "2026-11-21T14:50:00.100000000Z (event 1), 2026-11-21T14:50:00.400000000Z (event 2); " +
 *       "give one of these times, or --event N with its number",
 *   },
 * );
 * ```
 */
export function eventStartedAt(
  events: Iterable<ReviewEvent>,
  at: EventTime,
  filter: Pick<EventFilter, "rules" | "monitors">,
  where: string,
): ReviewEvent {
  const end = at.ns + at.spanNs;
  // A marker has whole seconds: only a TIME that names whole seconds can
  // mean one.
  const byMarker = at.spanNs >= NS_PER_SECOND;
  const inSpan = (t: Instant | null) => {
    if (t === null) return false;
    const ns = instantNs(t);
    return ns >= at.ns && ns < end;
  };
  // Only the first few are kept: a day may hold millions.
  const found = new Candidates();
  const exact = new Candidates();
  // An event whose start row was lost (rows dropped on a failing disk)
  // still has its marker: a finer TIME within the marker's second names it.
  const inMarkerSecond = (event: ReviewEvent) => {
    if (event.startMarker === null) return false;
    const second = markerInstant(event.startMarker);
    if (second === null) return false;
    const ns = instantNs(second);
    return at.ns >= ns && at.ns < ns + NS_PER_SECOND;
  };
  for (const event of events) {
    const started = inSpan(event.start) ||
      (byMarker && event.startMarker !== null &&
        inSpan(markerInstant(event.startMarker))) ||
      (!byMarker && event.start === null && inMarkerSecond(event));
    if (!started || !matchesNames(event.monitor, event.rule, filter)) {
      continue;
    }
    found.add(event);
    if (filter.rules.includes(event.rule)) exact.add(event);
  }
  const chosen = exact.count > 0 ? exact : found;
  const text = at.text.trim();
  const when = spanWords(at.spanNs);
  if (chosen.count === 1) return chosen.first[0];
  if (chosen.count === 0) {
    const which = filter.rules.length === 0
      ? "no event"
      : `no event of rule ${
        filter.rules.map((r) => JSON.stringify(r)).join(" or ")
      }`;
    throw new RangeError(
      `--event ${text}: ${which} started ${when} in ${where}`,
    );
  }
  const listed = chosen.first.map((e) => {
    const start = e.start === null
      ? e.startMarker
      : formatTimePoint(instantNs(e.start));
    const rule = chosen.oneRule ? "" : `, rule ${JSON.stringify(e.rule)}`;
    const monitor = chosen.oneMonitor
      ? ""
      : `, monitor ${JSON.stringify(e.monitor)}`;
    return `${start} (event ${e.id}${rule}${monitor})`;
  });
  if (chosen.count > MAX_LISTED) {
    listed.push(`and ${chosen.count - MAX_LISTED} more`);
  }
  throw new RangeError(
    `--event ${text}: ${chosen.count} events${
      chosen.oneRule ? ` of rule ${JSON.stringify(chosen.first[0].rule)}` : ""
    } started ${when} in ${where}: ${
      listed.join(", ")
    }; give one of these times, or --event N with its number`,
  );
}

// Events that match, counted; the first few kept for the message.
class Candidates {
  readonly first: ReviewEvent[] = [];
  count = 0;
  oneRule = true;
  oneMonitor = true;

  add(event: ReviewEvent): void {
    const head = this.first[0];
    if (head !== undefined) {
      this.oneRule &&= event.rule === head.rule;
      this.oneMonitor &&= event.monitor === head.monitor;
    }
    if (this.first.length < MAX_LISTED) this.first.push(event);
    this.count++;
  }
}

// Exact ns since the epoch of a review instant.
function instantNs(t: Instant): bigint {
  return BigInt(t.sec) * NS_PER_SECOND + BigInt(Math.round(t.ns));
}

// The time a TIME names, in words: "in that second".
function spanWords(spanNs: bigint): string {
  if (spanNs === 1n) return "at exactly that time";
  if (spanNs === NS_PER_SECOND) return "in that second";
  if (spanNs === 60n * NS_PER_SECOND) return "in that minute";
  if (spanNs === NS_PER_DAY) return "on that day";
  const [unit, ns] = spanNs >= 1_000_000n
    ? ["ms", 1_000_000n]
    : spanNs >= 1000n
    ? ["µs", 1000n]
    : ["ns", 1n];
  return `in the ${spanNs / ns} ${unit} from that time`;
}
