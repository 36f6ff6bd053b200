/**
 * Windowed aggregation of a monitor's samples: what the metrics endpoint
 * serves instead of the raw 10 kHz stream.
 *
 * The aggregator sees every sample once, as the monitor commits it, and
 * keeps running sums for the current window; when a window ends it finalizes
 * them into a preallocated snapshot. A scrape renders that snapshot, so it
 * costs the same however fast the source samples and never walks the ring.
 *
 * Time: timestamps are u64 ns since the Unix epoch. Window boundaries are
 * computed on the timestamp converted to a float, which near 2^60 ns (today)
 * is exact to 256 ns: a sample within that distance of a boundary may land
 * in the neighbouring window, harmless for windows of seconds. Intervals
 * between samples (the denominators of every rate) are exact: they are
 * subtracted on the u64 halves first.
 *
 * @module
 */

import { addU64, ltU64, subU64, toNumberU64 } from "../base/u64.ts";
import type { ColumnKind } from "../config/types.ts";

/** One aggregated column, in the record's column order. */
export interface AggregateColumn {
  /** Column name, for renderers; the aggregator does not use it. */
  readonly name: string;
  /** How the column is aggregated; see {@linkcode ColumnKind}. */
  readonly kind: ColumnKind;
}

/** What a {@linkcode WindowAggregator} is built from. */
export interface WindowAggregatorOptions {
  /** One entry per value column of the records, timestamp excluded. */
  readonly columns: readonly AggregateColumn[];
  /** Window length in nanoseconds; default {@linkcode DEFAULT_WINDOW_NS}. */
  readonly windowNs?: number;
}

/** Default window: 10 s, shorter than any usual scrape interval. */
export const DEFAULT_WINDOW_NS = 10_000_000_000;

/**
 * The aggregates of one completed window. Arrays have one entry per column;
 * an entry is NaN where it does not apply to the column's kind or the
 * window had nothing to compute it from. Owned by the aggregator and
 * reused: read it synchronously, never write to it.
 *
 * @example Render a counter's rates without touching the ring
 * ```ts
 * import assert from "node:assert/strict";
 * import { WindowAggregator } from "./aggregate.ts";
 *
 * const agg = new WindowAggregator({
 *   columns: [{ name: "rx_bytes", kind: "counter" }],
 *   windowNs: 1e9,
 * });
 * const render = () => {
 *   const w = agg.completed;
 *   return w.sequence === 0 ? [] : agg.columns.map((c, k) =>
 *     `rx_rate{column="${c.name}"} ${w.rate[k]}\nrx_rate_max{column="${c.name}"} ${w.rateMax[k]}`
 *   );
 * };
 * assert.deepEqual(render(), []); // no window has completed yet
 *
 * const record = new Uint32Array(4); // timestamp and rx_bytes, (lo, hi) each
 * for (let i = 0; i <= 10; i++) {
 *   record[0] = i * 100_000_000; // every 100 ms from t = 0
 *   record[2] = i * 500 + (i === 5 ? 400 : 0); // 5000/s, with a burst at 0.5 s
 *   agg.observe(record, 0);
 * }
 * // The sample at t = 1 s completed [0 s, 1 s): samples 0..9.
 * assert.deepEqual(render(), [
 *   'rx_rate{column="rx_bytes"} 5000\nrx_rate_max{column="rx_bytes"} 9000',
 * ]);
 * ```
 */
