/**
 * A slice of an event's traceback window, `--from` and `--to`: the rows
 * an operator wants out of the tens of thousands a long event holds. A
 * bound is a time, as `--since` takes one (ISO-8601 or Unix seconds,
 * naming as much time as it is written to), or an offset from the event's
 * start sample, the traceback's `offset_s` column: `+1.5s`, `-200ms`,
 * `+0.000300` (seconds, as that column prints them).
 *
 * @module
 */

import { parseTimePoint } from "../base/time_point.ts";
import { type Instant, instantOfNs } from "../base/units.ts";
import { parseDuration } from "../config/durations.ts";
import { quoteText } from "../config/errors.ts";
import {
  clockDeltaNs,
  isWallClock,
  type TimeFormat,
} from "./reference_time.ts";

/** One end of a slice, as the operator wrote it and as it reads. */
export type SliceBound =
  | {
    /** A time: from `ns` on, naming `spanNs` of time (a second, a day...). */
    readonly kind: "time";
    readonly text: string;
    /** ns since the Unix epoch. */
    readonly ns: bigint;
    readonly spanNs: bigint;
  }
  | {
    /** An offset from the event's start sample, exact to the ns. */
    readonly kind: "offset";
    readonly text: string;
    /** ns after (or before, negative) the start sample. */
    readonly ns: number;
  };

/** `--from` and `--to`; either may be left out (the window's own end). */
export interface Slice {
  /** `--from`: rows at or after it. */
  readonly from?: SliceBound;
  /** `--to`: rows at or before it (a time: before the end of what it names). */
  readonly to?: SliceBound;
}

/** The largest offset taken: a rule's longest duration, 7 days. */
const MAX_OFFSET_NS = 7 * 86_400 * 1e9;

const SECONDS = /^(\d+)(?:\.(\d*))?$/;

/**
 * Reads `--from` or `--to` (`option`): an offset when `text` starts with
 * `+` or `-` (a duration with a unit, as rules write them, or seconds),
 * else a time as {@linkcode parseTimePoint} reads it. Throws a TypeError
 * or RangeError with a one-line message naming `option` and quoting
 * `text`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSliceBound } from "./slice.ts";
 *
 * assert.deepEqual(parseSliceBound("--from", "-1.5ms"), { kind: "offset", text: "-1.5ms", ns: -1_500_000 });
 * assert.deepEqual(parseSliceBound("--to", "+0.000300"), { kind: "offset", text: "+0.000300", ns: 300_000 });
 * assert.deepEqual(parseSliceBound("--to", "2026-11-21T14:50:01Z"), {
 *   kind: "time", text: "2026-11-21T14:50:01Z", ns: 1_795_272_601_000_000_000n, spanNs: 1_000_000_000n,
 * });
 * assert.throws(() => parseSliceBound("--from", "+5x"), /^RangeError: --from "\+5x": an offset has an unknown unit "x"/);
 * ```
 */
export function parseSliceBound(option: string, text: string): SliceBound {
  const value = text.trim();
  const sign = value[0];
  if (sign !== "+" && sign !== "-") {
    try {
      return { kind: "time", text, ...parseTimePoint(option, value) };
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      throw new TypeError(
        `${error.message}, or an offset from the event's start (+1.5s, -200ms)`,
      );
    }
  }
  const where = `${option} ${quoteText(text)}`;
  const rest = value.slice(1);
  let ns: number;
  const seconds = SECONDS.exec(rest);
  if (seconds !== null) {
    const fraction = seconds[2] ?? "";
    if (fraction.length > 9 && !/^0*$/.test(fraction.slice(9))) {
      throw new RangeError(`${where}: an offset is at most to the nanosecond`);
    }
    ns = Number(seconds[1]) * 1e9 +
      Number(fraction.slice(0, 9).padEnd(9, "0"));
  } else {
    const parsed = parseDuration(rest);
    if (!parsed.ok) {
      throw new RangeError(`${where}: an offset ${parsed.problem}`);
    }
    ns = parsed.value;
  }
  if (!(ns <= MAX_OFFSET_NS)) {
    throw new RangeError(`${where}: an offset is at most 7 days (+168h)`);
  }
  return { kind: "offset", text, ns: sign === "-" && ns !== 0 ? -ns : ns };
}

/**
 * Throws a RangeError `--to is before --from` when both bounds are of one
 * kind and leave nothing between them; a time and an offset are compared
 * only against an event (see {@linkcode RowSlice}).
 */
