/**
 * Shared helpers for the rule-engine tests: u64 <-> (lo, hi) halves,
 * writing records into a ring, driving a single rule (either kind) over a
 * trace, and an EventSink that records what a monitor writes.
 *
 * @module
 */

import type { ComparisonType, SignalRuleConfig } from "../config/types.ts";
import type { EventSink } from "./event_sink.ts";
import { SampleRing } from "./ring.ts";
import { ReferenceRule } from "./reference_rule.ts";
import { SignalRule } from "./signal_rule.ts";

/** 2^64, for writing wrapped values as `M - k`. */
export const M = 1n << 64n;
/** 2^53, where a float stops being exact. */
export const P53 = 1n << 53n;

/** Splits a u64 into its (lo, hi) uint32 halves. */
export function split(v: bigint): [number, number] {
  if (v < 0n || v >= M) throw new RangeError(`not a u64: ${v}`);
  return [Number(v & 0xffffffffn), Number(v >> 32n)];
}

/** Joins the (lo, hi) halves at `words[at]`, `words[at + 1]`. */
export function join(words: Uint32Array, at: number): bigint {
  return (BigInt(words[at + 1]) << 32n) | BigInt(words[at]);
}

/** Writes a record (timestamp then one value per column) at word `at`. */
export function writeRecord(
  words: Uint32Array,
  at: number,
  ts: bigint,
  values: readonly bigint[],
): void {
  const [tLo, tHi] = split(ts);
  words[at] = tLo;
  words[at + 1] = tHi;
  for (let col = 0; col < values.length; col++) {
    const [lo, hi] = split(values[col]);
    words[at + 2 + 2 * col] = lo;
    words[at + 2 + 2 * col + 1] = hi;
  }
}

/** Reads column `col` of the record at word `at`. */
export function readValue(words: Uint32Array, at: number, col: number): bigint {
  return join(words, at + 2 + 2 * col);
}

/** What one rule did over a trace. */
export interface RuleRun {
  /** Sample indices at which `evaluate` reported a state change. */
  toggles: number[];
  /** Active state after each sample: `#` active, `.` inactive. */
  states: string;
}

/**
 * Feeds `trace` to one rule built for history depth `depth`, through a ring
 * of capacity `2 * depth` (as a monitor builds it). The rule reads column 1
 * of 3; columns 0 and 2 carry alternating 0 / 2^64-1 noise so a rule reading
 * the wrong column would misbehave.
 */
export function runRule(
  type: ComparisonType,
  value: bigint,
  depth: number,
  trace: readonly bigint[],
  ring: SampleRing = new SampleRing(3, 2 * depth),
  rule: ReferenceRule = new ReferenceRule(
    { name: "r", column: 1, comparisonType: type, comparisonValue: value },
    depth,
  ),
): RuleRun {
  const toggles: number[] = [];
  let states = "";
  trace.forEach((v, i) => {
    const odd = i % 2 === 1;
    writeRecord(ring.words, ring.claim(), BigInt(i), [
      odd ? M - 1n : 0n,
      v,
      odd ? 0n : M - 1n,
    ]);
    if (rule.evaluate(ring)) toggles.push(i);
    states += rule.active ? "#" : ".";
  });
  return { toggles, states };
}

/** What one signal rule did over a trace of records. */
export interface SignalRun {
  /** Sample indices at which `evaluate` reported a start or an end. */
  changes: number[];
  /**
   * The rule after each sample: `#` active, `+` pending (raise holds, not
   * yet started), `.` neither.
   */
  states: string;
  /** The rule's `peak` right after each change, in order. */
  peaks: number[];
}

/**
 * Feeds `records` (each `[timestamp, column 0, column 1, ...]`) to a
 * {@linkcode SignalRule} built from `config` for history depth `depth`,
 * through a ring of capacity `2 * depth`, as a monitor builds it.
 * `lostBefore` maps a record's index to the samples the source lost just
 * before it.
 */
export function runSignalRule(
  config: SignalRuleConfig,
  depth: number,
  records: readonly (readonly bigint[])[],
  rule: SignalRule = new SignalRule(config, depth),
  lostBefore: Readonly<Record<number, number>> = {},
): SignalRun {
  const columns = Math.max(1, ...records.map((r) => r.length - 1));
  const ring = new SampleRing(columns, 2 * depth);
  const changes: number[] = [];
  const peaks: number[] = [];
  let states = "";
  records.forEach(([ts, ...values], i) => {
    ring.loss(lostBefore[i] ?? 0);
    writeRecord(ring.words, ring.claim(), ts, values);
    if (rule.evaluate(ring)) {
      changes.push(i);
      peaks.push(rule.peak);
    }
    states += rule.active ? "#" : rule.pending ? "+" : ".";
  });
  return { changes, states, peaks };
}

/**
 * An EventSink that records each call as a line: `names`, `row <ts>` (or
 * `row <ts> <v0> <v1> ...` with `withValues`), `start <rule>`, `end <rule>`,
 * `gap <n>`, where `<rule>` is the rule's name from `ruleNames`.
 */
export class RecordingSink implements EventSink {
  readonly entries: string[] = [];
  /** Wall times passed to eventStart / eventEnd. */
  readonly times: number[] = [];
  /** Sample times (Unix ms) passed to gap. */
  readonly gapTimes: number[] = [];
  /** Peaks passed to eventEnd. */
  readonly peaks: number[] = [];
  /** [fromMs, toMs] passed to blindPeriod. */
  readonly blindSpans: [number, number][] = [];

  constructor(
    readonly ruleNames: readonly string[],
    readonly columns = 0,
    readonly withValues = false,
  ) {}

  columnNames(): void {
    this.entries.push("names");
  }

  row(words: Uint32Array, at: number): void {
    let line = `row ${join(words, at)}`;
    if (this.withValues) {
      for (let col = 0; col < this.columns; col++) {
        line += ` ${readValue(words, at, col)}`;
      }
    }
    this.entries.push(line);
  }

  eventStart(rule: number, unixMs: number): void {
    this.entries.push(`start ${this.ruleNames[rule]}`);
    this.times.push(unixMs);
  }

  eventEnd(rule: number, unixMs: number, peak: number): void {
    this.entries.push(`end ${this.ruleNames[rule]}`);
    this.times.push(unixMs);
    this.peaks.push(peak);
  }

  peak(rule: number, peak: number): void {
    this.entries.push(`peak ${this.ruleNames[rule]} ${peak}`);
  }

  gap(dropped: number, unixMs: number): void {
    this.entries.push(`gap ${dropped}`);
    this.gapTimes.push(unixMs);
  }

  blindPeriod(
    dropped: number,
    fromMs: number,
    toMs: number,
    stopped: boolean,
  ): void {
    this.entries.push(`blind ${dropped}${stopped ? " stopped" : ""}`);
    this.blindSpans.push([fromMs, toMs]);
  }
}
