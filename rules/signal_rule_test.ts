import assert from "node:assert/strict";
import type { SignalRuleConfig } from "../config/types.ts";
import { SampleRing } from "./ring.ts";
import { SignalRule } from "./signal_rule.ts";
import { M, P53, runSignalRule, writeRecord } from "./rules_test_util.ts";

/** 100 µs, the DPU's sample period, in ns. */
const P = 100_000n;
/** A 2026 timestamp (ns): far above 2^53, where a float has a 256 ns step. */
const T0 = 1_795_272_600_000_000_000n;
const US = 1_000;
const MS = 1_000_000;

type RuleFields = Partial<SignalRuleConfig>;

/** A rule config: value above 5, nothing else, unless `fields` say otherwise. */
function rule(fields: RuleFields): SignalRuleConfig {
  const threshold = fields.threshold ?? 5n;
  return {
    name: "r",
    signal: "value",
    column: 0,
    windowNs: 0,
    direction: "above",
    forNs: 0,
    keepFiringForNs: 0,
    ...fields,
    threshold,
    clear: fields.clear ?? threshold,
  };
}

/** Records `[t0 + i x period, a_i, b_i, ...]` from one array per column. */
function regular(
  columns: readonly (readonly bigint[])[],
  t0 = 0n,
  period = P,
): bigint[][] {
  return columns[0].map((_, i) => [
    t0 + BigInt(i) * period,
    ...columns.map((c) => c[i]),
  ]);
}

/** Records at the given timestamps (µs) of one column. */
function at(timesUs: readonly number[], values: readonly bigint[]): bigint[][] {
  return timesUs.map((us, i) => [BigInt(us) * 1000n, values[i]]);
}

/** A counter starting at `start`, rising by `increases[i]` on sample i >= 1. */
function counter(increases: readonly number[], start = 0n): bigint[] {
  const out: bigint[] = [];
  let v = start;
  increases.forEach((d, i) => {
    if (i > 0) v = (v + BigInt(d)) % M;
    out.push(v);
  });
  return out;
}

/** `count` copies of `d`. */
const times = (count: number, d: number): number[] => Array(count).fill(d);
const n = (...xs: Array<number | bigint>): bigint[] => xs.map(BigInt);

/**
 * One hand-computed case: the samples, the rule, the sample indices where
 * it starts and ends, its state after every sample (`#` active, `+`
 * pending, `.` neither) and its peak right after each start and end.
 */
interface Case {
  name: string;
  rule: RuleFields;
  /** History depth; the ring holds twice this. Default 16. */
  depth?: number;
  records: bigint[][];
  changes: number[];
  states: string;
  peaks: number[];
  /** Samples the source lost just before a record, by the record's index. */
  lostBefore?: Record<number, number>;
}

function check(cases: readonly Case[]): (t: Deno.TestContext) => Promise<void> {
  return async (t) => {
    for (const c of cases) {
      await t.step(c.name, () => {
        assert.equal(
          c.states.length,
          c.records.length,
          "table row is malformed",
        );
        const run = runSignalRule(
          rule(c.rule),
          c.depth ?? 16,
          c.records,
          undefined,
          c.lostBefore,
        );
        assert.deepEqual(run, {
          changes: c.changes,
          states: c.states,
          peaks: c.peaks,
        });
      });
    }
  };
}

// The worked example of docs/spec/signal-rules.md §7: ecn rises by 10 on samples
// 1..9, by 200 on 10..29, by 10 from 30 on.
const ecn = counter([0, ...times(9, 10), ...times(20, 200), ...times(50, 10)]);
const storm: RuleFields = {
  signal: "rate",
  windowNs: 1 * MS,
  threshold: 1_000_000,
  clear: 200_000,
  forNs: 500 * US,
  keepFiringForNs: 2 * MS,
};

