/**
 * Where a sample source delivers samples: the contract between a collector
 * and the monitor it feeds.
 *
 * A collector writes each sample straight into the monitor's ring (one copy,
 * no allocation) and then commits it:
 *
 * ```ts ignore
 * const at = sink.claim();
 * sink.words[at] = timestampLo; sink.words[at + 1] = timestampHi;
 * // column k's value goes at at + 2 * (k + 1) (lo) and at + 2 * (k + 1) + 1 (hi)
 * sink.commit();
 * ```
 *
 * @module
 */

/** Where a collector delivers samples. Implemented by the monitor. */
export interface SampleSink {
  /**
   * The ring's storage: records of `2 * (1 + columns)` words, each value an
   * unsigned 64-bit integer as a little-endian (lo, hi) pair, timestamp
   * (ns since the Unix epoch) first.
   */
  readonly words: Uint32Array;
  /** Number of value columns (timestamp excluded). */
  readonly columns: number;
  /** Reserves the next record and returns its offset in {@linkcode words}. */
  claim(): number;
  /** Runs the per-sample work (log row, rules) on the claimed record. */
  commit(): void;
  /** Reports `dropped` samples the source lost before the next committed one. */
  gap(dropped: number): void;
  /**
   * Undefined when the sink keeps up; otherwise a promise that resolves
   * once it does. A source that can wait (replay) checks it between
   * samples so a slow disk costs time, not rows; a live source never waits.
   */
  ready?(): Promise<void> | undefined;
}
