import assert from "node:assert/strict";
import v8 from "node:v8";
import { SampleRing } from "../rules/ring.ts";
import { addNumberU64 } from "../base/u64.ts";
import { M, writeRecord } from "../rules/rules_test_util.ts";
import {
  type AggregateColumn,
  DEFAULT_WINDOW_NS,
  WindowAggregator,
  type WindowSnapshot,
} from "./aggregate.ts";

// 2023-11-14T22:13:20Z in ns: a multiple of every window used here and
// exact as a float, as are the boundaries of 1 s windows near it.
const T0 = 1_700_000_000_000_000_000n;
const MS = 1_000_000n;

/** An aggregator fed through a real ring, as Monitor.commit would feed it. */
class Harness {
  readonly agg: WindowAggregator;
  readonly ring: SampleRing;
  /** Every snapshot, in completion order (copied: the aggregator reuses them). */
  readonly windows: WindowSnapshot[] = [];

  constructor(columns: readonly AggregateColumn[], windowNs = 1e9) {
    this.agg = new WindowAggregator({ columns, windowNs });
    this.ring = new SampleRing(columns.length, 4);
  }

  feed(ts: bigint, values: readonly bigint[]): void {
    const at = this.ring.claim();
    writeRecord(this.ring.words, at, ts, values);
    const before = this.agg.completed.sequence;
    this.agg.observe(this.ring.words, at);
    if (this.agg.completed.sequence !== before) this.#keep();
  }

  flush(): boolean {
    const done = this.agg.flush();
    if (done) this.#keep();
    return done;
  }

  #keep(): void {
    this.windows.push(structuredClone(this.agg.completed));
  }
}

const counter = (name = "c"): AggregateColumn => ({ name, kind: "counter" });
const gauge = (name = "g"): AggregateColumn => ({ name, kind: "gauge" });

/** Asserts `actual` is within a relative 1e-12 of `expected`. */
function near(actual: number, expected: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= 1e-12 * Math.abs(expected),
    `${what}: expected ${expected}, got ${actual}`,
  );
}

Deno.test("WindowAggregator: counter rate across a 2^64 wrap is exact", () => {
  const h = new Harness([counter()]);
  // 300 per 100 µs (3e6/s) from 2^64 - 1000, where floats are 4096 apart:
  // wraps on the 4th step, and the increase is still exact.
  let v = M - 1000n;
  let ts = T0;
  for (let i = 0; i < 10; i++) {
    h.feed(ts, [v]);
    ts += 100_000n;
    v = (v + 300n) % M;
  }
  assert.equal(h.flush(), true);
  let w = h.windows[0];
  assert.equal(w.samples, 10);
  assert.equal(w.increase[0], 9 * 300);
  assert.equal(w.spanNs, 900_000);
  near(w.rate[0], 3e6, "rate");
  near(w.rateMin[0], 3e6, "rateMin");
  near(w.rateMax[0], 3e6, "rateMax");
  near(w.rateMean[0], 3e6, "rateMean");
  assert.equal(w.resets[0], 0);
  assert.equal(w.last[0], Number((M - 1000n + 9n * 300n) % M));

  // 1700 -> 2^64 - 2^39 is a step back (2^39 + 1700): a reset. Then a
  // step of +2^40 across the wrap again.
  const from = M - (1n << 39n);
  h.feed(ts, [from]);
  h.feed(ts + MS, [(from + (1n << 40n)) % M]);
  h.flush();
  w = h.windows[1];
  assert.equal(w.resets[0], 1);
  assert.equal(w.increase[0], 2 ** 40);
  near(w.rate[0], 2 ** 40 * 1000, "rate after the wrap");
  assert.equal(w.last[0], 2 ** 39);
});

