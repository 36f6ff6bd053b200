import assert from "node:assert/strict";
import { join } from "node:path";
import { ReplayCollector } from "../collectors/replay.ts";
import type { ColumnConfig, SignalRuleConfig } from "../config/types.ts";
import { Monitor } from "../rules/monitor.ts";
import { tempDir } from "./temp_dir.ts";

// Random captures, replayed through the agent's CSV source into a monitor
// with random signal rules, against a model of docs/spec/signal-rules.md written
// here from the text alone: plain loops over each window, BigInt for every
// u64 value and time difference, nothing shared with rules/. Every rule's
// start and end samples, the peak at each, and its pending state after
// every sample must agree.
//
// Reproduce one capture with SIGNAL_RULES_SEED=<seed> (printed on failure).

const BASE_SEED = 0x5e_ed_20_26;
const TWO_64 = 1n << 64n;
const TWO_63 = 1n << 63n;
const TWO_53 = 1n << 53n;
const T0 = 1_795_272_600_000_000_000n; // 2026, in ns

/** mulberry32: small, seedable, good enough to pick test cases. */
class Random {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  /** A uint32. */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor((this.next() / 4294967296) * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p * 4294967296;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.below(xs.length)];
  }
  /** A u64 in [0, 2^bits). */
  bits(bits: number): bigint {
    const x = (BigInt(this.next()) << 32n) | BigInt(this.next());
    return x & ((1n << BigInt(bits)) - 1n);
  }
}

interface Capture {
  /** Nominal sample period, ns; windows are sized against it. */
  period: number;
  depth: number;
  ts: bigint[];
  /** columns[c][i]: column c at sample i. */
  columns: bigint[][];
}

/**
 * Timestamps strictly increasing by the period with jitter of a quarter
 * period either way (so window and `for` boundaries are hit exactly) and
 * the odd longer gap; counters with bursts, plateaus, resets to small
 * values, wraps past 2^64 and starts above 2^53; the odd gauge.
 */
function makeCapture(random: Random): Capture {
  const period = random.pick([100_000, 1_000, 8]);
  const q = period / 4;
  const depth = random.pick([1, 2, 3, 4, 8, 16, 32]);
  const samples = 500 + random.below(4000);
  const ts: bigint[] = [];
  let t = T0 + BigInt(random.below(1_000_000_000));
  for (let i = 0; i < samples; i++) {
    ts.push(t);
    const step = random.chance(0.6)
      ? period
      : random.chance(0.9)
      ? period + q * random.pick([-3, -1, 1, 2])
      : period * (2 + random.below(4));
    t += BigInt(step);
  }
  const width = 2 + random.below(3);
  const columns: bigint[][] = [];
  for (let c = 0; c < width; c++) {
    columns.push(
      random.chance(0.2)
        ? makeGauge(random, samples)
        : makeCounter(random, samples),
    );
  }
  return { period, depth, ts, columns };
}

function makeCounter(random: Random, samples: number): bigint[] {
  let v = random.pick([
    0n,
    BigInt(random.below(1000)),
    TWO_53 - 5000n + BigInt(random.below(10_000)),
    TWO_64 - BigInt(1 + random.below(100_000)),
    random.bits(64),
  ]);
  const normal = 1 + random.below(1000);
  let mode = 0; // 0 normal, 1 burst, 2 plateau
  const out: bigint[] = [];
  for (let i = 0; i < samples; i++) {
    if (random.chance(0.02)) mode = random.pick([0, 0, 1, 2]);
    let d = mode === 1
      ? BigInt(normal * (20 + random.below(100)))
      : mode === 2
      ? 0n
      : BigInt(random.below(normal));
    if (random.chance(0.003)) d = TWO_53 + random.bits(60); // huge but known
    if (random.chance(0.003)) d = TWO_63 + random.bits(63); // reads as a reset
    if (random.chance(0.002)) d = random.pick([TWO_63 - 1n, TWO_63]); // the edge
    v = (v + d) % TWO_64;
    if (random.chance(0.004)) v = BigInt(random.below(10)); // reset
    if (random.chance(0.002)) v = TWO_64 - BigInt(1 + random.below(5000));
    out.push(v);
  }
  return out;
}

