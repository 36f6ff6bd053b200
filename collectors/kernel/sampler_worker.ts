/**
 * The kernel source's sampling thread (a Worker): it opens the device's
 * counters, raises its own scheduling, then samples on absolute deadlines
 * in a blocking loop ({@linkcode sampleOnDeadlines}) and hands every
 * sample to the main thread through a {@linkcode SampleMailbox}. Its event
 * loop does not run while it samples; a stop is a word in the mailbox's
 * shared memory, seen within a period (or 100 ms).
 *
 * Messages: the main thread posts one {@linkcode SamplerStart}; the
 * thread answers {@linkcode SamplerReply}s: `started` (with its
 * scheduling), `note`s (faults, late samples), then `ended` or `failed`.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { KernelCollector, type KernelColumn } from "./collector.ts";
import { SampleMailbox } from "../sample_mailbox.ts";
import { sampleOnDeadlines } from "../sampler_loop.ts";
import { raiseThreadScheduling } from "../thread_scheduling.ts";
import {
  CLOCK_MONOTONIC,
  CLOCK_REALTIME,
  openLibcClock,
  setTimespecNs,
  TIMER_ABSTIME,
  timespecNs,
} from "../../ffi/libc_clock.ts";
import { errorMessage } from "../../base/error_message.ts";
import { POLL_SLOTS } from "../poll_stats.ts";

/** What the main thread asks the sampling thread to do. */
export interface SamplerStart {
  readonly device: string;
  readonly columns: readonly KernelColumn[];
  readonly samplePeriodNs: number;
  readonly root?: string;
  /** The {@linkcode SampleMailbox}'s memory. */
  readonly mailbox: SharedArrayBuffer;
  readonly capacity: number;
  /**
   * Three words: [0] set to 1 stops the loop; the thread keeps [1] at 1
   * while the device delivers and 0 during a fault, and [2] at its faults.
   */
  readonly control: SharedArrayBuffer;
  /**
   * The source's poll and read statistics (`PollStats.save`, then
   * `ReadStats.save`): the thread carries on from what is
   * there and writes them back after every sample, for the main thread
   * to read.
   */
  readonly stats: SharedArrayBuffer;
}

/** What the sampling thread says. */
export type SamplerReply =
  | { readonly kind: "started"; readonly scheduling: string }
  | {
    readonly kind: "note";
    readonly level: "fault" | "late";
    readonly message: string;
  }
  | { readonly kind: "ended" }
  | { readonly kind: "failed"; readonly message: string };

function reply(message: SamplerReply): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<SamplerStart>) => {
  const start = event.data;
  const libc = openLibcClock();
  const { clock_gettime, clock_nanosleep } = libc.symbols;
  // The clocks through libc (its vDSO): cheaper than Deno's performance
  // timers, which cost a brand check and an op a read.
  const ts = new Uint32Array(4);
  const clockMs = (clock: number) => {
    clock_gettime(clock, ts);
    return timespecNs(ts) / 1e6;
  };
  let collector: KernelCollector;
  try {
    collector = await KernelCollector.open({
      device: start.device,
      columns: start.columns,
      samplePeriodNs: start.samplePeriodNs,
      root: start.root,
      now: () => clockMs(CLOCK_REALTIME),
      monotonic: () => clockMs(CLOCK_MONOTONIC),
      onFault: (message) => reply({ kind: "note", level: "fault", message }),
      onLate: (message) => reply({ kind: "note", level: "late", message }),
    });
  } catch (error) {
    libc.close();
    reply({ kind: "failed", message: errorMessage(error) });
    return self.close();
  }
  try {
    const scheduling = raiseThreadScheduling(libc.symbols);
    reply({ kind: "started", scheduling: scheduling.text });
    const mailbox = new SampleMailbox(
      start.columns.length,
      start.capacity,
      start.mailbox,
    );
    const control = new Int32Array(start.control);
    const stats = new Float64Array(start.stats);
    const sampler = collector;
    sampler.pollStats.load(stats, 0);
    sampler.readStats.load(stats, POLL_SLOTS);
    sampleOnDeadlines({
      periodNs: start.samplePeriodNs,
      clock: {
        now: () => {
          clock_gettime(CLOCK_MONOTONIC, ts);
          return timespecNs(ts);
        },
        sleepUntil: (ns) => {
          setTimespecNs(ts, ns);
          // EINTR (a signal handled on this thread) only wakes it early.
          clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts, null);
        },
      },
      stopped: () => Atomics.load(control, 0) !== 0,
      sample: (lateNs) => {
        sampler.sample(mailbox, lateNs / 1e6);
        sampler.pollStats.save(stats, 0);
        sampler.readStats.save(stats, POLL_SLOTS);
        Atomics.store(control, 1, sampler.up ? 1 : 0);
        Atomics.store(control, 2, sampler.faults);
      },
    });
    reply({ kind: "ended" });
  } catch (error) {
    reply({ kind: "failed", message: errorMessage(error) });
  } finally {
    collector.close();
    libc.close();
    self.close();
  }
};