Deno.test("WindowAggregator: a one-sample burst shows in rateMax while the window rate stays low", () => {
  const h = new Harness([counter()]);
  // 10 kHz, +10 per sample (100,000/s), one sample of +1,000,000 (1e10/s).
  let v = 0n;
  for (let i = 0; i <= 20_000; i++) {
    h.feed(T0 + BigInt(i) * 100_000n, [v]);
    v += i === 15_000 ? 1_000_000n : 10n;
  }
  assert.equal(h.windows.length, 2);
  const [quiet, burst] = h.windows;
  near(quiet.rateMax[0], 1e5, "quiet max");
  near(quiet.rate[0], 1e5, "quiet rate");
  assert.equal(burst.samples, 10_000);
  assert.equal(burst.spanNs, 1e9); // baseline: the quiet window's last sample
  assert.equal(burst.increase[0], 9_999 * 10 + 1_000_000);
  near(burst.rate[0], 1_099_990, "burst window rate");
  near(burst.rateMax[0], 1e10, "burst rateMax");
  near(burst.rateMin[0], 1e5, "burst rateMin");
  near(burst.rateMean[0], 1_099_990, "burst rateMean");
  assert.ok(burst.rateMax[0] > 9000 * burst.rate[0]);
});

Deno.test("WindowAggregator: gauge min, max, mean and last; NaN where a kind does not apply", () => {
  const h = new Harness([gauge(), counter()]);
  const values = [40n, 70n, 10n, 55n, 25n];
  values.forEach((v, i) => h.feed(T0 + BigInt(i) * MS, [v, 7n]));
  assert.equal(h.agg.completed.sequence, 0); // still in the first window
  h.flush();
  const w = h.windows[0];
  assert.equal(w.sequence, 1);
  assert.equal(w.samples, 5);
  assert.equal(w.min[0], 10);
  assert.equal(w.max[0], 70);
  assert.equal(w.mean[0], 40);
  assert.equal(w.last[0], 25);
  for (const k of ["rate", "rateMin", "rateMax", "rateMean"] as const) {
    assert.ok(Number.isNaN(w[k][0]), `gauge ${k}`);
  }
  for (const k of ["min", "max", "mean"] as const) {
    assert.ok(Number.isNaN(w[k][1]), `counter ${k}`);
  }
  assert.equal(w.rate[1], 0); // a flat counter
  assert.equal(w.last[1], 7);
});

Deno.test("WindowAggregator: a gauge above 2^53 keeps its nearest float", () => {
  const h = new Harness([gauge()]);
  h.feed(T0, [M - 1n]);
  h.flush();
  assert.equal(h.windows[0].max[0], 2 ** 64);
});

Deno.test("WindowAggregator: aligned windows carry the baseline, so window increases sum to the total", () => {
  const h = new Harness([counter("a"), counter("b"), gauge()], 250e6);
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let ts = T0 + 7n;
  let a = (1n << 53n) - 5000n; // crosses 2^53
  let b = M - 100_000n; // wraps
  const first = { ts, a, b };
  let last = first;
  let samples = 0;
  while (ts < T0 + 5_000n * MS) {
    h.feed(ts, [a, b, BigInt(rand(100))]);
    last = { ts, a, b };
    samples++;
    ts += BigInt(1 + rand(40)) * MS / 3n; // irregular: 0..750 per window
    a += BigInt(rand(1000));
    b = (b + BigInt(rand(1_000_000))) % M;
  }
  h.flush();
  let sumA = 0;
  let sumB = 0;
  let sumSpan = 0;
  let sumSamples = 0;
  let prevEnd = -Infinity;
  h.windows.forEach((w, i) => {
    assert.equal(w.sequence, i + 1);
    // Boundaries are floats: near 2^60 ns they are exact to 256 ns.
    const offset = w.startNs % 250e6;
    assert.ok(Math.min(offset, 250e6 - offset) <= 256, `window ${i} aligned`);
    assert.ok(Math.abs(w.endNs - w.startNs - 250e6) <= 256);
    assert.ok(w.startNs >= prevEnd, `window ${i} after the previous`);
    prevEnd = w.endNs;
    sumA += w.increase[0];
    sumB += w.increase[1];
    sumSpan += w.spanNs;
    sumSamples += w.samples;
    near(w.rate[0], w.increase[0] / w.spanNs * 1e9, `window ${i} rate`);
    assert.equal(w.resets[1], 0, `window ${i}: a wrap is no reset`);
  });
  assert.equal(h.windows.length, 20);
  assert.equal(sumSamples, samples);
  // Exact: every increase is an integer below 2^53, and so are the sums.
  assert.equal(BigInt(sumA), last.a - first.a);
  assert.equal(BigInt(sumB), (last.b - first.b + M) % M);
  assert.equal(BigInt(sumSpan), last.ts - first.ts);
  assert.ok(last.b < first.b, "b wrapped");
});

