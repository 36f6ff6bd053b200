/**
 * The Alertmanager sender's counters, per Alertmanager, in shared memory:
 * the sender's thread writes them, the metrics endpoint's thread reads
 * them, neither waits for the other. Each figure is one 64-bit word
 * accessed with `Atomics`, so a reader never sees half a write.
 *
 * @module
 */

// Slots of one Alertmanager.
const SENT = 0;
const FAILED = 1;
const DROPPED = 2;
const QUEUE = 3;
const LAST_SUCCESS_MS = 4;
const SLOTS = 5;

/** One Alertmanager's counters as read. */
export interface AlertmanagerCounts {
  /** Alerts it accepted (2xx). */
  readonly sent: number;
  /** Alerts of failed pushes, each try counted (4xx: not retried; 5xx, 429, network, timeout: retried). */
  readonly failed: number;
  /**
   * Alerts given up before they could be sent: pushed out of the full
   * queue, or still queued in a sender's thread that failed.
   */
  readonly dropped: number;
  /** Alerts waiting to be pushed. */
  readonly queueLength: number;
  /** When a push last succeeded, Unix ms; 0: never. */
  readonly lastSuccessMs: number;
}

/**
 * Counters of `count` Alertmanagers over one SharedArrayBuffer: one side
 * writes, any thread reads with its own `AlertStats` over the same buffer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AlertStats } from "./alert_stats.ts";
 *
 * const writer = AlertStats.create(2);
 * const reader = new AlertStats(writer.buffer); // on another thread, say
 * writer.addSent(1, 3);
 * writer.setQueueLength(1, 4);
 * writer.setLastSuccess(1, 1_700_000_000_123);
 * assert.deepEqual(reader.read(1), {
 *   sent: 3, failed: 0, dropped: 0, queueLength: 4, lastSuccessMs: 1_700_000_000_123,
 * });
 * assert.equal(reader.count, 2);
 * ```
 */
export class AlertStats {
  /** The shared memory: pass it to a reader's constructor. */
  readonly buffer: SharedArrayBuffer;
  /** Alertmanagers counted. */
  readonly count: number;
  readonly #words: BigInt64Array;

  /** Zeroed counters for `count` Alertmanagers. */
  static create(count: number): AlertStats {
    if (!Number.isInteger(count) || count < 0) {
      throw new RangeError(
        `Cannot create alert counters: count must be an integer >= 0, got ${count}`,
      );
    }
    return new AlertStats(new SharedArrayBuffer(8 * SLOTS * count));
  }

  /** A view of counters made by {@linkcode AlertStats.create}. */
  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength % (8 * SLOTS) !== 0) {
      throw new RangeError(
        `alert counters buffer is ${buffer.byteLength} bytes, not a multiple of ${
          8 * SLOTS
        }`,
      );
    }
    this.buffer = buffer;
    this.#words = new BigInt64Array(buffer);
    this.count = this.#words.length / SLOTS;
  }

  /** Counts `n` alerts Alertmanager `i` accepted. */
  addSent(i: number, n: number): void {
    this.#add(i, SENT, n);
  }

  /** Counts `n` alerts of a failed push to Alertmanager `i`. */
  addFailed(i: number, n: number): void {
    this.#add(i, FAILED, n);
  }

  /** Counts `n` alerts given up for Alertmanager `i`. */
  addDropped(i: number, n: number): void {
    this.#add(i, DROPPED, n);
  }

  /** Sets how many alerts wait for Alertmanager `i`. */
  setQueueLength(i: number, n: number): void {
    Atomics.store(this.#words, this.#at(i, QUEUE), BigInt(n));
  }

  /** Sets when a push to Alertmanager `i` last succeeded, Unix ms. */
  setLastSuccess(i: number, unixMs: number): void {
    Atomics.store(
      this.#words,
      this.#at(i, LAST_SUCCESS_MS),
      BigInt(Math.round(unixMs)),
    );
  }

  /**
   * Takes the counters over for the thread that replaces a failed one: the
   * alerts the failed thread still had queued died with it, so they are
   * counted as dropped, and every queue length reads 0 again. Nothing is
   * reset (Prometheus counters only go up), and the last success stays
   * true. Returns the alerts lost, per Alertmanager.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { AlertStats } from "./alert_stats.ts";
   *
   * const stats = AlertStats.create(1);
   * stats.addDropped(0, 2);
   * stats.setQueueLength(0, 5); // then the thread that wrote it failed
   * assert.deepEqual(stats.takeOver(), [5]);
   * assert.equal(stats.read(0).queueLength, 0);
   * assert.equal(stats.read(0).dropped, 7);
   * ```
   */
  takeOver(): number[] {
    const lost: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const queued = Atomics.exchange(this.#words, this.#at(i, QUEUE), 0n);
      this.#add(i, DROPPED, Number(queued));
      lost.push(Number(queued));
    }
    return lost;
  }

  /** Alertmanager `i`'s counters now. */
  read(i: number): AlertmanagerCounts {
    const get = (slot: number) =>
      Number(Atomics.load(this.#words, this.#at(i, slot)));
    return {
      sent: get(SENT),
      failed: get(FAILED),
      dropped: get(DROPPED),
      queueLength: get(QUEUE),
      lastSuccessMs: get(LAST_SUCCESS_MS),
    };
  }

  #add(i: number, slot: number, n: number): void {
    Atomics.add(this.#words, this.#at(i, slot), BigInt(n));
  }

  #at(i: number, slot: number): number {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) {
      throw new RangeError(
        `alert counters: no Alertmanager ${i} (there are ${this.count})`,
      );
    }
    return i * SLOTS + slot;
  }
}

/** What the metrics endpoint renders of the sender: its counters and whose they are. */
export interface AlertCounters {
  /** The `alertmanager` label of each, in configuration order ({@linkcode alertmanagerLabel}). */
  readonly alertmanagers: readonly string[];
  /** The counters, read from the sender's shared buffer. */
  readonly stats: AlertStats;
}

/**
 * The `alertmanager` label of an Alertmanager's URL: the URL without
 * credentials, query or fragment (a password never becomes a label).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { alertmanagerLabel } from "./alert_stats.ts";
 *
 * assert.equal(
 *   alertmanagerLabel("https://user:secret@am-1.example:9093/am/?x=1"),
 *   "https://am-1.example:9093/am",
 * );
 * ```
 */
export function alertmanagerLabel(url: string): string {
  const u = new URL(url);
  u.username = "";
  u.password = "";
  u.search = "";
  u.hash = "";
  return u.href.replace(/\/+$/, "");
}