export interface WindowSnapshot {
  /** Completed windows so far, this one included; 0 before the first. */
  readonly sequence: number;
  /** Samples whose timestamps fell into the window. */
  readonly samples: number;
  /** Aligned window start, ns since the epoch (a multiple of the window length). */
  readonly startNs: number;
  /** Aligned window end (`startNs + windowNs`), also after a flush. */
  readonly endNs: number;
  /**
   * Nanoseconds the rates cover: from the baseline (the previous window's
   * last sample, else this window's first) to this window's last sample.
   * Longer than the window after a pause in sampling.
   */
  readonly spanNs: number;
  /** Counters: increase per second over {@linkcode spanNs}, resets excluded. */
  readonly rate: Float64Array;
  /** Counters: the smallest sample-to-sample rate (per second) in the window. */
  readonly rateMin: Float64Array;
  /** Counters: the largest sample-to-sample rate: the burst a scrape misses. */
  readonly rateMax: Float64Array;
  /** Counters: the unweighted mean of the sample-to-sample rates. */
  readonly rateMean: Float64Array;
  /** Counters: the increase over {@linkcode spanNs} (exact below 2^53). */
  readonly increase: Float64Array;
  /** Counters: resets (the value went backwards) seen in the window. */
  readonly resets: Float64Array;
  /** Counters: resets seen since the aggregator was created. */
  readonly resetsTotal: Float64Array;
  /** Every column: the last value in the window (nearest float above 2^53). */
  readonly last: Float64Array;
  /** Gauges: the smallest value in the window. */
  readonly min: Float64Array;
  /** Gauges: the largest value in the window. */
  readonly max: Float64Array;
  /** Gauges: the mean of the window's values. */
  readonly mean: Float64Array;
  /**
   * Every column: how often its value changes, seconds, as of this
   * window: the window's mean sample interval when its last
   * {@linkcode REFRESH_CHANGES} changes came on consecutive samples (it
   * moves every sample); else the median of its last 8 intervals between
   * changes, when at least 6 of them lie within 25 % of it (a counter a
   * driver refreshes on a timer of its own, every 2 s for some, where a
   * rule over a shorter window sees steps, not bursts). NaN until it has
   * changed often enough, and while its changes are irregular (traffic
   * that comes and goes says nothing of the refresh).
   */
  readonly refresh: Float64Array;
}

/** Changes of a column the refresh estimate looks at: the newest 8. */
export const REFRESH_CHANGES = 8;

type MutableSnapshot = {
  -readonly [K in keyof WindowSnapshot]: WindowSnapshot[K];
};

function emptySnapshot(columns: number): MutableSnapshot {
  const nan = () => new Float64Array(columns).fill(NaN);
  return {
    sequence: 0,
    samples: 0,
    startNs: NaN,
    endNs: NaN,
    spanNs: NaN,
    rate: nan(),
    rateMin: nan(),
    rateMax: nan(),
    rateMean: nan(),
    increase: nan(),
    resets: nan(),
    resetsTotal: nan(),
    last: nan(),
    min: nan(),
    max: nan(),
    mean: nan(),
    refresh: nan(),
  };
}

// A counter's delta at or above 2^63 means it went backwards (a reset), not
// that it wrapped: no device counter advances 2^63 between two samples.
const RESET_HI = 0x80000000;

// Slots of the float state, kept in a Float64Array so that updating them
// never boxes a double.
const START = 0; // aligned start of the current window
const END = 1; // START + window length
const SPAN = 2; // exact ns from the baseline to the newest sample