const WORKED: Case[] = [
  {
    // Rate = sum of the last 10 increases x 1,000/s from sample 10. R from
    // 14 (1,050,000), for 500 µs: 19. C from 39 (100,000 <= 200,000),
    // keep_firing_for 2 ms: 59. Peak 2,000,000 (samples 19..29).
    name: "the worked example: starts at 19, ends at 59",
    rule: storm,
    records: regular([ecn]),
    changes: [19, 59],
    states: ".".repeat(14) + "+".repeat(5) + "#".repeat(40) + ".".repeat(21),
    peaks: [2_000_000, 2_000_000],
  },
  {
    // Same, at 2026 timestamps: t_i - rs_i = exactly 500 µs and t_i - cs_i
    // = exactly 2 ms only if time is subtracted exactly.
    name: "the worked example at 2026 timestamps (above 2^53 ns)",
    rule: storm,
    records: regular([ecn], T0),
    changes: [19, 59],
    states: ".".repeat(14) + "+".repeat(5) + "#".repeat(40) + ".".repeat(21),
    peaks: [2_000_000, 2_000_000],
  },
  {
    // Clear level T: C starts at 35 (860,000 <= 1,000,000; 34 is still
    // 1,050,000), and 2 ms later is sample 55.
    name: "the worked example with clear level T: starts at 19, ends at 55",
    rule: { ...storm, clear: 1_000_000 },
    records: regular([ecn], T0),
    changes: [19, 55],
    states: ".".repeat(14) + "+".repeat(5) + "#".repeat(36) + ".".repeat(25),
    peaks: [2_000_000, 2_000_000],
  },
];

const VALUE: Case[] = [
  {
    // T = Tc = 5, for 0, keep 0: 6 starts, 5 (equal) clears and ends, 9
    // starts, 3 ends. Peaks: 6, then max(6, 7, 5); 9, then 9.
    name: "value above, clear level = T: the threshold itself clears",
    rule: {},
    records: regular([n(1, 6, 7, 5, 9, 3, 5)]),
    changes: [1, 3, 4, 5],
    states: ".##.#..",
    peaks: [6, 7, 9, 9],
  },
  {
    // T = 100, Tc = 50: 80 and 60 neither raise nor clear (the rule holds),
    // 50 clears; 99 does not raise, 101 does, 100 does not clear.
    name: "value above, clear level away from T: hysteresis",
    rule: { threshold: 100n, clear: 50n },
    records: regular([n(0, 101, 80, 60, 50, 99, 101, 100)]),
    changes: [1, 4, 6],
    states: ".###..##",
    peaks: [101, 101, 101],
  },
  {
    // below T = 10, Tc = 20: 9 starts, 12 and 19 hold, 20 (>= Tc) ends, 5
    // starts, 25 ends. Peak is the minimum: 9, then 5.
    name: "value below, clear level away from T",
    rule: { direction: "below", threshold: 10n, clear: 20n },
    records: regular([n(15, 9, 12, 19, 20, 5, 25)]),
    changes: [1, 4, 5, 6],
    states: ".###.#.",
    peaks: [9, 9, 5, 5],
  },
  {
    // T = 2^53 + 1, Tc = 2^53, compared exactly: 2^53 + 1 does not raise,
    // 2^53 + 2 does; 2^53 + 1 does not clear (as floats it would equal
    // 2^53 and clear), 2^53 does; 2^64 - 1 raises, 0 clears.
    name: "value above 2^53: thresholds compared as exact u64",
    rule: { threshold: P53 + 1n, clear: P53 },
    records: regular([[
      P53 + 1n,
      P53 + 2n,
      P53 + 1n,
      P53,
      M - 1n,
      P53 + 1n,
      0n,
    ]]),
    changes: [1, 3, 4, 6],
    states: ".##.##.",
    peaks: [2 ** 53 + 2, 2 ** 53 + 2, 2 ** 64, 2 ** 64],
  },
  {
    // below T = 2^64 - 1: 2^64 - 2 raises (a float sees two equal values),
    // 2^64 - 1 clears; 0 raises, 2^64 - 1 clears.
    name: "value below 2^64 - 1: exact at the top of the range",
    rule: { direction: "below", threshold: M - 1n },
    records: regular([[M - 1n, M - 2n, M - 1n, 0n, M - 1n]]),
    changes: [1, 2, 3, 4],
    states: ".#.#.",
    peaks: [2 ** 64, 2 ** 64, 0, 0],
  },
  {
    // for 250 µs, between samples: R from sample 2, t - rs = 0, 100, 200
    // (pending), 300 >= 250 at sample 5.
    name: "for 250 µs at a 100 µs period starts on the third sample after",
    rule: { forNs: 250 * US },
    records: regular([n(0, 0, 9, 9, 9, 9, 9)]),
    changes: [5],
    states: "..+++##",
    peaks: [9],
  },
  {
    // for 200 µs: the run from 0 breaks at 2; the new one from 3 reaches
    // 200 µs at 5 (without the break it would have started at 3).
    name: "for: a sample that does not raise restarts the run",
    rule: { forNs: 200 * US },
    records: regular([n(9, 9, 0, 9, 9, 9)]),
    changes: [5],
    states: "++.++#",
    peaks: [9],
  },
  {
    // T = 5, Tc = 2, keep 250 µs: C from 1 breaks at 3 (3 is neither), C
    // again from 4: 300 µs >= 250 at sample 7.
    name: "keep_firing_for 250 µs: a sample between Tc and T restarts the run",
    rule: { clear: 2n, keepFiringForNs: 250 * US },
    records: regular([n(9, 1, 1, 3, 1, 1, 1, 1, 0)]),
    changes: [0, 7],
    states: "#######..",
    peaks: [9, 9],
  },
  {
    // keep 250 µs: C from 1 breaks when 9 raises at 3 (still active, no new
    // start); C from 4 reaches 300 µs at 7. The peak stays 9.
    name: "keep_firing_for: a raising sample restarts the clear run",
    rule: { keepFiringForNs: 250 * US },
    records: regular([n(9, 0, 0, 9, 0, 0, 0, 0)]),
    changes: [0, 7],
    states: "#######.",
    peaks: [9, 9],
  },
];

