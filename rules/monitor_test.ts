import assert from "node:assert/strict";
import v8 from "node:v8";
import type { ComparisonType } from "../config/types.ts";
import type { EventSink } from "./event_sink.ts";
import { WindowAggregator } from "../metrics/aggregate.ts";
import type { ReferenceRule } from "./reference_rule.ts";
import { Monitor } from "./monitor.ts";
import { sharedRingBuffer } from "./shared_ring.ts";
import { M, P53, RecordingSink, writeRecord } from "./rules_test_util.ts";

interface RuleSpec {
  name: string;
  column: number;
  type: ComparisonType;
  value: bigint;
}

/** A sample's values, or a gap of `gap` lost samples reported before the next. */
type Step = bigint[] | { gap: number };

/**
 * One hand-computed monitor case (docs/spec/reference-semantics.md §4). The
 * k-th committed sample (1-based) has timestamp k, so `row k` is it.
 */
interface Case {
  name: string;
  depth: number;
  columns: string[];
  rules: RuleSpec[];
  steps: Step[];
  /** What the sink receives, in order. */
  entries: string[];
  /** activeRules after each committed sample. */
  active: number[];
  events: number;
  dropped?: number;
  gapTimes?: number[];
}

function build(
  depth: number,
  columns: string[],
  rules: RuleSpec[],
  sink: EventSink,
): Monitor {
  return new Monitor(
    {
      name: "m",
      depth,
      columns,
      rules: rules.map((r) => ({
        name: r.name,
        column: r.column,
        comparisonType: r.type,
        comparisonValue: r.value,
      })),
    },
    sink,
  );
}

function feed(monitor: Monitor, ts: bigint, values: readonly bigint[]): void {
  writeRecord(monitor.words, monitor.claim(), ts, values);
  monitor.commit();
}

const a5 = (column = 0): RuleSpec => ({
  name: "a>5",
  column,
  type: "gt",
  value: 5n,
});
const b5 = (column = 1): RuleSpec => ({
  name: "b>5",
  column,
  type: "gt",
  value: 5n,
});
const c5 = (column = 2): RuleSpec => ({
  name: "c>5",
  column,
  type: "gt",
  value: 5n,
});
const n = (...xs: number[]): bigint[] => xs.map(BigInt);

