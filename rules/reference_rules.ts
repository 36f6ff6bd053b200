/**
 * The state machines of reference rules, kept in typed arrays grouped by
 * family of types and evaluated in one call per sample: the five types of
 * docs/spec/reference-semantics.md §3, in unsigned 64-bit wrapping
 * arithmetic on 32-bit halves.
 *
 * Why not one object per rule: on an idle monitor this is the whole
 * per-sample cost beyond the ring, run for every rule on every sample. As
 * a method call per rule it cost about 16 ns a rule against 3.5 ns in C
 * (bench/RESULTS.md): V8 does not inline a method that handles five types
 * into the monitor's loop, a u32 half of 2^30 or more kept in an object
 * field is a heap number (one more load each time it is read), and the
 * type switch runs per rule. Here each family (gt and lt, dt_gt and
 * dt_lt, inc_gt) has a loop of its own over one array of fixed-size
 * records, so a rule costs a few array loads and one comparison, and
 * nothing is called unless a rule is in an event.
 * {@linkcode ReferenceRule} is the view of one rule that the monitor,
 * metrics and alerts see.
 *
 * @module
 */

import type { ComparisonType, ReferenceRuleConfig } from "../config/types.ts";
import type { SampleRing } from "./ring.ts";
import { bigintToU64 } from "../base/u64.ts";

// The types. A rule's record is kept in the group of its family: gt and
// lt compare the value, dt_gt and dt_lt the rise over H samples, inc_gt
// the value against a moving target.
const GT = 0;
const LT = 1;
const DT_GT = 2;
const DT_LT = 3;
const INC_GT = 4;
const COMPARE = 0;
const DIFFERENTIAL = 1;
const INCREMENTAL = 2;
const GROUPS = 3;
const GROUP_OF = [COMPARE, COMPARE, DIFFERENTIAL, DIFFERENTIAL, INCREMENTAL];

const KINDS: Readonly<Record<ComparisonType, number>> = {
  gt: GT,
  lt: LT,
  dt_gt: DT_GT,
  dt_lt: DT_LT,
  inc_gt: INC_GT,
};

// A rule's record in its group's Uint32Array: what it is, then its state.
const WORD = 0; // word offset of its column inside a ring record
const VALUE_LO = 1; // comparison value, low and high halves
const VALUE_HI = 2;
const H = 3; // hysteresis threshold: the depth, or 1 for inc_gt
const INDEX = 4; // the rule's index in the set (add order)
const COUNTER = 5;
const ACTIVE = 6; // 1 in an event
const NEED_TARGET = 7; // inc_gt: 1 when the next sample sets a new target
const TARGET_LO = 8; // inc_gt: the target's halves
const TARGET_HI = 9;
const LOW = 10; // 1 for lt and dt_lt: the rule fires below its value
const STRIDE = 11;

const TWO_32 = 4294967296;

/**
 * Any number of reference rules sharing one set of arrays. Rules are added
 * once ({@linkcode add}); {@linkcode evaluate} then runs every rule on the
 * newest record of a ring and lists which changed state. Nothing on that
 * path allocates.
 *
 * @example Two rules evaluated together
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReferenceRules } from "./reference_rules.ts";
 * import { SampleRing } from "./ring.ts";
 *
 * const ring = new SampleRing(1, 4);
 * const rules = new ReferenceRules(2);
 * rules.add({ name: "x < 5", column: 0, comparisonType: "lt", comparisonValue: 5n }, 1);
 * rules.add({ name: "x > 5", column: 0, comparisonType: "gt", comparisonValue: 5n }, 1);
 * ring.words[ring.claim() + 2] = 9; // column 0, low half
 * assert.equal(rules.evaluate(ring), 1); // one rule changed state:
 * assert.equal(rules.changes[0], 1); // the second
 * assert.deepEqual([rules.active(0), rules.active(1)], [false, true]);
 * ```
 */
