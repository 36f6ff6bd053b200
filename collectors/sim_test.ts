import assert from "node:assert/strict";
import { until } from "../tests/until.ts";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { SampleSink } from "../rules/sample_sink.ts";
import { type ColumnConfig, isReferenceRule } from "../config/types.ts";
import { loadConfig } from "../config/load.ts";
import { createRule } from "../rules/monitor_rule.ts";
import { SampleRing } from "../rules/ring.ts";
import { SimCollector } from "./sim.ts";

const M = 1n << 64n;
const PERIOD = 100_000;
/** One scenario cycle at the demo's period. */
const CYCLE = 200_000;
/** A fixed wall clock: 2025-10-09T08:53:20.123Z, in ms. */
const T0 = 1_760_000_000_123;

/**
 * A monitor stand-in: a ring of records, plus what the collector reported.
 * With `capacity` >= the samples produced, record `i` is sample `i`.
 */
class FakeSink implements SampleSink {
  readonly words: Uint32Array;
  readonly stride: number;
  committed = 0;
  claimed = 0;
  readonly gaps: number[] = [];
  /** Samples committed per gap report, to check gaps come first. */
  readonly gapAt: number[] = [];
  onCommit?: () => void;

  constructor(readonly columns: number, readonly capacity: number) {
    this.stride = 2 * (1 + columns);
    this.words = new Uint32Array(capacity * this.stride);
  }
  claim(): number {
    assert.equal(this.claimed, this.committed, "claim without commit");
    return (this.claimed++ % this.capacity) * this.stride;
  }
  commit(): void {
    this.committed++;
    this.onCommit?.();
  }
  gap(dropped: number): void {
    this.gaps.push(dropped);
    this.gapAt.push(this.committed);
  }
  /** Word pair `word` (0 = timestamp, k + 1 = column k) of record `r`. */
  u64(r: number, word: number): bigint {
    const at = (r % this.capacity) * this.stride + 2 * word;
    return (BigInt(this.words[at + 1]) << 32n) | BigInt(this.words[at]);
  }
  value(r: number, column: number): bigint {
    return this.u64(r, column + 1);
  }
  timestamp(r: number): bigint {
    return this.u64(r, 0);
  }
}

interface DemoColumn {
  name: string;
  data_id: string;
}
/** A reference rule of the demo; its signal rules are read through the loader. */
interface DemoRule {
  name: string;
  column: string;
  comparison_type?: "gt" | "lt" | "dt_gt" | "dt_lt" | "inc_gt";
  comparison_value: number | string;
}
interface DemoMonitor {
  source: string;
  sample_period_ns: number;
  depth: number;
  seed: number;
  event_log: string;
  columns: DemoColumn[];
  rules: DemoRule[];
}

const demo = (parse(
  await Deno.readTextFile(new URL("../deploy/demo.yaml", import.meta.url)),
) as { monitors: DemoMonitor[] }).monitors[0];
const demoColumns: ColumnConfig[] = demo.columns.map((c) => ({
  name: c.name,
  dataId: c.data_id,
}));
const col = (name: string): number => {
  const k = demo.columns.findIndex((c) => c.name === name);
  assert.ok(k >= 0, `no column ${name}`);
  return k;
};

function demoSim(seed = demo.seed, period = PERIOD): SimCollector {
  return new SimCollector({
    columns: demoColumns,
    samplePeriodNs: period,
    seed,
    now: () => T0,
  });
}

/** One demo cycle, generated once and shared by the read-only tests. */
let cycleSink: FakeSink | undefined;
function demoCycle(): FakeSink {
  if (!cycleSink) {
    cycleSink = new FakeSink(demoColumns.length, CYCLE);
    demoSim().generate(cycleSink, CYCLE);
  }
  return cycleSink;
}

/** Per-sample increase of `column` at sample `i` (mod 2^64). */
function delta(sink: FakeSink, i: number, column: number): bigint {
  return (sink.value(i, column) - sink.value(i - 1, column) + M) % M;
}

