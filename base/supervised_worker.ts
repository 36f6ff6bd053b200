/**
 * A Worker the agent keeps running: restarted whenever it fails (an
 * uncaught error, or a `{type: "failed"}` message it sends), with a
 * backoff, and stopped politely. The metrics endpoint and the Alertmanager
 * sender are such threads: what a remote party drives must never end the
 * process, so their failures are handled here, not propagated.
 *
 * The protocol with the worker: it may post `{type: "failed", message}`
 * (restart me) and, once asked to stop with the stop message, must post
 * `{type: "closed"}`; any other message goes to `onReply`.
 *
 * @module
 */

import { type HeartbeatWatch, watchHeartbeat } from "./heartbeat.ts";

/** The longest delay between two restarts, ms. */
export const MAX_RESTART_MS = 60_000;

/** How a supervised worker is told of and restarted. */
export interface SupervisedWorkerOptions {
  /** What the thread is, for messages: `metrics endpoint`. */
  readonly name: string;
  /** Makes a new worker and sends it its start message. */
  readonly spawn: () => Worker;
  /** First delay before a restart, ms; doubles while failures continue. */
  readonly restartMs: number;
  /** Told of every failure and restart, one line each. */
  readonly onError: (line: string) => void;
  /** The worker's other messages. */
  readonly onReply?: (reply: unknown) => void;
  /**
   * The heartbeat word (an `Int32Array` over shared memory) the thread
   * keeps moving, and how long it may stand still (base/heartbeat.ts):
   * with it, a thread that is stuck is restarted too, not only one that
   * fails.
   */
  readonly heartbeat?: {
    readonly beats: Int32Array;
    readonly stallMs?: number;
  };
}

/**
 * Supervises a worker, from `first` (already spawned; its first messages
 * may have been read by the caller) on.
 *
 * @example A worker that fails is restarted
 * ```ts
 * import assert from "node:assert/strict";
 * import { SupervisedWorker } from "./supervised_worker.ts";
 *
 * const code = `self.onmessage = (e) => {
 *   if (e.data === "go") self.postMessage({ type: "failed", message: "boom" });
 *   else self.postMessage({ type: "closed" });
 * };`;
 * const url = `data:application/javascript,${encodeURIComponent(code)}`;
 * const spawn = () => {
 *   const worker = new Worker(url, { type: "module" });
 *   worker.postMessage("go");
 *   return worker;
 * };
 * const lines: string[] = [];
 * const supervised = new SupervisedWorker(spawn(), {
 *   name: "test thread", spawn, restartMs: 10, onError: (l) => lines.push(l),
 * });
 * await new Promise((resolve) => setTimeout(resolve, 100));
 * await supervised.stop("stop", 1000);
 * assert.ok(supervised.restarts >= 1);
 * assert.equal(lines[0], "test thread failed: boom; restarting it in 0.01 s (sampling goes on)");
 * ```
 */
export class SupervisedWorker {
  readonly #options: SupervisedWorkerOptions;
  #worker: Worker | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #delayMs: number;
  #startedAt = 0;
  #restarts = 0;
  #stopping = false;
  readonly #watchdog: HeartbeatWatch | undefined;

  /** Watches `first` and every worker that replaces it. */
  constructor(first: Worker, options: SupervisedWorkerOptions) {
    this.#options = options;
    this.#delayMs = options.restartMs;
    this.#watch(first);
    this.#watchdog = options.heartbeat === undefined
      ? undefined
      : watchHeartbeat(
        this,
        options.heartbeat.beats,
        options.heartbeat.stallMs,
      );
  }

  /** Times the thread failed and was restarted. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The running worker, or undefined while it waits for a restart. */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /**
   * Ends `worker` and schedules a new one, as for any failure: what a
   * watchdog calls on a thread that is stuck. A worker already replaced
   * is only ended.
   */
  failed(worker: Worker, message: string): void {
    worker.terminate();
    if (this.#stopping || worker !== this.#worker) return;
    this.#worker = undefined;
    // A thread that ran a good while gets a quick restart; one that keeps
    // failing backs off.
    if (performance.now() - this.#startedAt > MAX_RESTART_MS) {
      this.#delayMs = this.#options.restartMs;
    }
    const delay = this.#delayMs;
    this.#delayMs = Math.min(MAX_RESTART_MS, delay * 2);
    this.#options.onError(
      `${this.#options.name} failed: ${
        message.split("\n")[0]
      }; restarting it in ${delay / 1000} s (sampling goes on)`,
    );
    this.#timer = setTimeout(() => {
      if (this.#stopping) return;
      this.#restarts++;
      this.#watch(this.#options.spawn());
    }, delay);
  }

  /**
   * Sends `message` and waits for the worker's `closed` (at most
   * `graceMs`), then ends it; no restart happens after. Never throws.
   */
  async stop(message: unknown, graceMs: number): Promise<void> {
    // First: a thread that drains or shuts down beats no more, and must not
    // be taken for a stuck one.
    this.#watchdog?.stop();
    this.#stopping = true;
    clearTimeout(this.#timer);
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    const closed = new Promise<void>((resolve) => {
      worker.onmessage = (e) => {
        if ((e.data as { type?: string })?.type === "closed") resolve();
      };
      worker.onerror = (e) => {
        e.preventDefault();
        resolve();
      };
    });
    let grace: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      grace = setTimeout(resolve, graceMs);
    });
    worker.postMessage(message);
    await Promise.race([closed, late]);
    clearTimeout(grace);
    worker.terminate();
  }

  #watch(worker: Worker): void {
    this.#worker = worker;
    this.#startedAt = performance.now();
    worker.onerror = (event) => {
      // Handled here: the thread's failure must not become the agent's.
      event.preventDefault();
      this.failed(worker, event.message ?? "unknown error");
    };
    worker.onmessage = (event) => {
      const reply = event.data as { type?: string; message?: string };
      if (reply?.type === "failed") {
        this.failed(worker, String(reply.message));
      } else this.#options.onReply?.(event.data);
    };
  }
}
