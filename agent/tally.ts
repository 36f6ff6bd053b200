/**
 * A running list of the events an agent run has seen, for the table the
 * CLI prints when it stops.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import type { RuleConfig } from "../config/types.ts";
import type { Monitor, TransitionListener } from "../rules/monitor.ts";
import { peakCell } from "../base/peak_text.ts";
import {
  formatCount,
  formatDuration,
  formatUtc,
  instantOfNs,
} from "../base/units.ts";
import { peakKindOf, peakUnitOf } from "../rules/peak_format.ts";

/** One event: a rule's activation and, once it happened, its end. */
export interface EventRecord {
  /** The monitor's name. */
  readonly monitor: string;
  /** The rule's name, as events.log writes it. */
  readonly rule: string;
  /** The rule's severity (`warning` unless configured). */
  readonly severity: string;
  /**
   * The start sample's timestamp, ns since the Unix epoch (exact): the
   * event's start in every view (review, the events API, the alerts).
   */
  readonly startNs: bigint;
  /** Sample count of the monitor when the event started. */
  readonly startSample: number;
  /** The end sample's timestamp; null while still active. */
  endNs: bigint | null;
  /** The monitor's sample count when it ended; null while still active. */
  endSample: number | null;
  /**
   * The event's peak, as the rule keeps it (its `peak`): read when the
   * event ends; while it is still open, the peak so far, read again each
   * time {@linkcode EventTally.events} is. NaN when no sample of the
   * event had a known signal.
   */
  peak: number;
  /** `min` for a rule that fires low (lt, dt_lt, `below`): its peak is its lowest. */
  readonly peakKind: "max" | "min";
  /**
   * `/s` for a `rate` rule, whose peak is per second; `%` for a `ratio`
   * rule, shown as a percentage as check-config shows its threshold;
   * empty otherwise.
   */
  readonly peakUnit: "" | "/s" | "%";
}

/** Events a tally keeps for the closing table. */
export const MAX_TALLIED_EVENTS = 1000;

/**
 * Collects events from monitors' transitions. Allocates per event, never
 * per sample.
 *
 * @example A monitor's rule starts and ends; the table shows the event
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Monitor } from "../rules/monitor.ts";
 * import { EventTally, formatEventTable } from "./tally.ts";
 *
 * // What the listener reads of the monitor that calls it: its rules, its
 * // sample count and the newest sample in its ring (the one that changed
 * // the rule), whose timestamp is the event's start or end.
 * const words = new Uint32Array(2);
 * const at = (ns: bigint) => {
 *   words[0] = Number(ns & 0xffffffffn);
 *   words[1] = Number(ns >> 32n);
 * };
 * const rule = { name: "ECN burst", severity: "critical", peak: 150 };
 * const ring = { offsetBack: () => 0 };
 * const nic = { name: "nic", rules: [rule], samples: 100, ring, words };
 * const tally = new EventTally([{
 *   name: "nic",
 *   rules: [{ name: "ECN burst", column: 0, comparisonType: "gt", comparisonValue: 100n }],
 * }]);
 * const t0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z, in ns
 * at(t0);
 * tally.listener(nic as unknown as Monitor, 0, true, Date.now());
 * rule.peak = 400; // open: the peak so far
 * assert.equal(tally.events[0].peak, 400);
 * nic.samples = 350;
 * rule.peak = 900;
 * at(t0 + 25_000_123n);
 * tally.listener(nic as unknown as Monitor, 0, false, Date.now());
 * rule.peak = 5; // a later event's: this one's stays
 * assert.deepEqual(tally.events, [{
 *   monitor: "nic", rule: "ECN burst", severity: "critical",
 *   startNs: t0, startSample: 100, endNs: t0 + 25_000_123n, endSample: 350,
 *   peak: 900, peakKind: "max", peakUnit: "",
 * }]);
 * const [header, row] = formatEventTable(tally.events).split("\n");
 * assert.match(header, /^MONITOR +RULE +START \(UTC\) +DURATION +SAMPLES +PEAK +SEVERITY$/);
 * assert.match(row, /^nic +ECN burst +2026-11-21 14:50:00\.000 +25 ms +250 +900 +critical$/);
 * ```
 */
export class EventTally {
  readonly #events: EventRecord[] = [];
  #earlier = 0;
  readonly #open = new Map<Monitor, (EventRecord | undefined)[]>();
  readonly #rules: Map<string, readonly RuleConfig[]>;

  /**
   * `monitors`: the configuration of every monitor whose listener this
   * is (its name and rules), for how each rule's peak reads.
   */
  constructor(
    monitors: readonly {
      readonly name: string;
      readonly rules: readonly RuleConfig[];
    }[],
  ) {
    this.#rules = new Map(monitors.map((m) => [m.name, m.rules]));
  }

