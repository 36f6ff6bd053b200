import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseTimePoint } from "../base/time_point.ts";
import { EventsLog } from "../events/log.ts";
import type { ReviewEvent } from "./event.ts";
import { toJsonEvent } from "./export.ts";
import { resolveInputs } from "./files.ts";
import { type ReadOptions, readReview } from "./read.ts";
import { durationCell } from "./table.ts";
import { EVERY_EVENT } from "./test_util.ts";
import { POINT_STRIDE } from "./window.ts";
import { tempDir } from "../tests/temp_dir.ts";

const FIXTURES = fileURLToPath(
  new URL("../tests/fixtures/review/", import.meta.url),
);
const GOLDEN = fileURLToPath(
  new URL("../tests/fixtures/golden/events.log", import.meta.url),
);

async function review(paths: string[], options: ReadOptions = {}) {
  const notes: string[] = [];
  const log = await readReview(await resolveInputs(paths), {
    ...options,
    onNote: (n) => notes.push(n),
  });
  return { ...log, events: [...log.events], notes };
}

/** The facts a golden test pins, in one comparable object. */
function facts(e: ReviewEvent) {
  return {
    id: e.id,
    monitor: e.monitor,
    rule: e.rule,
    state: e.state,
    start: e.start && [e.start.sec, e.start.ns],
    end: e.end && [e.end.sec, e.end.ns],
    last: e.last && [e.last.sec, e.last.ns],
    durationS: e.durationS === null ? null : Number(e.durationS.toFixed(9)),
    samples: e.samples,
    rows: e.rows,
    historyRows: e.historyRows,
    dropped: e.droppedSamples,
    columnPeak: e.columnPeak,
    columnPeakAt: e.columnPeakAt && [e.columnPeakAt.sec, e.columnPeakAt.ns],
    columnPeakRate: e.columnPeakRate,
    columnPeakRateAt: e.columnPeakRateAt &&
      [e.columnPeakRateAt.sec, e.columnPeakRateAt.ns],
  };
}

const S = 1795272600; // 2026-11-21T14:50:00Z

Deno.test("golden: the reference application's log, timestamps (seconds << 32) | ns", async () => {
  // Values worked out by hand in tests/fixtures/review/README.md.
  const { events, files, notes } = await review([
    join(FIXTURES, "reference-events.log"),
  ]);
  assert.deepEqual(notes, []);
  assert.deepEqual(
    files.map((f) => [f.monitor, f.blocks, f.rows, f.timeFormats]),
    [
      ["reference", 1, 15, ["reference"]],
    ],
  );
  assert.deepEqual(events.map(facts), [
    {
      id: 1,
      monitor: "reference",
      rule: "ECN > 100 per 2 samples",
      state: "ended",
      // Row 3 is written one second early (earliest seconds, latest ns):
      // decoded, it is 14:50:01.000000, not 14:50:00.
      start: [S + 1, 0],
      end: [S + 1, 400000],
      last: [S + 1, 400000],
      durationS: 0.0004,
      samples: 4,
      rows: 4,
      historyRows: 4,
      dropped: 0,
      columnPeak: "620",
      columnPeakAt: [S + 1, 400000],
      columnPeakRate: 3000000, // (600 - 300) per 100 us
      columnPeakRateAt: [S + 1, 100000],
    },
    {
      id: 2,
      monitor: "reference",
      rule: "Rx < 1000 per 2 samples",
      state: "ended",
      start: [S + 1, 400000],
      end: [S + 1, 700000],
      last: [S + 1, 700000],
      durationS: 0.0003,
      samples: 3,
      rows: 3,
      historyRows: 4,
      dropped: 0,
      columnPeak: "15400", // a dt_lt rule: the lowest value
      columnPeakAt: [S + 1, 400000],
      columnPeakRate: 1000000, // lowest: (15500 - 15400) per 100 us
      columnPeakRateAt: [S + 1, 500000],
    },
  ]);
  assert.equal(events[0].column, "port_0_rx_ecn_packets");
  assert.equal(events[0].typeName, "differential_greater_than");
  assert.equal(events[0].threshold, "100");
  assert.equal(events[0].timeFormat, "reference");
  assert.equal(events[0].startMarker, "2026-11-21T14:50:01Z");
});

