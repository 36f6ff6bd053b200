import assert from "node:assert/strict";
import {
  type EventContext,
  type EventRecord,
  EventStore,
  filterEvents,
  Timeline,
} from "./event_store.ts";

const context = (monitor: string): EventContext => ({
  monitor,
  rule: "r",
  timeFormat: "ns",
  files: ["a.log", "b.log"],
  columns: ["timestamp", "x"],
  columnIndex: 1,
});

const record = (
  ctx: number,
  sec: number | null,
  over: Partial<EventRecord> = {},
): EventRecord => ({
  context: ctx,
  file: 1,
  line: 7,
  start: sec === null ? null : { sec, ns: 5 },
  startKnown: true,
  startMarker: "2026-11-21T14:50:00Z",
  endMarker: "2026-11-21T14:50:01Z",
  last: sec === null ? null : { sec: sec + 1, ns: 999999999 },
  state: "ended",
  durationS: 1.000000994,
  rows: 2 ** 40,
  historyRows: 4,
  droppedSamples: 3,
  lostRows: 1,
  blindPeriods: 2,
  blindSamples: 2 ** 40 + 1,
  rulePeak: 68600.5,
  columnPeak: [18446744073, 709551615],
  columnPeakAt: sec === null ? null : { sec, ns: 6 },
  columnPeakRate: -2.5,
  columnPeakRateAt: null,
  windowStartFile: 0,
  windowStartLine: 30,
  windowStartOffset: 2 ** 40 + 3,
  windowEndFile: 1,
  windowEndLine: 9,
  startRow: sec === null ? null : { sec, ns: 5 },
  ...over,
});

Deno.test("an event reads back as it was stored, exactly", () => {
  const store = new EventStore();
  const nic = store.context(context("nic"));
  assert.equal(store.context(context("nic")), nic + 1, "a new object: new id");
  const ctx = context("gpu");
  const id = store.context(ctx);
  assert.equal(store.context(ctx), id);
  store.add(record(id, 1795272600));
  const e = store.event(0, 1);
  assert.equal(e.monitor, "gpu");
  assert.equal(e.file, "b.log");
  assert.deepEqual(e.start, { sec: 1795272600, ns: 5 });
  assert.deepEqual(e.end, { sec: 1795272601, ns: 999999999 }); // its last row
  assert.deepEqual(
    [e.startMarker, e.endMarker, e.durationS, e.rows, e.samples],
    [
      "2026-11-21T14:50:00Z",
      "2026-11-21T14:50:01Z",
      1.000000994,
      2 ** 40,
      2 ** 40 + 4,
    ],
  );
  assert.equal(e.columnPeak, "18446744073709551615");
  assert.equal(e.rulePeak, 68600.5);
  assert.deepEqual([e.columnPeakRate, e.columnPeakRateAt], [-2.5, null]);
  assert.deepEqual(
    [e.window.startOffset, e.window.endFile, e.window.endLine],
    [2 ** 40 + 3, 1, 9],
  );
  assert.equal(e.window.columns, ctx.columns);
});

Deno.test("nulls, open events and marker texts that do not print back", () => {
  const store = new EventStore();
  const id = store.context(context("nic"));
  store.add(record(id, null, {
    state: "open",
    startKnown: false,
    startMarker: null,
    endMarker: null,
    durationS: null,
    rulePeak: null,
    columnPeak: null,
    columnPeakRate: null,
    windowEndLine: null,
  }));
  store.add(record(id, 5, { startMarker: "soon", endMarker: "2026-11-21 x" }));
  const a = store.event(0, 1);
  assert.deepEqual(
    [a.start, a.end, a.last, a.state, a.startKnown, a.startMarker],
    [null, null, null, "open", false, null],
  );
  assert.deepEqual(
    [a.durationS, a.rulePeak, a.columnPeak, a.columnPeakRate],
    [null, null, null, null],
  );
  assert.deepEqual([a.window.endFile, a.window.endLine], [null, null]);
  const b = store.event(1, 2);
  assert.deepEqual([b.startMarker, b.endMarker], ["soon", "2026-11-21 x"]);
});

Deno.test("the timeline: by start, unknown starts last, then monitor; filtered views keep ids", () => {
  const store = new EventStore();
  const nic = store.context(context("nic"));
  const gpu = store.context(context("gpu"));
  store.add(record(nic, 300));
  store.add(record(nic, null));
  store.add(record(nic, 100));
  store.add(record(gpu, 300));
  for (let i = 0; i < 5000; i++) store.add(record(gpu, 1000 + i)); // chunks
  const timeline = new Timeline(store);
  assert.equal(timeline.length, 5004);
  const head = [0, 1, 2].map((k) => timeline.at(k)!);
  assert.deepEqual(
    head.map((e) => [e.id, e.monitor, e.start?.sec]),
    [[1, "nic", 100], [2, "gpu", 300], [3, "nic", 300]],
  );
  assert.equal(timeline.at(5003)!.start, null);
  assert.equal(timeline.at(5004), undefined);
  const nicOnly = filterEvents(timeline, (e) => e.monitor === "nic");
  assert.deepEqual([...nicOnly].map((e) => e.id), [1, 3, 5004]);
  assert.equal(nicOnly.at(1)!.id, 3);
  assert.equal(filterEvents(timeline, () => true), timeline);
});
