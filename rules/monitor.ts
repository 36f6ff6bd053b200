/**
 * A monitor: one source's ring, its rules and the sink its events go to,
 * doing the reference application's per-sample order of work.
 *
 * @module
 */

import type { SampleSink } from "./sample_sink.ts";
import type { EventSink } from "./event_sink.ts";
import { isReferenceRule, type RuleConfig } from "../config/types.ts";
import { SampleRing } from "./ring.ts";
import { toNumberU64 } from "../base/u64.ts";
import type { MonitorRule } from "./monitor_rule.ts";
import { ReferenceRule } from "./reference_rule.ts";
import { ReferenceRules } from "./reference_rules.ts";
import { SignalRule } from "./signal_rule.ts";

/**
 * Told of every rule transition (for summaries and metrics), after the
 * events log has its marker. Runs at transitions only, never per sample,
 * in configuration order, once every rule has been evaluated on the
 * sample.
 */
export type TransitionListener = (
  monitor: Monitor,
  rule: number,
  active: boolean,
  unixMs: number,
) => void;

/**
 * Sees every committed sample after the rules have, e.g. the metrics
 * aggregator. Called on the per-sample path: it must not allocate or wait.
 */
export interface SampleObserver {
  /** The record at word offset `at` of `words` (the ring's storage). */
  observe(words: Uint32Array, at: number): void;
}

/** Who else a monitor tells about its samples and transitions. */
export interface MonitorHooks {
  /** Told of every rule transition. */
  readonly onTransition?: TransitionListener;
  /** Told of every sample. */
  readonly observer?: SampleObserver;
  /**
   * Where the ring keeps a copy of its records for a reader on another
   * thread (`sharedRingBuffer(columns, 2 * depth)`, rules/shared_ring.ts):
   * the GPU monitor's, which a NIC event's page charts.
   */
  readonly sharedRing?: SharedArrayBuffer;
}

/** What a monitor is built from: see {@linkcode MonitorConfig}. */
export interface MonitorOptions {
  /** Monitor name, kept as {@linkcode Monitor.name} for listeners and metrics. */
  readonly name: string;
  /**
   * History depth in samples: how many samples in a row a rule needs to
   * toggle (its hysteresis). The ring, which the first event start dumps
   * to the log, holds twice this many records.
   */
  readonly depth: number;
  /**
   * One entry per value column (timestamp excluded). Only the count is
   * read: it sets the record layout, so any column descriptions will do.
   */
  readonly columns: readonly unknown[];
  /** Rules evaluated on every sample, in this order. */
  readonly rules: readonly RuleConfig[];
}

/**
 * Ring + rules + event sink for one source. Collectors write each sample
 * into {@linkcode words} at the offset {@linkcode claim} returns, then call
 * {@linkcode commit}; nothing in that path allocates or waits.
 *
 * @example Feed one sample
 * ```ts
 * import assert from "node:assert/strict";
 * import { Monitor } from "./monitor.ts";
 *
 * const lines: string[] = [];
 * const monitor = new Monitor(
 *   {
 *     name: "nic",
 *     depth: 1,
 *     columns: ["rx"],
 *     rules: [{ name: "rx > 5", column: 0, comparisonType: "gt", comparisonValue: 5n }],
 *   },
 *   {
 *     columnNames: () => lines.push("names"),
 *     row: (words, at) => lines.push(`row ${words[at + 2]}`),
 *     eventStart: (rule) => lines.push(`start ${rule}`),
 *     eventEnd: (rule) => lines.push(`end ${rule}`),
 *     gap: (dropped) => lines.push(`gap ${dropped}`),
 *   },
 * );
 * for (const rx of [3, 9, 8, 1]) {
 *   const at = monitor.claim();
 *   monitor.words[at + 2] = rx; // column 0, low half (timestamp left 0)
 *   monitor.commit();
 * }
 * // The first activation dumps the ring (3, 9), then rows follow until the end.
 * assert.deepEqual(lines, [
 *   "names", "row 3", "row 9", "start 0", "row 8", "row 1", "end 0",
 * ]);
 * assert.equal(monitor.samples, 4);
 * assert.equal(monitor.events, 1);
 * ```
 */