Deno.test("WindowAggregator: a jump over several windows completes the last one with samples", () => {
  const h = new Harness([counter()]);
  h.feed(T0 + 100n * MS, [0n]);
  h.feed(T0 + 900n * MS, [800n]); // window [T0, T0 + 1 s)
  h.feed(T0 + 5_500n * MS, [5_400n]); // 4.6 s later, in [T0 + 5 s, T0 + 6 s)
  assert.equal(h.windows.length, 1);
  const w0 = h.windows[0];
  assert.equal(w0.startNs, Number(T0));
  assert.equal(w0.endNs, Number(T0) + 1e9);
  assert.equal(w0.samples, 2);
  near(w0.rate[0], 1000, "rate before the pause");
  h.flush();
  const w1 = h.windows[1];
  assert.equal(w1.sequence, 2);
  assert.equal(w1.startNs, Number(T0) + 5e9);
  assert.equal(w1.samples, 1);
  // The baseline spans the pause: the average over it, nothing lost.
  assert.equal(w1.spanNs, 4.6e9);
  assert.equal(w1.increase[0], 4_600);
  near(w1.rate[0], 1000, "rate over the pause");
});

Deno.test("WindowAggregator: the first window has no baseline; one sample gives no rate", () => {
  const h = new Harness([counter()]);
  h.feed(T0, [5n]);
  h.flush();
  const w = h.windows[0];
  assert.equal(w.samples, 1);
  assert.equal(w.spanNs, 0);
  assert.equal(w.increase[0], 0);
  for (const k of ["rate", "rateMin", "rateMax", "rateMean"] as const) {
    assert.ok(Number.isNaN(w[k][0]), k);
  }
  assert.equal(w.last[0], 5);
});

Deno.test("WindowAggregator: a counter going backwards is a reset, left out of every rate", () => {
  const h = new Harness([counter()]);
  const trace = [1000n, 2000n, 5n, 105n, 205n]; // 1 ms apart; reset at the 3rd
  trace.forEach((v, i) => h.feed(T0 + BigInt(i) * MS, [v]));
  h.flush();
  let w = h.windows[0];
  assert.equal(w.resets[0], 1);
  assert.equal(w.resetsTotal[0], 1);
  assert.equal(w.increase[0], 1200);
  assert.equal(w.spanNs, 4e6);
  near(w.rate[0], 1200 / 3e6 * 1e9, "rate over the 3 ms without the reset");
  near(w.rateMax[0], 1e6, "rateMax");
  near(w.rateMin[0], 1e5, "rateMin");
  near(w.rateMean[0], 4e5, "rateMean");

  // The split is at 2^63: a forward step of 2^63 - 1 is a (huge) increase,
  // one of 2^63 (= a step back of 2^63) is a reset.
  h.feed(T0 + 10n * MS, [0n]); // 205 -> 0: a reset
  h.feed(T0 + 11n * MS, [(1n << 63n) - 1n]);
  h.feed(T0 + 12n * MS, [M - 1n]); // + 2^63: a reset
  h.flush();
  w = h.windows[1];
  assert.equal(w.resets[0], 2);
  assert.equal(w.resetsTotal[0], 3);
  assert.equal(w.increase[0], 2 ** 63);
  near(w.rate[0], 2 ** 63 / 1e-3, "rate over the one counted interval");
  h.feed(T0 + 13n * MS, [M - 1n]);
  h.flush();
  assert.equal(h.windows[2].resets[0], 0);
  assert.equal(h.windows[2].resetsTotal[0], 3, "total carries over");
});

Deno.test("WindowAggregator: a repeated timestamp counts its increase but no sample rate", () => {
  const h = new Harness([counter()]);
  h.feed(T0, [0n]);
  h.feed(T0 + MS, [100n]);
  h.feed(T0 + MS, [150n]);
  h.feed(T0 + 2n * MS, [250n]);
  h.flush();
  const w = h.windows[0];
  assert.equal(w.increase[0], 250);
  near(w.rate[0], 125_000, "rate");
  near(w.rateMax[0], 100_000, "rateMax");
  near(w.rateMean[0], 100_000, "rateMean");
});