const CASES: Case[] = [
  {
    // gt depth 2: a = 1 6 7(on) 8 2 3(off) 4
    name:
      "rows while active, written before evaluation; first start dumps the ring",
    depth: 2,
    columns: ["a"],
    rules: [a5()],
    steps: [n(1), n(6), n(7), n(8), n(2), n(3), n(4)],
    entries: [
      "names",
      "row 1",
      "row 2",
      "row 3", // the starting sample appears in the dump, not as its own row
      "start a>5",
      "row 4",
      "row 5",
      "row 6", // the ending sample is still logged
      "end a>5",
    ],
    active: [0, 0, 1, 1, 1, 0, 0],
    events: 1,
  },
  {
    // depth 2 → ring of 4: the dump at sample 6 holds samples 3..6.
    name: "the dump is every stored record oldest first, bounded by 2 * depth",
    depth: 2,
    columns: ["a"],
    rules: [a5()],
    steps: [n(1), n(2), n(3), n(4), n(9), n(9)],
    entries: ["names", "row 3", "row 4", "row 5", "row 6", "start a>5"],
    active: [0, 0, 0, 0, 0, 1],
    events: 1,
  },
  {
    name: "a rule starting while another is active writes only its start",
    depth: 1,
    columns: ["a", "b"],
    rules: [a5(), b5()],
    steps: [n(0, 0), n(9, 0), n(9, 9), n(0, 9), n(9, 0), n(0, 0), n(0, 0)],
    entries: [
      "names",
      "row 1",
      "row 2",
      "start a>5",
      "row 3",
      "start b>5",
      "row 4",
      "end a>5",
      "row 5",
      "start a>5", // a>5 is evaluated first: count goes 1 → 2, no dump
      "end b>5",
      "row 6",
      "end a>5",
    ],
    active: [0, 1, 2, 1, 1, 0, 0],
    events: 3,
  },
  {
    // Config order c>5, a>5, b>5 (not column order); all three on at sample 1.
    name: "several rules toggling on one sample go in configuration order",
    depth: 1,
    columns: ["a", "b", "c"],
    rules: [c5(), a5(), b5()],
    steps: [n(9, 9, 9), n(0, 0, 0), n(0, 0, 0)],
    entries: [
      "names",
      "row 1",
      "start c>5",
      "start a>5",
      "start b>5",
      "row 2",
      "end c>5",
      "end a>5",
      "end b>5",
    ],
    active: [3, 0, 0],
    events: 3,
  },
  {
    // depth 2: a>5 on at 2, off at 4; b>5 on at 4 (after a>5 ended), off at 6.
    name:
      "last rule ends and a later one starts on one sample: history repeated",
    depth: 2,
    columns: ["a", "b"],
    rules: [a5(), b5()],
    steps: [n(9, 0), n(9, 0), n(0, 9), n(0, 9), n(0, 0), n(0, 0)],
    entries: [
      "names",
      "row 1",
      "row 2",
      "start a>5",
      "row 3",
      "row 4",
      "end a>5",
      "names",
      "row 1",
      "row 2",
      "row 3",
      "row 4",
      "start b>5",
      "row 5",
      "row 6",
      "end b>5",
    ],
    active: [0, 1, 1, 1, 1, 0],
    events: 2,
  },
  {
    // Same trace, b>5 configured first: it starts (count 2) before a>5 ends.
    name: "same trace, starting rule configured first: no repeated dump",
    depth: 2,
    columns: ["a", "b"],
    rules: [b5(), a5()],
    steps: [n(9, 0), n(9, 0), n(0, 9), n(0, 9), n(0, 0), n(0, 0)],
    entries: [
      "names",
      "row 1",
      "row 2",
      "start a>5",
      "row 3",
      "row 4",
      "start b>5",
      "end a>5",
      "row 5",
      "row 6",
      "end b>5",
    ],
    active: [0, 1, 1, 1, 1, 0],
    events: 2,
  },
  {
    // depth 2. dt_gt 10: skip s1 s2; s3 delta 0; s4 100 on; s5 100; s6 0; s7 0 off.
    // inc_gt 50 (H = 1): target 50; s4 100 on; target 150; s5 off.
    name: "dt_gt uses H = depth and inc_gt H = 1 inside a monitor",
    depth: 2,
    columns: ["a"],
    rules: [
      { name: "dt", column: 0, type: "dt_gt", value: 10n },
      { name: "inc", column: 0, type: "inc_gt", value: 50n },
    ],
    steps: [n(0), n(0), n(0), n(100), n(100), n(100), n(100)],
    entries: [
      "names",
      "row 1",
      "row 2",
      "row 3",
      "row 4",
      "start dt",
      "start inc",
      "row 5",
      "end inc",
      "row 6",
      "row 7",
      "end dt",
    ],
    active: [0, 0, 0, 2, 1, 1, 0],
    events: 2,
  },
  {
    name:
      "gaps are always counted and marked before the row that follows them, in a history dump too; one outside an event is a blind period of its own",
    depth: 1,
    columns: ["a"],
    rules: [a5()],
    steps: [{ gap: 2 }, n(0), n(9), { gap: 5 }, n(9), n(0), { gap: 1 }, n(0)],
    entries: [
      "blind 2",
      "names",
      "gap 2",
      "row 1",
      "row 2",
      "start a>5",
      "gap 5",
      "row 3",
      "row 4",
      "end a>5",
      "blind 1",
    ],
    gapTimes: [1e-6, 3e-6],
    active: [0, 1, 1, 0, 0],
    events: 1,
    dropped: 8,
  },
];

Deno.test("Monitor: per-sample order of work (hand-computed logs)", async (t) => {
  for (const c of CASES) {
    await t.step(c.name, () => {
      const sink = new RecordingSink(c.rules.map((r) => r.name));
      const monitor = build(c.depth, c.columns, c.rules, sink);
      const active: number[] = [];
      let ts = 0n;
      const t0 = Date.now();
      for (const step of c.steps) {
        if ("gap" in step) {
          monitor.gap(step.gap);
        } else {
          feed(monitor, ++ts, step);
          active.push(monitor.activeRules);
        }
      }
      const t1 = Date.now();
      assert.deepEqual(sink.entries, c.entries);
      assert.deepEqual(active, c.active);
      assert.equal(monitor.samples, Number(ts));
      assert.equal(monitor.events, c.events);
      assert.equal(monitor.droppedSamples, c.dropped ?? 0);
      // A gap is marked at the sample time of the row after it (ns -> ms).
      assert.deepEqual(sink.gapTimes, c.gapTimes ?? []);
      for (const ms of sink.times) {
        assert.ok(ms >= t0 && ms <= t1, "marker wall time is Date.now()");
      }
    });
  }
});

