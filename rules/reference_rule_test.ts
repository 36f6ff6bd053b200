import assert from "node:assert/strict";
import type { ComparisonType } from "../config/types.ts";
import { SampleRing } from "./ring.ts";
import { ReferenceRule } from "./reference_rule.ts";
import { M, P53, runRule, writeRecord } from "./rules_test_util.ts";

/**
 * One hand-computed case (docs/spec/reference-semantics.md §3): the trace of
 * the rule's column, the sample indices at which the rule toggles, and its
 * state after every sample (`#` active, `.` inactive).
 */
interface Case {
  name: string;
  type: ComparisonType;
  value: bigint;
  depth: number;
  trace: bigint[];
  toggles: number[];
  states: string;
}

function check(cases: readonly Case[]): (t: Deno.TestContext) => Promise<void> {
  return async (t) => {
    for (const c of cases) {
      await t.step(c.name, () => {
        assert.equal(c.states.length, c.trace.length, "table row is malformed");
        const run = runRule(c.type, c.value, c.depth, c.trace);
        assert.deepEqual(run, { toggles: c.toggles, states: c.states });
      });
    }
  };
}

const n = (...xs: Array<number | bigint>): bigint[] => xs.map(BigInt);

// gt / lt: H = depth consecutive (non-)matches toggle; an interruption resets.
const GT_LT: Case[] = [
  {
    // c: 1 2 3→on | 0(match) 1 2 3→off | 0
    name: "gt depth 3: three matches on, three non-matches off",
    type: "gt",
    value: 5n,
    depth: 3,
    trace: n(6, 7, 8, 9, 4, 3, 2, 1),
    toggles: [2, 6],
    states: "..####..",
  },
  {
    // c: 1 2 0(interrupt) 1 2 3→on | 1 2 0(interrupt) 1 2 3→off
    name: "gt depth 3: an interruption resets the count in both directions",
    type: "gt",
    value: 5n,
    depth: 3,
    trace: n(6, 7, 4, 6, 7, 8, 3, 2, 9, 1, 1, 1),
    toggles: [5, 11],
    states: ".....######.",
  },
  {
    // 5 is not > 5: no match while inactive, a non-match while active.
    name: "gt depth 2: equality is not a match",
    type: "gt",
    value: 5n,
    depth: 2,
    trace: n(5, 5, 5, 6, 6, 5, 5),
    toggles: [4, 6],
    states: "....##.",
  },
  {
    name: "gt depth 1: toggles on every change of match",
    type: "gt",
    value: 5n,
    depth: 1,
    trace: n(6, 4, 6, 6, 5, 9, 0),
    toggles: [0, 1, 2, 4, 5, 6],
    states: "#.##.#.",
  },
  {
    name: "gt value 0 depth 1: 0 is not a match, 1 is",
    type: "gt",
    value: 0n,
    depth: 1,
    trace: n(0, 1),
    toggles: [1],
    states: ".#",
  },
  {
    name: "gt value 2^64-1: nothing matches",
    type: "gt",
    value: M - 1n,
    depth: 1,
    trace: [M - 1n, M - 1n, 0n],
    toggles: [],
    states: "...",
  },
  {
    // c: 1 0(10 not < 10) 1 2→on | 1(10) 0(3 match) 1 2→off
    name: "lt depth 2: two matches on, two non-matches off, equality no match",
    type: "lt",
    value: 10n,
    depth: 2,
    trace: n(9, 11, 9, 9, 10, 3, 10, 10),
    toggles: [3, 7],
    states: "...####.",
  },
  {
    name: "lt depth 4: an interruption resets the count in both directions",
    type: "lt",
    value: 10n,
    depth: 4,
    // c: 1 2 3 0 1 2 3 4→on(7) | 1 2 3 0 1 2 3 4→off(15)
    trace: n(1, 1, 1, 99, 1, 1, 1, 1, 50, 50, 50, 2, 50, 50, 50, 50),
    toggles: [7, 15],
    states: ".......########.",
  },
  {
    name: "lt value 0: nothing is below 0",
    type: "lt",
    value: 0n,
    depth: 1,
    trace: n(0, 0, 5),
    toggles: [],
    states: "...",
  },
  {
    name: "lt depth 1: toggles immediately",
    type: "lt",
    value: 3n,
    depth: 1,
    trace: n(2, 3, 0, 1, 4),
    toggles: [0, 1, 2, 4],
    states: "#.##.",
  },
];

