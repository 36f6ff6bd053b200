/**
 * A watchdog for a supervised thread that can get stuck without failing: a
 * loop that never ends, a wedged accept. Such a thread raises no error, so
 * a `SupervisedWorker` alone never restarts it. The thread adds 1 to
 * word 0 of a shared `Int32Array` while it works (`Atomics.add(beats, 0,
 * 1)`); the agent's thread watches the word and restarts the thread when it
 * has not moved for a while. Neither side ever waits for the other.
 *
 * @module
 */

/** How long a heartbeat may stand still by default, ms. */
export const DEFAULT_STALL_MS = 10_000;

/**
 * The shortest stall the watchdog accepts, ms: below it a thread busy with a
 * long (but finite) task, or a slow machine's garbage collection, would be
 * taken for a stuck one.
 */
export const MIN_STALL_MS = 3000;

/** The thread watched: a `SupervisedWorker` (base/supervised_worker.ts). */
export interface WatchedThread {
  /** The running worker, or undefined while it waits for a restart. */
  readonly worker: Worker | undefined;
  /** Ends `worker` and restarts the thread, telling `message`. */
  failed(worker: Worker, message: string): void;
}

/** A running watchdog. */
export interface HeartbeatWatch {
  /** Stops watching (before stopping the thread: a thread that drains beats no more). */
  stop(): void;
}

/**
 * Watches `beats[0]`, which `thread`'s worker keeps moving, and fails the
 * worker (restarting it, with the supervisor's backoff) when the word has
 * not moved for `stallMs` (default 10 s, at least 3 s). A new worker gets
 * the whole `stallMs` for its first beat.
 *
 * @example A thread that blocks its event loop is restarted
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchHeartbeat } from "./heartbeat.ts";
 * import { SupervisedWorker } from "./supervised_worker.ts";
 *
 * // Beats once, then blocks for good (as a wedged thread would, without
 * // burning a core).
 * const code = `self.onmessage = (e) => {
 *   if (e.data === "stop") return self.postMessage({ type: "closed" });
 *   Atomics.add(new Int32Array(e.data), 0, 1);
 *   Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
 * };`;
 * const url = `data:application/javascript,${encodeURIComponent(code)}`;
 * const buffer = new SharedArrayBuffer(4);
 * const spawn = () => {
 *   const worker = new Worker(url, { type: "module" });
 *   worker.postMessage(buffer);
 *   return worker;
 * };
 * const lines: string[] = [];
 * const thread = new SupervisedWorker(spawn(), {
 *   name: "test thread", spawn, restartMs: 10, onError: (l) => lines.push(l),
 * });
 * const watch = watchHeartbeat(thread, new Int32Array(buffer), 3000);
 * while (thread.restarts === 0) await new Promise((r) => setTimeout(r, 50));
 * watch.stop();
 * await thread.stop("stop", 100); // a stuck thread is ended after the grace
 * assert.equal(
 *   lines[0],
 *   "test thread failed: it has not answered for 3 s (stuck); restarting it in 0.01 s (sampling goes on)",
 * );
 * ```
 */
export function watchHeartbeat(
  thread: WatchedThread,
  beats: Int32Array,
  stallMs?: number,
): HeartbeatWatch {
  const stall = Math.max(MIN_STALL_MS, stallMs ?? DEFAULT_STALL_MS);
  let beat = Atomics.load(beats, 0);
  let beatAt = performance.now();
  let watched = thread.worker;
  const timer = setInterval(() => {
    const now = Atomics.load(beats, 0);
    const worker = thread.worker;
    // A worker waiting for its restart, or just restarted (a crash can
    // come and go between two looks), is not stuck: its clock starts anew.
    if (now !== beat || worker === undefined || worker !== watched) {
      beat = now;
      beatAt = performance.now();
      watched = worker;
    } else if (performance.now() - beatAt > stall) {
      beatAt = performance.now();
      thread.failed(
        worker,
        `it has not answered for ${stall / 1000} s (stuck)`,
      );
    }
  }, Math.min(1000, stall / 4));
  return {
    stop() {
      clearInterval(timer);
    },
  };
}
