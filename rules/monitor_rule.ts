/**
 * What a monitor needs of a rule, whichever kind it is: the reference
 * application's five types ({@linkcode ReferenceRule}) and the rules in
 * operators' terms ({@linkcode SignalRule}) are evaluated at the same point
 * of the per-sample order of work and reported alike.
 *
 * @module
 */

import { isReferenceRule, type RuleConfig } from "../config/types.ts";
import type { SampleRing } from "./ring.ts";
import { ReferenceRule } from "./reference_rule.ts";
import { SignalRule } from "./signal_rule.ts";

/** One rule's state machine as the monitor, metrics and alerts see it. */
export interface MonitorRule {
  /** Rule name as configured. */
  readonly name: string;
  /** The column the rule reads (for a ratio, its numerator). */
  readonly column: number;
  /** How urgent its events are (`warning` when the configuration says nothing). */
  readonly severity: string;
  /** The configured one-line summary, or undefined. */
  readonly summary: string | undefined;
  /** Whether the rule is in an event. */
  readonly active: boolean;
  /**
   * Whether the rule's raise condition holds on the newest sample while
   * the rule is not yet active (its `for`, M of N or hysteresis not met).
   */
  readonly pending: boolean;
  /** Times the rule has become active since start. */
  readonly activations: number;
  /**
   * The peak of the current event if active, else of the last event: the
   * signal's maximum for rules that fire high, its minimum for rules that
   * fire low (see {@linkcode ReferenceRule.peak} and
   * {@linkcode SignalRule.peak}). NaN before the first event, or when no
   * sample of the event had a known signal.
   */
  readonly peak: number;
  /**
   * Evaluates the newest record of `ring` (already appended). Returns
   * true when the rule changed state on this sample; {@linkcode active}
   * says which way. Allocates nothing.
   */
  evaluate(ring: SampleRing): boolean;
}

/**
 * The state machine for one configured rule in a monitor of the given
 * history depth.
 *
 * @example Both kinds behind one interface
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRule } from "./monitor_rule.ts";
 *
 * const reference = createRule({ name: "hot", column: 0, comparisonType: "gt", comparisonValue: 85n }, 4);
 * const signal = createRule({
 *   name: "hot now", signal: "value", column: 0, windowNs: 0, direction: "above",
 *   threshold: 85n, clear: 80n, forNs: 0, keepFiringForNs: 0, severity: "critical",
 * }, 4);
 * assert.deepEqual([reference.severity, signal.severity], ["warning", "critical"]);
 * assert.equal(signal.active, false);
 * ```
 */
export function createRule(config: RuleConfig, depth: number): MonitorRule {
  return isReferenceRule(config)
    ? new ReferenceRule(config, depth)
    : new SignalRule(config, depth);
}