// Values a float would get wrong, and a high half that must dominate.
const GT_LT_U64: Case[] = [
  {
    // As doubles 2^53 + 1 == 2^53, so a float compare says "not greater".
    name: "gt value 2^53: 2^53+1 matches, 2^53 does not",
    type: "gt",
    value: P53,
    depth: 1,
    trace: [P53 + 1n, P53, P53 + 2n],
    toggles: [0, 1, 2],
    states: "#.#",
  },
  {
    name: "gt value 2^53+1: 2^53+1 does not match, 2^53+2 does",
    type: "gt",
    value: P53 + 1n,
    depth: 1,
    trace: [P53 + 1n, P53 + 2n, P53 + 1n],
    toggles: [1, 2],
    states: ".#.",
  },
  {
    // As doubles 2^53 < (2^53 + 1) is false.
    name: "lt value 2^53+1: 2^53 matches, 2^53+1 does not",
    type: "lt",
    value: P53 + 1n,
    depth: 1,
    trace: [P53, P53 + 1n, P53 + 2n, P53],
    toggles: [0, 1, 3],
    states: "#..#",
  },
  {
    // 2^33 - 1 has a larger low half than 2^33 but a smaller high half.
    name: "gt value 2^33: the high half decides",
    type: "gt",
    value: 1n << 33n,
    depth: 1,
    trace: [(1n << 33n) - 1n, 1n << 33n, (1n << 33n) + 1n],
    toggles: [2],
    states: "..#",
  },
  {
    name: "lt value 2^64-1: everything below matches, 2^64-1 does not",
    type: "lt",
    value: M - 1n,
    depth: 2,
    trace: [M - 2n, 0n, M - 1n, M - 1n, P53],
    toggles: [1, 3],
    states: ".##..",
  },
];

// dt_gt / dt_lt: delta against H samples back, in a ring of 2H.
const DT: Case[] = [
  {
    // deltas from s2: 200 105 10 10 90 90 10 10 10 (10 is not > 10)
    name: "dt_gt depth 2: on at the first match, off after 2 non-matches",
    type: "dt_gt",
    value: 10n,
    depth: 2,
    trace: n(0, 100, 200, 205, 210, 215, 300, 305, 310, 315, 320),
    toggles: [2, 5, 6, 9],
    states: "..###.###..",
  },
  {
    // deltas from s3: 10 10 10 | 0 0 | 6 (resets) | 5 5 0 → off at s11 | 5
    name: "dt_gt depth 3: a match while active resets the non-match count",
    type: "dt_gt",
    value: 5n,
    depth: 3,
    trace: n(0, 0, 0, 10, 10, 10, 10, 10, 16, 15, 15, 16, 20),
    toggles: [3, 11],
    states: "...########..",
  },
  {
    // s0..s2 have count <= 3: not evaluated even though 1 > 0.
    name: "dt_gt depth 3: nothing before H+1 records",
    type: "dt_gt",
    value: 0n,
    depth: 3,
    // s3: 4 - 1 = 3 > 0 on; s4: 4 - 2 = 2 still a match.
    trace: n(1, 2, 3, 4, 4),
    toggles: [3],
    states: "...##",
  },
  {
    name: "dt_gt depth 1: first sample never evaluated, then immediate",
    type: "dt_gt",
    value: 0n,
    depth: 1,
    trace: n(5, 6, 6, 7),
    toggles: [1, 2, 3],
    states: ".#.#",
  },
  {
    // Samples 0 and 1 would match (delta 0 < 100) if they were evaluated.
    name: "dt_lt depth 2: nothing before H+1 records",
    type: "dt_lt",
    value: 100n,
    depth: 2,
    trace: n(0, 0, 0),
    toggles: [2],
    states: "..#",
  },
  {
    // deltas from s2: 10 10 9 | 15 31→off | 30 12 | 4→on 4
    name: "dt_lt depth 2: on at the first match, off after 2 non-matches",
    type: "dt_lt",
    value: 10n,
    depth: 2,
    trace: n(0, 5, 10, 15, 19, 30, 50, 60, 62, 64, 66),
    toggles: [4, 6, 9],
    states: "....##...##",
  },
  {
    // deltas from s4: 10 on | 60 110 160 (count 1 2 3) | 25-10 = 15 match,
    // resets | 100-60, 150-110, 200-160, 250-25 (count 1 2 3 4) → off | 200
    name: "dt_lt depth 4: a match while active resets the non-match count",
    type: "dt_lt",
    value: 20n,
    depth: 4,
    trace: n(0, 0, 0, 0, 10, 60, 110, 160, 25, 100, 150, 200, 250, 300),
    toggles: [4, 12],
    states: "....########..",
  },
];