export class ReferenceRules {
  /**
   * After {@linkcode evaluate}: the indices of the rules that changed
   * state, in its first entries (as many as it returned), in no
   * particular order.
   */
  readonly changes: Int32Array;
  // Per family of types, the records of its rules, and how many there are.
  readonly #groups: Uint32Array[] = [];
  readonly #sizes = new Int32Array(GROUPS);
  // Per rule (add order): its type, where its record is in the group,
  // and what is reported of it. Peaks are doubles, kept apart from the
  // u32 records: max (or min, for lt and dt_lt) of what the rule
  // compares, over the samples of its current or last event.
  readonly #kind: Uint8Array;
  readonly #at: Int32Array;
  readonly #activations: Float64Array;
  readonly #peak: Float64Array;
  #size = 0;
  // Rules in an event now.
  #activeCount = 0;

  /** Room for `capacity` rules. */
  constructor(capacity: number) {
    this.changes = new Int32Array(capacity);
    for (let g = 0; g < GROUPS; g++) {
      this.#groups.push(new Uint32Array(STRIDE * capacity));
    }
    this.#kind = new Uint8Array(capacity);
    this.#at = new Int32Array(capacity);
    this.#activations = new Float64Array(capacity);
    this.#peak = new Float64Array(capacity).fill(NaN);
  }

  /** Rules added so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds a rule for a monitor of the given history depth, inactive, and
   * returns its index. Throws on an unknown comparison type or when full.
   */
  add(options: ReferenceRuleConfig, depth: number): number {
    const kind = KINDS[options.comparisonType];
    if (kind === undefined) {
      throw new TypeError(
        `Cannot create rule "${options.name}": unknown comparison type "${options.comparisonType}"`,
      );
    }
    const k = this.#size;
    if (k === this.changes.length) {
      throw new RangeError(
        `Cannot add rule "${options.name}": room for ${k} rules only`,
      );
    }
    const group = this.#groups[GROUP_OF[kind]];
    const at = STRIDE * this.#sizes[GROUP_OF[kind]]++;
    group[at + LOW] = kind === LT || kind === DT_LT ? 1 : 0;
    group[at + WORD] = 2 + 2 * options.column;
    bigintToU64(options.comparisonValue, group, at + VALUE_LO);
    group[at + H] = kind === INC_GT ? 1 : depth;
    group[at + INDEX] = k;
    group[at + NEED_TARGET] = 1;
    this.#kind[k] = kind;
    this.#at[k] = at;
    this.#size = k + 1;
    return k;
  }

  /** Hysteresis threshold H of rule `k`: the depth, or 1 for inc_gt. */
  threshold(k: number): number {
    return this.#field(k, H);
  }

  /** Low 32 bits of rule `k`'s comparison value. */
  valueLo(k: number): number {
    return this.#field(k, VALUE_LO);
  }

  /** High 32 bits of rule `k`'s comparison value. */
  valueHi(k: number): number {
    return this.#field(k, VALUE_HI);
  }

  /** Whether rule `k` is in an event. */
  active(k: number): boolean {
    return this.#field(k, ACTIVE) === 1;
  }

  /** Whether rule `k` is counting towards its threshold, not yet active. */
  pending(k: number): boolean {
    return this.#field(k, ACTIVE) === 0 && this.#field(k, COUNTER) > 0;
  }

  /** Times rule `k` has become active. */
  activations(k: number): number {
    return this.#activations[k];
  }

  /** Peak of rule `k`'s current or last event; see {@linkcode ReferenceRule.peak}. */
  peak(k: number): number {
    return this.#peak[k];
  }

