/**
 * The signal a rule tested, computed again from the rows of its traceback
 * window: the column beside the raw counters that says, row by row, what
 * the rule compared with its threshold. The rule comes from the log's
 * header; the definitions are the engine's (docs/spec/reference-semantics.md
 * §3 for the reference's types, docs/spec/signal-rules.md §1-2 for signal
 * rules), so on the rows of an event the column reads as the engine's
 * `<<Peak>>` line does.
 *
 * What the rows cannot tell is unknown, never guessed: a rise that reaches
 * back before the first row of a history dump, a window that spans samples
 * the source lost (`<<Gap>> ... Dropped samples`, for signal rules) or
 * rows the agent did not write (`<<Gap>> ... Lost rows`, for every rule).
 *
 * @module
 */

import { formatDuration } from "../base/units.ts";
import { E9, formatDecimal, increaseOf } from "./decimal.ts";
import type { ReviewEvent } from "./event.ts";
import type { GapMarker } from "./markers.ts";
import { clockDeltaNs, type TimeFormat } from "./reference_time.ts";

/**
 * One row's signal: exact decimal text for what is a u64 (a value, a rise,
 * an increase), a number for a rate (per second) or a ratio (a fraction),
 * null where it is unknown.
 */
export type SignalCell = string | number | null;

// What the column computes.
const NONE = -1; // the header does not define the rule: every row unknown
const VALUE = 0; // gt, lt, value
const RISE = 1; // dt_gt, dt_lt over H records, inc_gt over 1
const INCREASE = 2; // increase: since the previous sample, unknown after a loss
const RATE = 3;
const RATIO = 4;

/**
 * Rows a rate's window may reach back when the header gives no depth:
 * twice the most rows a history dump holds.
 */
const NO_DEPTH_RING = 2 * 65536;

/** Rows kept at first; the history grows by doubling up to what it needs. */
const FIRST_SIZE = 64;

/** What a rule's signal column needs from its event. */
export type SignalRule = Pick<
  ReviewEvent,
  "kind" | "signal" | "depth" | "column" | "timeFormat"
>;

/**
 * The signal column of one event's traceback: feed it the window's rows
 * in order (and its history dumps' column names, and its gaps); it gives
 * each row's signal.
 *
 * @example A rise over depth 2, as a `dt_gt` rule with depth 2 tests it
 * ```ts
 * import assert from "node:assert/strict";
 * import { SignalColumn } from "./signal_column.ts";
 *
 * const column = new SignalColumn({ kind: "dt_gt", depth: 2, column: "ecn", timeFormat: "ns" });
 * assert.equal(column.heading, "ecn rise/2 samples");
 * column.columns(["timestamp", "ecn"]);
 * const row = new Float64Array(4);
 * const cells = [10, 20, 300, 600].map((ecn, i) => {
 *   row.set([1795272600, i * 100_000, 0, ecn]); // split form: hi, lo per field
 *   return column.next(row, 1795272600, i * 100_000);
 * });
 * assert.deepEqual(cells, [null, null, "290", "580"]);
 * ```
 */
export class SignalColumn {
  /** The column's heading: what it is, and per what (`ecn rate/1ms (/s)`). */
  readonly heading: string;
  readonly #kind: number;
  readonly #format: TimeFormat;
  readonly #name: string | undefined;
  readonly #denominatorName: string | undefined;
  // Records back a rise compares with; the window of a rate or ratio, ns.
  readonly #back: number;
  readonly #windowNs: number;
  // Most rows back a window's start may be: the engine's ring, i included.
  readonly #ring: number;
  // Whether a loss of samples (not only of rows) makes the signal unknown.
  readonly #lossCounts: boolean;

  // Field indexes of the column and the denominator in the rows; -1: absent.
  #col = -1;
  #den = -1;
  // Rows are numbered from the first of the window; `#first` is the first
  // of the current dump, `#since` the first a window may start on (a clock
  // that went back restarts windows, as the engine restarts them).
  #count = 0;
  #first = 0;
  #since = 0;
  // The newest row that follows a gap; the window start j of the last row.
  #gapAt = -1;
  #j = -1;
  #pendingGap = false;
  // The rows kept, a ring indexed by row number & #mask: time, value,
  // the running sum of increases (resets as 0), and the same of the
  // denominator; all in the split form of decimal.ts.
  #mask = FIRST_SIZE - 1;
  #sec = new Float64Array(FIRST_SIZE);
  #ns = new Float64Array(FIRST_SIZE);
  #vHi = new Float64Array(FIRST_SIZE);
  #vLo = new Float64Array(FIRST_SIZE);
  #sHi = new Float64Array(FIRST_SIZE);
  #sLo = new Float64Array(FIRST_SIZE);
  #bHi = new Float64Array(FIRST_SIZE);
  #bLo = new Float64Array(FIRST_SIZE);
  #tHi = new Float64Array(FIRST_SIZE);
  #tLo = new Float64Array(FIRST_SIZE);
  readonly #d = new Float64Array(2);