const INCREASE: Case[] = [
  {
    // Unknown at 0 (a value rule would fire on 1,000); increases 5, 15,
    // 20, 5, 0: 15 starts, 5 ends. Peak 20.
    name: "increase above: unknown at sample 0",
    rule: { signal: "increase", threshold: 10n },
    records: regular([n(1000, 1005, 1020, 1040, 1045, 1045)]),
    changes: [2, 4],
    states: "..##..",
    peaks: [15, 20],
  },
  {
    // Increases -, 100, 100, reset (200 -> 5), 1, 44, 10, reset (60 -> 3),
    // 1. The first reset holds the active rule (no end), the second holds
    // the inactive one (its raw increase, about 2^64, would raise).
    name: "increase: a counter reset is unknown and holds the state",
    rule: { signal: "increase", threshold: 10n },
    records: regular([n(0, 100, 200, 5, 6, 50, 60, 3, 4)]),
    changes: [1, 4, 5, 6],
    states: ".###.#...",
    peaks: [100, 100, 44, 44],
  },
  {
    // 2^64 - 5 -> 10 wraps: an increase of 15 (starts); 2 ends; 12 ->
    // 2^64 - 3 is a reset (unknown); +2^63 - 1 is known (starts); +2^63 is
    // a reset (holds); +1 ends.
    name: "increase: a wrap past 2^64 counts, 2^63 or more is a reset",
    rule: { signal: "increase", threshold: 10n },
    records: regular([[
      M - 5n,
      10n,
      12n,
      M - 3n,
      (1n << 63n) - 4n,
      M - 4n,
      M - 3n,
    ]]),
    changes: [1, 2, 4, 6],
    states: ".#..##.",
    peaks: [15, 15, 2 ** 63, 2 ** 63],
  },
  {
    // T = 2^53: an increase of 2^53 + 1 raises (as a float it equals T),
    // then 2^53 exactly clears.
    name: "increase above 2^53: exact",
    rule: { signal: "increase", threshold: P53 },
    records: regular([[0n, P53 + 1n, 2n * P53 + 1n]]),
    changes: [1, 2],
    states: ".#.",
    peaks: [2 ** 53, 2 ** 53],
  },
  {
    // below 5, for 300 µs: increases -, 10, 10, 2, 2, 2, 2, 10, 2. R from 3,
    // 300 µs at 6; 10 clears at 7; 2 raises again at 8 (pending).
    name: "increase below with for 300 µs",
    rule: {
      signal: "increase",
      direction: "below",
      threshold: 5n,
      forNs: 300 * US,
    },
    records: regular([counter([0, 10, 10, 2, 2, 2, 2, 10, 2])]),
    changes: [6, 7],
    states: "...+++#.+",
    peaks: [2, 2],
  },
  {
    // above 10, for 300 µs: increases -, 20, 20, reset, 20 x 4. The reset
    // breaks the run from 1 (it would have reached 300 µs at 4); the run
    // from 4 reaches it at 7.
    name: "increase: a reset breaks the raise run",
    rule: { signal: "increase", threshold: 10n, forNs: 300 * US },
    records: regular([n(100, 120, 140, 0, 20, 40, 60, 80)]),
    changes: [7],
    states: ".++.+++#",
    peaks: [20],
  },
];