  #field(k: number, field: number): number {
    return this.#groups[GROUP_OF[this.#kind[k]]][this.#at[k] + field];
  }

  /**
   * Evaluates every rule on the newest record of `ring` (already
   * appended). Returns how many changed state and lists them in
   * {@linkcode changes}; {@linkcode active} says which way each went.
   *
   * Rules are evaluated a family of types at a time, not in the order
   * they were added: a rule's evaluation reads only the ring and its own
   * state, so the order shows only in the list of changes, and a monitor
   * reports them in its own order.
   */
  evaluate(ring: SampleRing): number {
    const sizes = this.#sizes;
    return this.#run(
      ring,
      0,
      sizes[COMPARE],
      0,
      sizes[DIFFERENTIAL],
      0,
      sizes[INCREMENTAL],
    );
  }

  /**
   * Evaluates rule `k` alone; returns whether it changed state. For a rule
   * used on its own ({@linkcode ReferenceRule.evaluate}); a monitor
   * evaluates all of its rules with {@linkcode evaluate}.
   */
  evaluateOne(ring: SampleRing, k: number): boolean {
    const group = GROUP_OF[this.#kind[k]];
    const first = this.#at[k] / STRIDE;
    const end = first + 1;
    return this.#run(
      ring,
      first,
      group === COMPARE ? end : first,
      first,
      group === DIFFERENTIAL ? end : first,
      first,
      group === INCREMENTAL ? end : first,
    ) > 0;
  }

  /**
   * Runs records `c0` to `c1 - 1` of the compare group, `d0` to `d1 - 1`
   * of the differential one and `i0` to `i1 - 1` of the incremental one;
   * returns how many rules changed state, listed in `changes`.
   *
   * One function with a loop per family: every rule of a monitor runs on
   * every sample, so the loops call nothing (V8 then checks each array
   * once per loop rather than after every call, and the u64 comparisons
   * are written out: an imported helper, even inlined, checks its module
   * binding each time), and one call runs them all. Peaks are left to
   * #trackPeaks.
   */
  #run(
    ring: SampleRing,
    c0: number,
    c1: number,
    d0: number,
    d1: number,
    i0: number,
    i1: number,
  ): number {
    const words = ring.words;
    const newest = ring.offsetBack(0);
    const count = ring.count;
    let changed = 0;

    // gt and lt: the value against the comparison value.
    let group = this.#groups[COMPARE];
    for (let at = c0 * STRIDE; at < c1 * STRIDE; at += STRIDE) {
      const w = newest + group[at + WORD];
      const lo = words[w];
      const hi = words[w + 1];
      const vLo = group[at + VALUE_LO];
      const vHi = group[at + VALUE_HI];
      const match = group[at + LOW] === 1
        ? hi < vHi || (hi === vHi && lo < vLo)
        : hi > vHi || (hi === vHi && lo > vLo);
      const active = group[at + ACTIVE] === 1;
      const counter = active !== match ? group[at + COUNTER] + 1 : 0;
      changed = this.#step(group, at, counter, active, changed);
    }

    // dt_gt and dt_lt: the rise over H samples against the value.
    group = this.#groups[DIFFERENTIAL];
    for (let at = d0 * STRIDE; at < d1 * STRIDE; at += STRIDE) {
      const h = group[at + H];
      const active = group[at + ACTIVE] === 1;
      let counter = group[at + COUNTER];
      // H + 1 records are needed; until then the counter is left as it is.
      if (count > h) {
        const w = newest + group[at + WORD];
        const b = ring.offsetBack(h) + group[at + WORD];
        // The rise mod 2^64, on halves.
        const curLo = words[w];
        const backLo = words[b];
        const lo = (curLo - backLo) >>> 0;
        const hi = (words[w + 1] - words[b + 1] - (curLo < backLo ? 1 : 0)) >>>
          0;
        const vLo = group[at + VALUE_LO];
        const vHi = group[at + VALUE_HI];
        const match = group[at + LOW] === 1
          ? hi < vHi || (hi === vHi && lo < vLo)
          : hi > vHi || (hi === vHi && lo > vLo);
        if (!active && match) counter = h;
        else if (active && !match) counter++;
        else counter = 0;
      }
      changed = this.#step(group, at, counter, active, changed);
    }

    // inc_gt: the value against a target, the value before the one that
    // set it plus the comparison value.
    group = this.#groups[INCREMENTAL];
    // Where a new target comes from: the previous record (this one, for
    // the first).
    const previous = count === 1 ? newest : ring.offsetBack(1);
    for (let at = i0 * STRIDE; at < i1 * STRIDE; at += STRIDE) {
      const w = newest + group[at + WORD];
      if (group[at + NEED_TARGET] === 1) {
        // The previous value plus the comparison value, mod 2^64.
        const p = previous + group[at + WORD];
        const lo = words[p] + group[at + VALUE_LO];
        group[at + TARGET_LO] = lo; // stored mod 2^32
        group[at + TARGET_HI] = words[p + 1] + group[at + VALUE_HI] +
          (lo >= TWO_32 ? 1 : 0);
        group[at + NEED_TARGET] = 0;
      }
      const lo = words[w];
      const hi = words[w + 1];
      const tLo = group[at + TARGET_LO];
      const tHi = group[at + TARGET_HI];
      const match = hi > tHi || (hi === tHi && lo >= tLo);
      if (match) group[at + NEED_TARGET] = 1;
      const active = group[at + ACTIVE] === 1;
      const counter = active !== match ? group[at + COUNTER] + 1 : 0;
      changed = this.#step(group, at, counter, active, changed);
    }

    if (this.#activeCount > 0 || changed > 0) this.#trackPeaks(ring, changed);
    return changed;
  }

  // The end of every type's step: the counter reaching H toggles the rule.
  // Small, so V8 inlines it into each loop. A rule that starts gets a NaN
  // peak, which #trackPeaks replaces with this sample's measure.
  #step(
    group: Uint32Array,
    at: number,
    counter: number,
    active: boolean,
    changed: number,
  ): number {
    if (counter < group[at + H]) {
      group[at + COUNTER] = counter;
      return changed;
    }
    group[at + COUNTER] = 0;
    group[at + ACTIVE] = active ? 0 : 1;
    const k = group[at + INDEX];
    if (active) {
      this.#activeCount--;
    } else {
      this.#activeCount++;
      this.#activations[k]++;
      this.#peak[k] = NaN;
    }
    this.changes[changed] = k;
    return changed + 1;
  }

  // Folds this sample into the peak of every rule in an event and of every
  // rule that ended on it (start and end samples count). Runs only while
  // some rule is active or changed, so an idle monitor pays nothing for it.
  #trackPeaks(ring: SampleRing, changed: number): void {
    for (let c = 0; c < changed; c++) {
      const k = this.changes[c];
      if (!this.active(k)) this.#track(ring, k);
    }
    if (this.#activeCount === 0) return;
    for (let g = 0; g < GROUPS; g++) {
      const group = this.#groups[g];
      const stop = this.#sizes[g] * STRIDE;
      for (let at = 0; at < stop; at += STRIDE) {
        if (group[at + ACTIVE] === 1) this.#track(ring, group[at + INDEX]);
      }
    }
  }

  // Folds what rule k compares on the newest record into its peak: the
  // highest (the lowest, for lt and dt_lt) so far. A NaN measure (an
  // event that started before the ring held the sample it compares with)
  // leaves the peak as it is; a NaN peak (just started) takes the measure.
  #track(ring: SampleRing, k: number): void {
    const group = this.#groups[GROUP_OF[this.#kind[k]]];
    const at = this.#at[k];
    const words = ring.words;
    const w = ring.offsetBack(0) + group[at + WORD];
    const kind = this.#kind[k];
    let x: number;
    if (kind === GT || kind === LT) {
      x = words[w + 1] * TWO_32 + words[w];
    } else {
      const back = group[at + H]; // 1 for inc_gt
      if (ring.count <= back) {
        x = NaN;
      } else {
        const b = ring.offsetBack(back) + group[at + WORD];
        const lo = words[w] - words[b];
        const hi = words[w + 1] - words[b + 1] - (lo < 0 ? 1 : 0);
        x = (hi >>> 0) * TWO_32 + (lo >>> 0);
      }
    }
    const peak = this.#peak;
    const low = kind === LT || kind === DT_LT;
    if (x === x && (low ? !(x >= peak[k]) : !(x <= peak[k]))) peak[k] = x;
  }
}
