/**
 * A source's sampling thread, both sides of it. The main thread starts a
 * Worker and takes its samples into the monitor every
 * {@linkcode DRAIN_MS} ({@linkcode runSamplerThread}); the Worker opens
 * what it reads, raises its own scheduling, samples in a blocking loop
 * that never passes through its event loop, and hands over records and
 * statistics through shared memory ({@linkcode serveSamplerThread}). The
 * kernel and DOCA sources run on it; it knows neither.
 *
 * A busy main thread delays rules and rows, not samples: records wait in
 * the {@linkcode SampleMailbox} with their true timestamps (4 s of them).
 *
 * @module
 */

import type { SampleSink } from "../rules/sample_sink.ts";
import { POLL_SLOTS, type PollStats } from "./poll_stats.ts";
import { READ_SLOTS, type ReadStats } from "./read_stats.ts";
import { mailboxCapacity, SampleMailbox } from "./sample_mailbox.ts";
import type { DeadlineClock } from "./sampler_loop.ts";
import { raiseThreadScheduling } from "./thread_scheduling.ts";
import {
  CLOCK_MONOTONIC,
  CLOCK_REALTIME,
  openLibcClock,
  setTimespecNs,
  TIMER_ABSTIME,
  timespecNs,
} from "../ffi/libc_clock.ts";
import { errorMessage } from "../base/error_message.ts";
import { formatDuration } from "../base/units.ts";

/**
 * How often the main thread takes the sampling thread's samples into the
 * monitor, ms: rules and rows run this much behind the samples at most
 * (on an idle host). Each drain is a Deno timer's wake-up, about 150 µs of
 * CPU on the test VM whatever it does (bench/wakeup.ts); within the
 * alert's second, 250 ms leaves room for the sender's own look and the
 * peak it waits for.
 */
export const DRAIN_MS = 250;

/** How long a stop waits for the sampling thread to end, ms. */
export const STOP_GRACE_MS = 5000;

/** What a sampling thread tells the main thread besides its samples. */
export type SamplerNote =
  /** A device fault (the kernel source reopens it), said once, or a close that failed. */
  | "fault"
  /** A late sample, with its cause. */
  | "late"
  /** Anything else worth an operator's attention. */
  | "warn"
  /** A failed poll, by the source's name for the error (counted, not said). */
  | "error";

/** What the main thread posts to start a sampling thread. */
export interface SamplerThreadStart<P> {
  /** What the source's side needs to open its device. */
  readonly payload: P;
  /** The {@linkcode SampleMailbox}'s memory and shape. */
  readonly mailbox: SharedArrayBuffer;
  readonly columns: number;
  readonly capacity: number;
  /**
   * Three words: [0] set to 1 stops the loop; the thread keeps [1] at 1
   * while the device delivers and 0 during a fault, and [2] at its faults.
   */
  readonly control: SharedArrayBuffer;
  /**
   * `PollStats.save` then `ReadStats.save`: the thread carries on from
   * what is there and writes them back after every sample.
   */
  readonly stats: SharedArrayBuffer;
}

/** What a sampling thread says. */
export type SamplerReply =
  | { readonly kind: "started"; readonly scheduling: string }
  | {
    readonly kind: "note";
    readonly level: SamplerNote;
    readonly message: string;
  }
  | { readonly kind: "ended" }
  | { readonly kind: "failed"; readonly message: string };

/** Options of {@linkcode runSamplerThread}. */
export interface SamplerThreadOptions<P> {
  /**
   * The thread, just made from a module that calls
   * {@linkcode serveSamplerThread} (`new Worker(new URL("./x.ts",
   * import.meta.url), { type: "module" })`, as the binary's build finds
   * them); ended when the run ends.
   */
  readonly worker: Worker;
  readonly payload: P;
  /** Value columns of a record. */
  readonly columns: number;
  /** The sample period, ns: sizes the mailbox. */
  readonly periodNs: number;
  /**
   * The most records the thread hands over at once (default 1; a DOCA
   * poll's whole device ring): the mailbox holds two of these besides its
   * 4 s of samples, so a burst never laps what the main thread has yet
   * to read.
   */
  readonly burst?: number;
  /** Names the source in messages (`kernel eth0`). */
  readonly device: string;
  /** The main thread's copies of the thread's statistics, loaded at each drain. */
  readonly pollStats: PollStats;
  readonly readStats?: ReadStats;
  /** The control words ({@linkcode samplerControl}), for the caller to read `up` and faults. */
  readonly control: Int32Array;
  readonly onStarted: (scheduling: string) => void;
  readonly onNote: (level: SamplerNote, message: string) => void;
  /**
   * How long a stop waits for the thread to end, ms (default
   * {@linkcode STOP_GRACE_MS}).
   */
  readonly stopGraceMs?: number;
  /**
   * Called when a stop gives up on a thread that did not end within the
   * grace (stuck in a call that does not return): it may still be inside
   * the source's library.
   */
  readonly onLeftBehind?: () => void;
  /** Called at each drain before the records are delivered. */
  readonly onDrain?: () => void;
  /**
   * Told of every loss as it reaches `sink`: the source's own, and records
   * the main thread fell a whole mailbox behind on.
   */
  readonly onGap?: (dropped: number) => void;
}