// Deltas mod 2^64 and exact above 2^53.
const DT_U64: Case[] = [
  {
    // 10 - (2^64 - 5) = 15 mod 2^64; then 15, 15, 14.
    name: "dt_gt across the 2^64 wrap: delta 15 > 14",
    type: "dt_gt",
    value: 14n,
    depth: 1,
    trace: [M - 5n, 10n, 25n, 40n, 54n],
    toggles: [1, 4],
    states: ".###.",
  },
  {
    name: "dt_gt across the 2^64 wrap: delta 15 is not > 15",
    type: "dt_gt",
    value: 15n,
    depth: 1,
    trace: [M - 5n, 10n],
    toggles: [],
    states: "..",
  },
  {
    // A decrease is a huge unsigned delta: 40 - 50 = 2^64 - 10 > 100.
    name: "dt_gt: a decreasing value is a huge unsigned delta",
    type: "dt_gt",
    value: 100n,
    depth: 1,
    trace: n(50, 40, 40),
    toggles: [1, 2],
    states: ".#.",
  },
  {
    // deltas from s2: 18 18 18 | 91 182→off | 200
    name: "dt_lt depth 2 on a counter wrapping past 2^64",
    type: "dt_lt",
    value: 20n,
    depth: 2,
    trace: [M - 18n, M - 9n, 0n, 9n, 18n, 100n, 200n, 300n],
    toggles: [2, 6],
    states: "..####..",
  },
  {
    // s1: 100 - (2^64-100) = 200 (a signed delta would be < 20);
    // s2: 10 → on; s3: (2^64-5) - 110 = 2^64-115 → off; s4: 5 - (2^64-5) = 10 → on.
    name: "dt_lt depth 1 on a wrapping counter",
    type: "dt_lt",
    value: 20n,
    depth: 1,
    trace: [M - 100n, 100n, 110n, M - 5n, 5n],
    toggles: [2, 3, 4],
    states: "..#.#",
  },
  {
    // delta 2^53 + 1 > 2^53 (as doubles both are 2^53); then delta 2^53.
    name: "dt_gt value 2^53: delta 2^53+1 matches, 2^53 does not",
    type: "dt_gt",
    value: P53,
    depth: 1,
    trace: [0n, P53 + 1n, 2n * P53 + 1n],
    toggles: [1, 2],
    states: ".#.",
  },
  {
    // Same deltas on top of 2^60 + 7, where doubles are 256 apart.
    name: "dt_gt value 2^53 on large counters: delta 2^53+1 matches",
    type: "dt_gt",
    value: P53,
    depth: 1,
    trace: [
      (1n << 60n) + 7n,
      (1n << 60n) + P53 + 8n,
      (1n << 60n) + 2n * P53 + 8n,
    ],
    toggles: [1, 2],
    states: ".#.",
  },
  {
    name: "dt_lt value 2^53+1: delta 2^53 matches, 2^53+1 does not",
    type: "dt_lt",
    value: P53 + 1n,
    depth: 1,
    trace: [0n, P53, 2n * P53 + 1n],
    toggles: [1, 2],
    states: ".#.",
  },
];

