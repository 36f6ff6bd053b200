/**
 * One hysteresis rule, evaluated on every sample exactly as NVIDIA's DOCA
 * Telemetry Traceback reference application does (unsigned 64-bit, wrapping
 * arithmetic; the reference's counter and threshold semantics).
 *
 * @module
 */

import {
  type ComparisonType,
  DEFAULT_SEVERITY,
  type ReferenceRuleConfig,
} from "../config/types.ts";
import type { MonitorRule } from "./monitor_rule.ts";
import type { SampleRing } from "./ring.ts";
import {
  addU64,
  bigintToU64,
  geU64,
  gtU64,
  ltU64,
  subU64,
} from "../base/u64.ts";

// Numeric kinds so the per-sample switch compares small integers.
const GT = 0;
const LT = 1;
const DT_GT = 2;
const DT_LT = 3;
const INC_GT = 4;

const KINDS: Readonly<Record<ComparisonType, number>> = {
  gt: GT,
  lt: LT,
  dt_gt: DT_GT,
  dt_lt: DT_LT,
  inc_gt: INC_GT,
};

/**
 * A rule's state machine. {@linkcode ReferenceRule.evaluate} runs once per sample,
 * after the sample is in the ring, and reports whether the rule toggled.
 *
 * @example A `gt` rule with depth 2 needs two matching samples
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReferenceRule } from "./reference_rule.ts";
 * import { SampleRing } from "./ring.ts";
 *
 * const ring = new SampleRing(1, 4);
 * const rule = new ReferenceRule(
 *   { name: "x > 5", column: 0, comparisonType: "gt", comparisonValue: 5n },
 *   2,
 * );
 * const toggled = [9, 9, 3, 3].map((v) => {
 *   ring.words[ring.claim() + 2] = v; // column 0, low half
 *   return rule.evaluate(ring);
 * });
 * // Active after the second 9, inactive again after the second 3.
 * assert.deepEqual(toggled, [false, true, false, true]);
 * assert.equal(rule.active, false);
 * assert.equal(rule.activations, 1);
 * ```
 */
export class ReferenceRule implements MonitorRule {
  /** Rule name as configured. */
  readonly name: string;
  /** Short comparison type. */
  readonly comparisonType: ComparisonType;
  /** Column index (timestamp excluded). */
  readonly column: number;
  /** Hysteresis threshold H: the history depth, or 1 for inc_gt. */
  readonly threshold: number;
  /** Low 32 bits of the comparison value (kept as two u32 halves). */
  readonly valueLo: number;
  /** High 32 bits of the comparison value. */
  readonly valueHi: number;
  readonly #kind: number;
  // Word offset of this rule's column inside a record.
  readonly #word: number;
  /** How urgent the rule's events are. */
  readonly severity: string;
  /** The configured one-line summary, or undefined. */
  readonly summary: string | undefined;
  /** Times the rule has become active since start. */
  activations = 0;
  #active = false;
  // Max (or min, for lt and dt_lt) of what the rule compares, over the
  // samples of the current or last event; see peak.
  #peak = NaN;
  #counter = 0;
  #needNewTarget = true;
  // target (lo, hi) for inc_gt, then a scratch pair for deltas.
  readonly #scratch = new Uint32Array(4);

  /** Builds the rule for a monitor of the given history depth. */
  constructor(options: ReferenceRuleConfig, depth: number) {
    this.name = options.name;
    this.severity = options.severity ?? DEFAULT_SEVERITY;
    this.summary = options.summary;
    this.comparisonType = options.comparisonType;
    this.column = options.column;
    this.#kind = KINDS[options.comparisonType];
    if (this.#kind === undefined) {
      throw new TypeError(
        `Cannot create rule "${options.name}": unknown comparison type "${options.comparisonType}"`,
      );
    }
    this.threshold = this.#kind === INC_GT ? 1 : depth;
    this.#word = 2 + 2 * options.column;
    const value = new Uint32Array(2);
    bigintToU64(options.comparisonValue, value, 0);
    this.valueLo = value[0];
    this.valueHi = value[1];
  }

  /** Whether the rule is currently in an event. */
  get active(): boolean {
    return this.#active;
  }