/** New control words for one run: not stopped, up, no faults. */
export function samplerControl(): Int32Array {
  const control = new Int32Array(new SharedArrayBuffer(12));
  control[1] = 1;
  return control;
}

/**
 * Starts the thread and delivers its records into `sink` every
 * {@linkcode DRAIN_MS} until `signal` aborts (resolves once the thread has
 * ended) or the thread fails (rejects with its one line). Records the
 * thread could not hand over in time, and the source's own gaps, reach
 * `sink.gap` where they happened.
 */
export function runSamplerThread<P>(
  sink: SampleSink,
  signal: AbortSignal,
  options: SamplerThreadOptions<P>,
): Promise<void> {
  const { control, pollStats, readStats, onGap } = options;
  const delivered: SampleSink = onGap === undefined ? sink : {
    words: sink.words,
    columns: sink.columns,
    claim: () => sink.claim(),
    commit: () => sink.commit(),
    gap: (dropped) => {
      onGap(dropped);
      sink.gap(dropped);
    },
  };
  const capacity = mailboxCapacity(options.periodNs, options.burst);
  const mailbox = new SampleMailbox(options.columns, capacity);
  const stats = new Float64Array(
    new SharedArrayBuffer(8 * (POLL_SLOTS + READ_SLOTS)),
  );
  pollStats.save(stats, 0);
  readStats?.save(stats, POLL_SLOTS);
  const worker = options.worker;
  const start: SamplerThreadStart<P> = {
    payload: options.payload,
    mailbox: mailbox.buffer,
    columns: options.columns,
    capacity,
    control: control.buffer as SharedArrayBuffer,
    stats: stats.buffer as SharedArrayBuffer,
  };
  return new Promise<void>((resolve, reject) => {
    let failure: Error | undefined;
    const drain = () => {
      options.onDrain?.();
      pollStats.load(stats, 0);
      readStats?.load(stats, POLL_SLOTS);
      try {
        mailbox.drain(delivered);
      } catch (error) {
        failure ??= error as Error;
        Atomics.store(control, 0, 1);
      }
    };
    const timer = setInterval(drain, DRAIN_MS);
    let grace: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      Atomics.store(control, 0, 1);
      // A thread stuck in a read (a hung driver) must not hold the
      // agent's stop: given up on, it ends with the process.
      const graceMs = options.stopGraceMs ?? STOP_GRACE_MS;
      grace = setTimeout(() => {
        options.onLeftBehind?.();
        finish(
          new Error(
            `${options.device}: the sampler thread did not stop within ${
              formatDuration(graceMs / 1000, { exact: true })
            } (a read that does not return); left behind`,
          ),
        );
      }, graceMs + options.periodNs / 1e6);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const finish = (error?: Error) => {
      clearInterval(timer);
      clearTimeout(grace);
      signal.removeEventListener("abort", onAbort);
      worker.terminate();
      if (error ?? failure) reject(error ?? failure);
      else resolve();
    };
    worker.onmessage = (event: MessageEvent<SamplerReply>) => {
      const reply = event.data;
      if (reply.kind === "started") options.onStarted(reply.scheduling);
      else if (reply.kind === "note") {
        if (reply.level === "error") pollStats.recordError(reply.message);
        else options.onNote(reply.level, reply.message);
      } else if (reply.kind === "ended") {
        drain();
        finish();
      } else {
        drain();
        finish(new Error(reply.message));
      }
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      finish(
        new Error(
          `${options.device}: the sampler thread failed: ${event.message}`,
        ),
      );
    };
    if (signal.aborted) onAbort();
    worker.postMessage(start);
  });
}

