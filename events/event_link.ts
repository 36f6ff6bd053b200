/**
 * An event's stable ID and the paths built on it. An event is named by
 * what no restart, rotation or other event changes: its monitor, its
 * rule and its start sample's time to the ns (the time of its row in
 * events.log, which `review --event TIME --rule NAME` takes too). So a
 * link sent in a notification opens the same event next week, after the
 * agent restarted and the log rotated.
 *
 * The ID is `MONITOR/RULE/START`: the two names percent-encoded (a rule
 * name is free text: spaces, slashes, quotes), START as RFC 3339 UTC with
 * nine fraction digits, e.g. `nic/ECN%20storm/2026-11-27T15:21:03.123456789Z`.
 * The event's page is `/events/ID`; its JSON summary `/api/v1/events/ID`;
 * its rows `/events/ID/rows.csv` and `/events/ID/rows.json`.
 *
 * @module
 */

import { formatTimePoint, parseTimePoint } from "../base/time_point.ts";

/** What names an event for good. */
export interface EventKey {
  readonly monitor: string;
  readonly rule: string;
  /** The start sample's timestamp, ns since the Unix epoch. */
  readonly startNs: bigint;
}

/** The longest ID accepted from a request, in bytes of its encoded form. */
export const MAX_EVENT_ID_LENGTH = 1024;

/**
 * The event's ID, ready to go in a URL path.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventId } from "./event_link.ts";
 *
 * assert.equal(
 *   eventId({ monitor: "nic", rule: "ECN storm / port 0", startNs: 1_795_272_600_300_000_001n }),
 *   "nic/ECN%20storm%20%2F%20port%200/2026-11-21T14:50:00.300000001Z",
 * );
 * ```
 */
export function eventId(key: EventKey): string {
  return `${encodeName(key.monitor)}/${encodeName(key.rule)}/${
    formatTimePoint(key.startNs)
  }`;
}

/**
 * Percent-encoded as RFC 3986 wants a path segment's data, quotes and
 * parentheses too, so the ID can go in HTML, Markdown and a shell unquoted.
 */
function encodeName(name: string): string {
  return encodeURIComponent(name).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** An ID read back, or why it is not one. */
export type ParsedEventId =
  | { readonly ok: true; readonly key: EventKey }
  | { readonly ok: false; readonly problem: string };

const START = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;

/**
 * Reads an ID (as {@linkcode eventId} writes it, percent-encoded as it
 * comes in a request path) back into its key; a malformed one gets a
 * one-line problem, for a 400 or 404.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEventId } from "./event_link.ts";
 *
 * assert.deepEqual(parseEventId("nic/ECN%20storm/2026-11-21T14:50:00.300000001Z"), {
 *   ok: true,
 *   key: { monitor: "nic", rule: "ECN storm", startNs: 1_795_272_600_300_000_001n },
 * });
 * assert.deepEqual(parseEventId("nic/ECN%20storm/yesterday"), {
 *   ok: false,
 *   problem: 'the event ID must be MONITOR/RULE/START, START as 2026-11-21T14:50:00.300000001Z (UTC, 9 fraction digits); got start "yesterday"',
 * });
 * ```
 */
export function parseEventId(id: string): ParsedEventId {
  const fail = (why: string): ParsedEventId => ({
    ok: false,
    problem:
      `the event ID must be MONITOR/RULE/START, START as 2026-11-21T14:50:00.300000001Z (UTC, 9 fraction digits); ${why}`,
  });
  if (id.length > MAX_EVENT_ID_LENGTH) {
    return fail(`got ${id.length} bytes, more than ${MAX_EVENT_ID_LENGTH}`);
  }
  const parts = id.split("/");
  if (parts.length !== 3) return fail(`got ${parts.length} parts`);
  let monitor: string;
  let rule: string;
  let start: string;
  try {
    [monitor, rule, start] = parts.map(decodeURIComponent);
  } catch {
    return fail("a name is not valid percent-encoded UTF-8");
  }
  if (monitor === "" || rule === "") return fail("a name is empty");
  if (!START.test(start)) {
    return fail(`got start ${JSON.stringify(start.slice(0, 40))}`);
  }
  let startNs: bigint;
  try {
    startNs = parseTimePoint("START", start).ns;
  } catch {
    return fail(`got start ${JSON.stringify(start)}, not a time`);
  }
  return { ok: true, key: { monitor, rule, startNs } };
}

/**
 * The path of the event's page on the endpoint.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventPagePath } from "./event_link.ts";
 *
 * assert.equal(
 *   eventPagePath({ monitor: "nic", rule: "drops", startNs: 0n }),
 *   "/events/nic/drops/1970-01-01T00:00:00.000000000Z",
 * );
 * ```
 */
export function eventPagePath(key: EventKey): string {
  return `/events/${eventId(key)}`;
}
