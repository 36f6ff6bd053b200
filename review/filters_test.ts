import assert from "node:assert/strict";
import type { ReviewEvent } from "./event.ts";
import { parseTimePoint } from "../base/time_point.ts";
import {
  matchesFilter,
  sinceBound,
  startsByUntil,
  untilBound,
} from "./filters.ts";

Deno.test("--since and --until take ISO-8601 (UTC without a zone) and Unix seconds", () => {
  const since = (text: string) => sinceBound(parseTimePoint("--since", text));
  const until = (text: string) => untilBound(parseTimePoint("--until", text));
  const t = Date.UTC(2026, 10, 21, 14, 50, 0);
  assert.equal(since("2026-11-21T14:50:00Z"), t);
  assert.equal(since("2026-11-21T14:50"), t);
  assert.equal(since("2026-11-21 14:50:00"), t);
  assert.equal(since("2026-11-21T16:50:00+02:00"), t);
  assert.equal(since("2026-11-21T14:50:00.250Z"), t + 250);
  assert.equal(since("2026-11-21"), Date.UTC(2026, 10, 21));
  // A date alone: its start for --since, its end for --until.
  assert.equal(until("2026-11-21"), Date.UTC(2026, 10, 22) - 1);
  assert.equal(until("2026-11-21T14:50"), t);
  assert.equal(since("1795272600"), t);
  assert.equal(since("1795272600.5"), t + 500);
  for (
    const bad of ["yesterday", "2026-13-01", "14:50", "", "2026-11-21T25:00"]
  ) {
    assert.throws(() => until(bad), (e: Error) => {
      assert.ok(e instanceof TypeError || e instanceof RangeError);
      assert.ok(e.message.startsWith(`--until ${JSON.stringify(bad)}: `));
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

Deno.test("--until to a fraction of a millisecond is exact; in whole milliseconds it keeps that millisecond", () => {
  const start = { sec: 100, ns: 700_000 }; // 100.0007 s
  assert.ok(startsByUntil(start, { untilMs: 100_000 }));
  assert.ok(!startsByUntil(start, { untilMs: 100_000.5 }));
  assert.ok(startsByUntil(start, { untilMs: 100_000.7 }));
  assert.ok(!startsByUntil(start, { untilMs: 99_999 }));
  assert.ok(startsByUntil(null, { untilMs: 0 }));
});