// inc_gt: H = 1 whatever the depth; active after a sample == match on it.
const INC: Case[] = [
  {
    // targets: 110 (first: cur+value) 110 | 121 135 145 | 145→on 155 155
    name: "inc_gt: first target is cur+value, then previous+value",
    type: "inc_gt",
    value: 10n,
    depth: 4,
    trace: n(100, 105, 111, 125, 135, 140, 145, 150, 151),
    toggles: [2, 5, 6, 7],
    states: "..###.#..",
  },
  {
    name: "inc_gt: the very first sample cannot match when value > 0",
    type: "inc_gt",
    value: 1n,
    depth: 1,
    trace: n(1000),
    toggles: [],
    states: ".",
  },
  {
    // targets: 10 | 20 30 | 30 stays while 0, 10, 20 rise by 10 each | 30→on
    // 40 | 50→off
    name: "inc_gt: a stale target is kept until a sample reaches it",
    type: "inc_gt",
    value: 10n,
    depth: 1,
    trace: n(0, 10, 20, 25, 0, 10, 20, 30, 40, 45),
    toggles: [1, 3, 7, 9],
    states: ".##....##.",
  },
  {
    // targets: 5 5 5 7(off) 7 7(on) 7(off) 7(on)
    name: "inc_gt value 0: first sample matches; a decrease ends it",
    type: "inc_gt",
    value: 0n,
    depth: 2,
    trace: n(5, 5, 7, 6, 6, 7, 3, 8),
    toggles: [0, 3, 5, 6, 7],
    states: "###..#.#",
  },
  {
    // target (2^64-10) + 20 wraps to 10, so 2^64-10 >= 10 matches at once;
    // then base 2^64-10 → 10; base 2^64-5 → 15 (10 < 15, off); 40 >= 15 on;
    // 60 (41, off).
    name: "inc_gt: target sum wraps past 2^64",
    type: "inc_gt",
    value: 20n,
    depth: 1,
    trace: [M - 10n, M - 5n, 10n, 40n, 41n],
    toggles: [0, 2, 3, 4],
    states: "##.#.",
  },
  {
    // targets: 20 | 20→on | 40 (2^64-5 >= 40) | (2^64-5)+20 = 15 | 35 (off)
    name: "inc_gt: a rise of value across the 2^64 wrap keeps it active",
    type: "inc_gt",
    value: 20n,
    depth: 1,
    trace: [0n, 20n, M - 5n, 15n, 34n],
    toggles: [1, 4],
    states: ".###.",
  },
  {
    // targets: 2^53 | 2^53+1 >= 2^53 on | 2^54+1 | 2^54+2^53+1 > 2^54+2^53
    // (as doubles the last target rounds down to 2^54+2^53 and would match)
    name: "inc_gt value 2^53: exact targets above 2^53",
    type: "inc_gt",
    value: P53,
    depth: 1,
    trace: [0n, P53 + 1n, 2n * P53 + 1n, 3n * P53],
    toggles: [1, 3],
    states: ".##.",
  },
];

Deno.test(
  "Rule gt/lt: hysteresis of H = depth (hand-computed traces)",
  check(GT_LT),
);
Deno.test("Rule gt/lt: exact u64 comparisons", check(GT_LT_U64));
Deno.test(
  "Rule dt_gt/dt_lt: delta H back, on at once, off after H (hand-computed)",
  check(DT),
);
Deno.test("Rule dt_gt/dt_lt: deltas mod 2^64 and above 2^53", check(DT_U64));
Deno.test(
  "Rule inc_gt: H = 1 and the target (hand-computed traces)",
  check(INC),
);

