/**
 * One hysteresis rule, evaluated on every sample exactly as NVIDIA's DOCA
 * Telemetry Traceback reference application does (unsigned 64-bit, wrapping
 * arithmetic; the reference's counter and threshold semantics). This is
 * the rule as the monitor, metrics and alerts see it; its state machine is
 * an entry of a {@linkcode ReferenceRules} (rules/reference_rules.ts),
 * which a monitor shares between all its reference rules.
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
import { ReferenceRules } from "./reference_rules.ts";

/**
 * A rule's state machine. {@linkcode ReferenceRule.evaluate} runs once per sample,
 * after the sample is in the ring, and reports whether the rule toggled
 * (a monitor evaluates all its reference rules in one call instead).
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
  /** How urgent the rule's events are. */
  readonly severity: string;
  /** The configured one-line summary, or undefined. */
  readonly summary: string | undefined;
  // Where the state machine lives: a monitor's rules share one set, so
  // that it evaluates them all in one loop; a rule made alone has its own.
  readonly #rules: ReferenceRules;
  readonly #index: number;

  /**
   * Builds the rule for a monitor of the given history depth, its state
   * kept in `rules` (a set of its own when not given).
   */
  constructor(
    options: ReferenceRuleConfig,
    depth: number,
    rules: ReferenceRules = new ReferenceRules(1),
  ) {
    this.name = options.name;
    this.severity = options.severity ?? DEFAULT_SEVERITY;
    this.summary = options.summary;
    this.comparisonType = options.comparisonType;
    this.column = options.column;
    this.#rules = rules;
    this.#index = rules.add(options, depth);
    this.threshold = rules.threshold(this.#index);
    this.valueLo = rules.valueLo(this.#index);
    this.valueHi = rules.valueHi(this.#index);
  }

  /** Where this rule's state machine is in its {@linkcode ReferenceRules}. */
  get index(): number {
    return this.#index;
  }

  /** Whether the rule is currently in an event. */
  get active(): boolean {
    return this.#rules.active(this.#index);
  }

  /**
   * Whether the rule is counting matching samples towards its hysteresis
   * threshold and not yet active (only `gt` and `lt` ever wait: the others
   * start on their first match).
   */
  get pending(): boolean {
    return this.#rules.pending(this.#index);
  }

  /** Times the rule has become active since start. */
  get activations(): number {
    return this.#rules.activations(this.#index);
  }

  /**
   * Over the samples of the current or last event, start and end included:
   * the highest column value (`gt`), the lowest (`lt`), the highest or
   * lowest rise over the depth (`dt_gt`, `dt_lt`), or the largest
   * one-sample rise (`inc_gt`). As a float: exact below 2^53. NaN before
   * the first event.
   */
  get peak(): number {
    return this.#rules.peak(this.#index);
  }

  /**
   * Evaluates the newest record of `ring`. Returns true when the rule
   * changed state on this sample (check {@linkcode active} for which way).
   * A monitor evaluates its rules' set in one call instead.
   */
  evaluate(ring: SampleRing): boolean {
    return this.#rules.evaluateOne(ring, this.#index);
  }
}
