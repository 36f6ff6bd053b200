/**
 * Blind periods: where a monitor's source lost samples, as the review
 * reads them back from events.log, each loss once.
 *
 * A loss is written once where it happens: on a `<<Gap>>` line of its
 * own with `From:` and `To:` (or `Stopped:`) when no event was active,
 * or as the mark before the next row during an event. A later history
 * dump marks it again before the same row (the ring remembers losses),
 * with the same count and that row's time, and without `From:`. So a
 * mark without a span is a loss already listed when a period of the same
 * monitor and count ended at its row's time; else (a log written before
 * blind periods had lines of their own, or whose earlier file was not
 * read) it is listed there, its start the row before it, if any.
 *
 * @module
 */

import { type Instant, instantMs } from "./event.ts";
import {
  type EventFilter,
  goesOnUntilSince,
  matchesNames,
  startsByUntil,
} from "./filters.ts";

/** One loss of samples by a monitor's source. */
export interface BlindPeriod {
  /** The monitor, as its events name it. */
  readonly monitor: string;
  /** Sample time of the last record before the loss; null if unknown. */
  readonly from: Instant | null;
  /**
   * Sample time of the first record after the loss, or with
   * {@linkcode stopped} the time the agent stopped, still blind; null if
   * unknown.
   */
  readonly to: Instant | null;
  /** The agent stopped before the source delivered again. */
  readonly stopped: boolean;
  /** Samples the source lost. */
  readonly dropped: number;
  /** The file that first records it. */
  readonly file: string;
  /** Its line number in that file, as review's notes give it. */
  readonly line: number;
}

/** How far back {@linkcode BlindPeriods.find} looks, at most. */
const MAX_LOOK_BACK = 1 << 16;

/**
 * The blind periods read so far, in log order.
 *
 * @example A loss marked again in a later dump is found, not added
 * ```ts
 * import assert from "node:assert/strict";
 * import { BlindPeriods } from "./blind_periods.ts";
 *
 * const periods = new BlindPeriods();
 * const to = { sec: 1795272600, ns: 250e6 };
 * periods.add({ monitor: "nic", from: null, to, stopped: false, dropped: 5, file: "events.log", line: 30 });
 * assert.equal(periods.find("nic", to, 5), 0);
 * assert.equal(periods.find("nic", to, 6), -1);
 * assert.equal(periods.find("gpu", to, 5), -1);
 * ```
 */
export class BlindPeriods {
  readonly #list: BlindPeriod[] = [];

  /** Periods read. */
  get length(): number {
    return this.#list.length;
  }

  /** Lists `period`; returns its index. */
  add(period: BlindPeriod): number {
    return this.#list.push(period) - 1;
  }

  /**
   * The index of the period of `monitor` that lost `dropped` samples and
   * ended at `to` (to the millisecond, either way: the log writes its
   * end truncated from a float); -1 if none. Looks back from the newest
   * only while periods end later: a dump marks losses of its own ring,
   * the latest ones.
   */
  find(monitor: string, to: Instant, dropped: number): number {
    const ms = millis(to);
    const list = this.#list;
    const stop = Math.max(0, list.length - MAX_LOOK_BACK);
    for (let i = list.length - 1; i >= stop; i--) {
      const p = list[i];
      if (p.to === null || p.monitor !== monitor) continue;
      const d = millis(p.to) - ms;
      if (Math.abs(d) <= 1 && p.dropped === dropped && !p.stopped) return i;
      if (d < -1) break;
    }
    return -1;
  }

  /** The periods by their end (unknown last), then monitor: a new array. */
  sorted(): BlindPeriod[] {
    const key = (p: BlindPeriod) => p.to === null ? Infinity : millis(p.to);
    return [...this.#list].sort((a, b) =>
      key(a) - key(b) || (a.monitor < b.monitor ? -1 : +(a.monitor > b.monitor))
    );
  }
}

function millis(t: Instant): number {
  return t.sec * 1000 + Math.floor(t.ns / 1e6);
}

/**
 * Whether `filter` keeps `period`: its monitor is one asked for, and it
 * overlaps the time asked for (the rule names do not apply to it).
 */
export function matchesBlindPeriod(
  period: BlindPeriod,
  filter: EventFilter,
): boolean {
  return matchesNames(period.monitor, "", { ...filter, rules: [] }) &&
    startsByUntil(period.from ?? period.to, filter) &&
    goesOnUntilSince(period.to, "ended", filter);
}

/** Seconds from the period's start to its end; null if either is unknown. */
export function blindSeconds(period: BlindPeriod): number | null {
  if (period.from === null || period.to === null) return null;
  return (instantMs(period.to) - instantMs(period.from)) / 1000;
}