const RATE: Case[] = [
  {
    // Window 500 µs = 5 samples: rate = sum of the last 5 increases x
    // 2,000/s from sample 5. Increases 200 (1..10), 50 (11..19), 300
    // (20..24): 2e6 .. 2e6, 1.7e6, 1.4e6, 1.1e6, 0.8e6 at 14 (< 1e6:
    // starts), 0.5e6 (15..19), 1e6 at 20 and 1.5e6 at 21 (neither), 2e6 at
    // 22 (>= Tc: ends). Peak is the minimum, 500,000.
    name: "rate below, clear level away from T",
    rule: {
      signal: "rate",
      windowNs: 500 * US,
      direction: "below",
      threshold: 1_000_000,
      clear: 2_000_000,
    },
    records: regular([
      counter([0, ...times(10, 200), ...times(9, 50), ...times(5, 300)]),
    ]),
    changes: [14, 22],
    states: ".".repeat(14) + "#".repeat(8) + "...",
    peaks: [800_000, 500_000],
  },
  {
    // Window 1 ms, above 0, +1 a sample: no j with t_j <= t_i - 1 ms before
    // sample 10, so unknown until then; 10 / 1 ms = 10,000/s.
    name: "rate: unknown until the window has a start",
    rule: { signal: "rate", windowNs: 1 * MS, threshold: 0 },
    records: regular([counter(times(12, 1))], T0),
    changes: [10],
    states: ".".repeat(10) + "##",
    peaks: [10_000],
  },
  {
    // Window 500 µs, above 1.7e6/s: +200 a sample, the counter drops from
    // 1,400 to 0 at sample 8 and rises by 200 again. Rate 2e6 from 5
    // (starts); the reset counts 0, so windows 8..12 sum 800 = 1.6e6
    // (ends at 8, known, not a 2^64-sized rate); 13 sums 1,000 (starts).
    name: "rate: a reset inside the window counts as 0",
    rule: { signal: "rate", windowNs: 500 * US, threshold: 1_700_000 },
    records: regular([
      [
        ...n(0, 200, 400, 600, 800, 1000, 1200, 1400),
        ...counter(times(7, 200)),
      ],
    ]),
    changes: [5, 8, 13],
    states: "....." + "###" + "....." + "##",
    peaks: [2_000_000, 2_000_000, 2_000_000],
  },
  {
    // Timestamps 0, 90, 200, 310, 400 µs, window 200 µs, +22 a sample. At 2
    // j = 0: 44 / 200 µs = 220,000 (starts); at 3 j = 1 (90 <= 110): 44 /
    // 220 µs = 200,000 (clears, ends); at 4 j = 2: 220,000 (starts).
    name: "rate: irregular timestamps, j is the newest sample a window back",
    rule: { signal: "rate", windowNs: 200 * US, threshold: 210_000 },
    depth: 4,
    records: at([0, 90, 200, 310, 400], counter(times(5, 22))),
    changes: [2, 3, 4],
    states: "..#.#",
    peaks: [220_000, 220_000, 220_000],
  },
  {
    // depth 4: the ring holds 8 samples, W = 7 x 100 µs (the most that
    // fits), +1 a sample, above 0, for 300 µs. Sample 3 comes at 350 µs.
    // 7: j = 0 (t = 0 <= 0) known, R from 7; 8: j = 1; 9: j = 2; 10: needs
    // t_j <= 300 µs: sample 3 is later and sample 2 has left the ring:
    // unknown, the run breaks (else it would start here); 11: j = 4, run
    // from 11, starts at 14 (rate 7 / 700 µs = 10,000/s).
    name: "rate: a window exactly the ring's span",
    rule: {
      signal: "rate",
      windowNs: 700 * US,
      threshold: 0,
      forNs: 300 * US,
    },
    depth: 4,
    records: at(
      Array.from({ length: 16 }, (_, i) => i === 3 ? 350 : 100 * i),
      counter(times(16, 1)),
    ),
    changes: [14],
    states: "......." + "+++" + "." + "+++" + "##",
    peaks: [10_000],
  },
];

