import assert from "node:assert/strict";
import type { ReviewEvent } from "./event.ts";
import { matchesFilter, parseTimeOption } from "./filters.ts";

Deno.test("parseTimeOption takes ISO-8601 (UTC without a zone) and Unix seconds", () => {
  const t = Date.UTC(2026, 10, 21, 14, 50, 0);
  assert.equal(parseTimeOption("--since", "2026-11-21T14:50:00Z"), t);
  assert.equal(parseTimeOption("--since", "2026-11-21T14:50"), t);
  assert.equal(parseTimeOption("--since", "2026-11-21 14:50:00"), t);
  assert.equal(parseTimeOption("--since", "2026-11-21T16:50:00+02:00"), t);
  assert.equal(parseTimeOption("--since", "2026-11-21T14:50:00.250Z"), t + 250);
  assert.equal(
    parseTimeOption("--since", "2026-11-21"),
    Date.UTC(2026, 10, 21),
  );
  // A date alone: its start for --since, its end for --until.
  assert.equal(
    parseTimeOption("--until", "2026-11-21", true),
    Date.UTC(2026, 10, 22) - 1,
  );
  assert.equal(parseTimeOption("--until", "2026-11-21T14:50", true), t);
  assert.equal(parseTimeOption("--since", "1795272600"), t);
  assert.equal(parseTimeOption("--since", "1795272600.5"), t + 500);
  for (
    const bad of ["yesterday", "2026-13-01", "14:50", "", "2026-11-21T25:00"]
  ) {
    assert.throws(() => parseTimeOption("--until", bad), (e: Error) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /^--until must be an ISO-8601 time/);
      return true;
    }, bad);
  }
});

function event(
  rule: string,
  startSec: number,
  endSec: number | null,
  state: ReviewEvent["state"] = "ended",
  monitor = "nic",
): ReviewEvent {
  return {
    rule,
    monitor,
    state,
    start: { sec: startSec, ns: 0 },
    end: endSec === null ? null : { sec: endSec, ns: 0 },
    last: endSec === null
      ? { sec: startSec + 1, ns: 0 }
      : { sec: endSec, ns: 0 },
  } as ReviewEvent;
}

Deno.test("matchesFilter: rule text (any case), monitor, and overlap with since..until", () => {
  const all = [
    event("ECN marks > 10000", 100, 110),
    event("PFC pauses", 105, 200),
    event("ECN marks > 10000", 300, null, "open", "gpu"),
    event("Latency", 50, null, "interrupted"),
  ];
  const pick = (f: Parameters<typeof matchesFilter>[1]) =>
    all.flatMap((e, i) => matchesFilter(e, f) ? [i] : []);
  const none = { rules: [], monitors: [] };
  assert.deepEqual(pick(none), [0, 1, 2, 3]);
  assert.deepEqual(pick({ ...none, rules: ["ecn"] }), [0, 2]);
  assert.deepEqual(pick({ ...none, rules: ["pfc", "LAT"] }), [1, 3]);
  assert.deepEqual(pick({ ...none, monitors: ["GPU"] }), [2]);
  // Still going at or after 150 s: the PFC event and the open one.
  assert.deepEqual(pick({ ...none, sinceMs: 150_000 }), [1, 2]);
  // Started by 104 s: the first ECN event and the cut latency event.
  assert.deepEqual(pick({ ...none, untilMs: 104_000 }), [0, 3]);
  assert.deepEqual(pick({ ...none, sinceMs: 108_000, untilMs: 106_000 }), [
    0,
    1,
  ]);
});