Deno.test("WindowAggregator: a clock step back completes the window and drops the baseline", () => {
  const h = new Harness([counter()]);
  h.feed(T0 + 500n * MS, [0n]);
  h.feed(T0 + 600n * MS, [100n]);
  h.feed(T0 + 300n * MS, [150n]); // 300 ms back, same aligned window
  assert.equal(h.windows.length, 1);
  assert.equal(h.windows[0].samples, 2);
  assert.equal(h.windows[0].increase[0], 100);
  h.feed(T0 + 400n * MS, [250n]);
  h.flush();
  const w = h.windows[1];
  assert.equal(w.startNs, Number(T0));
  assert.equal(w.samples, 2);
  assert.equal(w.spanNs, 100e6); // from the sample after the step
  assert.equal(w.increase[0], 100);
  assert.equal(w.resets[0], 0);
});

Deno.test("WindowAggregator: flush completes only a window with samples; snapshots swap", () => {
  const h = new Harness([counter()]);
  const initial = h.agg.completed;
  assert.equal(initial.sequence, 0);
  assert.equal(initial.samples, 0);
  assert.ok(Number.isNaN(initial.startNs));
  assert.ok(Number.isNaN(initial.rate[0]));
  assert.equal(h.flush(), false);
  h.feed(T0, [0n]);
  assert.equal(h.flush(), true);
  const first = h.agg.completed;
  assert.notEqual(first, initial);
  assert.equal(h.flush(), false);
  assert.equal(h.agg.completed, first);
  // The next sample reopens the same aligned window, baseline kept.
  h.feed(T0 + MS, [1000n]);
  h.flush();
  const w = h.agg.completed;
  assert.equal(w, initial, "the two snapshot objects alternate");
  assert.equal(w.sequence, 2);
  assert.equal(w.startNs, Number(T0));
  assert.equal(w.increase[0], 1000);
  near(w.rate[0], 1e6, "rate");
});

Deno.test("WindowAggregator: the default window is 10 s", () => {
  const agg = new WindowAggregator({ columns: [counter()] });
  assert.equal(agg.windowNs, DEFAULT_WINDOW_NS);
  assert.equal(DEFAULT_WINDOW_NS, 10e9);
});

Deno.test("WindowAggregator: bad options are RangeErrors naming the field", () => {
  assert.throws(
    () => new WindowAggregator({ columns: [counter()], windowNs: 0 }),
    {
      name: "RangeError",
      message:
        "Cannot create window aggregator: windowNs must be a finite number >= 1, got 0",
    },
  );
  assert.throws(
    () => new WindowAggregator({ columns: [counter()], windowNs: NaN }),
    RangeError,
  );
  assert.throws(() => new WindowAggregator({ columns: [] }), {
    name: "RangeError",
    message: "Cannot create window aggregator: columns must not be empty",
  });
  assert.throws(
    () =>
      new WindowAggregator({
        columns: [counter(), { name: "x", kind: "histogram" as "gauge" }],
      }),
    {
      name: "RangeError",
      message:
        'Cannot create window aggregator: columns[1].kind must be one of counter, gauge, got "histogram"',
    },
  );
});

const gc = (globalThis as { gc?: () => void }).gc;

