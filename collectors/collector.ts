/**
 * The contract between a sample source and the monitor it feeds.
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

import type { PollStats } from "./poll_stats.ts";

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

/**
 * One device behind a source that can fail on its own (a GPU of the NVML
 * source), for the metrics endpoint.
 */
export interface SourceDevice {
  /** Label pairs naming it, `device` first (`[["device", "gpu0"], ...]`). */
  readonly labels: readonly (readonly [string, string])[];
  /** Whether it still contributes samples. */
  up(): boolean;
}

/** A source of samples for one monitor. */
export interface Collector {
  /** Short name of the source kind, for messages (`sim`, `replay`, `doca`, `nvml`). */
  readonly source: string;
  /**
   * True when this source's failure ends its own monitor only (the GPU
   * monitor); otherwise a failure stops the agent.
   */
  readonly independent?: boolean;
  /** Devices that can go down separately, when the source has several. */
  readonly devices?: readonly SourceDevice[];
  /**
   * What the source found to read, for events.log's `Device:` and the
   * metrics' `device` label, when the configuration cannot say (the GPUs
   * of an NVML source).
   */
  readonly device?: string;
  /**
   * The poll loop's health, for sources that poll a device on a timer
   * (absent for replay, which reads as fast as the sink takes).
   */
  readonly pollStats?: PollStats;
  /**
   * Delivers samples to `sink` until `signal` aborts (resolves) or the source
   * ends by itself (resolves: replay at end of file). Rejects on a fatal
   * source error, with a one-line message. Must leave the event loop free
   * between polls.
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void>;
  /**
   * Releases the source (a device, libraries) after {@linkcode run} has
   * returned, or when it never ran. Throws a one-line Error if the source
   * refused part of it; the rest is still released.
   */
  close?(): void | Promise<void>;
}