Deno.test("golden: our log with a gap, a restart, an event open at the end and a cut last line", async () => {
  const path = join(FIXTURES, "nic-events.log");
  const { events, files, notes } = await review([path]);
  assert.deepEqual(notes, [
    `${path}: line 78: the file ends in the middle of a line; ignored`,
  ]);
  assert.deepEqual(files.map((f) => [f.monitor, f.blocks, f.rows]), [[
    "nic",
    2,
    18,
  ]]);
  const N = S + 100;
  assert.deepEqual(events.map(facts), [
    {
      id: 1,
      monitor: "nic",
      rule: "ECN > 100 per 2 samples",
      state: "ended",
      start: [N, 300000],
      end: [N, 1100000],
      last: [N, 1100000],
      durationS: 0.0008,
      samples: 8, // 3 rows and 5 samples the source dropped
      rows: 3,
      historyRows: 4,
      dropped: 5,
      columnPeak: "9007199254740993", // 2^53 + 1, exact
      columnPeakAt: [N, 400000],
      columnPeakRate: 1300000,
      columnPeakRateAt: [N, 300000],
    },
    {
      id: 2,
      monitor: "nic",
      rule: "ECN > 100 per 2 samples",
      state: "interrupted",
      start: [N, 1500000],
      end: null,
      last: [N, 1600000],
      durationS: 0.0001,
      samples: 1,
      rows: 1,
      historyRows: 4,
      dropped: 0,
      columnPeak: "9007199254741300",
      columnPeakAt: [N, 1600000],
      columnPeakRate: 2070000,
      columnPeakRateAt: [N, 1500000],
    },
    {
      id: 3,
      monitor: "nic",
      rule: "ECN > 100 per 2 samples",
      state: "open",
      start: [N + 100, 300000],
      end: null,
      last: [N + 100, 500000],
      durationS: 0.0002,
      samples: 2,
      rows: 2,
      historyRows: 4,
      dropped: 0,
      columnPeak: "700",
      columnPeakAt: [N + 100, 500000],
      columnPeakRate: 4900000,
      columnPeakRateAt: [N + 100, 300000],
    },
  ]);
});

Deno.test("golden: a GPU monitor's log, whose data IDs are text", async () => {
  const { events } = await review([join(FIXTURES, "gpu-events.log")]);
  const G = S + 50;
  assert.deepEqual(events.map(facts), [{
    id: 1,
    monitor: "gpu",
    rule: "GPU hot > 85 C",
    state: "ended",
    start: [G, 300000000],
    end: [G, 600000000],
    last: [G, 600000000],
    durationS: 0.3,
    samples: 3,
    rows: 3,
    historyRows: 4,
    dropped: 0,
    columnPeak: "90",
    columnPeakAt: [G, 400000000],
    columnPeakRate: 20, // +2 C per 100 ms
    columnPeakRateAt: [G, 300000000],
  }]);
  assert.equal(events[0].column, "gpu0_temperature_c");
  assert.equal(events[0].samplePeriodNs, 100000000);
});

Deno.test("golden: the agent's replay golden log, byte for byte from our writer", async () => {
  // tests/fixtures/golden/README.md: sample i is at S + i x 100 us.
  const { events } = await review([GOLDEN]);
  const at = (i: number) => [S, i * 100000];
  assert.deepEqual(
    events.map((
      e,
    ) => [
      e.rule,
      e.state,
      e.start && [e.start.sec, e.start.ns],
      e.end && [e.end.sec, e.end.ns],
      e.samples,
    ]),
    [
      ["Rx jumps by 50", "ended", at(0), at(2), 2],
      ["Latency > 10", "ended", at(3), at(6), 3],
      ["Rx > 100 per 2 samples", "ended", at(3), at(6), 3],
      ["Rx jumps by 50", "ended", at(3), at(4), 1],
      ["Rx > 100 per 2 samples", "open", at(9), null, 2],
      ["Rx jumps by 50", "ended", at(9), at(10), 1],
    ],
  );
  // Exact above 2^53 and across the wrap: 2^64 - 6 is the highest rx.
  assert.equal(events[0].columnPeak, "18446744073709551610");
  assert.equal(events[0].columnPeakRate, 100000); // +10 per 100 us
  assert.equal(events[1].column, 'pcie, max "read" ns');
  assert.equal(events[4].columnPeak, "9007199254740993");
});