const RATIO: Case[] = [
  {
    // a over b, window 500 µs: b +1,000 a sample, a +5 (1..9), +20
    // (10..14), +0 after. ratio = sum of a's last 5 / 5,000 from 5: 0.005
    // (clear, = Tc) .. 0.008 at 10, 0.011 at 11 (starts), 0.014, 0.017,
    // 0.02, 0.016, 0.012, 0.008, 0.004 at 18 (ends).
    name: "ratio above, clear level away from T",
    rule: {
      signal: "ratio",
      column: 0,
      denominator: 1,
      windowNs: 500 * US,
      threshold: 0.01,
      clear: 0.005,
    },
    records: regular([
      counter([0, ...times(9, 5), ...times(5, 20), ...times(5, 0)]),
      counter(times(20, 1000)),
    ]),
    changes: [11, 18],
    states: ".".repeat(11) + "#".repeat(7) + "..",
    peaks: [0.011, 0.02],
  },
  {
    // a over b, window 300 µs, above 0.5: both +1 on 1..3 (ratio 1 at 3:
    // starts; 1 at 4, 5), then b stops: 0/0 at 6, 5/0 at 7..9 (a +5 at 7)
    // are unknown, not 0 or infinity, and hold; b +4 at 10: 0/4 ends.
    name: "ratio: a zero denominator sum is unknown",
    rule: {
      signal: "ratio",
      column: 0,
      denominator: 1,
      windowNs: 300 * US,
      threshold: 0.5,
    },
    records: regular([
      counter([0, 1, 1, 1, 0, 0, 0, 5, 0, 0, 0]),
      counter([0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 4]),
    ]),
    changes: [3, 10],
    states: "...#######.",
    peaks: [1, 1],
  },
  {
    // b over a (columns swapped), window 100 µs (1 sample, depth 1), below
    // 0.5, clear 0.8: 5/10 neither, 4/10 starts, 7/10 holds, 8/10 ends.
    name: "ratio below, denominator in column 0",
    rule: {
      signal: "ratio",
      column: 1,
      denominator: 0,
      windowNs: 100 * US,
      direction: "below",
      threshold: 0.5,
      clear: 0.8,
    },
    depth: 1,
    records: regular([
      counter([0, 10, 10, 10, 10]),
      counter([0, 5, 4, 7, 8]),
    ]),
    changes: [2, 4],
    states: "..##.",
    peaks: [0.4, 0.4],
  },
];

const M_OF_N: Case[] = [
  {
    // 3 of 5: fewer than 5 seen counts those seen, so the third 9 starts
    // (sample 2). 0 clears, but 3 of the last 5 still raise at 3 and 4:
    // the rule ends only at 5 (2 of 5).
    name: "3 of 5: the rule cannot end while 3 of the last 5 raise",
    rule: { mOfN: { m: 3, n: 5 } },
    records: regular([n(9, 9, 9, 0, 0, 0, 0)]),
    changes: [2, 5],
    states: "++###..",
    peaks: [9, 9],
  },
  {
    // 3 of 5 on 9 0 9 0 9: starts at 4 (3 of 0..4); at 5 the last 5 are
    // 0 9 0 9 0 (2) and 0 clears: ends at once.
    name: "3 of 5 with scattered raises",
    rule: { mOfN: { m: 3, n: 5 } },
    records: regular([n(9, 0, 9, 0, 9, 0, 0, 0)]),
    changes: [4, 5],
    states: "+.+.#...",
    peaks: [9, 9],
  },
  {
    // 2 of 4, keep 200 µs: starts at 2; at 3 the last 4 hold 2 raises (no
    // clear); at 4 one: C runs from 4, 200 µs at 6.
    name:
      "2 of 4 with keep_firing_for: the clear run starts when M of N lapses",
    rule: { mOfN: { m: 2, n: 4 }, keepFiringForNs: 200 * US },
    records: regular([n(9, 0, 9, 0, 0, 0, 0, 0)]),
    changes: [2, 6],
    states: "+.####..",
    peaks: [9, 9],
  },
  {
    // increase above 10, 2 of 3: increases -, 20, reset, 20, 0, 0, 0. The
    // unknowns (sample 0, the reset) do not raise: 2 of 3 only at 3; at 4
    // the last 3 hold one raise and 0 clears: ends.
    name: "2 of 3 on increase: unknown samples do not count as raised",
    rule: { signal: "increase", threshold: 10n, mOfN: { m: 2, n: 3 } },
    records: regular([n(0, 20, 5, 25, 25, 25, 25)]),
    changes: [3, 4],
    states: ".+.#...",
    peaks: [20, 20],
  },
  {
    // depth 2, 4 of 4 (N = 2 x depth, the most allowed): starts at 3, the
    // first 0 leaves 3 of 4: ends.
    name: "4 of 4 at depth 2: N may be the ring's size",
    rule: { mOfN: { m: 4, n: 4 } },
    depth: 2,
    records: regular([n(9, 9, 9, 9, 0)]),
    changes: [3, 4],
    states: "+++#.",
    peaks: [9, 9],
  },
];