function sameWords(a: FakeSink, b: FakeSink, from = 0, to = a.capacity) {
  const s = a.stride;
  assert.deepEqual(
    a.words.subarray(from * s, to * s),
    b.words.subarray(from * s, to * s),
  );
}

Deno.test("SimCollector is deterministic: same seed, same values", () => {
  const a = new FakeSink(demoColumns.length, 5_000);
  const b = new FakeSink(demoColumns.length, 5_000);
  demoSim(7).generate(a, 5_000);
  demoSim(7).generate(b, 5_000);
  sameWords(a, b);
});

Deno.test("SimCollector with a different seed gives different values", () => {
  const a = new FakeSink(demoColumns.length, 100);
  const b = new FakeSink(demoColumns.length, 100);
  demoSim(7).generate(a, 100);
  demoSim(8).generate(b, 100);
  for (let k = 0; k < demoColumns.length; k++) {
    if (k === col("port_0_rx_ecn_packets")) continue; // may both be 0 deltas
    assert.notEqual(a.value(99, k), b.value(99, k), demoColumns[k].name);
  }
});

Deno.test("SimCollector values do not depend on batch sizes", () => {
  const whole = new FakeSink(demoColumns.length, 3_000);
  demoSim().generate(whole, 3_000);
  const parts = new FakeSink(demoColumns.length, 3_000);
  const sim = demoSim();
  for (const n of [1, 0, 7, 992, 1_000, 999, 1]) sim.generate(parts, n);
  assert.equal(sim.index, 3_000);
  sameWords(whole, parts);
});

Deno.test("SimCollector counters start high, only rise and are exact u64", () => {
  const sink = demoCycle();
  const latency = col("pcie_max_read_latency_ns");
  for (const name of ["port_0_rx_bytes", "port_0_tx_bytes"]) {
    assert.ok(sink.value(0, col(name)) > 1n << 53n, `${name} above 2^53`);
  }
  for (let k = 0; k < demoColumns.length; k++) {
    if (k === latency) continue;
    let prev = sink.value(0, k);
    let total = 0n;
    for (let i = 1; i < CYCLE; i++) {
      const cur = sink.value(i, k);
      const d = (cur - prev + M) % M;
      // No counter can rise by more than 400 Gb/s allows in 100 us.
      assert.ok(d <= 5_000_000n, `${demoColumns[k].name} at ${i}: +${d}`);
      total += d;
      prev = cur;
    }
    // Exact: the sum of the increases is the difference of the ends.
    assert.equal(
      (sink.value(0, k) + total) % M,
      sink.value(CYCLE - 1, k),
      demoColumns[k].name,
    );
  }
});

Deno.test("SimCollector counters wrap modulo 2^64 like hardware", () => {
  const columns = demoColumns.slice(0, 2);
  const sink = new FakeSink(2, 10);
  new SimCollector({
    columns,
    samplePeriodNs: PERIOD,
    seed: 1,
    now: () => T0,
    startValues: [M - 5_000_000n, M - 1n],
  }).generate(sink, 10);
  for (const k of [0, 1]) {
    assert.ok(sink.value(9, k) < 1n << 32n, "wrapped to a small value");
    for (let i = 1; i < 10; i++) {
      const d = delta(sink, i, k);
      assert.ok(d > 1_000_000n && d < 5_000_000n, `+${d}`);
    }
  }
  assert.throws(
    () =>
      new SimCollector({
        columns,
        samplePeriodNs: PERIOD,
        seed: 1,
        startValues: [M],
      }),
    RangeError,
  );
});

Deno.test("SimCollector timestamps start at the clock and advance by exactly the period", () => {
  const sink = new FakeSink(1, 1_000);
  const period = 333_333_333; // not a divisor of 2^32: exercises the carry
  new SimCollector({
    columns: demoColumns.slice(0, 1),
    samplePeriodNs: period,
    seed: 3,
    now: () => T0,
  }).generate(sink, 1_000);
  const base = BigInt(T0) * 1_000_000n;
  for (let i = 0; i < 1_000; i++) {
    assert.equal(sink.timestamp(i), base + BigInt(i) * BigInt(period));
  }
});

