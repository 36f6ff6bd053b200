import assert from "node:assert/strict";
import type { ReviewEvent } from "./event.ts";
import { epochMs, parseTimePoint } from "../base/time_point.ts";
import { matchesFilter, startsByUntil } from "./filters.ts";

// A bound in whole milliseconds, as `--until` written to the ms parses.
const untilMs = (ms: number) =>
  parseTimePoint("--until", (ms / 1000).toFixed(3));

Deno.test("--since and --until take ISO-8601 (UTC without a zone) and Unix seconds", () => {
  const since = (text: string) => epochMs(parseTimePoint("--since", text).ns);
  const until = (text: string) => parseTimePoint("--until", text);
  // Whether --until TEXT keeps an event started at `ms`.
  const keeps = (text: string, ms: number) =>
    startsByUntil({ sec: Math.floor(ms / 1000), ns: (ms % 1000) * 1e6 }, {
      until: until(text),
    });
  const t = Date.UTC(2026, 10, 21, 14, 50, 0);
  assert.equal(since("2026-11-21T14:50:00Z"), t);
  assert.equal(since("2026-11-21T14:50"), t);
  assert.equal(since("2026-11-21 14:50:00"), t);
  assert.equal(since("2026-11-21T16:50:00+02:00"), t);
  assert.equal(since("2026-11-21T14:50:00.250Z"), t + 250);
  assert.equal(since("2026-11-21"), Date.UTC(2026, 10, 21));
  // A date alone: its start for --since, its end for --until.
  assert.ok(keeps("2026-11-21", Date.UTC(2026, 10, 22) - 1));
  assert.ok(!keeps("2026-11-21", Date.UTC(2026, 10, 22)));
  // Any time keeps what it names: 14:50 is that minute.
  assert.ok(keeps("2026-11-21T14:50", t));
  assert.ok(keeps("2026-11-21T14:50", t + 59_999));
  assert.ok(!keeps("2026-11-21T14:50", t + 60_000));
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
  assert.deepEqual(pick({ ...none, until: untilMs(104_000) }), [0, 3]);
  assert.deepEqual(
    pick({ ...none, sinceMs: 108_000, until: untilMs(106_000) }),
    [
      0,
      1,
    ],
  );
});

Deno.test("--until to a fraction of a millisecond is exact; in whole milliseconds it keeps that millisecond", () => {
  const start = { sec: 100, ns: 700_000 }; // 100.0007 s
  const until = (text: string) => ({ until: parseTimePoint("--until", text) });
  assert.ok(startsByUntil(start, until("100.000")));
  assert.ok(!startsByUntil(start, until("100.0005")));
  assert.ok(startsByUntil(start, until("100.0007")));
  assert.ok(!startsByUntil(start, until("99.999")));
  assert.ok(startsByUntil(null, until("0")));
});

Deno.test("--until exact to the nanosecond keeps up to that nanosecond, even on a whole second", () => {
  const until = (text: string) => ({ until: parseTimePoint("--until", text) });
  const exact = until("100.000000000");
  assert.ok(startsByUntil({ sec: 100, ns: 0 }, exact));
  assert.ok(!startsByUntil({ sec: 100, ns: 1 }, exact));
  assert.ok(!startsByUntil({ sec: 100, ns: 400_000 }, exact));
  // The same time to the millisecond keeps that millisecond.
  assert.ok(startsByUntil({ sec: 100, ns: 400_000 }, until("100.000")));
  assert.ok(!startsByUntil({ sec: 100, ns: 1_000_000 }, until("100.000")));
});