// Time going backwards: the class JSDoc says the rule restarts its window
// and runs at that sample and keeps its state. The literal spec (runs and
// j never restarted) would give the results noted in each case.
const BACKWARDS: Case[] = [
  {
    // for 300 µs at 0, 100, 200, then 50 µs: the run restarts at 50, so
    // 300 µs (the literal spec would start there) is 250 µs in; 350 starts.
    name: "time going back: for counts from the sample that went back",
    rule: { forNs: 300 * US },
    records: at([0, 100, 200, 50, 300, 350], n(9, 9, 9, 9, 9, 9)),
    changes: [5],
    states: "+++++#",
    peaks: [9],
  },
  {
    // rate over 300 µs, above 0, for 10 ms (pending shows a known raise).
    // Known from 3; time goes back to 450 µs at 6: the window restarts
    // there, unknown until 750 µs (sample 9). The literal spec would find
    // j = 1 (100 µs <= 150 µs) at sample 6 and stay known.
    name: "time going back: the rate window restarts, unknown for a window",
    rule: {
      signal: "rate",
      windowNs: 300 * US,
      threshold: 0,
      forNs: 10 * MS,
    },
    depth: 4,
    records: at(
      [0, 100, 200, 300, 400, 500, 450, 550, 650, 750, 850],
      counter(times(11, 1)),
    ),
    changes: [],
    states: "...+++...++",
    peaks: [],
  },
  {
    // keep 300 µs: starts at 0; C from 100 µs; back to 50 µs at 3: the rule
    // stays active and C counts from 50: ends at 350 µs (sample 6; the
    // literal spec, counting from 100 µs, at 450 µs).
    name: "time going back: the state is kept, keep_firing_for restarts",
    rule: { keepFiringForNs: 300 * US },
    records: at(
      [0, 100, 200, 50, 150, 250, 350, 450],
      n(9, 0, 0, 0, 0, 0, 0, 0),
    ),
    changes: [0, 6],
    states: "######..",
    peaks: [9, 9],
  },
];