export class Monitor implements SampleSink {
  /** Monitor name from config. */
  readonly name: string;
  /** The sample ring: capacity is twice the history depth. */
  readonly ring: SampleRing;
  /** Rules in configuration order. */
  readonly rules: readonly MonitorRule[];
  /** The ring's storage, for collectors. */
  readonly words: Uint32Array;
  /** Value columns per sample. */
  readonly columns: number;
  readonly #sink: EventSink;
  // The rules by kind, each list of one class, so the per-sample loops
  // make the same call every time: the reference rules' state machines in
  // one set, evaluated in one call, and the signal rules. Beside each, the
  // rule's place in `rules`.
  readonly #reference: ReferenceRules;
  readonly #referenceAt: Int32Array;
  readonly #signal: readonly SignalRule[];
  readonly #signalAt: Int32Array;
  // Per rule in `rules`: 1 when it changed state on this sample.
  readonly #changed: Uint8Array;
  readonly #listener: TransitionListener | undefined;
  readonly #observer: SampleObserver | undefined;
  // Per rule: when it last started or ended (wall clock, for timestamps;
  // monotonic, for durations, so a clock step never makes time active go
  // backwards), and time spent active before its current activation (ms).
  readonly #changedAtMs: Float64Array;
  readonly #changedAtMono: Float64Array;
  readonly #activeMs: Float64Array;
  #activeRules = 0;
  #samples = 0;
  #droppedSamples = 0;
  #blindPeriods = 0;
  // The loss reported since the newest record, not yet told to the sink,
  // and that record's sample time (Unix ms; NaN: no record before it).
  #blindDropped = 0;
  #blindFromMs = NaN;
  #events = 0;

  /** Allocates the ring and the rules once. */
  constructor(
    options: MonitorOptions,
    sink: EventSink,
    hooks: MonitorHooks = {},
  ) {
    this.name = options.name;
    this.columns = options.columns.length;
    this.ring = new SampleRing(
      this.columns,
      2 * options.depth,
      hooks.sharedRing,
    );
    this.words = this.ring.words;
    const referenceCount = options.rules.filter(isReferenceRule).length;
    this.#reference = new ReferenceRules(referenceCount);
    this.#referenceAt = new Int32Array(referenceCount);
    const signal: SignalRule[] = [];
    const signalAt: number[] = [];
    this.rules = options.rules.map((config, i) => {
      if (isReferenceRule(config)) {
        const rule = new ReferenceRule(config, options.depth, this.#reference);
        this.#referenceAt[rule.index] = i;
        return rule;
      }
      const rule = new SignalRule(config, options.depth);
      signal.push(rule);
      signalAt.push(i);
      return rule;
    });
    this.#signal = signal;
    this.#signalAt = Int32Array.from(signalAt);
    this.#changed = new Uint8Array(this.rules.length);
    this.#changedAtMs = new Float64Array(this.rules.length).fill(NaN);
    this.#changedAtMono = new Float64Array(this.rules.length);
    this.#activeMs = new Float64Array(this.rules.length);
    this.#sink = sink;
    this.#listener = hooks.onTransition;
    this.#observer = hooks.observer;
  }

  /** Samples committed since start. */
  get samples(): number {
    return this.#samples;
  }

  /** Samples the source reported lost (gaps) since start. */
  get droppedSamples(): number {
    return this.#droppedSamples;
  }

  /**
   * Separate losses the source reported since start: gaps with a
   * committed sample between them (several reports before the next sample
   * are one blind period).
   */
  get blindPeriods(): number {
    return this.#blindPeriods;
  }

  /** Events started since start. */
  get events(): number {
    return this.#events;
  }

  /** Rules active now. */
  get activeRules(): number {
    return this.#activeRules;
  }

  /** Unix ms of rule `i`'s last start or end; NaN if it never started. */
  ruleChangedAtMs(i: number): number {
    return this.#changedAtMs[i];
  }

  /**
   * Milliseconds rule `i` has been active in all, counted up to `nowMono`
   * (a `performance.now()` reading; default now). Never decreases.
   */
  ruleActiveMs(i: number, nowMono: number = performance.now()): number {
    const open = this.rules[i].active ? nowMono - this.#changedAtMono[i] : 0;
    return this.#activeMs[i] + Math.max(0, open);
  }

  /** Reserves the next record in the ring; see {@linkcode SampleSink.claim}. */
  claim(): number {
    return this.ring.claim();
  }

  /**
   * Processes the claimed record in the reference order: log it if an event
   * was already active, then evaluate every rule; the first activation dumps
   * the whole ring (quirks included, see docs/spec/reference-semantics.md §4).
   * Then the observer, if any, sees the record.
   *
   * Every rule is evaluated before any change is reported, and changes
   * are then reported in configuration order: the log and the sink see
   * exactly what evaluating and reporting rule by rule gives (a rule's
   * evaluation reads only the ring and its own state), and the common
   * sample, where nothing changes, is two tight loops.
   */
  commit(): void {
    this.#samples++;
    const ring = this.ring;
    ring.publish();
    if (this.#blindDropped > 0) this.#resumed();
    if (this.#activeRules > 0) this.#row(0);
    const reference = this.#reference;
    let changes = 0;
    if (reference.size > 0) {
      changes = reference.evaluate(ring);
      for (let c = 0; c < changes; c++) {
        this.#changed[this.#referenceAt[reference.changes[c]]] = 1;
      }
    }
    const signal = this.#signal;
    for (let j = 0; j < signal.length; j++) {
      if (!signal[j].evaluate(ring)) continue;
      this.#changed[this.#signalAt[j]] = 1;
      changes++;
    }
    if (changes > 0) this.#report();
    this.#observer?.observe(this.words, ring.offsetBack(0));
  }

  /** Reports the rules flagged in #changed, in configuration order. */
  #report(): void {
    const ring = this.ring;
    const sink = this.#sink;
    const rules = this.rules;
    const changed = this.#changed;
    for (let i = 0; i < rules.length; i++) {
      if (changed[i] === 0) continue;
      changed[i] = 0;
      const rule = rules[i];
      if (rule.active) {
        this.#events++;
        if (++this.#activeRules === 1) {
          sink.columnNames();
          for (let back = ring.count - 1; back >= 0; back--) this.#row(back);
        }
        const now = Date.now();
        this.#changedAtMs[i] = now;
        this.#changedAtMono[i] = performance.now();
        sink.eventStart(i, now);
        this.#listener?.(this, i, true, now);
      } else {
        this.#activeRules--;
        const now = Date.now();
        const mono = performance.now();
        this.#activeMs[i] += Math.max(0, mono - this.#changedAtMono[i]);
        this.#changedAtMono[i] = mono;
        this.#changedAtMs[i] = now;
        sink.eventEnd(i, now, rule.peak);
        this.#listener?.(this, i, false, now);
      }
    }
  }

  /**
   * The source delivered again after a loss: with no event active, no
   * row will carry a gap mark for it, so the sink is told of the blind
   * period itself. An active event's row carries the mark (#row).
   */
  #resumed(): void {
    if (this.#activeRules === 0) {
      this.#sink.blindPeriod?.(
        this.#blindDropped,
        this.#blindFromMs,
        this.#recordMs(0),
        false,
      );
    }
    this.#blindDropped = 0;
  }