Deno.test({
  name:
    "WindowAggregator: 1,000,000 samples over 16 columns allocate nothing (needs --v8-flags=--expose-gc)",
  ignore: typeof gc !== "function",
  fn() {
    const columns = Array.from(
      { length: 16 },
      (_, k): AggregateColumn =>
        k % 2 === 0 ? counter(`c${k}`) : gauge(`g${k}`),
    );
    // A 1 s window at 10 kHz: 100 windows complete during the run.
    const agg = new WindowAggregator({ columns, windowNs: 1e9 });
    const ring = new SampleRing(16, 64);
    const words = ring.words;
    const state = new Uint32Array(2 + 2 * 16); // timestamp, then values
    writeRecord(state, 0, T0, []);
    state[2 + 2 * 14] = 0xffff0000; // column 14 starts just under 2^64: wraps
    state[2 + 2 * 14 + 1] = 0xffffffff;
    const step = (i: number): void => {
      addNumberU64(state, 0, state[0], state[1], 100_000);
      for (let k = 0; k < 16; k += 2) {
        const c = 2 + 2 * k;
        // Column 2 resets every 4096 samples; the others burst now and then.
        if (k === 2 && (i & 4095) === 0) state[c] = state[c + 1] = 0;
        else {
          addNumberU64(state, c, state[c], state[c + 1], i % 977 ? 10 : 1e6);
        }
        state[c + 2] = (i * 7 + k) & 255; // the next (odd) column: a gauge
      }
      const at = ring.claim();
      words.set(state, at);
      agg.observe(words, at);
    };
    // Bytes V8 has allocated so far, where this Deno reports it.
    const allocated = (): number | undefined =>
      (v8.getHeapStatistics() as { total_allocated_bytes?: number })
        .total_allocated_bytes;
    const run = (from: number, to: number): void => {
      for (let i = from; i < to; i++) step(i);
    };
    gc!();
    gc!();
    const before = Deno.memoryUsage().heapUsed;
    // Warm up the JIT and let the full GC's after-effects pass: until both
    // have, total_allocated_bytes moves by up to ~1 MB around loops that
    // allocate nothing (compiled code, sweeping); afterwards by ~0.3 MB.
    run(0, 1_000_000);
    const sequenceBefore = agg.completed.sequence;
    const allocatedBefore = allocated();
    run(1_000_000, 2_000_000);
    const allocatedAfter = allocated();
    gc!();
    gc!();
    const after = Deno.memoryUsage().heapUsed;
    const w = agg.completed;
    assert.equal(w.sequence - sequenceBefore, 100);
    assert.equal(w.samples, 10_000);
    assert.ok(w.resets[2] >= 2, `resets: ${w.resets[2]}`);
    assert.ok(w.rateMax[0] > 500 * w.rate[0], "bursts seen"); // 1e10 vs ~1e7
    assert.equal(w.resetsTotal[14], 0, "a wrap is no reset");
    assert.ok(
      after - before < 1024 * 1024,
      `heap grew by ${after - before} bytes over 2,000,000 samples`,
    );
    // Retained heap misses short-lived garbage; bound what was allocated.
    if (allocatedBefore !== undefined && allocatedAfter !== undefined) {
      const bytes = allocatedAfter - allocatedBefore;
      // 4 bytes a sample: V8's own bookkeeping moves this counter by up to
      // ~2 MB around loops that allocate nothing, while one object per
      // sample (16+ bytes) would be 16 MB or more.
      assert.ok(
        bytes < 4 * 1024 * 1024,
        `allocated ${bytes} bytes over 1,000,000 samples`,
      );
    }
  },
});

Deno.test("WindowAggregator: refresh is how often a column changes when it changes regularly, NaN while irregular or not yet known", () => {
  // Sampled every 10 ms for 30 s: a counter the driver refreshes every
  // 2 s, one that moves every sample, one moved by traffic that comes and
  // goes, and a gauge that never moves.
  const h = new Harness(
    [counter("cached"), counter("live"), counter("bursty"), gauge("flat")],
    10e9,
  );
  const bursts = new Set([3, 40, 41, 400, 1200, 1201, 1202, 2100, 2900, 2950]);
  let cached = 0n;
  let bursty = 0n;
  for (let i = 0; i < 3000; i++) {
    if (i % 200 === 0) cached += 1000n;
    if (bursts.has(i)) bursty += 7n;
    h.feed(T0 + BigInt(i) * 10n * MS, [cached, BigInt(i), bursty, 5n]);
  }
  h.flush();
  const [first, , last] = h.windows;
  // After 10 s: 4 intervals of the cached counter, too few to say.
  assert.ok(Number.isNaN(first.refresh[0]));
  assert.equal(first.refresh[1], 0.01);
  assert.equal(last.refresh[0], 2);
  assert.equal(last.refresh[1], 0.01);
  assert.ok(Number.isNaN(last.refresh[2]));
  assert.ok(Number.isNaN(last.refresh[3]));
});