Deno.test(
  "SignalRule: the worked examples of docs/spec/signal-rules.md §7",
  check(WORKED),
);
// docs/spec/signal-rules.md §2: samples lost between i-1 and i. The
// records on either side of a loss are 1 ms apart here (ten periods, nine
// samples lost), and the counter kept counting meanwhile.
const LOST: Case[] = [
  {
    // The increase across the loss (9,000 over ten periods) is not one
    // sample's: unknown at 5, so the rule neither starts nor is pending.
    name: "increase: unknown on the sample after a loss",
    rule: { signal: "increase", threshold: 100n },
    records: at(
      [0, 100, 200, 300, 400, 1400, 1500, 1600],
      counter([0, 10, 10, 10, 10, 9000, 10, 500]),
    ),
    lostBefore: { 5: 9 },
    changes: [7],
    states: ".......#",
    peaks: [500],
  },
  {
    // Window 300 µs (3 periods). Steady +10 a sample = 100,000/s; the
    // counter jumps 9,000 across the loss before 5. Windows ending at 5, 6
    // and 7 start at or before 4, so they span it: unknown. At 8 the window
    // starts at 5: 30 in 300 µs, 100,000/s again. Without the loss the jump
    // would read 9,000 / 1.2 ms = 7.5 M/s and start the rule.
    name: "rate: unknown while the window spans a loss, known after",
    rule: { signal: "rate", windowNs: 300 * US, threshold: 1_000_000 },
    records: at(
      [0, 100, 200, 300, 400, 1400, 1500, 1600, 1700, 1800],
      counter([0, 10, 10, 10, 10, 9000, 10, 10, 10, 10]),
    ),
    lostBefore: { 5: 9 },
    changes: [],
    states: "..........",
    peaks: [],
  },
  {
    // The same stall under an active rule: rate above 50,000/s with
    // keep_firing_for 0, so it ends on the first known sample below. The
    // counter is flat across the loss and after it: spanning windows would
    // read low and end the rule at 5; unknown holds it until 8, the first
    // window that starts after the loss, where the flat counter reads 0.
    name: "rate: a loss does not end an active rule either",
    rule: { signal: "rate", windowNs: 300 * US, threshold: 50_000 },
    records: at(
      [0, 100, 200, 300, 400, 1400, 1500, 1600, 1700, 1800],
      counter([0, 10, 10, 10, 10, 0, 0, 0, 0, 0]),
    ),
    lostBefore: { 5: 9 },
    changes: [3, 8],
    states: "...#####..",
    peaks: [100_000, 100_000],
  },
  {
    // Ratio a / b over 300 µs: a steady 1 % of b; across the loss a jumps
    // 5,000 and b 1,000 (a ratio of 5). Unknown at 5, 6, 7; 1 % from 8.
    name: "ratio: unknown while the window spans a loss",
    rule: {
      signal: "ratio",
      denominator: 1,
      windowNs: 300 * US,
      threshold: 0.5,
    },
    records: regular([
      counter([0, 1, 1, 1, 1, 5000, 1, 1, 1, 1]),
      counter([0, 100, 100, 100, 100, 1000, 100, 100, 100, 100]),
    ]),
    lostBefore: { 5: 9 },
    changes: [],
    states: "..........",
    peaks: [],
  },
  {
    // 2 of 3 increases over 100: the sample after the loss (a jump of
    // 9,000) does not count as a raise, so 5 and 6 do not make two of three.
    name: "M of N: the sample after a loss is not a raise",
    rule: { signal: "increase", threshold: 100n, mOfN: { m: 2, n: 3 } },
    records: regular([counter([0, 10, 10, 10, 10, 9000, 500, 10, 10])]),
    lostBefore: { 5: 9 },
    changes: [],
    states: "......+..",
    peaks: [],
  },
];

Deno.test("SignalRule: value", check(VALUE));
Deno.test("SignalRule: increase", check(INCREASE));
Deno.test("SignalRule: rate", check(RATE));
Deno.test("SignalRule: ratio", check(RATIO));
Deno.test("SignalRule: M of N", check(M_OF_N));
Deno.test("SignalRule: timestamps going backwards", check(BACKWARDS));
Deno.test("SignalRule: lost samples hold the rule's state", check(LOST));

Deno.test("SignalRule: pending, peak and activations before, during and after events", () => {
  const r = new SignalRule(rule({ forNs: 100 * US, clear: 3n }), 4);
  assert.equal(r.active, false);
  assert.equal(r.pending, false);
  assert.ok(Number.isNaN(r.peak), "no event yet: NaN");
  assert.equal(r.activations, 0);
  const ring = new SampleRing(1, 8);
  const seen: Array<[boolean, boolean, number, number]> = [];
  [7, 8, 12, 4, 2, 6, 9].forEach((v, i) => {
    writeRecord(ring.words, ring.claim(), BigInt(i) * P, [BigInt(v)]);
    r.evaluate(ring);
    seen.push([r.active, r.pending, r.peak, r.activations]);
  });
  // 7 raises (pending), 8 is 100 µs on (starts), 12 peaks, 4 holds, 2
  // clears (ends, the peak stays), 6 pending with the last peak, 9 starts
  // and the peak restarts from it.
  assert.deepEqual(seen, [
    [false, true, NaN, 0],
    [true, false, 8, 1],
    [true, false, 12, 1],
    [true, false, 12, 1],
    [false, false, 12, 1],
    [false, true, 12, 1],
    [true, false, 9, 2],
  ]);
});