  /** The column of `rule`, as its header defines it. */
  constructor(rule: SignalRule) {
    this.#format = rule.timeFormat;
    this.#name = rule.column;
    const col = rule.column ?? "?";
    const s = rule.signal;
    const depth = rule.depth;
    let kind = NONE;
    let heading = "rule signal (not in the header)";
    let back = 0;
    if (s !== undefined) {
      const over = compactDuration(s.windowNs);
      if (s.signal === "value") {
        kind = VALUE;
        heading = `${col} value`;
      } else if (s.signal === "increase") {
        kind = INCREASE;
        heading = `${col} increase/sample`;
      } else if (s.signal === "rate") {
        kind = RATE;
        heading = `${col} rate/${over} (/s)`;
      } else if (s.signal === "ratio") {
        const den = s.denominator;
        this.#denominatorName = den;
        kind = den === undefined ? NONE : RATIO;
        heading = den === undefined
          ? `${col} ratio/${over} (its denominator is not in the header)`
          : `${col}/${den} ratio/${over}`;
      }
    } else if (rule.kind === "gt" || rule.kind === "lt") {
      kind = VALUE;
      heading = `${col} value`;
    } else if (rule.kind === "inc_gt") {
      kind = RISE;
      back = 1;
      heading = `${col} rise/sample`;
    } else if (rule.kind === "dt_gt" || rule.kind === "dt_lt") {
      kind = depth === undefined ? NONE : RISE;
      back = depth ?? 0;
      heading = depth === undefined
        ? `${col} rise (the history depth is not in the header)`
        : `${col} rise/${depth} sample${depth === 1 ? "" : "s"}`;
    }
    if (rule.column === undefined) kind = NONE;
    this.#kind = kind;
    this.heading = heading;
    this.#back = back;
    this.#windowNs = s?.windowNs ?? 0;
    this.#ring = depth === undefined ? NO_DEPTH_RING : 2 * depth;
    this.#lossCounts = s !== undefined;
  }

