/**
 * What a sample source is to the agent: the {@linkcode Collector} interface,
 * the devices behind it and where its run stands.
 *
 * @module
 */

import type { SampleSink } from "../rules/sample_sink.ts";
import type { PollStats } from "./poll_stats.ts";
import type { ReadStats } from "./read_stats.ts";

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
   * How long each sample's reads took, for sources that time them (the
   * kernel source); absent for the others.
   */
  readonly readStats?: ReadStats;
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

/**
 * Where a monitor's source is: `idle` before the agent runs it, `running`,
 * `ended` (a replay reached its end, or the agent stopped it), or `failed`
 * (with the one-line reason).
 */
export type SourceState = "idle" | "running" | "ended" | "failed";

/** A source's state, updated by the agent that runs it. */
export interface SourceStatus {
  /** Where the source is now; the agent moves it along as the source runs. */
  state: SourceState;
  /** Why the source failed, when it did. */
  error?: string;
}
