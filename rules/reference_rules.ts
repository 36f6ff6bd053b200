/**
 * The state machines of reference rules, kept in typed arrays grouped by
 * type and evaluated a group at a time on each sample: the five types of
 * docs/spec/reference-semantics.md §3, in unsigned 64-bit wrapping
 * arithmetic on 32-bit halves.
 *
 * Why not one object per rule: on an idle monitor this is the whole
 * per-sample cost beyond the ring, run for every rule on every sample. As
 * a method call per rule it cost about 16 ns a rule against 3.5 ns in C
 * (bench/RESULTS.md): V8 does not inline a method that handles five types
 * into the monitor's loop, a u32 half of 2^30 or more kept in an object
 * field is a heap number (one more load each time it is read), and the
 * type switch runs per rule. Here each type has a loop of its own over
 * one array of fixed-size records, so a rule costs a few array loads and
 * one comparison, and nothing is called unless a rule is in an event.
 * {@linkcode ReferenceRule} is the view of one rule that the monitor,
 * metrics and alerts see.
 *
 * @module
 */

import type { ComparisonType, ReferenceRuleConfig } from "../config/types.ts";
import type { SampleRing } from "./ring.ts";
import { bigintToU64 } from "../base/u64.ts";

// The groups, one per type (their order is the order of evaluation,
// which nothing observes: see evaluate).
const GT = 0;
const LT = 1;
const DT_GT = 2;
const DT_LT = 3;
const INC_GT = 4;
const GROUPS = 5;

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
const STRIDE = 10;

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
  // Per type, the records of its rules, and how many there are.
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
    const group = this.#groups[kind];
    const at = STRIDE * this.#sizes[kind]++;
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
    return this.#groups[this.#kind[k]][this.#at[k] + field];
  }

  /**
   * Evaluates every rule on the newest record of `ring` (already
   * appended). Returns how many changed state and lists them in
   * {@linkcode changes}; {@linkcode active} says which way each went.
   *
   * Rules are evaluated a type at a time, not in the order they were
   * added: a rule's evaluation reads only the ring and its own state, so
   * the order shows only in the list of changes, and a monitor reports
   * them in its own order.
   */
  evaluate(ring: SampleRing): number {
    const groups = this.#groups;
    const sizes = this.#sizes;
    let changed = 0;
    // A group with no rules costs nothing: most monitors use few types.
    if (sizes[GT] > 0) {
      changed = this.#compare(ring, groups[GT], 0, sizes[GT], false, changed);
    }
    if (sizes[LT] > 0) {
      changed = this.#compare(ring, groups[LT], 0, sizes[LT], true, changed);
    }
    if (sizes[DT_GT] > 0) {
      changed = this.#differential(
        ring,
        groups[DT_GT],
        0,
        sizes[DT_GT],
        false,
        changed,
      );
    }
    if (sizes[DT_LT] > 0) {
      changed = this.#differential(
        ring,
        groups[DT_LT],
        0,
        sizes[DT_LT],
        true,
        changed,
      );
    }
    if (sizes[INC_GT] > 0) {
      changed = this.#incremental(
        ring,
        groups[INC_GT],
        0,
        sizes[INC_GT],
        changed,
      );
    }
    if (this.#activeCount > 0 || changed > 0) this.#trackPeaks(ring, changed);
    return changed;
  }

  /**
   * Evaluates rule `k` alone; returns whether it changed state. For a rule
   * used on its own ({@linkcode ReferenceRule.evaluate}); a monitor
   * evaluates all of its rules with {@linkcode evaluate}.
   */
  evaluateOne(ring: SampleRing, k: number): boolean {
    const kind = this.#kind[k];
    const group = this.#groups[kind];
    const first = this.#at[k] / STRIDE;
    const end = first + 1;
    let changed: number;
    if (kind === GT || kind === LT) {
      changed = this.#compare(ring, group, first, end, kind === LT, 0);
    } else if (kind === INC_GT) {
      changed = this.#incremental(ring, group, first, end, 0);
    } else {
      changed = this.#differential(ring, group, first, end, kind === DT_LT, 0);
    }
    if (this.#activeCount > 0 || changed > 0) this.#trackPeaks(ring, changed);
    return changed > 0;
  }

  // The three loops below, one per pair of types, run every rule of their
  // group on every sample, so they call nothing: V8 then checks the arrays
  // once per loop instead of after every call, and the u64 comparisons are
  // written out (an imported helper, even inlined, checks its module
  // binding each time). Each returns the count of changes, listed from
  // changes[changed] on; peaks are left to #trackPeaks.

  // gt (low false) and lt (low true), records first to end - 1 of `group`.
  #compare(
    ring: SampleRing,
    group: Uint32Array,
    first: number,
    end: number,
    low: boolean,
    changed: number,
  ): number {
    const words = ring.words;
    const newest = ring.offsetBack(0);
    const lt = low === true;
    const stop = end * STRIDE;
    for (let at = first * STRIDE; at < stop; at += STRIDE) {
      const w = newest + group[at + WORD];
      const lo = words[w];
      const hi = words[w + 1];
      const vLo = group[at + VALUE_LO];
      const vHi = group[at + VALUE_HI];
      const match = lt
        ? hi < vHi || (hi === vHi && lo < vLo)
        : hi > vHi || (hi === vHi && lo > vLo);
      const active = group[at + ACTIVE] === 1;
      const counter = active !== match ? group[at + COUNTER] + 1 : 0;
      changed = this.#step(group, at, counter, active, changed);
    }
    return changed;
  }

  // dt_gt (low false) and dt_lt (low true): the rise over H samples.
  #differential(
    ring: SampleRing,
    group: Uint32Array,
    first: number,
    end: number,
    low: boolean,
    changed: number,
  ): number {
    const words = ring.words;
    const newest = ring.offsetBack(0);
    const count = ring.count;
    const lt = low === true;
    const stop = end * STRIDE;
    for (let at = first * STRIDE; at < stop; at += STRIDE) {
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
        const match = lt
          ? hi < vHi || (hi === vHi && lo < vLo)
          : hi > vHi || (hi === vHi && lo > vLo);
        if (!active && match) counter = h;
        else if (active && !match) counter++;
        else counter = 0;
      }
      changed = this.#step(group, at, counter, active, changed);
    }
    return changed;
  }

  // inc_gt: a rise of at least the value over the sample before the one
  // that set the target.
  #incremental(
    ring: SampleRing,
    group: Uint32Array,
    first: number,
    end: number,
    changed: number,
  ): number {
    const words = ring.words;
    const newest = ring.offsetBack(0);
    // Where a new target comes from: the previous sample (this one, for
    // the first record).
    const previous = ring.count === 1 ? newest : ring.offsetBack(1);
    const stop = end * STRIDE;
    for (let at = first * STRIDE; at < stop; at += STRIDE) {
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
    for (let k = 0; k < this.#size; k++) {
      if (this.active(k)) this.#track(ring, k);
    }
  }

  // Folds what rule k compares on the newest record into its peak: the
  // highest (the lowest, for lt and dt_lt) so far. A NaN measure (an
  // event that started before the ring held the sample it compares with)
  // leaves the peak as it is; a NaN peak (just started) takes the measure.
  #track(ring: SampleRing, k: number): void {
    const group = this.#groups[this.#kind[k]];
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
