import assert from "node:assert/strict";
import type { HeaderSignal } from "./header.ts";
import {
  type SignalCell,
  SignalColumn,
  type SignalRule,
} from "./signal_column.ts";

const S = 1_795_272_600n * 1_000_000_000n; // 2026-11-21T14:50:00Z, in ns

/** A row or a line between rows, as the traceback feeds the column. */
type Line = bigint[] | "dropped" | "lost" | "dump";

/**
 * Each row's cell, rows given as `[t ns, ...values]` (bigints, split
 * here as events.log's reader splits them), gaps and dumps between.
 */
function cells(
  rule: SignalRule,
  names: string[],
  lines: Line[],
): SignalCell[] {
  const column = new SignalColumn(rule);
  column.columns(names);
  const fields = new Float64Array(2 * names.length);
  const out: SignalCell[] = [];
  for (const line of lines) {
    if (line === "dump") column.columns(names);
    else if (line === "dropped" || line === "lost") {
      column.gap({ kind: line, count: 1, time: "2026-11-21T14:50:00Z" });
    } else {
      line.forEach((v, k) => {
        fields[2 * k] = Number(v / 1_000_000_000n);
        fields[2 * k + 1] = Number(v % 1_000_000_000n);
      });
      const t = line[0];
      out.push(column.next(
        fields,
        Number(t / 1_000_000_000n),
        Number(t % 1_000_000_000n),
      ));
    }
  }
  return out;
}

function signal(
  kind: HeaderSignal["signal"],
  windowNs: number,
  more: Partial<HeaderSignal> = {},
): HeaderSignal {
  return {
    signal: kind,
    windowNs,
    direction: "above",
    threshold: "1",
    clear: "1",
    forNs: 0,
    keepFiringForNs: 0,
    ...more,
  };
}

const ECN = ["timestamp", "ecn"];

Deno.test("rate over 1 ms: the worked example of signal-rules.md §7, row by row", () => {
  // 100 µs apart; ecn +10 on samples 1..9, +200 on 10..29, +10 after.
  const rows: Line[] = [];
  let ecn = 0n;
  for (let i = 0; i < 60; i++) {
    if (i > 0) ecn += i < 10 ? 10n : i < 30 ? 200n : 10n;
    rows.push([S + BigInt(i) * 100_000n, ecn]);
  }
  const rule: SignalRule = {
    kind: "rate",
    signal: signal("rate", 1_000_000),
    depth: 64,
    column: "ecn",
    timeFormat: "ns",
  };
  assert.equal(new SignalColumn(rule).heading, "ecn rate/1ms (/s)");
  const got = cells(rule, ECN, rows);
  // Unknown until a row 1 ms back is among the rows (j = i - 10).
  assert.deepEqual(got.slice(0, 10), Array(10).fill(null));
  assert.deepEqual(got.slice(10, 15), [
    290_000,
    480_000,
    670_000,
    860_000,
    1_050_000,
  ]);
  assert.deepEqual(got.slice(19, 30), Array(11).fill(2_000_000));
  assert.equal(got[30], 1_810_000);
  assert.equal(got[38], 290_000);
  assert.equal(got[39], 100_000);
});

Deno.test("rate: j is the newest row at least the window back, within the ring of 2 x depth rows", () => {
  // Uneven times: 0, 100, 250, 300, 450 µs; window 200 µs.
  const rows: Line[] = [
    [S, 0n],
    [S + 100_000n, 10n],
    [S + 250_000n, 40n],
    [S + 300_000n, 50n],
    [S + 450_000n, 90n],
  ];
  const rule = (depth: number): SignalRule => ({
    kind: "rate",
    signal: signal("rate", 200_000),
    depth,
    column: "ecn",
    timeFormat: "ns",
  });
  // Row 2 (250 µs): j = row 0 (0 <= 50), rate 40 over 250 µs = 160,000/s.
  // Row 3 (300 µs): j = row 1 (100 <= 100), 40 over 200 µs = 200,000/s.
  // Row 4 (450 µs): j = row 2 (250 <= 250), 50 over 200 µs = 250,000/s.
  assert.deepEqual(cells(rule(8), ECN, rows), [
    null,
    null,
    160_000,
    200_000,
    250_000,
  ]);
  // Depth 1: the ring holds 2 rows, so j may be 1 row back at most.
  assert.deepEqual(cells(rule(1), ECN, rows), [null, null, null, null, null]);
});

