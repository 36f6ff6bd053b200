import assert from "node:assert/strict";
import { parseTimePoint } from "../base/time_point.ts";
import { eventStartedAt, type EventTime } from "./event_at.ts";
import type { EventFilter } from "./filters.ts";
import type { ReviewEvent } from "./event.ts";

const AT = 1795272600; // 2026-11-21T14:50:00Z
const NONE: EventFilter = { rules: [], monitors: [] };
const LIST = "give one of these times, or --event N with its number";

/** An event that started `ms` after AT, its marker in `markerSec` (AT's by default). */
function event(
  id: number,
  monitor: string,
  rule: string,
  ms: number | null,
  markerSec: number | null = AT,
): ReviewEvent {
  const start = ms === null ? null : {
    sec: AT + Math.floor(ms / 1000),
    ns: Math.round((ms - Math.floor(ms / 1000) * 1000) * 1e6),
  };
  const startMarker = markerSec === null
    ? null
    : new Date(markerSec * 1000).toISOString().replace(".000Z", "Z");
  return { id, monitor, rule, start, startMarker } as ReviewEvent;
}

function at(text: string): EventTime {
  return { text, ...parseTimePoint("--event", text) };
}

function find(
  events: ReviewEvent[],
  time: string,
  filter: EventFilter = NONE,
): number {
  return eventStartedAt(events, at(time), filter, "e.log").id;
}

function refusal(
  events: ReviewEvent[],
  time: string,
  filter: EventFilter = NONE,
): string {
  try {
    eventStartedAt(events, at(time), filter, "e.log");
  } catch (error) {
    assert.ok(error instanceof RangeError);
    return error.message;
  }
  assert.fail(`${time} found an event`);
}

Deno.test("two events of one rule 300 ms apart: each by its exact start, not by their second", () => {
  const events = [
    event(1, "nic", "drops", 100.000123),
    event(2, "nic", "drops", 400.000123),
  ];
  const rule = { rules: ["drops"], monitors: [] };
  assert.equal(find(events, "2026-11-21T14:50:00.100000123Z", rule), 1);
  assert.equal(find(events, "2026-11-21T14:50:00.400000123Z", rule), 2);
  assert.equal(find(events, "1795272600.400000123", rule), 2);
  // One ns off names no event: no tolerance that could reach a neighbour.
  assert.equal(
    refusal(events, "2026-11-21T14:50:00.400000124Z", rule),
    '--event 2026-11-21T14:50:00.400000124Z: no event of rule "drops" started at exactly that time in e.log',
  );
  // A coarser time that holds one of them is enough.
  assert.equal(find(events, "2026-11-21T14:50:00.1", rule), 1);
  assert.equal(find(events, "2026-11-21T14:50:00.4", rule), 2);
  for (const second of ["2026-11-21T14:50:00Z", "1795272600"]) {
    assert.equal(
      refusal(events, second, rule),
      `--event ${second}: 2 events of rule "drops" started in that second in e.log: ` +
        `2026-11-21T14:50:00.100000123Z (event 1), 2026-11-21T14:50:00.400000123Z (event 2); ${LIST}`,
    );
  }
});

Deno.test("monitor and rule narrow the events; an exact rule name beats one that contains it", () => {
  const events = [
    event(1, "nic", "drops", null, null), // started before the log
    event(2, "gpu", "drops", 0),
    event(3, "nic", "DROPS total", 0),
    event(4, "nic", "drops", 0),
  ];
  const second = "2026-11-21T14:50:00Z";
  assert.equal(
    find(events, second, { rules: ["drops"], monitors: ["NIC"] }),
    4,
  );
  assert.equal(find(events, second, { rules: ["drops t"], monitors: [] }), 3);
  assert.equal(find(events, second, { rules: [], monitors: ["gpu"] }), 2);
  // Several rules, several monitors: each listed with what tells it apart.
  assert.equal(
    refusal(events, second, { rules: [], monitors: ["nic"] }),
    `--event ${second}: 2 events started in that second in e.log: ` +
      `2026-11-21T14:50:00.000000000Z (event 3, rule "DROPS total"), ` +
      `2026-11-21T14:50:00.000000000Z (event 4, rule "drops"); ${LIST}`,
  );
  assert.equal(
    refusal(events, second, { rules: ["drops"], monitors: [] }),
    `--event ${second}: 2 events of rule "drops" started in that second in e.log: ` +
      `2026-11-21T14:50:00.000000000Z (event 2, monitor "gpu"), ` +
      `2026-11-21T14:50:00.000000000Z (event 4, monitor "nic"); ${LIST}`,
  );
  assert.equal(
    refusal(events, second, { rules: ["ecn", "pfc"], monitors: [] }),
    `--event ${second}: no event of rule "ecn" or "pfc" started in that second in e.log`,
  );
  assert.equal(
    refusal(events, "2026-11-21T14:49:59Z"),
    "--event 2026-11-21T14:49:59Z: no event started in that second in e.log",
  );
});

