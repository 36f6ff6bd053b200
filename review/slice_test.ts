import assert from "node:assert/strict";
import {
  checkSlice,
  parseSliceBound,
  RowSlice,
  SliceError,
  sliceText,
} from "./slice.ts";

const START = { sec: 1795272601, ns: 0 }; // 2026-11-21T14:50:01Z

Deno.test("offsets: a sign, then a duration with a unit or seconds as offset_s prints them", () => {
  const ns = (text: string) => {
    const b = parseSliceBound("--from", text);
    assert.equal(b.kind, "offset");
    return b.ns;
  };
  assert.equal(ns("+1.5s"), 1_500_000_000);
  assert.equal(ns("-200ms"), -200_000_000);
  assert.equal(ns("+250us"), 250_000);
  assert.equal(ns("-250µs"), -250_000);
  assert.equal(ns("+2 min"), 120_000_000_000);
  assert.equal(ns("+0"), 0);
  assert.equal(ns("-0"), 0);
  assert.equal(ns("-0.000300"), -300_000);
  assert.equal(ns("+3.000000001"), 3_000_000_001);
  assert.equal(ns("+3.0000000010"), 3_000_000_001);
});

Deno.test("bad bounds: one line naming the option and quoting the text", () => {
  const cases: [string, RegExp][] = [
    ["+5x", /^--from "\+5x": an offset has an unknown unit "x"; use ns, /],
    [
      "+1.5ns",
      /^--from "\+1\.5ns": an offset is not a whole number of nanoseconds$/,
    ],
    [
      "+0.0000000001",
      /^--from "\+0\.0000000001": an offset is at most to the nanosecond$/,
    ],
    ["+8d", /unknown unit "d"/],
    ["+200h", /^--from "\+200h": an offset must be at most 7 days/],
    ["+700000", /^--from "\+700000": an offset is at most 7 days \(\+168h\)$/],
    [
      "soon",
      /^--from "soon": not a time; give ISO-8601 \(.*\) or Unix seconds, or an offset from the event's start \(\+1\.5s, -200ms\)$/,
    ],
    ["2026-02-31", /^--from "2026-02-31": 2026-02 has no day 31$/],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parseSliceBound("--from", text), (e: Error) => {
      assert.match(e.message, message, text);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
});

Deno.test("checkSlice refuses a --to before --from of the same kind; a time keeps all it names", () => {
  const b = (option: string, text: string) => parseSliceBound(option, text);
  assert.throws(
    () => checkSlice({ from: b("--from", "+2s"), to: b("--to", "+1s") }),
    /^RangeError: --to is before --from$/,
  );
  assert.throws(() =>
    checkSlice({
      from: b("--from", "2026-11-21T14:50:01Z"),
      to: b("--to", "2026-11-21T14:50:00.5Z"),
    })
  );
  // --to 14:50 keeps that whole minute, so it is not before 14:50:30.
  checkSlice({
    from: b("--from", "2026-11-21T14:50:30Z"),
    to: b("--to", "2026-11-21T14:50"),
  });
  checkSlice({ from: b("--from", "+1s"), to: b("--to", "+1s") });
  // A time against an offset: only the event can tell.
  checkSlice({ from: b("--from", "+1h"), to: b("--to", "2026-11-21") });
  assert.equal(
    sliceText({ from: b("--from", "+1s"), to: b("--to", "2026-11-21") }),
    "--from +1s --to 2026-11-21",
  );
  assert.equal(sliceText({ to: b("--to", "-1ms") }), "--to -1ms");
});

Deno.test("RowSlice places rows by time or by offset from the start sample, --to inclusive", () => {
  const s = new RowSlice(
    {
      from: parseSliceBound("--from", "2026-11-21T14:50:00.9999Z"),
      to: parseSliceBound("--to", "+200us"),
    },
    { id: 1, timeFormat: "ns", origin: START },
  );
  assert.equal(s.place(1795272600, 999_899_999), -1);
  assert.equal(s.place(1795272600, 999_900_000), 0);
  assert.equal(s.place(1795272601, 200_000), 0);
  assert.equal(s.place(1795272601, 200_001), 1);
  // Only one bound: the window's own end on the other side.
  const from = new RowSlice(
    { from: parseSliceBound("--from", "+0") },
    { id: 1, timeFormat: "ns", origin: START },
  );
  assert.equal(from.place(1795272600, 999_999_999), -1);
  assert.equal(from.place(1795272700, 0), 0);
});

Deno.test("RowSlice on a counter clock takes offsets only; without a start sample, times only", () => {
  const time = { from: parseSliceBound("--from", "2026-11-21T14:50:01Z") };
  assert.throws(
    () => new RowSlice(time, { id: 4, timeFormat: "counter", origin: START }),
    (e: Error) =>
      e instanceof SliceError &&
      e.message ===
        "--from 2026-11-21T14:50:01Z: event 4's rows are timed by a counter, not a wall clock; give an offset from its start instead (--from +1.5s, --from -200ms)",
  );
  const counter = new RowSlice(
    { to: parseSliceBound("--to", "+1ms") },
    { id: 4, timeFormat: "counter", origin: { sec: 0, ns: 5 } },
  );
  assert.equal(counter.place(0, 1_000_005), 0);
  assert.equal(counter.place(0, 1_000_006), 1);
  assert.throws(
    () =>
      new RowSlice({ to: parseSliceBound("--to", "+1ms") }, {
        id: 2,
        timeFormat: "ns",
        origin: null,
      }),
    /^SliceError: --to \+1ms: event 2 has no start sample among its rows to count an offset from; give a time instead$/,
  );
});