Deno.test("a monitor's rotated files are read in order and an event may span them", async () => {
  const { events, files } = await review([join(FIXTURES, "rotated")]);
  assert.deepEqual(files.map((f) => f.path.replace(FIXTURES, "")), [
    "rotated/nic-events.log.1",
    "rotated/nic-events.log",
  ]);
  assert.deepEqual(events.map(facts), [{
    id: 1,
    monitor: "nic",
    rule: "ECN > 100 per 2 samples",
    state: "ended",
    start: [S + 300, 300000],
    end: [S + 300, 600000],
    last: [S + 300, 600000],
    durationS: 0.0003,
    samples: 3,
    rows: 3, // one row before the rotation, two after
    historyRows: 4,
    dropped: 0,
    columnPeak: "320",
    columnPeakAt: [S + 300, 600000],
    columnPeakRate: 1800000,
    columnPeakRateAt: [S + 300, 300000],
  }]);
  assert.equal(events[0].window.startFile, 0);
  assert.equal(events[0].window.endFile, 1);
});

Deno.test("a log from our writer reads back: quoted names, u64 extremes, markers", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open({
    path,
    version: "dpu-traceback test",
    device: "03:00.0",
    depth: 1,
    samplePeriodNs: 100000,
    columns: [
      { name: "a, b", dataId: "0x1020000100000000" },
      { name: ' "x" ', dataId: "0x1020000100000001" },
    ],
    rules: [{
      name: 'hot "one"',
      column: 1,
      comparisonType: "gt",
      comparisonValue: 5n,
    }],
  });
  const words = new Uint32Array(6);
  const record = (ns: bigint, a: bigint, b: bigint) => {
    for (const [k, v] of [ns, a, b].entries()) {
      words[2 * k] = Number(v & 0xffffffffn);
      words[2 * k + 1] = Number(v >> 32n);
    }
    log.row(words, 0);
  };
  const t = 1795272600000000000n;
  log.columnNames();
  record(t, 1n, 0n);
  record(t + 100000n, 2n, 18446744073709551615n);
  log.eventStart(0, 1795272600000);
  record(t + 200000n, 3n, 18446744073709551614n);
  log.eventEnd(0, 1795272600000, NaN);
  await log.close();

  const { events, notes } = await review([path]);
  assert.deepEqual(notes, []);
  assert.equal(events.length, 1);
  const e = events[0];
  assert.equal(e.monitor, "03:00.0"); // events.log: named by its device
  assert.equal(e.rule, 'hot "one"');
  assert.equal(e.column, ' "x" ');
  assert.equal(e.columnPeak, "18446744073709551615");
  assert.equal(e.columnPeakRate, -10000); // fell by 1 in 100 us
  assert.deepEqual([e.start?.ns, e.end?.ns], [100000, 200000]);
});

Deno.test("charts: bounded points per event and a cap on how many events get one", async () => {
  const path = join(FIXTURES, "reference-events.log");
  const all = await review([path], { charts: EVERY_EVENT });
  for (const e of all.events) {
    assert.ok(e.chart !== undefined);
    assert.equal(e.chart.before.length / POINT_STRIDE, 4); // the 4 history rows
  }
  assert.equal(all.events[0].chart!.during.length / POINT_STRIDE, 4);
  assert.equal(all.chartsLeftOut, 0);
  const capped = await review([path], { charts: EVERY_EVENT, maxCharts: 1 });
  assert.equal(capped.events.filter((e) => e.chart).length, 1);
  assert.equal(capped.chartsLeftOut, 1);
  const some = await review([path], {
    charts: { rules: ["Rx"], monitors: [] },
  });
  assert.deepEqual(some.events.map((e) => e.chart !== undefined), [
    false,
    true,
  ]);
  assert.equal(some.chartsLeftOut, 0);
});

Deno.test("the chart budget goes to the newest shown events across monitors, after --since and --until", async () => {
  // gpu 14:50:50; nic 14:51:40.0003, 14:51:40.0015, 14:53:20; reference
  // 14:50:01 (twice). Read monitor by monitor: gpu, nic, reference.
  const paths = ["gpu-events.log", "nic-events.log", "reference-events.log"]
    .map((n) => join(FIXTURES, n));
  const charted = async (charts: ReadOptions["charts"], maxCharts: number) => {
    const log = await review(paths, { charts, maxCharts });
    return {
      ids: log.events.filter((e) => e.chart !== undefined).map((e) => e.id),
      leftOut: log.chartsLeftOut,
    };
  };
  // Timeline: 1, 2 reference; 3 gpu; 4, 5, 6 nic. The newest two are nic's
  // last two, although nic's events were read before reference's.
  assert.deepEqual(await charted(EVERY_EVENT, 2), { ids: [5, 6], leftOut: 4 });
  // --until 14:51:00 shows 1, 2, 3: the newest two of those.
  assert.deepEqual(
    await charted(
      {
        ...EVERY_EVENT,
        until: parseTimePoint("--until", "2026-11-21T14:51:00.000"),
      },
      2,
    ),
    { ids: [2, 3], leftOut: 1 },
  );
  // --since 14:51:00 shows 4, 5, 6 (6 is still open); all fit.
  assert.deepEqual(
    await charted(
      { ...EVERY_EVENT, sinceMs: Date.UTC(2026, 10, 21, 14, 51) },
      3,
    ),
    { ids: [4, 5, 6], leftOut: 0 },
  );
});