  /** Sample time (Unix ms) of the record `back` places before the newest. */
  #recordMs(back: number): number {
    const at = this.ring.offsetBack(back);
    return toNumberU64(this.words[at], this.words[at + 1]) / 1e6;
  }

  /** Writes the record `back` places before the newest, after a mark of
   * the samples lost just before it, if any. */
  #row(back: number): void {
    const ring = this.ring;
    const at = ring.offsetBack(back);
    const lost = ring.lostBefore(back);
    // The record's own time: a dump writes losses long past.
    if (lost > 0) this.#sink.gap(lost, this.#recordMs(back));
    this.#sink.row(this.words, at);
  }

  /**
   * Tells the event sink the peak so far of every rule still active, as the
   * agent stops: an event open at the end of the log then reads with the
   * same peak as the closing table shows for it.
   */
  writeOpenPeaks(): void {
    const rules = this.rules;
    for (let i = 0; i < rules.length; i++) {
      if (rules[i].active) this.#sink.peak?.(i, rules[i].peak);
    }
  }

  /**
   * Tells the event sink of a loss the source has not resumed from, as
   * the agent stops: no later sample will, and an operator reading the
   * log must see that the end was blind, not quiet.
   */
  writeOpenBlindPeriod(nowMs: number = Date.now()): void {
    if (this.#blindDropped === 0) return;
    this.#sink.blindPeriod?.(
      this.#blindDropped,
      this.#blindFromMs,
      nowMs,
      true,
    );
    this.#blindDropped = 0;
  }

  /** Whether the event sink keeps up; see {@linkcode SampleSink.ready}. */
  ready(): Promise<void> | undefined {
    return this.#sink.ready?.();
  }

  /**
   * Counts samples the source lost before the next record. The ring keeps
   * where they fell: signal rules read no signal across them, and the log
   * marks them before that record's row, in a history dump as well. The
   * loss itself is written once, when the next record comes (see
   * {@linkcode EventSink.blindPeriod}) or the agent stops.
   */
  gap(dropped: number): void {
    if (dropped <= 0) return;
    if (this.#blindDropped === 0) {
      this.#blindPeriods++;
      this.#blindFromMs = this.ring.count > 0 ? this.#recordMs(0) : NaN;
    }
    this.#blindDropped += dropped;
    this.#droppedSamples += dropped;
    this.ring.loss(dropped);
  }
}
