/**
 * The kernel source's sampling thread (a Worker, run by
 * {@linkcode KernelCollector.run} through collectors/sampler_thread.ts): it
 * opens the device's counters, then samples on absolute deadlines in a
 * blocking loop ({@linkcode sampleOnDeadlines}) into the mailbox.
 *
 * @module
 */

import { KernelCollector, type KernelColumn } from "./collector.ts";
import { sampleOnDeadlines } from "../sampler_loop.ts";
import { serveSamplerThread } from "../sampler_thread.ts";

/** What the kernel source's thread opens. */
export interface KernelSamplerPayload {
  readonly device: string;
  readonly columns: readonly KernelColumn[];
  readonly samplePeriodNs: number;
  readonly root?: string;
}

serveSamplerThread<KernelSamplerPayload>(async (start, thread) => {
  const collector = await KernelCollector.open({
    device: start.device,
    columns: start.columns,
    samplePeriodNs: start.samplePeriodNs,
    root: start.root,
    now: thread.wallMs,
    monotonic: thread.monotonicMs,
    onFault: (message) => thread.note("fault", message),
    onLate: (message) => thread.note("late", message),
  });
  return {
    pollStats: collector.pollStats,
    readStats: collector.readStats,
    up: () => collector.up,
    faults: () => collector.faults,
    loop: (mailbox) =>
      sampleOnDeadlines({
        periodNs: start.samplePeriodNs,
        clock: thread.clock,
        stopped: thread.stopped,
        sample: (lateNs) => {
          collector.sample(mailbox, lateNs / 1e6);
          thread.publish();
        },
      }),
    close: () => collector.close(),
  };
});