async function reviewText(text: string | Uint8Array, name = "events.log") {
  await using dir = await tempDir();
  const path = join(dir.path, name);
  if (typeof text === "string") await Deno.writeTextFile(path, text);
  else await Deno.writeFile(path, text);
  const result = await review([path]);
  return { ...result, path };
}

const HEADER = (await Deno.readTextFile(join(FIXTURES, "nic-events.log")))
  .split("timestamp,")[0];

Deno.test("a file that is not an events log is refused with the line and why", async () => {
  const cases: [string | Uint8Array, RegExp][] = [
    [
      '{"rules": []}\n',
      /line 1: not an events log: expected "Telemetry monitor : \.\.\." or a "timestamp, \.\.\." row, got "\{"rules": \[\]\}"/,
    ],
    [
      new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 10]),
      /line 1: not an events log: expected .* got "\\u007fELF\\u0000\\u0001\\u0002"$/,
    ],
    [
      new Uint8Array(2 << 20).fill(65),
      /line 1: line longer than 1048576 bytes: not an events log/,
    ],
    [
      "1795272600000000000, 1\n",
      /line 1: a data row before any column-name row: not an events log/,
    ],
  ];
  for (const [text, pattern] of cases) {
    await assert.rejects(reviewText(text), (error: Error) => {
      assert.match(error.message, /^Cannot review \S+events\.log: /);
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes("\n"), "one line");
      // deno-lint-ignore no-control-regex
      assert.ok(!/[\x00-\x1f]/.test(error.message), "printable");
      return true;
    }, String(pattern));
  }
});

Deno.test("damage in the middle of a log is a warning naming the line, skipped, and reading goes on", async () => {
  const ecn = '"ECN > 100 per 2 samples"';
  const text = HEADER + "timestamp, a, b\n" +
    "1795272700000000000, 1, 2\n" +
    `<<Event start>> Time: 2026-11-21T14:51:40Z, Rule: ${ecn}\n` +
    "1795272700000100000, 2, 3\n" +
    // A crash's NUL padding, a stray line, short and bad rows, markers.
    "1795272700000200000, 3, 4\u0000\u0000\u0000\n" +
    "\u0000".repeat(300) + "\n" +
    "hello world\n" +
    "1795272700000300000, 4\n" +
    "<<Event end>> Time: oops\n" +
    "<<Gap>> Time: x\n" +
    "1795272700000400000, 5, 6\n" +
    `<<Event end>> Time: 2026-11-21T14:51:40Z, Rule: ${ecn}\n`;
  const { events, notes } = await reviewText(text);
  assert.deepEqual(notes.map((n) => n.replace(/^\S+events\.log: /, "")), [
    'line 30: value 3 is not a decimal unsigned integer: "4\\u0000\\u0000\\u0000"; skipped',
    `line 31: not an events log line: "${"\\u0000".repeat(40)}..."; skipped`,
    'line 32: not an events log line: "hello world"; skipped',
    "line 33: expected 3 values (the timestamp and 2 columns), got 2; skipped",
    'line 34: malformed event marker "<<Event end>> Time: oops"; skipped',
    'line 35: malformed gap marker "<<Gap>> Time: x"; skipped',
  ]);
  // deno-lint-ignore no-control-regex
  assert.ok(notes.every((n) => !/[\x00-\x1f]/.test(n)), "printable");
  assert.deepEqual(
    events.map((e) => [e.state, e.rows, e.columnPeak, e.end?.ns]),
    [["ended", 2, "6", 400000]],
  );
});

Deno.test("a missing file is named with the reason", async () => {
  await assert.rejects(
    review(["/nonexistent/events.log"]),
    /^Error: Cannot review \/nonexistent\/events\.log: no such file or directory$/,
  );
});