Deno.test("Monitor: ring of 2 * depth, rules in order with their thresholds", () => {
  const monitor = build(
    8,
    ["a", "b", "c"],
    [
      { name: "x", column: 2, type: "dt_lt", value: 1n },
      { name: "y", column: 0, type: "inc_gt", value: 1n },
      { name: "z", column: 1, type: "lt", value: 1n },
    ],
    new RecordingSink([]),
  );
  assert.equal(monitor.name, "m");
  assert.equal(monitor.columns, 3);
  assert.equal(monitor.ring.capacity, 16);
  assert.equal(monitor.ring.columns, 3);
  assert.equal(monitor.words, monitor.ring.words);
  assert.deepEqual(
    monitor.rules.map((r) => [
      r.name,
      r.column,
      (r as ReferenceRule).threshold,
    ]),
    [
      ["x", 2, 8],
      ["y", 0, 1],
      ["z", 1, 8],
    ],
  );
  assert.equal(monitor.samples, 0);
  assert.equal(monitor.events, 0);
  assert.equal(monitor.activeRules, 0);
  assert.equal(monitor.droppedSamples, 0);
});

Deno.test("Monitor: rows carry the exact u64 timestamp and values of each record", () => {
  // gt b > 2^53 depth 1: s2 (b = 2^53+1) on, s3 (b = 2^53) off.
  const rules: RuleSpec[] = [{
    name: "b>2^53",
    column: 1,
    type: "gt",
    value: P53,
  }];
  const sink = new RecordingSink(rules.map((r) => r.name), 2, true);
  const monitor = build(1, ["a", "b"], rules, sink);
  const T = 1_700_000_000_123_456_789n; // ns, above 2^53
  feed(monitor, T + 1n, [M - 1n, P53]);
  feed(monitor, T + 2n, [7n, P53 + 1n]);
  feed(monitor, T + 3n, [P53 + 3n, P53]);
  feed(monitor, T + 4n, [0n, 0n]);
  assert.deepEqual(sink.entries, [
    "names",
    `row ${T + 1n} ${M - 1n} ${P53}`,
    `row ${T + 2n} 7 ${P53 + 1n}`,
    "start b>2^53",
    `row ${T + 3n} ${P53 + 3n} ${P53}`,
    "end b>2^53",
  ]);
  assert.equal(monitor.rules[0].activations, 1);
});

Deno.test("Monitor: rule times add up across activations; the observer sees every sample", () => {
  const seen: number[] = [];
  const monitor = new Monitor(
    {
      name: "m",
      depth: 1,
      columns: ["a"],
      rules: [{
        name: "a>5",
        column: 0,
        comparisonType: "gt",
        comparisonValue: 5n,
      }],
    },
    new RecordingSink(["a>5"]),
    { observer: { observe: (words, at) => seen.push(words[at + 2]) } },
  );
  assert.ok(Number.isNaN(monitor.ruleChangedAtMs(0)));
  assert.equal(monitor.ruleActiveMs(0), 0);
  const t0 = Date.now();
  const m0 = performance.now();
  feed(monitor, 1n, [9n]); // starts (depth 1)
  const m1 = performance.now();
  const started = monitor.ruleChangedAtMs(0);
  assert.ok(started >= t0 && started <= Date.now());
  // While active, the open activation counts up to the time asked about
  // (monotonic clock): started somewhere in [m0, m1].
  const open = monitor.ruleActiveMs(0, m1 + 250);
  assert.ok(open >= 250 && open <= 250 + (m1 - m0), `${open}`);
  feed(monitor, 2n, [1n]); // ends
  const first = monitor.ruleActiveMs(0);
  // Ended: later readings do not grow.
  assert.equal(monitor.ruleActiveMs(0, performance.now() + 10_000), first);
  assert.ok(monitor.ruleChangedAtMs(0) >= started);
  feed(monitor, 3n, [9n]); // starts again
  const m2 = performance.now();
  const again = monitor.ruleActiveMs(0, m2 + 100);
  assert.ok(again >= first + 100 && again <= first + 100 + (m2 - m1) + 1);
  assert.deepEqual(seen, [9, 1, 9]);
});

Deno.test("Monitor: gap of 0 or less is ignored", () => {
  const sink = new RecordingSink(["a>5"]);
  const monitor = build(1, ["a"], [a5()], sink);
  feed(monitor, 1n, [9n]);
  monitor.gap(0);
  monitor.gap(-3);
  assert.equal(monitor.droppedSamples, 0);
  assert.deepEqual(sink.entries, ["names", "row 1", "start a>5"]);
});