  /**
   * The column names of the rows that follow: the window's, then each
   * history dump's. A dump starts the history over (the agent restarted).
   */
  columns(names: readonly string[]): void {
    this.#col = this.#name === undefined ? -1 : names.indexOf(this.#name);
    this.#den = this.#denominatorName === undefined
      ? -1
      : names.indexOf(this.#denominatorName);
    this.#first = this.#since = this.#count;
    this.#gapAt = this.#j = -1;
    this.#pendingGap = false;
  }

  /** A `<<Gap>>` line: samples or rows were lost before the next row. */
  gap(marker: GapMarker): void {
    if (marker.kind === "lost" || this.#lossCounts) this.#pendingGap = true;
  }

  /**
   * The next row (`fields`: the timestamp and the values, split form),
   * whose time decodes to `sec` + `ns`; returns its signal.
   */
  next(fields: Float64Array, sec: number, ns: number): SignalCell {
    const kind = this.#kind;
    const c = this.#col;
    if (kind === NONE || c < 1 || (kind === RATIO && this.#den < 1)) {
      this.#count++;
      this.#pendingGap = false;
      return null;
    }
    const i = this.#count++;
    if (this.#pendingGap) {
      this.#gapAt = i;
      this.#pendingGap = false;
    }
    const vHi = fields[2 * c];
    const vLo = fields[2 * c + 1];
    if (kind === VALUE) return formatDecimal(vHi, vLo);
    // The oldest row still needed: a rise's base, a window's start.
    const oldest = kind === RISE
      ? i - this.#back
      : kind === INCREASE
      ? i - 1
      : Math.max(this.#j, this.#since, i - this.#ring + 1);
    this.#keep(Math.max(oldest, this.#first), i);
    const m = this.#mask;
    const k = i & m;
    this.#sec[k] = sec;
    this.#ns[k] = ns;
    this.#vHi[k] = vHi;
    this.#vLo[k] = vLo;
    const d = this.#d;
    if (kind === RISE || kind === INCREASE) {
      const base = i - (kind === RISE ? this.#back : 1);
      // The rise needs its base among the rows, and no rows missing
      // between (nor, for a signal rule, samples).
      if (base < this.#first || this.#gapAt > base) return null;
      const b = base & m;
      const increase = increaseOf(d, vHi, vLo, this.#vHi[b], this.#vLo[b]);
      if (kind === INCREASE && !increase) return null; // a reset
      return formatDecimal(d[0], d[1]);
    }
    // Rate and ratio: running sums of the increases, a reset counting 0.
    const ratio = kind === RATIO;
    if (ratio) {
      this.#bHi[k] = fields[2 * this.#den];
      this.#bLo[k] = fields[2 * this.#den + 1];
    }
    if (i === this.#first) {
      this.#sHi[k] =
        this.#sLo[k] =
        this.#tHi[k] =
        this.#tLo[k] =
          0;
    } else {
      const p = (i - 1) & m;
      // A clock that went back: windows start again from this row.
      if (clockDeltaNs(this.#format, sec, ns, this.#sec[p], this.#ns[p]) < 0) {
        this.#since = i;
      }
      sumInto(d, this.#sHi, this.#sLo, k, p, this.#vHi, this.#vLo);
      if (ratio) sumInto(d, this.#tHi, this.#tLo, k, p, this.#bHi, this.#bLo);
    }
    // j: the newest row at least the window before this one, among the
    // rows the engine's ring held with it (docs/spec/signal-rules.md §1).
    let j = Math.max(this.#j, this.#since, i - this.#ring + 1);
    const w = this.#windowNs;
    while (j + 1 < i && this.#age(sec, ns, j + 1) >= w) j++;
    this.#j = j;
    if (j >= i) return null;
    const age = this.#age(sec, ns, j);
    // No such row, or the window spans a loss (§2).
    if (age < w || this.#gapAt > j) return null;
    const jk = j & m;
    const sum = difference(
      this.#sHi[k],
      this.#sLo[k],
      this.#sHi[jk],
      this.#sLo[jk],
    );
    if (!ratio) return sum * 1e9 / age;
    const below = difference(
      this.#tHi[k],
      this.#tLo[k],
      this.#tHi[jk],
      this.#tLo[jk],
    );
    return below === 0 ? null : sum / below;
  }

  /** ns from row `j` to the time `sec` + `ns`, on the rows' clock. */
  #age(sec: number, ns: number, j: number): number {
    const jk = j & this.#mask;
    return clockDeltaNs(this.#format, sec, ns, this.#sec[jk], this.#ns[jk]);
  }

  /** Makes room for rows `oldest` to `newest`, keeping those before newest. */
  #keep(oldest: number, newest: number): void {
    const size = this.#mask + 1;
    const need = newest - oldest + 1;
    if (need <= size) return;
    let grown = size;
    while (grown < need) grown *= 2;
    const mask = grown - 1;
    const arrays = [
      this.#sec,
      this.#ns,
      this.#vHi,
      this.#vLo,
      this.#sHi,
      this.#sLo,
      this.#bHi,
      this.#bLo,
      this.#tHi,
      this.#tLo,
    ].map((old) => {
      const next = new Float64Array(grown);
      for (let r = oldest; r < newest; r++) {
        next[r & mask] = old[r & this.#mask];
      }
      return next;
    });
    [
      this.#sec,
      this.#ns,
      this.#vHi,
      this.#vLo,
      this.#sHi,
      this.#sLo,
      this.#bHi,
      this.#bLo,
      this.#tHi,
      this.#tLo,
    ] = arrays;
    this.#mask = mask;
  }
}

/**
 * The running sum at slot `k` of `sHi`/`sLo`: the one at `p` (the row
 * before) plus the increase from `p`'s value to `k`'s (of `vHi`/`vLo`),
 * or nothing for a reset. `d`: scratch.
 */
function sumInto(
  d: Float64Array,
  sHi: Float64Array,
  sLo: Float64Array,
  k: number,
  p: number,
  vHi: Float64Array,
  vLo: Float64Array,
): void {
  const increase = increaseOf(d, vHi[k], vLo[k], vHi[p], vLo[p]);
  let lo = sLo[p] + (increase ? d[1] : 0);
  let hi = sHi[p] + (increase ? d[0] : 0);
  if (lo >= E9) {
    lo -= E9;
    hi += 1;
  }
  sHi[k] = hi;
  sLo[k] = lo;
}

/**
 * `a - b` of two running sums (split form, `a` >= `b`) as a number: one
 * rounding, of the exact difference, as the engine rounds its sums.
 */
function difference(
  aHi: number,
  aLo: number,
  bHi: number,
  bLo: number,
): number {
  let hi = aHi - bHi;
  let lo = aLo - bLo;
  if (lo < 0) {
    lo += E9;
    hi -= 1;
  }
  return hi * E9 + lo;
}

/** A window as a heading writes it: `1ms`, `500µs`, `1.5s`. */
function compactDuration(ns: number): string {
  return formatDuration(ns / 1e9, { exact: true }).replace(" ", "");
}