/**
 * Aggregates one monitor's samples into fixed, aligned time windows.
 *
 * Call {@linkcode observe} once per sample, in commit order; read
 * {@linkcode completed} to render. Per window and column:
 *
 * - counters: `rate` is the exact u64 increase (modulo 2^64, so a wrap past
 *   2^64 counts as the small step it is) divided by the time it took; the
 *   baseline is the previous window's last sample, so summing the windows'
 *   increases loses nothing between them. `rateMin`/`rateMax`/`rateMean`
 *   describe the sample-to-sample rates.
 * - gauges: `min`, `max`, `mean`.
 * - both: `last`.
 *
 * Decisions the numbers depend on:
 *
 * - A window completes when the first sample at or past its end arrives
 *   (or on {@linkcode flush}); the next window is the aligned one containing
 *   that sample. A pause over several windows therefore yields one
 *   completed window, the last one that had samples, and the first window
 *   after it has a rate averaged over the pause (see
 *   {@linkcode WindowSnapshot.spanNs}).
 * - A counter delta of 2^63 or more modulo 2^64 is a reset, not a wrap: it
 *   is counted in `resets` and that interval is left out of the rate's
 *   increase and time alike, since its true increase is unknown (assuming
 *   a restart from 0, as Prometheus does, would turn a glitch into a
 *   spike).
 * - A sample with the same timestamp as the previous one adds its increase
 *   but no sample-to-sample rate. A timestamp earlier than the previous
 *   one (the clock stepped back) completes the current window and starts
 *   afresh, without a baseline across the step.
 *
 * Nothing in {@linkcode observe} allocates, uses BigInt or throws.
 *
 * @example Two windows of one counter and one gauge
 * ```ts
 * import assert from "node:assert/strict";
 * import { WindowAggregator } from "./aggregate.ts";
 * import { SampleRing } from "../rules/ring.ts";
 *
 * const agg = new WindowAggregator({
 *   columns: [{ name: "rx_bytes", kind: "counter" }, { name: "temp", kind: "gauge" }],
 *   windowNs: 1e9,
 * });
 * const ring = new SampleRing(2, 8);
 * for (let i = 0; i <= 20; i++) {
 *   const at = ring.claim();
 *   ring.words[at] = i * 100_000_000; // every 100 ms from t = 0 (hi word 0)
 *   ring.words[at + 2] = i * 1000; // +1000 per sample: 10,000 per second
 *   ring.words[at + 4] = 40 + (i % 3);
 *   agg.observe(ring.words, at); // after the append, as Monitor.commit does
 * }
 * const w = agg.completed; // [1 s, 2 s): samples 10..19
 * assert.equal(w.sequence, 2);
 * assert.equal(w.rate[0], 10_000);
 * assert.equal(w.increase[0], 10_000); // from the baseline, sample 9
 * assert.equal(w.max[1], 42);
 * assert.ok(Number.isNaN(w.rate[1])); // not a counter
 * ```
 */
export class WindowAggregator {
  /** The columns, as given. */
  readonly columns: readonly AggregateColumn[];
  /** Window length in nanoseconds. */
  readonly windowNs: number;

  readonly #counter: Uint8Array; // 1 where the column is a counter
  readonly #t = new Float64Array(3); // START, END, SPAN
  // The newest sample: timestamp then every column, as (lo, hi) halves.
  readonly #prev: Uint32Array;
  readonly #scratch = new Uint32Array(2);
  #hasPrev = false;
  #samples = 0; // in the current window; 0 = no window open

  // Running state of the current window, per column.
  readonly #increase: Uint32Array; // counters: exact u64 sum, (lo, hi)
  readonly #excludedNs: Float64Array; // counters: time of reset intervals
  readonly #resets: Float64Array;
  readonly #resetsTotal: Float64Array;
  readonly #rateCount: Float64Array;
  readonly #sum: Float64Array; // of sample rates (counters) or values (gauges)
  readonly #min: Float64Array; // of sample rates (counters) or values (gauges)
  readonly #max: Float64Array;
  // Since start, per column: when it last changed (ns; -1: not yet); how
  // many changes in a row came on consecutive samples (a column that moves
  // every sample costs no more than this count); and the newest intervals
  // between changes that skipped samples (a ring of REFRESH_CHANGES, its
  // next slot, how many there have been).
  readonly #changedNs: Float64Array;
  readonly #streak: Float64Array;
  readonly #intervals: Float64Array;
  readonly #intervalNext: Uint8Array;
  readonly #intervalCount: Float64Array;
  readonly #median = new Float64Array(REFRESH_CHANGES);
  #previousNs = -1; // the sample before this one
  #spanned = 0; // intervals summed into the window's span

  #completed: MutableSnapshot;
  #spare: MutableSnapshot;