Deno.test("SimCollector follows the scenario: steady, burst, errors, quiet", () => {
  const sink = demoCycle();
  const ecn = col("port_0_rx_ecn_packets");
  const cnpSent = col("port_0_cnp_sent_packets");
  const cnpHandled = col("port_0_cnp_handled_packets");
  const pause = col("port_0_prio_3_rx_pause_packets");
  const discard = col("port_0_rx_discard_buf_packets");
  const rx = col("port_0_rx_bytes");
  const latency = col("pcie_max_read_latency_ns");
  const sum = (k: number, from: number, to: number) =>
    (sink.value(to - 1, k) - sink.value(from - 1, k) + M) % M;

  // Steady (0-5 s): ~25 GB/s, no ECN, no discards, a few pauses.
  for (let i = 1; i < 50_000; i++) {
    assert.equal(delta(sink, i, ecn), 0n, `ECN at ${i}`);
    assert.equal(delta(sink, i, discard), 0n, `discards at ${i}`);
    const bytes = delta(sink, i, rx);
    assert.ok(bytes > 2_200_000n && bytes < 2_800_000n, `rx ${bytes} at ${i}`);
    const l = sink.value(i, latency);
    assert.ok(l >= 1_000n && l < 3_200n, `latency ${l} at ${i}`);
  }
  const steadyPauses = sum(pause, 1, 50_000);
  assert.ok(steadyPauses > 0n && steadyPauses < 300n, `${steadyPauses}`);

  // Burst plateau (5.5-8.5 s): ECN on every sample, CNPs, pauses, slow reads.
  for (let i = 55_000; i < 85_000; i++) {
    assert.ok(delta(sink, i, ecn) > 0n, `ECN at ${i}`);
    assert.ok(sink.value(i, latency) > 4_000n, `latency at ${i}`);
  }
  assert.ok(sum(cnpSent, 55_000, 85_000) > 100_000n);
  assert.ok(sum(cnpHandled, 55_000, 85_000) > 100_000n);
  assert.ok(sum(pause, 55_000, 85_000) > 100_000n);

  // Error spike (10-12 s): >= 10 discards on every sample, none after.
  for (let i = 100_000; i < 120_000; i++) {
    assert.ok(delta(sink, i, discard) >= 10n, `discards at ${i}`);
  }
  assert.equal(sum(discard, 120_000, CYCLE), 0n);

  // Quiet spell (13-16 s): traffic nearly stops, PCIe reads are fast.
  for (let i = 130_000; i < 160_000; i++) {
    assert.ok(delta(sink, i, rx) < 1_000n, `rx at ${i}`);
    assert.ok(sink.value(i, latency) < 700n, `latency at ${i}`);
  }
});

Deno.test("SimCollector scales increments by the period", () => {
  const sink = new FakeSink(1, 100);
  new SimCollector({
    columns: demoColumns.slice(0, 1),
    samplePeriodNs: 1_000_000, // 1 ms: ~25 MB per sample at 25 GB/s
    seed: 7,
    now: () => T0,
  }).generate(sink, 100);
  for (let i = 1; i < 100; i++) {
    const d = delta(sink, i, 0);
    assert.ok(d > 22_000_000n && d < 28_000_000n, `+${d}`);
  }
});