Deno.test("Monitor: a loss with no event after it is a blind period from the record before to the record after", () => {
  const sink = new RecordingSink(["a>5"]);
  const monitor = build(2, ["a"], [a5()], sink);
  feed(monitor, 1_000_000_000n, [0n]); // 1000 ms
  monitor.gap(3);
  monitor.gap(4); // before the next record: the same blind period
  assert.deepEqual(sink.entries, []); // learnt only when the source resumes
  feed(monitor, 1_250_500_000n, [0n]); // 1250.5 ms
  assert.deepEqual(sink.entries, ["blind 7"]);
  assert.deepEqual(sink.blindSpans, [[1000, 1250.5]]);
  assert.equal(monitor.droppedSamples, 7);
  assert.equal(monitor.blindPeriods, 1);
  feed(monitor, 1_300_000_000n, [0n]);
  assert.deepEqual(sink.entries, ["blind 7"]); // told once
});

Deno.test("Monitor: a loss inside an event is marked before its row, not as a blind period of its own", () => {
  const sink = new RecordingSink(["a>5"]);
  const monitor = build(1, ["a"], [a5()], sink);
  feed(monitor, 1_000_000n, [9n]); // starts: depth 1
  monitor.gap(2);
  feed(monitor, 2_000_000n, [9n]);
  assert.deepEqual(sink.entries, [
    "names",
    "row 1000000",
    "start a>5",
    "gap 2",
    "row 2000000",
  ]);
  assert.deepEqual(sink.gapTimes, [2]);
  assert.deepEqual(sink.blindSpans, []);
  assert.equal(monitor.blindPeriods, 1);
});

Deno.test("Monitor.writeOpenBlindPeriod writes a loss the source has not resumed from, once, with the stop time", () => {
  const sink = new RecordingSink(["a>5"]);
  const monitor = build(1, ["a"], [a5()], sink);
  monitor.writeOpenBlindPeriod(5000);
  assert.deepEqual(sink.entries, []); // not blind: nothing
  monitor.gap(1); // before any record: where it began is not known
  feed(monitor, 1_000_000n, [0n]);
  monitor.gap(6);
  monitor.writeOpenBlindPeriod(5000);
  monitor.writeOpenBlindPeriod(6000);
  assert.deepEqual(sink.entries, ["blind 1", "blind 6 stopped"]);
  assert.deepEqual(sink.blindSpans, [[NaN, 1], [1, 5000]]);
  assert.equal(monitor.blindPeriods, 2);
});

const gc = (globalThis as { gc?: () => void }).gc;