Deno.test("an empty file, and a header without rows, have no events", async () => {
  assert.equal((await reviewText("")).events.length, 0);
  assert.equal((await reviewText(HEADER)).events.length, 0);
});

Deno.test("a row cut short by a crash, then the restart's header on the same line", async () => {
  const text = HEADER + "timestamp, port_0_rx_bytes, port_0_rx_ecn_packets\n" +
    "1795272700000000000, 1, 2\n" +
    '<<Event start>> Time: 2026-11-21T14:51:40Z, Rule: "ECN > 100 per 2 samples"\n' +
    "1795272700000100000, 2, 3\n" +
    "1795272700000200000, 3" + HEADER +
    "timestamp, port_0_rx_bytes, port_0_rx_ecn_packets\n" +
    "1795272800000000000, 1, 2\n";
  const { events, notes } = await reviewText(text);
  assert.equal(notes.length, 1);
  assert.match(notes[0], /line 30: a row cut short by a restart; ignored/);
  assert.deepEqual(events.map((e) => [e.state, e.rows]), [["interrupted", 1]]);
});

Deno.test("an end whose start is in a file not read: the event starts at or before its first row", async () => {
  const text = HEADER +
    "1795272700000100000, 2, 3\n1795272700000200000, 3, 4\n" +
    '<<Event end>> Time: 2026-11-21T14:51:40Z, Rule: "ECN > 100 per 2 samples"\n';
  const { events, notes } = await reviewText(text);
  assert.match(
    notes[0],
    /"ECN > 100 per 2 samples" ends but its start is not in the files read/,
  );
  assert.equal(events.length, 1);
  const e = events[0];
  assert.equal(e.startKnown, false);
  assert.deepEqual([e.start?.sec, e.start?.ns, e.end?.ns], [
    S + 100,
    100000,
    200000,
  ]);
  assert.equal(e.state, "ended");
});

Deno.test("a wall clock stepped back during an event: a negative duration, not hidden", async () => {
  // An NTP step of 10 s back between the start sample and the end sample.
  const ecn = '"ECN > 100 per 2 samples"';
  const text = HEADER + "timestamp, a, b\n" +
    "1795272700000000000, 1, 2\n" +
    `<<Event start>> Time: 2026-11-21T14:51:40Z, Rule: ${ecn}\n` +
    "1795272690300000000, 2, 3\n" +
    `<<Event end>> Time: 2026-11-21T14:51:30Z, Rule: ${ecn}\n`;
  const { events } = await reviewText(text);
  assert.equal(events.length, 1);
  const e = events[0];
  assert.equal(Number(e.durationS!.toFixed(9)), -9.7);
  assert.equal(durationCell(e), "-9.700 s (clock stepped back)");
  assert.equal(toJsonEvent(e).duration_s, -9.7);
});

Deno.test("counter timestamps that wrap past 2^64 during an event: times from the marker, differences modulo 2^64", async () => {
  // A free-running counter, 100 ns a sample, wrapping between the end
  // sample's predecessors: 2^64 - 250, - 150 (start), - 50, then 50, 150.
  const ecn = '"ECN > 100 per 2 samples"';
  const near = (back: bigint) => String(2n ** 64n - back);
  const text = HEADER + "timestamp, a, b\n" +
    `${near(250n)}, 1, 100\n` +
    `${near(150n)}, 1, 150\n` +
    `<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: ${ecn}\n` +
    `${near(50n)}, 1, 300\n` +
    "50, 1, 400\n" +
    "150, 1, 450\n" +
    `<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: ${ecn}\n`;
  const { events, notes } = await reviewText(text);
  assert.deepEqual(notes, []);
  const e = events[0];
  assert.equal(e.timeFormat, "counter");
  assert.deepEqual(e.start, { sec: S, ns: 0 });
  // 300 ns after the start sample, not in the year 1442.
  assert.deepEqual(e.end, { sec: S, ns: 300 });
  assert.equal(e.durationS, 3e-7);
  assert.equal(durationCell(e), "300 ns");
  // Rates from the wrapping differences: +150 in the 100 ns to 2^64 - 50
  // is the highest, 1.5e9/s; +100 across the wrap is 1e9/s, not NaN.
  assert.equal(e.columnPeakRate, 1.5e9);
  assert.deepEqual(e.columnPeakRateAt, { sec: S, ns: 100 });
  assert.deepEqual(e.columnPeakAt, { sec: S, ns: 300 });
  assert.equal(e.samples, 3);
});
