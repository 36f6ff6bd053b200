import assert from "node:assert/strict";
import {
  closeEvent,
  type EventStart,
  openEvent,
  trackSample,
  wallTime,
} from "./open_event.ts";

const start = (over: Partial<EventStart> = {}): EventStart => ({
  context: 0,
  rule: "r",
  col: 1,
  low: false,
  timeFormat: "ns",
  file: 0,
  line: 10,
  start: { sec: 100, ns: 0 },
  startKnown: true,
  startMarker: "1970-01-01T00:01:40Z",
  rowSec: 100,
  rowNs: 0,
  anchorWall: null,
  historyRows: 4,
  window: { file: 0, line: 5, offset: 50 },
  ...over,
});

Deno.test("peaks follow the rule's direction: highest, or lowest for lt and dt_lt", () => {
  for (const [low, peak, rate] of [[false, 30, 5], [true, 10, -4]] as const) {
    const open = openEvent(start({ low }));
    trackSample(open, 100, 0, 0, 20, 1, false); // the start sample
    trackSample(open, 100, 1, 0, 30, 5);
    trackSample(open, 100, 2, 0, 10, -4);
    const r = closeEvent(open, "ended", "1970-01-01T00:01:40Z", {
      file: 0,
      line: 20,
    });
    assert.deepEqual(r.columnPeak, [0, peak]);
    assert.equal(r.columnPeakRate, rate);
    assert.equal(r.rows, 2);
    assert.equal(r.durationS, 2e-9);
  }
});

Deno.test("a counter clock: wall times from the anchor, across a wrap of 2^64", () => {
  const s = start({
    timeFormat: "counter",
    rowSec: 18446744073,
    rowNs: 709551515, // 2^64 - 101
    anchorWall: { sec: 1795272600, ns: 999999950 },
  });
  assert.deepEqual(wallTime(s, 18446744073, 709551515), {
    sec: 1795272600,
    ns: 999999950,
  });
  // 2^64 - 1, then 99 after the wrap: 100 and 200 ns on.
  assert.deepEqual(wallTime(s, 18446744073, 709551615), {
    sec: 1795272601,
    ns: 50,
  });
  assert.deepEqual(wallTime(s, 0, 99), { sec: 1795272601, ns: 150 });
  assert.equal(wallTime({ ...s, anchorWall: null }, 0, 99), null);
  assert.deepEqual(wallTime(start(), 7, 8), { sec: 7, ns: 8 });
});