Deno.test("SimCollector.poll delivers exactly the samples due by the clock", () => {
  let now = T0;
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
    now: () => now,
  });
  const sink = new FakeSink(demoColumns.length, 10_000);
  // Sample 0 is stamped with the start time, so it is due at once.
  assert.equal(sim.poll(sink), 1);
  assert.equal(sim.poll(sink), 0);
  now += 0.05; // half a period
  assert.equal(sim.poll(sink), 0);
  now += 0.05;
  assert.equal(sim.poll(sink), 1);
  now += 10; // one poll interval: 100 periods
  assert.equal(sim.poll(sink), 100);
  now += 3.33;
  assert.equal(sim.poll(sink), 33);
  assert.equal(sink.committed, 135);
  assert.deepEqual(sink.gaps, []);
  // Same values as an unpaced run.
  const ref = new FakeSink(demoColumns.length, 10_000);
  demoSim().generate(ref, 135);
  sameWords(sink, ref, 0, 135);
});

Deno.test("SimCollector.poll after a stall reports the overwritten samples as a gap", () => {
  let now = T0;
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
    now: () => now,
    deviceBufferSamples: 4_096,
  });
  const sink = new FakeSink(demoColumns.length, 30_000);
  assert.equal(sim.poll(sink), 1);
  now += 1_000; // a 1 s stall: 10,000 samples due, the device keeps 4,096
  assert.equal(sim.poll(sink), 4_096);
  assert.deepEqual(sink.gaps, [10_000 - 4_096]);
  assert.deepEqual(sink.gapAt, [1], "the gap is reported before the samples");
  assert.equal(sim.index, 10_001);
  now += 1;
  assert.equal(sim.poll(sink), 10);
  // The newest samples are delivered, with the values and timestamps they
  // would have had without the stall.
  const ref = new FakeSink(demoColumns.length, 30_000);
  demoSim().generate(ref, 10_011);
  for (let r = 1; r < sink.committed; r++) {
    const i = r + 10_000 - 4_096;
    for (let w = 0; w <= demoColumns.length; w++) {
      assert.equal(sink.u64(r, w), ref.u64(i, w), `record ${r} word ${w}`);
    }
  }
  assert.equal(
    sink.timestamp(1),
    BigInt(T0) * 1_000_000n + BigInt(5_905) * BigInt(PERIOD),
  );
});

Deno.test("SimCollector.poll after a long suspend skips the excess cheaply, timestamps exact", () => {
  let now = T0;
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
    now: () => now,
    deviceBufferSamples: 4_096,
  });
  const sink = new FakeSink(demoColumns.length, 10_000);
  assert.equal(sim.poll(sink), 1);
  const before = sink.u64(0, 1);
  now += 3_600_000; // an hour: 36,000,000 samples due
  assert.equal(sim.poll(sink), 4_096);
  assert.deepEqual(sink.gaps, [36_000_000 - 4_096]);
  assert.equal(sim.index, 36_000_001);
  // The last delivered sample is stamped exactly at its index.
  assert.equal(
    sink.timestamp(4_096),
    BigInt(T0) * 1_000_000n + 36_000_000n * BigInt(PERIOD),
  );
  // Counters never go backwards across the skip.
  assert.ok(sink.u64(1, 1) >= before);
});

Deno.test("SimCollector.run polls on a timer and resolves on abort", async () => {
  let now = T0;
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
    pollIntervalMs: 1,
    now: () => now,
  });
  const sink = new FakeSink(demoColumns.length, 10_000);
  const controller = new AbortController();
  const done = sim.run(sink, controller.signal);
  assert.equal(sink.committed, 1, "first poll runs at once");
  await assert.rejects(sim.run(sink, controller.signal), /already running/);
  now += 5;
  await until("51 samples", () => sink.committed >= 51);
  assert.equal(sink.committed, 51, "later polls deliver what came due");
  controller.abort();
  await done;
  now += 5;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(sink.committed, 51, "no polls after abort");
  // Aborted before it starts: resolves at once and delivers nothing.
  await sim.run(sink, AbortSignal.abort());
  assert.equal(sink.committed, 51);
});