Deno.test("a time to the second also takes the start marker's second", () => {
  // The start sample at 14:49:59.9995, its marker written at 14:50:00.
  const late = [event(1, "nic", "drops", -0.5)];
  assert.equal(find(late, "2026-11-21T14:50:00Z"), 1);
  assert.equal(find(late, "2026-11-21T14:49:59Z"), 1);
  assert.equal(find(late, "2026-11-21T14:49:59.999500000Z"), 1);
  assert.equal(find(late, "2026-11-21T14:49:59.9995Z"), 1);
  // A fraction is a sample's time: the marker's second does not count.
  assert.match(refusal(late, "2026-11-21T14:50:00.000Z"), /no event started/);
  // Marker and sample in different seconds, another event in the marker's:
  // the marker's second names both.
  const two = [...late, event(2, "nic", "drops", 200)];
  assert.equal(
    refusal(two, "2026-11-21T14:50:00Z"),
    '--event 2026-11-21T14:50:00Z: 2 events of rule "drops" started in that second in e.log: ' +
      `2026-11-21T14:49:59.999500000Z (event 1), 2026-11-21T14:50:00.200000000Z (event 2); ${LIST}`,
  );
  // A marker that is not a time never matches.
  const garbage = { ...event(3, "nic", "x", null), startMarker: "garbage" };
  assert.match(refusal([garbage], "2026-11-21T14:50:00Z"), /no event/);
});

Deno.test("a minute or a day names what started in it; a long list is cut", () => {
  const events = Array.from(
    { length: 13 },
    (_, i) => event(i + 1, "nic", "drops", i * 1000),
  );
  assert.equal(
    refusal(events, "2026-11-21T14:50"),
    '--event 2026-11-21T14:50: 13 events of rule "drops" started in that minute in e.log: ' +
      Array.from(
        { length: 10 },
        (_, i) =>
          `2026-11-21T14:50:${String(i).padStart(2, "0")}.000000000Z (event ${
            i + 1
          })`,
      ).join(", ") + `, and 3 more; ${LIST}`,
  );
  assert.match(refusal(events, "2026-11-21"), /: 13 events .* on that day /);
  assert.match(
    refusal(events, "2026-11-21T14:51:00.00"),
    /: no event started in the 10 ms from that time in e\.log$/,
  );
  assert.equal(find(events, "2026-11-21T14:50:12.00"), 13);
});

Deno.test("an event whose start row was lost is found by the exact time handed out for it, through its marker's second", () => {
  // Rows dropped on a failing disk: event 2's start row is missing, its
  // marker (2026-11-21T14:50:00Z) is there.
  const events = [
    event(1, "nic", "drops", 1_100),
    event(2, "nic", "drops", null),
  ];
  const rule = { rules: ["drops"], monitors: [] };
  assert.equal(find(events, "2026-11-21T14:50:00.400000123Z", rule), 2);
  // The next second holds event 1's exact start, and only that.
  assert.equal(find(events, "2026-11-21T14:50:01.100000000Z", rule), 1);
  // Two such events in one second: ambiguous, as for a whole second.
  const two = [...events, event(3, "nic", "drops", null)];
  assert.match(
    refusal(two, "2026-11-21T14:50:00.400000123Z", rule),
    /2 events of rule "drops"/,
  );
});
