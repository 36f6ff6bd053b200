/**
 * A running list of the events an agent run has seen, for the table the
 * CLI prints when it stops.
 *
 * @module
 */

import { terminalSafe } from "../base/terminal_text.ts";
import type { Monitor, TransitionListener } from "../rules/monitor.ts";

/** One event: a rule's activation and, once it happened, its end. */
export interface EventRecord {
  /** The monitor's name. */
  readonly monitor: string;
  /** The rule's name, as events.log writes it. */
  readonly rule: string;
  /** Wall time the rule became active, Unix ms. */
  readonly startMs: number;
  /** Sample count of the monitor when the event started. */
  readonly startSample: number;
  /** Wall time it became inactive, Unix ms; null while still active. */
  endMs: number | null;
  /** The monitor's sample count when it ended; null while still active. */
  endSample: number | null;
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
 * // What the listener reads of the monitor that calls it.
 * const nic = { name: "nic", rules: [{ name: "ECN burst" }], samples: 100 };
 * const tally = new EventTally();
 * tally.listener(nic as unknown as Monitor, 0, true, Date.UTC(2026, 10, 21, 14, 50));
 * nic.samples = 350;
 * tally.listener(nic as unknown as Monitor, 0, false, Date.UTC(2026, 10, 21, 14, 50, 0, 25));
 * assert.deepEqual(tally.events, [{
 *   monitor: "nic", rule: "ECN burst",
 *   startMs: Date.UTC(2026, 10, 21, 14, 50), startSample: 100,
 *   endMs: Date.UTC(2026, 10, 21, 14, 50, 0, 25), endSample: 350,
 * }]);
 * const [header, row] = formatEventTable(tally.events).split("\n");
 * assert.match(header, /^MONITOR +RULE +START \(UTC\) +DURATION +SAMPLES$/);
 * assert.match(row, /^nic +ECN burst +2026-11-21 14:50:00\.000 +0\.025 s +250$/);
 * ```
 */
export class EventTally {
  /**
   * The most recent events, in start order: at most
   * {@linkcode MAX_TALLIED_EVENTS}, so a rule that flaps for days cannot
   * grow the agent's memory (events.log has them all).
   */
  readonly events: EventRecord[] = [];
  /** Events started but no longer in {@linkcode events}. */
  get earlier(): number {
    return this.#earlier;
  }
  #earlier = 0;
  readonly #open = new Map<Monitor, (EventRecord | undefined)[]>();

  /** Pass to {@linkcode Monitor}'s constructor. */
  readonly listener: TransitionListener = (monitor, rule, active, unixMs) => {
    let open = this.#open.get(monitor);
    if (!open) this.#open.set(monitor, open = []);
    if (active) {
      const record: EventRecord = {
        monitor: monitor.name,
        rule: monitor.rules[rule].name,
        startMs: unixMs,
        startSample: monitor.samples,
        endMs: null,
        endSample: null,
      };
      open[rule] = record;
      this.events.push(record);
      if (this.events.length > MAX_TALLIED_EVENTS) {
        this.events.shift();
        this.#earlier++;
      }
    } else {
      const record = open[rule];
      if (!record) return;
      record.endMs = unixMs;
      record.endSample = monitor.samples;
      open[rule] = undefined;
    }
  };
}

/**
 * A plain-text table of events: monitor, rule, start (UTC), duration and
 * samples; events still open show as "active". It goes to the terminal:
 * terminal controls and bidi overrides in the names (from a configuration
 * file) are shown as `\uXXXX`.
 *
 * @example A rule name that would clear the screen is shown, not obeyed
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatEventTable } from "./tally.ts";
 *
 * const table = formatEventTable([{
 *   monitor: "nic", rule: "ECN\x1b[2J", startMs: 0, startSample: 0,
 *   endMs: 1000, endSample: 10,
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
  const rows = [["MONITOR", "RULE", "START (UTC)", "DURATION", "SAMPLES"]];
  for (const e of events) {
    rows.push([
      terminalSafe(e.monitor),
      terminalSafe(e.rule),
      new Date(e.startMs).toISOString().replace("T", " ").slice(0, 23),
      e.endMs === null
        ? "active"
        : `${((e.endMs - e.startMs) / 1000).toFixed(3)} s`,
      e.endSample === null ? "-" : String(e.endSample - e.startSample),
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
    : `${earlier} earlier events not shown (all are in the events logs: dpu-traceback review)\n`;
  return note +
    rows.map((r) =>
      r.map((cell, c) => c === r.length - 1 ? cell : cell.padEnd(widths[c]))
        .join(
          "  ",
        )
    )
      .join("\n") +
    "\n";
}