  /**
   * The most recent events, in start order: at most
   * {@linkcode MAX_TALLIED_EVENTS}, so a rule that flaps for days cannot
   * grow the agent's memory (events.log has them all). Events still open
   * get their peak so far as this is read.
   */
  get events(): EventRecord[] {
    for (const [monitor, open] of this.#open) {
      for (let j = 0; j < open.length; j++) {
        const record = open[j];
        if (record !== undefined) record.peak = monitor.rules[j].peak;
      }
    }
    return this.#events;
  }

  /** Events started but no longer in {@linkcode events}. */
  get earlier(): number {
    return this.#earlier;
  }

  /** Pass to {@linkcode Monitor}'s constructor. */
  readonly listener: TransitionListener = (monitor, rule, active) => {
    let open = this.#open.get(monitor);
    if (!open) this.#open.set(monitor, open = []);
    const r = monitor.rules[rule];
    if (active) {
      const config = this.#rules.get(monitor.name)?.[rule];
      if (config === undefined) {
        throw new TypeError(
          `Cannot tally an event: monitor "${monitor.name}" has no rule ${rule} in the configuration the tally was given`,
        );
      }
      const record: EventRecord = {
        monitor: monitor.name,
        rule: r.name,
        severity: r.severity,
        startNs: sampleNs(monitor),
        startSample: monitor.samples,
        endNs: null,
        endSample: null,
        peak: r.peak,
        peakKind: peakKindOf(config),
        peakUnit: peakUnitOf(config),
      };
      open[rule] = record;
      const events = this.#events;
      events.push(record);
      if (events.length > MAX_TALLIED_EVENTS) {
        events.shift();
        this.#earlier++;
      }
    } else {
      const record = open[rule];
      if (!record) return;
      record.endNs = sampleNs(monitor);
      record.endSample = monitor.samples;
      record.peak = r.peak;
      open[rule] = undefined;
    }
  };
}

/** The timestamp of the sample the monitor just took, the one that changed a rule. */
function sampleNs(monitor: Monitor): bigint {
  const at = monitor.ring.offsetBack(0);
  const words = monitor.words;
  return (BigInt(words[at + 1]) << 32n) | BigInt(words[at]);
}

/**
 * A plain-text table of events: monitor, rule, start (UTC), duration,
 * samples, peak and the rule's severity; events still open show as "active", with
 * their peak so far. It goes to the terminal: terminal controls and bidi
 * overrides in the names (from a configuration file) are shown as
 * `\uXXXX`.
 *
 * @example A rule name that would clear the screen is shown, not obeyed
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatEventTable } from "./tally.ts";
 *
 * const table = formatEventTable([{
 *   monitor: "nic", rule: "ECN\x1b[2J", severity: "warning", startNs: 0n,
 *   startSample: 0, endNs: 1_000_000_000n, endSample: 10, peak: 7, peakKind: "max",
 *   peakUnit: "",
 * }]);
 * assert.ok(table.includes("ECN\\u001b[2J"));
 * assert.ok(!table.includes("\x1b"));
 * ```
 */
export function formatEventTable(
  events: readonly EventRecord[],
  earlier = 0,
): string {
  if (events.length === 0 && earlier === 0) return "No events recorded.\n";
  const rows = [[
    "MONITOR",
    "RULE",
    "START (UTC)",
    "DURATION",
    "SAMPLES",
    "PEAK",
    "SEVERITY",
  ]];
  for (const e of events) {
    rows.push([
      terminalSafe(e.monitor),
      terminalSafe(e.rule),
      formatUtc(instantOfNs(e.startNs)),
      e.endNs === null
        ? "active"
        : formatDuration(Number(e.endNs - e.startNs) / 1e9),
      // Counts as review's SAMPLES column writes them ("40,123").
      e.endSample === null ? "-" : formatCount(e.endSample - e.startSample),
      peakCell(e),
      // A token of [a-z0-9_] when loaded; a rule built in code may say anything.
      terminalSafe(e.severity),
    ]);
  }
  // A loop, not Math.max(...): a long run's rows would overflow the stack
  // as arguments.
  const widths = rows[0].map((_, c) => {
    let width = 0;
    for (const r of rows) width = Math.max(width, r[c].length);
    return width;
  });
  const note = earlier === 0
    ? ""
    : `${
      formatCount(earlier)
    } earlier events not shown (all are in the events logs: dpu-traceback review)\n`;
  // Numbers (SAMPLES, PEAK) right-aligned, so their digits line up.
  const right = (c: number) => c === 4 || c === 5;
  return note +
    rows.map((r) =>
      r.map((cell, c) =>
        right(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])
      ).join("  ").trimEnd()
    ).join("\n") +
    "\n";
}