Deno.test("Rule dt_gt: the counter is left untouched while count <= H", () => {
  // depth 2: s2 delta 100 on; s3 100 (match); s4 0 → non-match count 1.
  const ring = new SampleRing(3, 4);
  const rule = new ReferenceRule(
    { name: "r", column: 1, comparisonType: "dt_gt", comparisonValue: 10n },
    2,
  );
  const before = runRule("dt_gt", 10n, 2, n(0, 0, 100, 100, 100), ring, rule);
  assert.deepEqual(before, { toggles: [2], states: "..###" });
  // Emptied ring: the next 2 samples are not evaluated and keep count 1, so
  // the third (count 3 > 2, delta 0) is the 2nd non-match and ends it.
  ring.clear();
  const after = runRule("dt_gt", 10n, 2, n(100, 100, 100), ring, rule);
  assert.deepEqual(after, { toggles: [2], states: "##." });
});

Deno.test("Rule: threshold is depth, or 1 for inc_gt; activations counted", () => {
  const types: ComparisonType[] = ["gt", "lt", "dt_gt", "dt_lt", "inc_gt"];
  for (const type of types) {
    const rule = new ReferenceRule({
      name: type,
      column: 0,
      comparisonType: type,
      comparisonValue: 7n,
    }, 8);
    assert.equal(rule.threshold, type === "inc_gt" ? 1 : 8, type);
    assert.equal(rule.active, false, type);
    assert.equal(rule.activations, 0, type);
  }
  const ring = new SampleRing(1, 2);
  const rule = new ReferenceRule({
    name: "x",
    column: 0,
    comparisonType: "gt",
    comparisonValue: 5n,
  }, 1);
  for (const v of n(9, 0, 9, 9, 0, 9)) {
    writeRecord(ring.words, ring.claim(), 0n, [v]);
    rule.evaluate(ring);
  }
  assert.equal(rule.activations, 3);
});

Deno.test("Rule: comparison value halves and range checks", () => {
  const rule = new ReferenceRule({
    name: "x",
    column: 0,
    comparisonType: "gt",
    comparisonValue: M - 2n,
  }, 1);
  assert.equal(rule.valueLo, 0xfffffffe);
  assert.equal(rule.valueHi, 0xffffffff);
  assert.throws(
    () =>
      new ReferenceRule({
        name: "x",
        column: 0,
        comparisonType: "gt",
        comparisonValue: M,
      }, 1),
    RangeError,
  );
  assert.throws(
    () =>
      new ReferenceRule({
        name: "x",
        column: 0,
        comparisonType: "gt",
        comparisonValue: -1n,
      }, 1),
    RangeError,
  );
  assert.throws(
    () =>
      new ReferenceRule(
        {
          name: "x",
          column: 0,
          comparisonType: "nope" as ComparisonType,
          comparisonValue: 1n,
        },
        1,
      ),
    TypeError,
  );
});

Deno.test("ReferenceRule: an event that starts before the ring holds its comparison sample gets its peak from the next samples", () => {
  // inc_gt 0 matches the very first sample (its target is that sample
  // itself), when there is no previous sample to measure a rise from.
  const ring = new SampleRing(1, 8);
  const rule = new ReferenceRule(
    { name: "r", column: 0, comparisonType: "inc_gt", comparisonValue: 0n },
    4,
  );
  const peaks: number[] = [];
  for (const value of [10, 13, 20, 21]) {
    ring.words[ring.claim() + 2] = value;
    rule.evaluate(ring);
    peaks.push(rule.peak);
  }
  assert.equal(rule.activations, 1);
  // NaN on the first sample, then the largest one-sample rise so far.
  assert.deepEqual(peaks, [NaN, 3, 7, 7]);
});