// With a shared ring too: the GPU monitor's copy for the endpoint's
// thread is on the per-sample path.
for (const shared of [false, true]) {
  Deno.test({
    name: `Monitor: 200,000 samples, 16 columns, 16 rules, aggregated${
      shared ? ", ring shared" : ""
    }: heap flat (needs --v8-flags=--expose-gc)`,
    ignore: typeof gc !== "function",
    fn() {
      const columns = Array.from({ length: 16 }, (_, k) => `c${k}`);
      const types: ComparisonType[] = ["gt", "lt", "dt_gt", "dt_lt", "inc_gt"];
      // Even columns are counters, odd ones gauges; the rule on column k has
      // type types[k % 5], tuned so every rule toggles many times.
      const values: Record<ComparisonType, bigint> = {
        gt: 50n,
        lt: 50n,
        dt_gt: 200n,
        dt_lt: 200n,
        inc_gt: 50n,
      };
      const rules = columns.map((_name, k) => ({
        name: `r${k}`,
        column: k,
        comparisonType: types[k % 5],
        comparisonValue: values[types[k % 5]],
      }));
      let calls = 0;
      let transitions = 0;
      const noop: EventSink = {
        columnNames: () => calls++,
        row: () => calls++,
        eventStart: () => transitions++,
        eventEnd: () => transitions++,
        gap: () => calls++,
        blindPeriod: () => calls++,
      };
      // Bytes V8 has allocated so far, where this Deno reports it.
      const allocated = (): number | undefined =>
        (v8.getHeapStatistics() as { total_allocated_bytes?: number })
          .total_allocated_bytes;
      // Timestamps advance 1 ns a sample: a 1 us window completes every
      // 1,000 samples, so finishing windows is on the measured path too.
      const aggregator = new WindowAggregator({
        columns: columns.map((name, k) => ({
          name,
          kind: k % 2 === 0 ? "counter" : "gauge",
        })),
        windowNs: 1000,
      });
      const monitor = new Monitor(
        { name: "alloc", depth: 4, columns, rules },
        noop,
        {
          observer: aggregator,
          ...(shared ? { sharedRing: sharedRingBuffer(16, 8) } : {}),
        },
      );
      const acc = new Float64Array(16);
      const words = monitor.words;
      const step = (i: number): void => {
        const at = monitor.claim();
        words[at] = i >>> 0;
        words[at + 1] = 0x187;
        for (let k = 0; k < 16; k++) {
          let v: number;
          if (k % 2 === 0) {
            acc[k] += ((i >> 4) + k) & 1 ? 100 : 1;
            v = acc[k];
          } else {
            v = ((i >> 3) + k) & 1 ? 90 : 10;
          }
          words[at + 2 + 2 * k] = v >>> 0;
          // Column 14 sits just under 2^64 so its counter wraps.
          words[at + 3 + 2 * k] = k === 14 ? 0xffffffff : 0;
        }
        monitor.commit();
        if ((i & 1023) === 0) monitor.gap(1);
      };
      for (let i = 0; i < 20_000; i++) step(i); // warm up the JIT
      gc!();
      gc!();
      const before = Deno.memoryUsage().heapUsed;
      const allocatedBefore = allocated();
      for (let i = 20_000; i < 220_000; i++) step(i);
      const allocatedAfter = allocated();
      gc!();
      gc!();
      const after = Deno.memoryUsage().heapUsed;
      assert.equal(monitor.samples, 220_000);
      assert.ok(aggregator.completed.sequence > 200, "windows should complete");
      assert.ok(
        monitor.events > 1000,
        `rules should toggle often, got ${monitor.events} events`,
      );
      assert.ok(calls > 0);
      assert.ok(
        after - before < 1024 * 1024,
        `heap grew by ${after - before} bytes over 200,000 samples`,
      );
      // Retained heap misses short-lived garbage; bound what was allocated at
      // all. Per sample nothing may allocate; a marker's wall time (a double
      // passed to the sink) may box, so allow 64 bytes per start/end.
      if (allocatedBefore !== undefined && allocatedAfter !== undefined) {
        const bytes = allocatedAfter - allocatedBefore;
        const limit = 1024 * 1024 + 64 * transitions;
        assert.ok(
          bytes < limit,
          `allocated ${bytes} bytes over 200,000 samples and ${transitions} starts/ends (limit ${limit})`,
        );
      }
    },
  });
}