  /**
   * Allocates everything the aggregator will ever use. Throws a RangeError
   * for a bad window length or column kind.
   */
  constructor(options: WindowAggregatorOptions) {
    const windowNs = options.windowNs ?? DEFAULT_WINDOW_NS;
    if (!Number.isFinite(windowNs) || windowNs < 1) {
      throw new RangeError(
        `Cannot create window aggregator: windowNs must be a finite number >= 1, got ${windowNs}`,
      );
    }
    const columns = options.columns;
    if (columns.length < 1) {
      throw new RangeError(
        "Cannot create window aggregator: columns must not be empty",
      );
    }
    const n = columns.length;
    this.#counter = new Uint8Array(n);
    for (let k = 0; k < n; k++) {
      const kind = columns[k].kind;
      if (kind !== "counter" && kind !== "gauge") {
        throw new RangeError(
          `Cannot create window aggregator: columns[${k}].kind must be one of counter, gauge, got "${kind}"`,
        );
      }
      this.#counter[k] = kind === "counter" ? 1 : 0;
    }
    this.columns = columns;
    this.windowNs = windowNs;
    this.#prev = new Uint32Array(2 * (n + 1));
    this.#increase = new Uint32Array(2 * n);
    this.#excludedNs = new Float64Array(n);
    this.#resets = new Float64Array(n);
    this.#resetsTotal = new Float64Array(n);
    this.#rateCount = new Float64Array(n);
    this.#sum = new Float64Array(n);
    this.#min = new Float64Array(n);
    this.#max = new Float64Array(n);
    this.#changedNs = new Float64Array(n).fill(-1);
    this.#streak = new Float64Array(n);
    this.#intervals = new Float64Array(n * REFRESH_CHANGES);
    this.#intervalNext = new Uint8Array(n);
    this.#intervalCount = new Float64Array(n);
    this.#completed = emptySnapshot(n);
    this.#spare = emptySnapshot(n);
  }

  /**
   * The last completed window. The object is swapped at each completion
   * (two are reused in turn), so fetch it again for every render.
   */
  get completed(): WindowSnapshot {
    return this.#completed;
  }