  /**
   * Whether the rule is counting matching samples towards its hysteresis
   * threshold and not yet active (only `gt` and `lt` ever wait: the others
   * start on their first match).
   */
  get pending(): boolean {
    return !this.#active && this.#counter > 0;
  }

  /**
   * Over the samples of the current or last event, start and end included:
   * the highest column value (`gt`), the lowest (`lt`), the highest or
   * lowest rise over the depth (`dt_gt`, `dt_lt`), or the largest
   * one-sample rise (`inc_gt`). As a float: exact below 2^53. NaN before
   * the first event.
   */
  get peak(): number {
    return this.#peak;
  }

  /**
   * Evaluates the newest record of `ring`. Returns true when the rule
   * changed state on this sample (check {@linkcode active} for which way).
   */
  evaluate(ring: SampleRing): boolean {
    const words = ring.words;
    const at = ring.offsetBack(0) + this.#word;
    const curLo = words[at];
    const curHi = words[at + 1];
    const active = this.#active;
    switch (this.#kind) {
      case GT:
      case LT: {
        const match = this.#kind === GT
          ? gtU64(curLo, curHi, this.valueLo, this.valueHi)
          : ltU64(curLo, curHi, this.valueLo, this.valueHi);
        this.#counter = active !== match ? this.#counter + 1 : 0;
        break;
      }
      case DT_GT:
      case DT_LT: {
        // Needs H + 1 records; until then the counter is left untouched.
        if (ring.count <= this.threshold) break;
        const back = ring.offsetBack(this.threshold) + this.#word;
        const s = this.#scratch;
        subU64(s, 2, curLo, curHi, words[back], words[back + 1]);
        const match = this.#kind === DT_GT
          ? gtU64(s[2], s[3], this.valueLo, this.valueHi)
          : ltU64(s[2], s[3], this.valueLo, this.valueHi);
        if (!active && match) this.#counter = this.threshold;
        else if (active && !match) this.#counter++;
        else this.#counter = 0;
        break;
      }
      default: { // INC_GT
        const s = this.#scratch;
        if (this.#needNewTarget) {
          let baseLo = curLo;
          let baseHi = curHi;
          if (ring.count !== 1) {
            const back = ring.offsetBack(1) + this.#word;
            baseLo = words[back];
            baseHi = words[back + 1];
          }
          addU64(s, 0, baseLo, baseHi, this.valueLo, this.valueHi);
          this.#needNewTarget = false;
        }
        const match = geU64(curLo, curHi, s[0], s[1]);
        if (match) this.#needNewTarget = true;
        this.#counter = active !== match ? this.#counter + 1 : 0;
      }
    }
    if (this.#counter >= this.threshold) {
      this.#active = !active;
      this.#counter = 0;
      if (!active) {
        this.activations++;
        this.#peak = this.#measure(ring, curLo, curHi);
      } else this.#track(ring, curLo, curHi);
      return true;
    }
    if (active) this.#track(ring, curLo, curHi);
    return false;
  }

  // Folds this sample's measure into the event's peak. Runs only during
  // events, so the common path (no event) pays nothing for peaks.
  #track(ring: SampleRing, curLo: number, curHi: number): void {
    const x = this.#measure(ring, curLo, curHi);
    const low = this.#kind === LT || this.#kind === DT_LT;
    // NaN (an event that started before the ring held the sample it
    // compares with) compares false either way: replace it.
    if (x === x && (low ? !(x >= this.#peak) : !(x <= this.#peak))) {
      this.#peak = x;
    }
  }

  // What the rule compares on this sample, as a float: the value, the
  // rise over the depth, or the rise since the previous sample.
  #measure(ring: SampleRing, curLo: number, curHi: number): number {
    const kind = this.#kind;
    if (kind === GT || kind === LT) return curHi * 4294967296 + curLo;
    const back = kind === INC_GT ? 1 : this.threshold;
    if (ring.count <= back) return NaN;
    const words = ring.words;
    const at = ring.offsetBack(back) + this.#word;
    const s = this.#scratch;
    subU64(s, 2, curLo, curHi, words[at], words[at + 1]);
    return s[3] * 4294967296 + s[2];
  }
}