/** The sampling thread as its source's side sees it. */
export interface SamplingThread {
  /** Monotonic ns, and blocking sleeps to a deadline on it. */
  readonly clock: DeadlineClock;
  /** Wall-clock ms since the Unix epoch, from libc. */
  wallMs(): number;
  /** Monotonic ms, from libc. */
  monotonicMs(): number;
  /** True once the main thread asked the loop to end. */
  stopped(): boolean;
  /** Hands the statistics (and up, faults) to the main thread: after every sample. */
  publish(): void;
  /** Tells the main thread something; `error` counts a failed poll by name. */
  note(level: SamplerNote, message: string): void;
}

/** What the source's side of a sampling thread is, once open. */
export interface ThreadSampler {
  readonly pollStats: PollStats;
  readonly readStats?: ReadStats;
  /** Whether the device delivers now (default: always). */
  up?(): boolean;
  /** Faults so far (default: none). */
  faults?(): number;
  /**
   * Samples into `mailbox` until the thread is stopped, calling
   * `publish()` after each sample. A throw ends the thread, failed.
   */
  loop(mailbox: SampleMailbox): void;
  /** Releases what `open` took. */
  close(): void;
}

/**
 * The Worker's side: call once at the top of a sampling thread's module.
 * On the start message it opens the source with `open` (a throw is the
 * thread's `failed` answer), raises the thread's scheduling, says which
 * it got, and runs the source's loop until stopped.
 */
export function serveSamplerThread<P>(
  open: (payload: P, thread: SamplingThread) => Promise<ThreadSampler>,
): void {
  // The Worker's global scope, typed here rather than by deno.worker's lib,
  // which would retype `self` for the main thread's modules too.
  const scope = globalThis as unknown as {
    onmessage: (event: MessageEvent<SamplerThreadStart<P>>) => void;
    postMessage(message: SamplerReply): void;
    close(): void;
  };
  const reply = (message: SamplerReply) => scope.postMessage(message);
  scope.onmessage = async (event) => {
    const start = event.data;
    const libc = openLibcClock();
    const { clock_gettime, clock_nanosleep } = libc.symbols;
    // The clocks through libc (its vDSO): cheaper than Deno's performance
    // timers, which cost a brand check and an op a read.
    const ts = new Uint32Array(4);
    const read = (clock: number) => {
      clock_gettime(clock, ts);
      return timespecNs(ts);
    };
    const control = new Int32Array(start.control);
    const stats = new Float64Array(start.stats);
    let sampler: ThreadSampler | undefined;
    const thread: SamplingThread = {
      clock: {
        now: () => read(CLOCK_MONOTONIC),
        sleepUntil: (ns) => {
          setTimespecNs(ts, ns);
          // EINTR (a signal handled on this thread) only wakes it early.
          clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts, null);
        },
      },
      wallMs: () => read(CLOCK_REALTIME) / 1e6,
      monotonicMs: () => read(CLOCK_MONOTONIC) / 1e6,
      stopped: () => Atomics.load(control, 0) !== 0,
      publish: () => {
        const s = sampler!;
        s.pollStats.save(stats, 0);
        s.readStats?.save(stats, POLL_SLOTS);
        Atomics.store(control, 1, s.up === undefined || s.up() ? 1 : 0);
        Atomics.store(control, 2, s.faults?.() ?? 0);
      },
      note: (level, message) => reply({ kind: "note", level, message }),
    };
    try {
      sampler = await open(start.payload, thread);
    } catch (error) {
      libc.close();
      reply({ kind: "failed", message: errorMessage(error) });
      return scope.close();
    }
    let outcome: SamplerReply = { kind: "ended" };
    try {
      const scheduling = raiseThreadScheduling(libc.symbols);
      reply({ kind: "started", scheduling: scheduling.text });
      sampler.pollStats.load(stats, 0);
      sampler.readStats?.load(stats, POLL_SLOTS);
      sampler.loop(
        new SampleMailbox(start.columns, start.capacity, start.mailbox),
      );
    } catch (error) {
      outcome = { kind: "failed", message: errorMessage(error) };
    }
    // The statistics as they ended, the failed poll or read included.
    thread.publish();
    try {
      sampler.close();
    } catch (error) {
      reply({ kind: "note", level: "fault", message: errorMessage(error) });
    }
    // Last: the main thread ends the Worker when it reads this.
    reply(outcome);
    libc.close();
    scope.close();
  };
}