// Samples are numbered from 1 and sample k has timestamp k ns (`row k`),
// so `for` 1 ns means "raised on this sample and the one before".
Deno.test("Monitor: signal and reference rules together follow section 4's order of work", () => {
  const names = ["a high", "b>5", "a jumps"];
  const sink = new RecordingSink(names);
  const heard: string[] = [];
  const monitor = new Monitor(
    {
      name: "m",
      depth: 2,
      columns: ["a", "b"],
      rules: [
        {
          name: "a high",
          signal: "value",
          column: 0,
          windowNs: 0,
          direction: "above",
          threshold: 5n,
          clear: 2n,
          forNs: 1,
          keepFiringForNs: 0,
        },
        { name: "b>5", column: 1, comparisonType: "gt", comparisonValue: 5n },
        {
          name: "a jumps",
          signal: "increase",
          column: 0,
          windowNs: 0,
          direction: "above",
          threshold: 3n,
          clear: 3n,
          forNs: 0,
          mOfN: { m: 2, n: 3 },
          keepFiringForNs: 0,
        },
      ],
    },
    sink,
    {
      onTransition: (m, rule, active) =>
        heard.push(`${m.samples} ${active ? "start" : "end"} ${names[rule]}`),
    },
  );
  // a high: value above 5, clear at or below 2, for 1 ns. b>5: gt, H = 2.
  // a jumps: increase above 3 in 2 of the last 3 samples.
  //  1 (0,0)  nothing raises; the increase is unknown
  //  2 (4,0)  a jumps raises once (1 of 2 seen): pending
  //  3 (9,9)  a jumps 2 of 3: starts, the first activation: dump of 1..3
  //  4 (9,9)  row; a high raised 1 ns: starts; b>5 H reached: starts (no
  //           dump: others are active), in configuration order
  //  5 (1,9)  row; a high clears: ends; a jumps: reset (unknown), 1 of 3
  //  6 (2,0)  row; a jumps: increase 1 clears, 0 of 3: ends
  //  7 (2,0)  row; b>5 second non-match: ends; nothing active
  //  8 (9,9)  no row; a high pending, b>5 1 match, a jumps 1 of 3
  //  9 (9,9)  a high starts: active 0 -> 1, a new dump (ring: 6..9); b>5
  //           starts after it
  // 10 (0,0)  row; a high ends; a jumps: reset, unknown
  // 11 (0,0)  row; b>5 ends
  const trace = [
    [0, 0],
    [4, 0],
    [9, 9],
    [9, 9],
    [1, 9],
    [2, 0],
    [2, 0],
    [9, 9],
    [9, 9],
    [0, 0],
    [0, 0],
  ];
  const active: number[] = [];
  trace.forEach((values, i) => {
    feed(monitor, BigInt(i + 1), values.map(BigInt));
    active.push(monitor.activeRules);
  });
  assert.deepEqual(sink.entries, [
    "names",
    "row 1",
    "row 2",
    "row 3",
    "start a jumps",
    "row 4",
    "start a high",
    "start b>5",
    "row 5",
    "end a high",
    "row 6",
    "end a jumps",
    "row 7",
    "end b>5",
    "names",
    "row 6",
    "row 7",
    "row 8",
    "row 9",
    "start a high",
    "start b>5",
    "row 10",
    "end a high",
    "row 11",
    "end b>5",
  ]);
  assert.deepEqual(active, [0, 0, 1, 3, 2, 1, 0, 0, 2, 1, 0]);
  // Listeners hear the same transitions in the same order, after the marker.
  assert.deepEqual(heard, [
    "3 start a jumps",
    "4 start a high",
    "4 start b>5",
    "5 end a high",
    "6 end a jumps",
    "7 end b>5",
    "9 start a high",
    "9 start b>5",
    "10 end a high",
    "11 end b>5",
  ]);
  assert.equal(monitor.events, 5);
  assert.deepEqual(
    monitor.rules.map((r) => [r.activations, r.active, r.peak]),
    // a high: max of 9 and 0 (samples 9, 10); b>5: max of 9, 0, 0 (9..11);
    // a jumps: max of the known increases 5, 0, 1 (3..6; 5 is a reset).
    [[2, false, 9], [2, false, 9], [1, false, 5]],
  );
});

Deno.test("Monitor: a signal rule ending as a later one starts repeats the dump; configured first, it does not", () => {
  const rule = (name: string, column: number) => ({
    name,
    signal: "value" as const,
    column,
    windowNs: 0,
    direction: "above" as const,
    threshold: 5n,
    clear: 5n,
    forNs: 0,
    keepFiringForNs: 0,
  });
  const run = (order: "ab" | "ba"): string[] => {
    const rules = order === "ab"
      ? [rule("a>5", 0), rule("b>5", 1)]
      : [rule("b>5", 1), rule("a>5", 0)];
    const sink = new RecordingSink(rules.map((r) => r.name));
    const monitor = new Monitor(
      { name: "m", depth: 2, columns: ["a", "b"], rules },
      sink,
    );
    [[9n, 0n], [0n, 9n], [0n, 0n]].forEach((values, i) =>
      feed(monitor, BigInt(i + 1), values)
    );
    return sink.entries;
  };
  // a>5 ends at 2 (0 active), then b>5 starts: a fresh dump of 1..2.
  assert.deepEqual(run("ab"), [
    "names",
    "row 1",
    "start a>5",
    "row 2",
    "end a>5",
    "names",
    "row 1",
    "row 2",
    "start b>5",
    "row 3",
    "end b>5",
  ]);
  // b>5 first: it starts while a>5 is still active, so no dump.
  assert.deepEqual(run("ba"), [
    "names",
    "row 1",
    "start a>5",
    "row 2",
    "start b>5",
    "end a>5",
    "row 3",
    "end b>5",
  ]);
});

Deno.test("Monitor.writeOpenPeaks tells the sink the peak so far of each rule still active, and of no other", () => {
  const sink = new RecordingSink(["a>5", "b>5"]);
  const monitor = build(
    1,
    ["a", "b"],
    [a5(0), { ...a5(1), name: "b>5" }],
    sink,
  );
  feed(monitor, 1n, [9n, 0n]);
  feed(monitor, 2n, [12n, 0n]);
  sink.entries.length = 0;
  monitor.writeOpenPeaks();
  assert.deepEqual(sink.entries, ["peak a>5 12"]);
});