function makeGauge(random: Random, samples: number): bigint[] {
  let level = random.pick([0n, TWO_53 - 50n, TWO_64 - 200n]);
  const out: bigint[] = [];
  for (let i = 0; i < samples; i++) {
    if (random.chance(0.01)) {
      level = random.pick([0n, TWO_53 - 50n, TWO_64 - 200n]);
    }
    out.push(level + BigInt(random.below(100)));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The model: docs/spec/signal-rules.md, read literally.

type Signal = bigint | number | undefined;

/** d_i = (v_i - v_{i-1}) mod 2^64; unknown at 0 and when 2^63 or more. */
function increaseAt(column: readonly bigint[], i: number): bigint | undefined {
  if (i === 0) return undefined;
  const d = (column[i] - column[i - 1] + TWO_64) % TWO_64;
  return d >= TWO_63 ? undefined : d;
}

/** The newest j in the ring (last 2 x depth samples) with t_j <= t_i - W, or -1. */
function windowStart(
  ts: readonly bigint[],
  i: number,
  w: bigint,
  ring: number,
): number {
  for (let j = i; j >= 0 && j > i - ring; j--) {
    if (ts[j] <= ts[i] - w) return j;
  }
  return -1;
}

/** S(j, i): increases d_{j+1} .. d_i, resets as 0. */
function sumAfter(column: readonly bigint[], j: number, i: number): bigint {
  let s = 0n;
  for (let k = j + 1; k <= i; k++) s += increaseAt(column, k) ?? 0n;
  return s;
}

/** The signal of `rule` at every sample of `capture`. */
function signalSeries(rule: SignalRuleConfig, capture: Capture): Signal[] {
  const { ts, columns, depth } = capture;
  const a = columns[rule.column];
  const out: Signal[] = [];
  for (let i = 0; i < ts.length; i++) {
    if (rule.signal === "value") out.push(a[i]);
    else if (rule.signal === "increase") out.push(increaseAt(a, i));
    else {
      const j = windowStart(ts, i, BigInt(rule.windowNs), 2 * depth);
      if (j < 0) out.push(undefined);
      else if (rule.signal === "rate") {
        out.push(Number(sumAfter(a, j, i)) * 1e9 / Number(ts[i] - ts[j]));
      } else {
        const below = sumAfter(columns[rule.denominator!], j, i);
        out.push(
          below === 0n ? undefined : Number(sumAfter(a, j, i)) / Number(below),
        );
      }
    }
  }
  return out;
}

/** What a rule did: start/end samples, the peak at each, pending after each sample. */
interface Outcome {
  changes: number[];
  peaks: number[];
  pending: boolean[];
}

function modelRule(
  rule: SignalRuleConfig,
  capture: Capture,
  series: readonly Signal[],
): Outcome {
  const above = rule.direction === "above";
  const ts = capture.ts;
  const out: Outcome = { changes: [], peaks: [], pending: [] };
  let active = false;
  let peak = NaN;
  let rs = 0n;
  let cs = 0n;
  let lastRaise = false;
  let lastClear = false;
  const raised: boolean[] = [];
  for (let i = 0; i < ts.length; i++) {
    const x = series[i];
    const known = x !== undefined;
    const raise = known && (above ? x > rule.threshold : x < rule.threshold);
    let clear = known && (above ? x <= rule.clear : x >= rule.clear);
    let count = 0;
    if (rule.mOfN !== undefined) {
      raised.push(raise);
      for (let k = Math.max(0, i - rule.mOfN.n + 1); k <= i; k++) {
        if (raised[k]) count++;
      }
      if (count >= rule.mOfN.m) clear = false;
    }
    if (raise && !lastRaise) rs = ts[i];
    if (clear && !lastClear) cs = ts[i];
    lastRaise = raise;
    lastClear = clear;
    if (!active) {
      const start = rule.mOfN !== undefined
        ? count >= rule.mOfN.m
        : raise && ts[i] - rs >= BigInt(rule.forNs);
      if (start) {
        active = true;
        peak = known ? Number(x) : NaN;
        out.changes.push(i);
        out.peaks.push(peak);
      }
    } else {
      if (known) {
        const v = Number(x);
        if (Number.isNaN(peak) || (above ? v > peak : v < peak)) peak = v;
      }
      if (clear && ts[i] - cs >= BigInt(rule.keepFiringForNs)) {
        active = false;
        out.changes.push(i);
        out.peaks.push(peak);
      }
    }
    out.pending.push(!active && raise);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Random rules, with thresholds drawn from the signal itself so they fire.

function makeRule(
  random: Random,
  capture: Capture,
  index: number,
): { rule: SignalRuleConfig; series: Signal[] } {
  const { period, depth } = capture;
  const q = period / 4;
  const width = capture.columns.length;
  const signal = random.pick(["value", "increase", "rate", "ratio"] as const);
  const column = random.below(width);
  const denominator = (column + 1 + random.below(width - 1)) % width;
  const most = (2 * depth - 1) * period;
  const windowNs = signal === "value" || signal === "increase"
    ? 0
    : random.chance(0.3)
    ? most
    : q * (1 + random.below(most / q));
  const direction = random.pick(["above", "below"] as const);
  const draft: SignalRuleConfig = {
    name: `rule ${index}`,
    signal,
    column,
    ...(signal === "ratio" ? { denominator } : {}),
    windowNs,
    direction,
    threshold: 0,
    clear: 0,
    forNs: 0,
    keepFiringForNs: 0,
  };
  const series = signalSeries(draft, capture);
  const known = series.filter((x) => x !== undefined);
  const exact = signal === "value" || signal === "increase";
  const draw = (): bigint | number => {
    if (known.length === 0) return exact ? 0n : 0;
    const x = random.pick(known);
    if (typeof x === "bigint") {
      const t = x + BigInt(random.pick([-1, 0, 0, 1]));
      return t < 0n ? 0n : t >= TWO_64 ? TWO_64 - 1n : t;
    }
    return random.chance(0.5) ? x : x * (0.5 + random.below(1000) / 1000);
  };
  const threshold = draw();
  let clear = threshold;
  if (random.chance(0.5)) {
    const y = draw();
    const rightSide = direction === "above" ? y <= threshold : y >= threshold;
    if (rightSide) clear = y;
  }
  const timing = random.below(4);
  const mOfN = timing === 0
    ? (() => {
      const n = 1 + random.below(Math.min(2 * depth, 12));
      return { m: 1 + random.below(n), n };
    })()
    : undefined;
  const forNs = timing === 1 ? q * random.below(40) : 0;
  const keepFiringForNs = random.chance(0.5) ? q * random.below(40) : 0;
  return {
    rule: {
      ...draft,
      threshold,
      clear,
      forNs,
      ...(mOfN === undefined ? {} : { mOfN }),
      keepFiringForNs,
    },
    series,
  };
}

// ---------------------------------------------------------------------------
// The implementation: the capture as CSV through the replay source.

async function replay(
  dir: string,
  capture: Capture,
  rules: readonly SignalRuleConfig[],
): Promise<Outcome[]> {
  const columns: ColumnConfig[] = capture.columns.map((_, c) => ({
    name: `c${c}`,
    dataId: `0x10200001000000${c.toString(16).padStart(2, "0")}`,
  }));
  const lines = ["timestamp," + columns.map((c) => c.name).join(",")];
  for (let i = 0; i < capture.ts.length; i++) {
    lines.push(
      `${capture.ts[i]},${capture.columns.map((c) => c[i]).join(",")}`,
    );
  }
  const path = join(dir, "capture.csv");
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  const samples = capture.ts.length;
  const outcomes: Outcome[] = rules.map(() => ({
    changes: [],
    peaks: [],
    pending: [],
  }));
  const pending = rules.map(() => new Uint8Array(samples));
  const monitor: Monitor = new Monitor(
    { name: "property", depth: capture.depth, columns, rules },
    { columnNames() {}, row() {}, eventStart() {}, eventEnd() {}, gap() {} },
    {
      onTransition: (m, r) => {
        outcomes[r].changes.push(m.samples - 1);
        outcomes[r].peaks.push(m.rules[r].peak);
      },
      observer: {
        observe() {
          const i = monitor.samples - 1;
          const list = monitor.rules;
          for (let r = 0; r < list.length; r++) {
            pending[r][i] = list[r].pending ? 1 : 0;
          }
        },
      },
    },
  );
  await new ReplayCollector({ path, columns }).run(
    monitor,
    new AbortController().signal,
  );
  assert.equal(monitor.samples, samples);
  outcomes.forEach((
    o,
    r,
  ) => (o.pending = Array.from(pending[r], (p) => p === 1)));
  return outcomes;
}

// ---------------------------------------------------------------------------

/** The first sample where the two outcomes disagree, described; undefined if none. */
function firstDifference(got: Outcome, want: Outcome): string | undefined {
  let at = Infinity;
  let what = "";
  const k = got.changes.findIndex((c, i) =>
    c !== want.changes[i] || !Object.is(got.peaks[i], want.peaks[i])
  );
  const extra = k < 0 && got.changes.length !== want.changes.length
    ? Math.min(got.changes.length, want.changes.length)
    : k;
  if (extra >= 0) {
    at = Math.min(
      got.changes[extra] ?? Infinity,
      want.changes[extra] ?? Infinity,
    );
    what = `change #${extra}: implementation at sample ${
      got.changes[extra]
    } (peak ${got.peaks[extra]}), model at sample ${
      want.changes[extra]
    } (peak ${want.peaks[extra]})`;
  }
  const p = got.pending.findIndex((x, i) => x !== want.pending[i]);
  if (p >= 0 && p < at) {
    at = p;
    what = `pending after sample ${p}: implementation ${
      got.pending[p]
    }, model ${want.pending[p]}`;
  }
  return what === "" ? undefined : what;
}

function describe(rule: SignalRuleConfig): string {
  return JSON.stringify(rule, (_, v) => typeof v === "bigint" ? `${v}n` : v);
}

function rowsAround(
  capture: Capture,
  series: readonly Signal[],
  sample: number,
): string {
  const rows: string[] = [];
  const last = Math.min(capture.ts.length - 1, sample + 1);
  for (let i = Math.max(0, sample - 4); i <= last; i++) {
    const values = capture.columns.map((c) => c[i]).join(" ");
    rows.push(
      `  ${i}: t=${capture.ts[i]} ${values}; model signal ${series[i]}`,
    );
  }
  return rows.join("\n");
}

function envSeed(): number | undefined {
  const name = "SIGNAL_RULES_SEED";
  if (
    Deno.permissions.querySync({ name: "env", variable: name }).state !==
      "granted"
  ) {
    return undefined;
  }
  const text = Deno.env.get(name);
  return text === undefined ? undefined : Number(text);
}

/**
 * Replays `captures` random captures (seeds from BASE_SEED on, or only
 * SIGNAL_RULES_SEED when set) and asserts the agent agrees with the model
 * on every one; with no seed given, the captures together must hold more
 * than `minSamples` samples and start or end each kind of rule (and M of N
 * rules) at least `minChanges` times.
 */
export async function agreeOnRandomCaptures(
  captures: number,
  minSamples: number,
  minChanges: number,
): Promise<void> {
  await using dir = await tempDir("signal_rules_");
  const only = envSeed();
  const seeds = only === undefined
    ? Array.from({ length: captures }, (_, k) => BASE_SEED + k)
    : [only];
  const changesByKind: Record<string, number> = {
    value: 0,
    increase: 0,
    rate: 0,
    ratio: 0,
  };
  let mOfNChanges = 0;
  let samples = 0;
  for (const seed of seeds) {
    const random = new Random(seed);
    const capture = makeCapture(random);
    samples += capture.ts.length;
    const made = Array.from(
      { length: 3 + random.below(4) },
      (_, r) => makeRule(random, capture, r),
    );
    const rules = made.map((m) => m.rule);
    const got = await replay(dir.path, capture, rules);
    for (let r = 0; r < rules.length; r++) {
      const want = modelRule(rules[r], capture, made[r].series);
      const difference = firstDifference(got[r], want);
      if (difference !== undefined) {
        const sample = Number(/sample (\d+)/.exec(difference)?.[1] ?? 0);
        assert.fail(
          `seed ${seed} (SIGNAL_RULES_SEED=${seed}): depth ${capture.depth}, period ${capture.period} ns, ` +
            `${capture.ts.length} samples; rule ${r} ${
              describe(rules[r])
            }\n${difference}\n` +
            `samples around it (timestamp, columns):\n${
              rowsAround(capture, made[r].series, sample)
            }`,
        );
      }
      changesByKind[rules[r].signal] += want.changes.length;
      if (rules[r].mOfN !== undefined) mOfNChanges += want.changes.length;
    }
  }
  if (only === undefined) {
    // The captures must exercise every kind of rule, not just agree on
    // rules that never fire.
    assert.ok(samples > minSamples, `${samples} samples`);
    for (const [kind, count] of Object.entries(changesByKind)) {
      assert.ok(
        count >= minChanges,
        `${kind} rules started or ended only ${count} times`,
      );
    }
    assert.ok(
      mOfNChanges >= minChanges,
      `M of N rules changed only ${mOfNChanges} times`,
    );
  }
}