Deno.test("SimCollector.run with the real clock delivers about one sample per period", async () => {
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
  });
  const sink = new FakeSink(demoColumns.length, 100_000);
  const controller = new AbortController();
  const started = performance.now();
  const done = sim.run(sink, controller.signal);
  await new Promise((resolve) => setTimeout(resolve, 100));
  controller.abort();
  await done;
  const expected = (performance.now() - started) * 10;
  assert.ok(sink.committed > 0 && sink.committed <= expected + 1);
  const wall = BigInt(Math.round(performance.timeOrigin + started)) *
    1_000_000n;
  const ts = sink.timestamp(0);
  assert.ok(ts > wall - 1_000_000_000n && ts < wall + 1_000_000_000n);
});

Deno.test("SimCollector.run rejects when the sink throws", async () => {
  const sim = new SimCollector({
    columns: demoColumns,
    samplePeriodNs: PERIOD,
    seed: 7,
    pollIntervalMs: 1,
  });
  const sink = new FakeSink(demoColumns.length, 100);
  sink.onCommit = () => {
    throw new Error("disk full");
  };
  await assert.rejects(
    sim.run(sink, new AbortController().signal),
    /disk full/,
  );
});

Deno.test("SimCollector rejects bad options and a mismatched sink", () => {
  const columns = demoColumns.slice(0, 1);
  assert.throws(
    () => new SimCollector({ columns, samplePeriodNs: 0, seed: 1 }),
    /samplePeriodNs must be a positive integer, got 0/,
  );
  assert.throws(
    () =>
      new SimCollector({
        columns: [{ name: "x", dataId: "0x1020" }],
        samplePeriodNs: PERIOD,
        seed: 1,
      }),
    /columns\[0\]\.dataId must be 0x followed by 16 hex digits, got "0x1020"/,
  );
  const sim = new SimCollector({ columns, samplePeriodNs: PERIOD, seed: 1 });
  assert.throws(
    () => sim.generate(new FakeSink(2, 1), 1),
    /sink has 2 columns/,
  );
});

Deno.test("SimCollector recognises IDs by type, on any port, and unknown IDs rise slowly", () => {
  const sink = new FakeSink(3, 1_001);
  new SimCollector({
    columns: [
      { name: "port_1_rx_bytes", dataId: "0x1020000100000001" },
      { name: "icmc_hits", dataId: "0x1180000200000000" },
      { name: "rx_bytes_bad_props", dataId: "0x1020000100010000" },
    ],
    samplePeriodNs: PERIOD,
    seed: 7,
    now: () => T0,
  }).generate(sink, 1_001);
  const over1000 = (k: number) =>
    (sink.value(1_000, k) - sink.value(0, k) + M) % M;
  assert.ok(over1000(0) > 2_000_000_000n, "port 1 is a byte counter");
  assert.ok(over1000(1) > 0n && over1000(1) < 1_000n, "unknown: slowly");
  assert.ok(over1000(2) < 1_000n, "only port/priority bits are masked");
});

// A straightforward BigInt model of the reference rule engine
// (docs/spec/reference-semantics.md §3), to show the demo's rules all fire.
interface Transition {
  rule: string;
  sample: number;
  active: boolean;
}

