import assert from "node:assert/strict";
import {
  clockDeltaNs,
  detectTimeFormat,
  isoTime,
  isWallClock,
  TimeDecoder,
} from "./reference_time.ts";

const split = (v: bigint): [number, number] => [
  Number(v / 1000000000n),
  Number(v % 1000000000n),
];
const ref = (sec: number, ns: number) => (BigInt(sec) << 32n) | BigInt(ns);

Deno.test("detectTimeFormat tells ours, the reference's and a device counter apart", () => {
  // 2026-11-21T14:50:00.1024Z in ns since the epoch: ours.
  assert.equal(detectTimeFormat(...split(1795272600102400000n)), "ns");
  // The same instant as (seconds << 32) | nanoseconds: the reference's.
  assert.equal(
    detectTimeFormat(...split(ref(1795272600, 102400000))),
    "reference",
  );
  // The ends of the ranges: 2000 and 2089 in ns; 2000 and 2099 in the
  // reference's encoding (whose 2000 would read as 2098 in ns).
  assert.equal(detectTimeFormat(...split(946684800000000000n)), "ns");
  assert.equal(detectTimeFormat(...split(3786911999000000000n)), "ns");
  assert.equal(detectTimeFormat(...split(ref(946684800, 0))), "reference");
  assert.equal(
    detectTimeFormat(...split(ref(4102444799, 999999999))),
    "reference",
  );
  // An uptime counter (FRC), and an upper half out of range.
  assert.equal(detectTimeFormat(...split(123456789012345n)), "counter");
  assert.equal(
    detectTimeFormat(...split(ref(1795272600, 1_500_000_000))),
    "counter",
  );
  assert.equal(isWallClock("counter"), false);
  assert.equal(isWallClock("reference"), true);
});

Deno.test("TimeDecoder decodes the reference encoding and moves its one-second-early rows on", () => {
  const t = new TimeDecoder("reference");
  const seen: string[] = [];
  const rows: [number, number][] = [
    [1795272600, 999900000],
    // Earliest seconds with latest nanoseconds: written as .000000 of the
    // second before, one second early.
    [1795272600, 50000],
    [1795272601, 150000],
  ];
  for (const [sec, ns] of rows) {
    t.decode(...split(ref(sec, ns)));
    seen.push(`${t.sec}.${t.ns}`);
  }
  assert.deepEqual(seen, [
    "1795272600.999900000",
    "1795272601.50000",
    "1795272601.150000",
  ]);
  assert.equal(t.corrected, 1);
  // A new dump may go back in time: after reset nothing is corrected.
  t.reset();
  t.decode(...split(ref(1795272600, 999800000)));
  assert.equal(t.sec, 1795272600);
  // More than a second back is not this quirk: left alone.
  t.decode(...split(ref(1795272598, 0)));
  assert.equal(t.sec, 1795272598);
  assert.equal(t.corrected, 1);
});

Deno.test("TimeDecoder passes ns and counter timestamps through as seconds and nanoseconds", () => {
  for (const format of ["ns", "counter"] as const) {
    const t = new TimeDecoder(format);
    t.decode(...split(1795272600102400000n));
    assert.deepEqual([t.sec, t.ns], [1795272600, 102400000]);
  }
});

Deno.test("isoTime writes UTC with the asked decimals", () => {
  assert.equal(
    isoTime(1795272600, 102400000, 9),
    "2026-11-21T14:50:00.102400000Z",
  );
  assert.equal(
    isoTime(1795272600, 102400000, 6),
    "2026-11-21T14:50:00.102400Z",
  );
  assert.equal(isoTime(1795272600, 999999999, 3), "2026-11-21T14:50:00.999Z");
  assert.equal(isoTime(1795272600, 5, 0), "2026-11-21T14:50:00Z");
  // The same as Date's, across days, years and the epoch.
  for (
    const sec of [0, 59, 86399, 86400, 951782400, 1795305599, 1795305600, -1]
  ) {
    assert.equal(
      isoTime(sec, 0, 0),
      new Date(sec * 1000).toISOString().slice(0, 19) + "Z",
      String(sec),
    );
  }
});

Deno.test("clockDeltaNs: wall clocks may step back; a counter wraps past 2^64", () => {
  // An NTP step back of 10 s during an event: negative, not hidden.
  assert.equal(
    clockDeltaNs(
      "ns",
      ...split(1795272590300000000n),
      ...split(1795272600000000000n),
    ),
    -9_700_000_000,
  );
  assert.equal(
    clockDeltaNs("reference", 1795272601, 5, 1795272600, 10),
    999999995,
  );
  // A counter that wrapped: 2^64 - 100 ns, then 50 ns after the wrap.
  assert.equal(
    clockDeltaNs("counter", ...split(50n), ...split(2n ** 64n - 100n)),
    150,
  );
  assert.equal(
    clockDeltaNs("counter", ...split(2n ** 64n - 100n), ...split(50n)),
    -150,
  );
});
