/**
 * How old each monitor's newest data is, by the host clock.
 *
 * Sample timestamps come from the device's clock, which need not agree with
 * the host's, and stamping every sample with the host time would cost the
 * per-sample path. Instead a timer checks, a few times a second, whether a
 * monitor's sample count moved: the data age is the time since it last did,
 * to within one tick.
 *
 * @module
 */

/** What freshness reads from a monitor: its running sample count. */
export interface CountsSamples {
  /** Samples delivered since start; only whether it moved matters. */
  readonly samples: number;
}

/** How old each monitor's data is: what readiness and `data_age` read. */
export interface DataFreshness {
  /** Whether monitor `i` has delivered any sample. */
  hasData(i: number): boolean;
  /** Milliseconds since monitor `i` last delivered a sample, as of `nowMs`. */
  ageMs(i: number, nowMs: number): number;
}

/** How often {@linkcode Freshness.start} checks, in ms. */
export const FRESHNESS_TICK_MS = 100;

/**
 * Tracks when each monitor last delivered a sample.
 *
 * @example Age after a stall
 * ```ts
 * import assert from "node:assert/strict";
 * import { Freshness } from "./freshness.ts";
 *
 * const nic = { samples: 0 };
 * const fresh = new Freshness([nic], 1000);
 * assert.equal(fresh.hasData(0), false);
 * nic.samples = 10;
 * fresh.tick(1500);
 * assert.equal(fresh.ageMs(0, 4000), 2500); // no sample since t = 1500
 * ```
 */
export class Freshness implements DataFreshness {
  readonly #monitors: readonly CountsSamples[];
  readonly #seen: Float64Array;
  readonly #at: Float64Array;

  /** `startMs`: the host time the monitors started (the age of no data). */
  constructor(monitors: readonly CountsSamples[], startMs: number) {
    this.#monitors = monitors;
    this.#seen = new Float64Array(monitors.length);
    this.#at = new Float64Array(monitors.length).fill(startMs);
  }

  /** Notes, at host time `nowMs`, which monitors have new samples. */
  tick(nowMs: number): void {
    for (let i = 0; i < this.#monitors.length; i++) {
      const samples = this.#monitors[i].samples;
      if (samples !== this.#seen[i]) {
        this.#seen[i] = samples;
        this.#at[i] = nowMs;
      }
    }
  }

  /** Whether monitor `i` has delivered any sample (as of the last tick). */
  hasData(i: number): boolean {
    return this.#seen[i] > 0;
  }

  /**
   * Milliseconds since monitor `i` last delivered a sample (or since start,
   * if it never did), as of `nowMs`.
   */
  ageMs(i: number, nowMs: number): number {
    return Math.max(0, nowMs - this.#at[i]);
  }

  /** Ticks every {@linkcode FRESHNESS_TICK_MS} until the returned stop. */
  start(now: () => number = Date.now): { stop(): void } {
    this.tick(now());
    const timer = setInterval(() => this.tick(now()), FRESHNESS_TICK_MS);
    // Never keep the process alive just to measure freshness.
    Deno.unrefTimer(timer);
    return { stop: () => clearInterval(timer) };
  }
}