function evaluateRules(sink: FakeSink, samples: number): Transition[] {
  const depth = demo.depth;
  const capacity = 2 * depth;
  const rules = referenceRules().map((r) => ({
    name: r.name,
    column: col(r.column),
    type: r.comparison_type!,
    value: BigInt(r.comparison_value),
    h: r.comparison_type === "inc_gt" ? 1 : depth,
    active: false,
    counter: 0,
    target: 0n,
    needNewTarget: true,
  }));
  const out: Transition[] = [];
  for (let i = 0; i < samples; i++) {
    const stored = Math.min(i + 1, capacity);
    for (const r of rules) {
      const cur = sink.value(i, r.column);
      const back = (d: number) => sink.value(i - d, r.column);
      if (r.type === "gt" || r.type === "lt") {
        const match = r.type === "gt" ? cur > r.value : cur < r.value;
        if (r.active !== match) r.counter++;
        else r.counter = 0;
      } else if (r.type === "dt_gt" || r.type === "dt_lt") {
        if (stored > r.h) {
          const d = (cur - back(r.h) + M) % M;
          const match = r.type === "dt_gt" ? d > r.value : d < r.value;
          if (!r.active && match) r.counter = r.h;
          else if (r.active && !match) r.counter++;
          else r.counter = 0;
        }
      } else {
        if (r.needNewTarget) {
          const base = stored === 1 ? cur : back(1);
          r.target = (base + r.value) % M;
          r.needNewTarget = false;
        }
        const match = cur >= r.target;
        if (match) r.needNewTarget = true;
        if (r.active !== match) r.counter++;
        else r.counter = 0;
      }
      if (r.counter >= r.h) {
        r.active = !r.active;
        r.counter = 0;
        out.push({ rule: r.name, sample: i, active: r.active });
      }
    }
  }
  return out;
}

/** The demo's rules of the five reference types. */
function referenceRules(): DemoRule[] {
  return demo.rules.filter((r) => r.comparison_type !== undefined);
}

Deno.test("deploy/demo.yaml: every rule starts and ends within one cycle", () => {
  assert.equal(demo.source, "sim");
  assert.equal(demo.sample_period_ns, PERIOD);
  assert.equal(demo.depth, 1_000);
  assert.equal(demo.event_log, "demo-out/events.log");
  const types = new Set(referenceRules().map((r) => r.comparison_type));
  assert.deepEqual([...types].sort(), ["dt_gt", "dt_lt", "gt", "inc_gt", "lt"]);

  const transitions = evaluateRules(demoCycle(), CYCLE);
  for (const rule of referenceRules()) {
    const mine = transitions.filter((t) => t.rule === rule.name);
    assert.ok(mine.some((t) => t.active), `${rule.name} starts`);
    assert.ok(mine.some((t) => !t.active), `${rule.name} ends`);
    assert.ok(!mine.at(-1)!.active, `${rule.name} has ended by cycle end`);
  }
  // At some point two events are active at once.
  let active = 0;
  let most = 0;
  for (const t of transitions) {
    active += t.active ? 1 : -1;
    most = Math.max(most, active);
  }
  assert.ok(most >= 2, `at most ${most} events at once`);
  if (Deno.env.get("SIM_PRINT_TRANSITIONS")) console.table(transitions);
});

Deno.test("deploy/demo.yaml: every signal rule starts once and ends within one cycle", async () => {
  // Through the real loader and engine: the reference model above knows
  // only the five types. Each rule must fire exactly once a cycle (its
  // clear level, keep_firing_for or M of N keep it from flapping).
  const monitor = (await loadConfig(
    fileURLToPath(new URL("../deploy/demo.yaml", import.meta.url)),
  )).monitors[0];
  const signal = monitor.rules.filter((r) => !isReferenceRule(r));
  const kinds = new Set(signal.map((r) => "signal" in r ? r.signal : ""));
  assert.deepEqual([...kinds].sort(), ["increase", "rate", "ratio"]);
  const rules = signal.map((r) => createRule(r, monitor.depth));
  const ring = new SampleRing(demoColumns.length, 2 * monitor.depth);
  const sink = demoCycle();
  const starts = rules.map(() => -1);
  const ends = rules.map(() => -1);
  for (let i = 0; i < CYCLE; i++) {
    const at = ring.claim();
    const from = (i % sink.capacity) * sink.stride;
    ring.words.set(sink.words.subarray(from, from + sink.stride), at);
    rules.forEach((rule, k) => {
      if (!rule.evaluate(ring)) return;
      if (rule.active) starts[k] = i;
      else ends[k] = i;
    });
  }
  rules.forEach((rule, k) => {
    assert.equal(rule.activations, 1, `${rule.name} starts once`);
    assert.ok(!rule.active && ends[k] > starts[k], `${rule.name} ends`);
  });
});