  /**
   * Adds the record at word offset `at` of `words` (a ring's storage: the
   * u64 timestamp, then one u64 per column, each as (lo, hi) halves).
   * Completes the current window first when the record is past its end.
   */
  observe(words: Uint32Array, at: number): void {
    const t = this.#t;
    const prev = this.#prev;
    const tsLo = words[at];
    const tsHi = words[at + 1];
    const ts = toNumberU64(tsLo, tsHi);
    let hasPrev = this.#hasPrev;
    const back = hasPrev && ltU64(tsLo, tsHi, prev[0], prev[1]);
    if (this.#samples > 0 && (back || ts >= t[END])) this.#complete();
    if (back) hasPrev = this.#hasPrev = false;
    if (this.#samples === 0) this.#open(ts);
    this.#samples++;

    let dt = 0; // exact ns since the previous sample
    if (hasPrev) {
      const d = this.#scratch;
      subU64(d, 0, tsLo, tsHi, prev[0], prev[1]);
      dt = toNumberU64(d[0], d[1]);
      t[SPAN] += dt;
      this.#spanned++;
    }
    const previousNs = hasPrev ? this.#previousNs : -1;
    this.#previousNs = ts;
    const changedNs = this.#changedNs;
    prev[0] = tsLo;
    prev[1] = tsHi;

    const counter = this.#counter;
    const n = counter.length;
    const inc = this.#increase;
    const sum = this.#sum;
    const min = this.#min;
    const max = this.#max;
    const d = this.#scratch;
    for (let k = 0; k < n; k++) {
      const o = at + 2 + 2 * k;
      const lo = words[o];
      const hi = words[o + 1];
      const p = 2 + 2 * k;
      if (hasPrev && (lo !== prev[p] || hi !== prev[p + 1])) {
        const last = changedNs[k];
        changedNs[k] = ts;
        if (last === previousNs) this.#streak[k]++;
        else if (last >= 0) this.#skipped(k, ts - last);
      }
      if (counter[k] === 1) {
        if (hasPrev) {
          subU64(d, 0, lo, hi, prev[p], prev[p + 1]);
          const dLo = d[0];
          const dHi = d[1];
          if (dHi >= RESET_HI) {
            this.#resets[k]++;
            this.#resetsTotal[k]++;
            this.#excludedNs[k] += dt;
          } else {
            addU64(inc, 2 * k, inc[2 * k], inc[2 * k + 1], dLo, dHi);
            if (dt > 0) {
              // Scale before dividing: exact for whole-number results.
              const rate = toNumberU64(dLo, dHi) * 1e9 / dt;
              this.#rateCount[k]++;
              sum[k] += rate;
              if (rate < min[k]) min[k] = rate;
              if (rate > max[k]) max[k] = rate;
            }
          }
        }
      } else {
        const value = toNumberU64(lo, hi);
        sum[k] += value;
        if (value < min[k]) min[k] = value;
        if (value > max[k]) max[k] = value;
      }
      prev[p] = lo;
      prev[p + 1] = hi;
    }
    this.#hasPrev = true;
  }

  // Column k changed `ns` after its last change, samples between them.
  #skipped(k: number, ns: number): void {
    this.#streak[k] = 0;
    const next = this.#intervalNext[k];
    this.#intervals[k * REFRESH_CHANGES + next] = ns;
    this.#intervalNext[k] = (next + 1) % REFRESH_CHANGES;
    this.#intervalCount[k]++;
  }

  // Column k's refresh in seconds (see WindowSnapshot.refresh), or NaN.
  #refresh(k: number): number {
    // Moving every sample: it refreshes at the sample period.
    if (this.#streak[k] >= REFRESH_CHANGES && this.#spanned > 0) {
      return this.#t[SPAN] / this.#spanned / 1e9;
    }
    if (this.#intervalCount[k] < REFRESH_CHANGES) return NaN;
    const sorted = this.#median;
    sorted.set(
      this.#intervals.subarray(k * REFRESH_CHANGES, (k + 1) * REFRESH_CHANGES),
    );
    sorted.sort();
    const median = (sorted[3] + sorted[4]) / 2;
    let near = 0;
    for (let j = 0; j < REFRESH_CHANGES; j++) {
      if (Math.abs(sorted[j] - median) <= 0.25 * median) near++;
    }
    return near >= 6 ? median / 1e9 : NaN;
  }

  /**
   * Completes the current window now, as if its end had passed (at
   * shutdown, or in tests). Returns false, changing nothing, when no sample
   * arrived since the last completion. The next sample opens a new window,
   * with the flushed window's last sample as its baseline.
   */
  flush(): boolean {
    if (this.#samples === 0) return false;
    this.#complete();
    return true;
  }

  // Starts the aligned window containing `ts` and clears the running state.
  #open(ts: number): void {
    const t = this.#t;
    const w = this.windowNs;
    let start = Math.floor(ts / w) * w;
    // The division may round across a boundary; keep start <= ts < end.
    if (start > ts) start -= w;
    else if (ts >= start + w) start += w;
    t[START] = start;
    t[END] = start + w;
    t[SPAN] = 0;
    this.#spanned = 0;
    this.#increase.fill(0);
    this.#excludedNs.fill(0);
    this.#resets.fill(0);
    this.#rateCount.fill(0);
    this.#sum.fill(0);
    this.#min.fill(Infinity);
    this.#max.fill(-Infinity);
  }

  // Finalizes the current window into the spare snapshot and swaps it in.
  #complete(): void {
    const s = this.#spare;
    const t = this.#t;
    const samples = this.#samples;
    const counter = this.#counter;
    const prev = this.#prev;
    const inc = this.#increase;
    s.sequence = this.#completed.sequence + 1;
    s.samples = samples;
    s.startNs = t[START];
    s.endNs = t[END];
    s.spanNs = t[SPAN];
    for (let k = 0; k < counter.length; k++) {
      s.last[k] = toNumberU64(prev[2 + 2 * k], prev[3 + 2 * k]);
      s.refresh[k] = this.#refresh(k);
      const rates = this.#rateCount[k];
      if (counter[k] === 1) {
        const increase = toNumberU64(inc[2 * k], inc[2 * k + 1]);
        const ns = t[SPAN] - this.#excludedNs[k];
        s.rate[k] = ns > 0 ? increase * 1e9 / ns : NaN;
        s.increase[k] = increase;
        s.resets[k] = this.#resets[k];
        s.resetsTotal[k] = this.#resetsTotal[k];
        s.rateMin[k] = rates > 0 ? this.#min[k] : NaN;
        s.rateMax[k] = rates > 0 ? this.#max[k] : NaN;
        s.rateMean[k] = rates > 0 ? this.#sum[k] / rates : NaN;
      } else {
        s.min[k] = this.#min[k];
        s.max[k] = this.#max[k];
        s.mean[k] = this.#sum[k] / samples;
      }
    }
    this.#spare = this.#completed;
    this.#completed = s;
    this.#samples = 0;
  }
}