export function checkSlice(slice: Slice): void {
  const { from, to } = slice;
  if (from === undefined || to === undefined || from.kind !== to.kind) return;
  const empty = from.kind === "time" && to.kind === "time"
    ? to.ns + to.spanNs <= from.ns
    : (to.ns as number) < (from.ns as number);
  if (empty) throw new RangeError("--to is before --from");
}

/** The slice as the command line gave it: `--from +1s --to +2s`. */
export function sliceText(slice: Slice): string {
  return [
    slice.from === undefined ? "" : `--from ${slice.from.text}`,
    slice.to === undefined ? "" : `--to ${slice.to.text}`,
  ].filter((t) => t !== "").join(" ");
}

/**
 * A slice that cannot be cut from this event: it misses every row, or
 * asks for wall-clock times of rows that have none. The traceback prints
 * nothing; the review says the one-line message and exits 2.
 */
export class SliceError extends Error {
  /** `message`: one line, naming the options and the event. */
  constructor(message: string) {
    super(message);
    this.name = "SliceError";
  }
}

/** Where a row lies against a slice: before it, in it, after it. */
export type Place = -1 | 0 | 1;

/**
 * A slice applied to one event's rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSliceBound, RowSlice } from "./slice.ts";
 *
 * const start = { sec: 1795272601, ns: 0 };
 * const slice = new RowSlice(
 *   { from: parseSliceBound("--from", "-100us"), to: parseSliceBound("--to", "2026-11-21T14:50:01.0002") },
 *   { id: 1, timeFormat: "ns", origin: start },
 * );
 * assert.equal(slice.place(1795272600, 999_800_000), -1);
 * assert.equal(slice.place(1795272600, 999_900_000), 0);
 * assert.equal(slice.place(1795272601, 299_999), 0); // .0002 names 100 µs
 * assert.equal(slice.place(1795272601, 300_000), 1);
 * ```
 */
export class RowSlice {
  /** The slice as given. */
  readonly slice: Slice;
  readonly #format: TimeFormat;
  readonly #origin: Instant | null;
  readonly #fromAt: Instant | null;
  readonly #toAt: Instant | null;

  /**
   * The slice for the event numbered `id`, whose rows are timed by
   * `timeFormat` and whose start sample is at `origin` (null if the
   * window has none). Throws a {@linkcode SliceError} if a bound cannot
   * apply: a time for rows without a wall clock, an offset without a
   * start sample.
   */
  constructor(
    slice: Slice,
    event: {
      readonly id: number;
      readonly timeFormat: TimeFormat;
      readonly origin: Instant | null;
    },
  ) {
    this.slice = slice;
    this.#format = event.timeFormat;
    this.#origin = event.origin;
    for (
      const [option, bound] of [["--from", slice.from], [
        "--to",
        slice.to,
      ]] as const
    ) {
      if (bound === undefined) continue;
      if (bound.kind === "time" && !isWallClock(event.timeFormat)) {
        throw new SliceError(
          `${option} ${bound.text}: event ${event.id}'s rows are timed by a counter, not a wall clock; give an offset from its start instead (${option} +1.5s, ${option} -200ms)`,
        );
      }
      if (bound.kind === "offset" && event.origin === null) {
        throw new SliceError(
          `${option} ${bound.text}: event ${event.id} has no start sample among its rows to count an offset from; give a time instead`,
        );
      }
    }
    const from = slice.from;
    const to = slice.to;
    this.#fromAt = from?.kind === "time" ? instantOfNs(from.ns) : null;
    // A time keeps all the time it names: up to (not at) its end.
    this.#toAt = to?.kind === "time" ? instantOfNs(to.ns + to.spanNs) : null;
  }

  /** Where the row at `sec` + `ns` (decoded, on the rows' clock) lies. */
  place(sec: number, ns: number): Place {
    const { from, to } = this.slice;
    if (from !== undefined) {
      const before = this.#fromAt !== null
        ? earlier(sec, ns, this.#fromAt)
        : this.#offset(sec, ns) < from.ns;
      if (before) return -1;
    }
    if (to !== undefined) {
      const after = this.#toAt !== null
        ? !earlier(sec, ns, this.#toAt)
        : this.#offset(sec, ns) > to.ns;
      if (after) return 1;
    }
    return 0;
  }

  #offset(sec: number, ns: number): number {
    const o = this.#origin!;
    return clockDeltaNs(this.#format, sec, ns, o.sec, o.ns);
  }
}

function earlier(sec: number, ns: number, t: Instant): boolean {
  return sec < t.sec || (sec === t.sec && ns < t.ns);
}