Deno.test("SignalRule: names, columns and labels as configured", () => {
  const ratio = new SignalRule(
    rule({
      name: "Rx discards over 0.1 %",
      signal: "ratio",
      column: 3,
      denominator: 1,
      windowNs: 1 * MS,
      threshold: 0.001,
      severity: "critical",
      summary: "discards",
    }),
    16,
  );
  assert.deepEqual(
    [
      ratio.name,
      ratio.signal,
      ratio.column,
      ratio.denominator,
      ratio.direction,
      ratio.severity,
      ratio.summary,
    ],
    ["Rx discards over 0.1 %", "ratio", 3, 1, "above", "critical", "discards"],
  );
  const value = new SignalRule(rule({ direction: "below", denominator: 2 }), 1);
  assert.deepEqual(
    [value.denominator, value.direction, value.severity, value.summary],
    [-1, "below", "warning", undefined],
  );
});

Deno.test("SignalRule: refuses what would break the state machine", async (t) => {
  const refusals: Array<
    [string, RuleFields, number, ErrorConstructor, RegExp]
  > = [
    [
      "clear above T for an above rule",
      { threshold: 5n, clear: 6n },
      4,
      RangeError,
      /the clear level 6 must be at or below the threshold 5/,
    ],
    [
      "clear below T for a below rule",
      {
        signal: "rate",
        windowNs: 1 * MS,
        direction: "below",
        threshold: 5,
        clear: 4.5,
      },
      4,
      RangeError,
      /the clear level 4\.5 must be at or above the threshold 5/,
    ],
    [
      "a NaN threshold",
      { signal: "ratio", denominator: 1, windowNs: 1 * MS, threshold: NaN },
      4,
      RangeError,
      /threshold NaN/,
    ],
    ["M > N", { mOfN: { m: 4, n: 3 } }, 4, RangeError, /got 4 of 3/],
    ["M = 0", { mOfN: { m: 0, n: 3 } }, 4, RangeError, /got 0 of 3/],
    [
      "N > 2 x depth",
      { mOfN: { m: 1, n: 9 } },
      4,
      RangeError,
      /N <= 2 x depth \(8\), got 1 of 9/,
    ],
    [
      "a rate without a window",
      { signal: "rate", windowNs: 0, threshold: 1 },
      4,
      RangeError,
      /a rate needs a window > 0/,
    ],
    [
      "a ratio without a window",
      { signal: "ratio", denominator: 1, windowNs: 0, threshold: 1 },
      4,
      RangeError,
      /a ratio needs a window > 0/,
    ],
    [
      "a ratio without a denominator",
      { signal: "ratio", windowNs: 1 * MS, threshold: 1 },
      4,
      TypeError,
      /a ratio needs a denominator column/,
    ],
    [
      "a number threshold for value",
      { threshold: 5 },
      4,
      TypeError,
      /a value threshold must be a bigint/,
    ],
    [
      "a bigint threshold for rate",
      { signal: "rate", windowNs: 1 * MS, threshold: 5n },
      4,
      TypeError,
      /a rate threshold must be a number/,
    ],
    [
      "a clear level of another type than the threshold",
      { signal: "increase", threshold: 5n, clear: 4 },
      4,
      TypeError,
      /the clear level must be of the threshold's type/,
    ],
  ];
  for (const [what, fields, depth, Class, message] of refusals) {
    await t.step(what, () => {
      assert.throws(() => new SignalRule(rule(fields), depth), (e: unknown) => {
        assert.ok(e instanceof Class, `${e}`);
        assert.match((e as Error).message, /^Cannot create rule "r": /);
        assert.match((e as Error).message, message);
        return true;
      });
    });
  }
  // The edges that are allowed: N = 2 x depth, M = N, clear = T.
  new SignalRule(rule({ mOfN: { m: 8, n: 8 } }), 4);
  new SignalRule(rule({ direction: "below", threshold: 0n, clear: 0n }), 4);
});