Deno.test("rate: unknown while the window spans dropped samples, known again once it has moved past", () => {
  // 100 µs apart, +10 a row; window 200 µs (j = i - 2); 5 samples
  // dropped before row 5.
  const rows: Line[] = [];
  for (let i = 0; i < 9; i++) {
    if (i === 5) rows.push("dropped");
    rows.push([S + BigInt(i) * 100_000n, BigInt(10 * i)]);
  }
  const got = cells(
    {
      kind: "rate",
      signal: signal("rate", 200_000),
      depth: 4,
      column: "ecn",
      timeFormat: "ns",
    },
    ECN,
    rows,
  );
  // Rows 5 and 6 have j = 3 and 4: the window spans the loss.
  assert.deepEqual(got, [
    null,
    null,
    100_000,
    100_000,
    100_000,
    null,
    null,
    100_000,
    100_000,
  ]);
});

Deno.test("increase: unknown on the first row, after a gap and on a reset; a wrap is the little it rose; exact above 2^53", () => {
  const M = 1n << 64n;
  const rows: Line[] = [
    [S, 9007199254740990n],
    [S + 1n, 9007199254740993n], // +3, above 2^53
    "dropped",
    [S + 2n, 9007199254741000n], // after a loss: unknown
    [S + 3n, 9007199254741001n],
    [S + 4n, 5n], // a reset: unknown
    [S + 5n, M - 6n], // a fall of 11: a reset too
    [S + 6n, 4n], // wrapped: +10
    "dump",
    [S + 7n, 14n], // first of a dump: unknown
  ];
  const rule: SignalRule = {
    kind: "increase",
    signal: signal("increase", 0),
    depth: 2,
    column: "ecn",
    timeFormat: "ns",
  };
  assert.equal(new SignalColumn(rule).heading, "ecn increase/sample");
  assert.deepEqual(cells(rule, ECN, rows), [
    null,
    "3",
    null,
    "1",
    null,
    null,
    "10",
    null,
  ]);
});

Deno.test("dt_gt: the rise over depth records, exact; dropped samples do not stop it, rows not written do", () => {
  // nic-events.log's first event: ecn E, E+10, E+20, E+150, E+193, a gap
  // of 5 dropped samples, E+193, E+193: rises 130, 173, 43 and 0.
  const E = 9007199254740800n;
  const rows: Line[] = [
    [S, E],
    [S + 1n, E + 10n],
    [S + 2n, E + 20n],
    [S + 3n, E + 150n],
    [S + 4n, E + 193n],
    "dropped",
    [S + 10n, E + 193n],
    [S + 11n, E + 193n],
    "lost",
    [S + 12n, E + 200n],
    [S + 13n, E + 300n],
    [S + 14n, E + 400n],
  ];
  const rule: SignalRule = {
    kind: "dt_gt",
    depth: 2,
    column: "ecn",
    timeFormat: "ns",
  };
  assert.equal(new SignalColumn(rule).heading, "ecn rise/2 samples");
  assert.deepEqual(cells(rule, ECN, rows), [
    null,
    null,
    "20",
    "140",
    "173",
    "43",
    "0",
    // Rows were lost before this one: the record 2 back is not a row.
    null,
    null,
    "200",
  ]);
  // A fall is what the engine compares: (cur - back) mod 2^64.
  assert.deepEqual(
    cells(rule, ECN, [[S, 10n], [S + 1n, 9n], [S + 2n, 8n]]),
    [null, null, "18446744073709551614"],
  );
});

