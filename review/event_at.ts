/**
 * `review --event TIME --rule NAME`: an event named by when it started and
 * by its rule, the way the agent's `/api/v1/events/ID` and its alerts
 * point at it (event numbers change as logs rotate; a start time does not).
 *
 * @module
 */

import type { ReviewEvent } from "./event.ts";
import { type EventFilter, matchesNames } from "./filters.ts";
import { markerInstant } from "./markers.ts";

/**
 * The first event whose start marker is in the whole second `second`
 * (Unix seconds) and whose monitor and rule pass `filter`; of those, the
 * first whose rule is exactly one of `filter.rules` wins (`--rule` alone
 * matches any rule containing the text). Undefined if none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventStartedAt } from "./event_at.ts";
 * import type { ReviewEvent } from "./event.ts";
 *
 * const event = (id: number, rule: string, marker: string) =>
 *   ({ id, monitor: "nic", rule, startMarker: marker }) as ReviewEvent;
 * const events = [
 *   event(1, "rx drops high", "2026-11-21T14:50:00Z"),
 *   event(2, "rx drops", "2026-11-21T14:50:00Z"),
 *   event(3, "rx drops", "2026-11-21T14:50:01Z"),
 * ];
 * const at = 1795272600; // 2026-11-21T14:50:00Z
 * const filter = { rules: ["rx drops"], monitors: [] };
 * assert.equal(eventStartedAt(events, at, filter)?.id, 2);
 * assert.equal(eventStartedAt(events, at + 1, filter)?.id, 3);
 * assert.equal(eventStartedAt(events, at + 2, filter), undefined);
 * ```
 */
export function eventStartedAt(
  events: Iterable<ReviewEvent>,
  second: number,
  filter: Pick<EventFilter, "rules" | "monitors">,
): ReviewEvent | undefined {
  let first: ReviewEvent | undefined;
  for (const event of events) {
    if (event.startMarker === null) continue;
    if (markerInstant(event.startMarker)?.sec !== second) continue;
    if (!matchesNames(event.monitor, event.rule, filter)) continue;
    if (filter.rules.includes(event.rule)) return event;
    first ??= event;
  }
  return first;
}