Deno.test("gt, lt and inc_gt: the value and the rise since the row before", () => {
  const rows: Line[] = [[S, 80n], [S + 1n, 84n], "lost", [S + 2n, 86n], [
    S + 3n,
    90n,
  ]];
  const gt: SignalRule = { kind: "gt", column: "t", timeFormat: "ns" };
  assert.equal(new SignalColumn(gt).heading, "t value");
  assert.deepEqual(cells(gt, ["timestamp", "t"], rows), [
    "80",
    "84",
    "86",
    "90",
  ]);
  const inc: SignalRule = { kind: "inc_gt", column: "t", timeFormat: "ns" };
  assert.equal(new SignalColumn(inc).heading, "t rise/sample");
  assert.deepEqual(cells(inc, ["timestamp", "t"], rows), [
    null,
    "4",
    null,
    "4",
  ]);
});

Deno.test("ratio over a window: the sums' quotient, unknown where the denominator did not move", () => {
  const names = ["timestamp", "drops", "packets"];
  const rows: Line[] = [
    [S, 0n, 0n],
    [S + 100n, 1n, 0n],
    [S + 200n, 2n, 0n], // 2 / 0: unknown
    [S + 300n, 4n, 100n], // (4 - 1) / (100 - 0)
    [S + 400n, 5n, 300n], // (5 - 2) / (300 - 0)
  ];
  const rule: SignalRule = {
    kind: "ratio",
    signal: signal("ratio", 200, { denominator: "packets" }),
    depth: 4,
    column: "drops",
    timeFormat: "ns",
  };
  assert.equal(new SignalColumn(rule).heading, "drops/packets ratio/200ns");
  assert.deepEqual(cells(rule, names, rows), [null, null, null, 0.03, 0.01]);
});

Deno.test("a clock stepped back starts the window again; a dump starts the history over", () => {
  const rule: SignalRule = {
    kind: "rate",
    signal: signal("rate", 200),
    depth: 8,
    column: "ecn",
    timeFormat: "ns",
  };
  assert.deepEqual(
    cells(rule, ECN, [
      [S, 0n],
      [S + 100n, 10n],
      [S + 200n, 20n], // 20 over 200 ns
      [S + 50n, 30n], // back in time: no window
      [S + 150n, 40n],
      [S + 250n, 50n], // j = the row at 50 ns
      "dump",
      [S + 450n, 60n],
      [S + 550n, 70n],
    ]),
    [null, null, 1e8, null, null, 1e8, null, null],
  );
});

Deno.test("a rule the header does not define, or a column the rows lack: every row unknown", () => {
  const none: SignalRule = { column: "ecn", timeFormat: "ns" };
  assert.equal(
    new SignalColumn(none).heading,
    "rule signal (not in the header)",
  );
  assert.deepEqual(cells(none, ECN, [[S, 1n], [S + 1n, 2n]]), [null, null]);
  const dt: SignalRule = { kind: "dt_gt", column: "ecn", timeFormat: "ns" };
  assert.match(new SignalColumn(dt).heading, /depth is not in the header/);
  const other: SignalRule = { kind: "gt", column: "rx", timeFormat: "ns" };
  assert.deepEqual(cells(other, ECN, [[S, 1n]]), [null]);
});

Deno.test("long windows and deep rises: the rows kept grow to what the window needs", () => {
  // +7 a row, 100 µs apart, 300 rows; a 10 ms window is 100 rows back.
  const rows: Line[] = [];
  for (let i = 0; i < 300; i++) {
    rows.push([S + BigInt(i) * 100_000n, 7n * BigInt(i)]);
  }
  const rate = cells(
    {
      kind: "rate",
      signal: signal("rate", 10_000_000),
      depth: 128,
      column: "ecn",
      timeFormat: "ns",
    },
    ECN,
    rows,
  );
  assert.deepEqual(rate.slice(0, 100), Array(100).fill(null));
  assert.deepEqual(rate.slice(100), Array(200).fill(70_000));
  const rise = cells(
    { kind: "dt_gt", depth: 150, column: "ecn", timeFormat: "ns" },
    ECN,
    rows,
  );
  assert.deepEqual(rise.slice(0, 150), Array(150).fill(null));
  assert.deepEqual(rise.slice(150), Array(150).fill("1050"));
});
