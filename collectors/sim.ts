/**
 * The built-in simulated NIC: deterministic diag counters that follow the
 * scripted 20 s cycle of {@link ./scenario.ts}, delivered like the device
 * delivers them (a timer-driven poll that drains everything due, a bounded
 * device buffer that overwrites when the agent stalls).
 *
 * Values depend only on the seed, the sample period and the sample index:
 * noise comes from a counter-based hash of (seed, stream, index) rather than
 * a stateful generator, so batching, stalls and polling cadence never change
 * what sample `i` holds.
 *
 * @module
 */

import { pollOnSchedule } from "./schedule.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import type { Collector } from "./collector.ts";
import { PollStats } from "./poll_stats.ts";
import type { ColumnConfig } from "../config/types.ts";
import { addNumberU64, bigintToU64, msToNsU64 } from "../base/u64.ts";
import { CYCLE_MS, newScenarioRates, Rate, scenarioAt } from "./scenario.ts";

/**
 * Lost samples a poll still computes one by one after a stall (about 20 ms
 * of work); beyond that they are skipped at once.
 */
const MAX_REPLAYED_LOSS = 100_000;
/**
 * The longest default poll interval, ms: a sample reaches the rules, the
 * event journal (so the alert sender) and the published state within it.
 * Each wake-up of the sampling thread costs far more than a sample (about
 * 0.15 ms of CPU in Deno 2.9.6 against 2 µs, bench/RESULTS.md), so the
 * default polls as seldom as the buffer and this bound allow.
 */
export const MAX_POLL_MS = 100;
/** Options of {@linkcode SimCollector}. */
export interface SimOptions {
  /** The monitor's columns; each column's data ID picks what it simulates. */
  readonly columns: readonly ColumnConfig[];
  /** Sample period in nanoseconds (a positive safe integer). */
  readonly samplePeriodNs: number;
  /** Seed of the noise; same seed, same values. */
  readonly seed: number;
  /**
   * How often {@linkcode SimCollector.run} polls, in ms. Default: when the
   * device buffer is a quarter full, as the DOCA source polls its ring, at
   * most every {@linkcode MAX_POLL_MS} (102 ms is 4096 samples at 10 kHz).
   */
  readonly pollIntervalMs?: number;
  /**
   * Samples the simulated device buffers between polls; older ones are lost
   * (reported with `sink.gap`) when more are due. Default 4096.
   */
  readonly deviceBufferSamples?: number;
  /** Wall clock in ms since the Unix epoch. Default `performance` time. */
  readonly now?: () => number;
  /**
   * Starting value per column, overriding the seeded one (e.g. near 2^64 to
   * exercise wrapping). `undefined` entries keep the seeded value.
   */
  readonly startValues?: readonly (bigint | undefined)[];
}

const TWO_32 = 4294967296;

// What a column simulates, from its data ID with the port and priority
// bytes masked off.
const GENERIC = 0;
const RX_BYTES = 1;
const PRIO_RX_BYTES = 2;
const RX_PACKETS = 3;
const PRIO_RX_PACKETS = 4;
const RX_DISCARD = 5;
const PRIO_RX_PAUSE = 6;
const ECN = 7;
const CNP_HANDLED = 8;
const CNP_SENT = 9;
const TX_BYTES = 10;
const PRIO_TX_BYTES = 11;
const TX_PACKETS = 12;
const PRIO_TX_PACKETS = 13;
const PRIO_TX_PAUSE = 14;
const MAX_READ_LATENCY = 15;

/** Kind by the data ID's upper 32 bits (group/unit and counter). */
const KIND_BY_ID_HI = new Map<number, number>([
  [0x10200001, RX_BYTES],
  [0x10200002, PRIO_RX_BYTES],
  [0x10200003, RX_PACKETS],
  [0x10200004, PRIO_RX_PACKETS],
  [0x10200005, RX_DISCARD],
  [0x10200006, PRIO_RX_PAUSE],
  [0x10800004, ECN],
  [0x10800005, CNP_HANDLED],
  [0x11000001, CNP_SENT],
  [0x11400001, TX_BYTES],
  [0x11400002, PRIO_TX_BYTES],
  [0x11400003, TX_PACKETS],
  [0x11400004, PRIO_TX_PACKETS],
  [0x11400005, PRIO_TX_PAUSE],
  [0x1160000d, MAX_READ_LATENCY],
]);

// Noise streams. Counters that describe the same traffic share a stream
// (per port), so bytes and packets rise and fall together.
const STREAM_OF_KIND = [
  7, // GENERIC: one stream per column (the column index is mixed in)
  0, // RX_BYTES
  0, // PRIO_RX_BYTES
  0, // RX_PACKETS
  0, // PRIO_RX_PACKETS
  1, // RX_DISCARD
  2, // PRIO_RX_PAUSE
  3, // ECN
  3, // CNP_HANDLED
  3, // CNP_SENT
  4, // TX_BYTES
  4, // PRIO_TX_BYTES
  4, // TX_PACKETS
  4, // PRIO_TX_PACKETS
  5, // PRIO_TX_PAUSE
  6, // MAX_READ_LATENCY
];

// Lifetime average rates per second, to seed starting values of a device
// that has been up for weeks.
const LIFETIME_RATE = [
  1_000, // GENERIC
  12e9, // RX_BYTES
  11.4e9, // PRIO_RX_BYTES
  3.1e6, // RX_PACKETS
  2.9e6, // PRIO_RX_PACKETS
  50, // RX_DISCARD
  2_000, // PRIO_RX_PAUSE
  20_000, // ECN
  8_000, // CNP_HANDLED
  5_000, // CNP_SENT
  11e9, // TX_BYTES
  10.5e9, // PRIO_TX_BYTES
  2.8e6, // TX_PACKETS
  2.7e6, // PRIO_TX_PACKETS
  1_000, // PRIO_TX_PAUSE
  0, // MAX_READ_LATENCY (a gauge: no history)
];

// The simulated NIC has one lossless traffic class (RoCE); whichever priority
// a priority counter names is that class, carrying this share of the bytes.
const ROCE_SHARE = 0.95;
const GENERIC_PER_S = 1_000;
const SPIKE_NS = 1_500;
const MIN_UPTIME_DAYS = 14;
const MAX_UPTIME_DAYS = 42;

/**
 * A 32-bit integer hash with good avalanche (Chris Wellons' "lowbias32"),
 * on numbers only: the per-sample noise source.
 */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

const DATA_ID = /^0x[0-9a-fA-F]{16}$/;

/**
 * A simulated NIC that produces diag samples for the configured data IDs.
 *
 * Counters start at large seeded values (a device up for weeks; byte counters
 * above 2^53), only ever rise, and wrap modulo 2^64 like hardware. One gauge
 * is simulated: PCIe max read latency (`0x1160000d…`). IDs it does not know
 * become slowly rising counters.
 *
 * @example Usage
 * ```ts
 * import { SimCollector } from "./sim.ts";
 * import type { SampleSink } from "../rules/sample_sink.ts";
 * import assert from "node:assert/strict";
 *
 * const words = new Uint32Array(2 * 2 * 10);
 * let head = 0;
 * const sink: SampleSink = {
 *   words,
 *   columns: 1,
 *   claim: () => (head++ % 10) * 4,
 *   commit() {},
 *   gap() {},
 * };
 * const sim = new SimCollector({
 *   columns: [{ name: "port_0_rx_bytes", dataId: "0x1020000100000000" }],
 *   samplePeriodNs: 100_000,
 *   seed: 7,
 * });
 * sim.generate(sink, 10);
 * assert.equal(sim.index, 10);
 * ```
 */
export class SimCollector implements Collector {
  /** Always `"sim"`. */
  readonly source = "sim";
  /** The poll loop's health. */
  readonly pollStats: PollStats = new PollStats();

  readonly #columns: number;
  readonly #periodNs: number;
  readonly #pollMs: number;
  readonly #bufferSamples: number;
  readonly #now: () => number;
  readonly #kinds: Uint8Array;
  /** Noise stream salt per column. */
  readonly #salts: Uint32Array;
  /** Samples per scenario cycle (the cycle is a whole number of samples). */
  readonly #cycleSamples: number;
  readonly #seedA: number;
  readonly #seedB: number;
  readonly #rates = newScenarioRates();
  /**
   * The next sample's record in the sink's layout: timestamp then one
   * (lo, hi) pair per column. Counters accumulate here; the sink's ring is
   * never read back.
   */
  readonly #record: Uint32Array;
  /** Index of the next sample to produce. */
  #next = 0;
  /** Clock reading (ms) at sample 0; NaN until first use. */
  #t0 = NaN;
  #running = false;

  /**
   * Builds the simulator. Throws a RangeError for an invalid period, poll
   * interval, buffer size or start value, or a malformed data ID.
   */
  constructor(options: SimOptions) {
    const {
      columns,
      samplePeriodNs,
      seed,
      deviceBufferSamples = 4096,
      now = () => performance.timeOrigin + performance.now(),
      startValues = [],
    } = options;
    if (!Number.isSafeInteger(samplePeriodNs) || samplePeriodNs < 1) {
      throw new RangeError(
        `Cannot create sim collector: samplePeriodNs must be a positive integer, got ${samplePeriodNs}`,
      );
    }
    const pollIntervalMs = options.pollIntervalMs ?? Math.min(
      MAX_POLL_MS,
      Math.max(1, deviceBufferSamples * samplePeriodNs / 4e6),
    );
    if (!(pollIntervalMs > 0) || !Number.isFinite(pollIntervalMs)) {
      throw new RangeError(
        `Cannot create sim collector: pollIntervalMs must be positive, got ${pollIntervalMs}`,
      );
    }
    if (!Number.isSafeInteger(deviceBufferSamples) || deviceBufferSamples < 1) {
      throw new RangeError(
        `Cannot create sim collector: deviceBufferSamples must be a positive integer, got ${deviceBufferSamples}`,
      );
    }
    if (!Number.isFinite(seed)) {
      throw new RangeError(
        `Cannot create sim collector: seed must be a finite number, got ${seed}`,
      );
    }
    this.#columns = columns.length;
    this.#periodNs = samplePeriodNs;
    this.#pollMs = pollIntervalMs;
    this.#bufferSamples = deviceBufferSamples;
    this.#now = now;
    this.#cycleSamples = Math.max(
      1,
      Math.round(CYCLE_MS * 1e6 / samplePeriodNs),
    );
    const seedInt = Math.trunc(seed);
    this.#seedA = mix32((seedInt >>> 0) ^ 0x9e3779b9);
    this.#seedB = mix32((Math.floor(seedInt / TWO_32) >>> 0) ^ this.#seedA);

    // Every sim on the device has been up equally long.
    const uptimeS = 86_400 *
      (MIN_UPTIME_DAYS +
        (MAX_UPTIME_DAYS - MIN_UPTIME_DAYS) * mix32(this.#seedB) / TWO_32);

    this.#kinds = new Uint8Array(this.#columns);
    this.#salts = new Uint32Array(this.#columns);
    this.#record = new Uint32Array(2 * (1 + this.#columns));
    for (let k = 0; k < this.#columns; k++) {
      const id = columns[k].dataId;
      if (!DATA_ID.test(id)) {
        throw new RangeError(
          `Cannot create sim collector: columns[${k}].dataId must be 0x followed by 16 hex digits, got "${id}"`,
        );
      }
      const hi = parseInt(id.slice(2, 10), 16);
      const lo = parseInt(id.slice(10), 16);
      // Only the port (byte 0) and priority (bits 8-11) may be set.
      const kind = (lo & ~0xfff) === 0
        ? KIND_BY_ID_HI.get(hi) ?? GENERIC
        : GENERIC;
      const port = lo & 0xff;
      const stream = STREAM_OF_KIND[kind];
      this.#kinds[k] = kind;
      this.#salts[k] = mix32(
        this.#seedA ^
          ((stream << 24) | (port << 16) | (kind === GENERIC ? k & 0xffff : 0)),
      );
      this.#seedStart(k, kind, uptimeS, startValues[k]);
    }
  }

  /** Index of the next sample (samples produced or lost so far). */
  get index(): number {
    return this.#next;
  }

  /**
   * Produces `count` samples into `sink` at once, continuing the sequence:
   * synchronous, no timers, no gaps. For tests and benchmarks. Timestamps
   * start at the clock's reading on first use (of this or
   * {@linkcode poll}) and advance by exactly the period.
   */
  generate(sink: SampleSink, count: number): void {
    this.#check(sink);
    this.#anchor();
    this.#deliver(sink, count);
  }

  /**
   * One device poll: delivers every sample due by the clock (a sample is due
   * once its timestamp has passed), at most the device buffer's worth. Older
   * due samples are lost and reported first with `sink.gap`. Returns the
   * number delivered. {@linkcode run} calls this on its timer.
   */
  poll(sink: SampleSink): number {
    this.#check(sink);
    this.#anchor();
    const elapsedNs = (this.#now() - this.#t0) * 1e6;
    const due = elapsedNs < 0 ? 0 : Math.floor(elapsedNs / this.#periodNs) + 1;
    let pending = due - this.#next;
    if (pending <= 0) return 0;
    if (pending > this.#bufferSamples) {
      const lost = pending - this.#bufferSamples;
      // The device kept counting while its ring overwrote: advance through
      // the lost samples so later values are the same as without the stall.
      // Past MAX_REPLAYED_LOSS (a suspend, not a hiccup) the rest is skipped
      // in one step, counters flat across it, so catching up stays cheap.
      const replayed = Math.min(lost, MAX_REPLAYED_LOSS);
      for (let n = 0; n < replayed; n++) {
        this.#produce();
        this.#advance();
      }
      if (lost > replayed) this.#skip(lost - replayed);
      sink.gap(lost);
      pending = this.#bufferSamples;
    }
    this.#deliver(sink, pending);
    return pending;
  }

  /**
   * Polls every `pollIntervalMs` (first poll immediately) until `signal`
   * aborts, then resolves. Rejects if the sink throws. An abort takes effect
   * between polls.
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (this.#running) {
      return Promise.reject(
        new Error("Cannot run sim collector: it is already running"),
      );
    }
    this.#running = true;
    return pollOnSchedule({
      periodMs: this.#pollMs,
      signal,
      // A poll drains all that is due, so after a stall it covers every
      // period it missed.
      poll: (late) => {
        this.pollStats.recordPoll(late);
        const delivered = this.poll(sink);
        this.pollStats.recordBatch(delivered, this.#bufferSamples);
      },
    }).finally(() => {
      this.#running = false;
    });
  }

  #check(sink: SampleSink): void {
    if (sink.columns !== this.#columns) {
      throw new Error(
        `Cannot deliver sim samples: the sink has ${sink.columns} columns, the simulator ${this.#columns}`,
      );
    }
  }

  /** Fixes the time origin and sample 0's timestamp on first use. */
  #anchor(): void {
    if (!Number.isNaN(this.#t0)) return;
    const t0 = this.#now();
    this.#t0 = t0;
    msToNsU64(this.#record, 0, t0);
  }

  #deliver(sink: SampleSink, count: number): void {
    const words = sink.words;
    const record = this.#record;
    const n = record.length;
    for (let s = 0; s < count; s++) {
      this.#produce();
      const at = sink.claim();
      for (let w = 0; w < n; w++) words[at + w] = record[w];
      sink.commit();
      this.#advance();
    }
  }

  /** Moves timestamp and index `count` samples on without computing them. */
  #skip(count: number): void {
    const record = this.#record;
    addNumberU64(record, 0, record[0], record[1], count * this.#periodNs);
    this.#next += count;
  }

  /** Moves the record's timestamp and index on to the next sample. */
  #advance(): void {
    const record = this.#record;
    addNumberU64(record, 0, record[0], record[1], this.#periodNs);
    this.#next++;
  }

  /** Computes sample `#next`'s column values into the record. */
  #produce(): void {
    const i = this.#next;
    const period = this.#periodNs;
    // Whole microseconds: see scenarioAt on why not a fraction.
    const r = scenarioAt(
      Math.floor((i % this.#cycleSamples) * period / 1000),
      this.#rates,
    );
    // i < 2^53, so its halves are exact.
    const iHi = Math.floor(i / TWO_32);
    const iHash = mix32(mix32((i >>> 0) ^ this.#seedA) ^ iHi ^ this.#seedB);
    const record = this.#record;
    const kinds = this.#kinds;
    const salts = this.#salts;
    for (let k = 0; k < kinds.length; k++) {
      const h = mix32(iHash ^ salts[k]);
      const u = h / TWO_32; // the stream's noise, shared by related counters
      const roundU = mix32(h ^ 0x68e31da4) / TWO_32; // stochastic rounding
      const at = 2 * (k + 1);
      const kind = kinds[k];
      if (kind === MAX_READ_LATENCY) {
        let v = r[Rate.latencyNs] + r[Rate.latencySpreadNs] * (2 * u - 1);
        if (roundU < r[Rate.latencySpikeChance]) v += SPIKE_NS;
        record[at] = Math.round(v);
        record[at + 1] = 0;
        continue;
      }
      // Expected count this sample: a rate per second times the period.
      let perS: number;
      const traffic = 1 + r[Rate.trafficNoise] * (2 * u - 1);
      switch (kind) {
        case RX_BYTES:
          perS = r[Rate.rxBytesPerS] * traffic;
          break;
        case PRIO_RX_BYTES:
          perS = r[Rate.rxBytesPerS] * traffic * ROCE_SHARE;
          break;
        case RX_PACKETS:
          perS = r[Rate.rxBytesPerS] * traffic / r[Rate.packetBytes];
          break;
        case PRIO_RX_PACKETS:
          perS = r[Rate.rxBytesPerS] * traffic * ROCE_SHARE /
            r[Rate.packetBytes];
          break;
        case TX_BYTES:
          perS = r[Rate.txBytesPerS] * traffic;
          break;
        case PRIO_TX_BYTES:
          perS = r[Rate.txBytesPerS] * traffic * ROCE_SHARE;
          break;
        case TX_PACKETS:
          perS = r[Rate.txBytesPerS] * traffic / r[Rate.packetBytes];
          break;
        case PRIO_TX_PACKETS:
          perS = r[Rate.txBytesPerS] * traffic * ROCE_SHARE /
            r[Rate.packetBytes];
          break;
        case RX_DISCARD:
          perS = r[Rate.discardPerS] + r[Rate.discardSpreadPerS] * u;
          break;
        case PRIO_RX_PAUSE:
          perS = r[Rate.rxPausePerS] * (0.5 + u);
          break;
        case PRIO_TX_PAUSE:
          perS = r[Rate.txPausePerS] * (0.5 + u);
          break;
        case ECN:
          perS = r[Rate.ecnPerS] * (0.5 + u);
          break;
        case CNP_SENT:
          perS = r[Rate.cnpSentPerS] * (0.5 + u);
          break;
        case CNP_HANDLED:
          perS = r[Rate.cnpHandledPerS] * (0.5 + u);
          break;
        default:
          perS = GENERIC_PER_S * (0.5 + u);
      }
      // Multiply before dividing so whole rates stay exact (1e5/s at 100 us
      // is exactly 10), then round stochastically so small rates keep their
      // mean at any period.
      const inc = Math.floor(perS * period / 1e9 + roundU);
      addNumberU64(record, at, record[at], record[at + 1], inc);
    }
  }

  /** Seeds column `k`'s starting value: weeks of uptime at a lifetime rate. */
  #seedStart(
    k: number,
    kind: number,
    uptimeS: number,
    override: bigint | undefined,
  ): void {
    const at = 2 * (k + 1);
    if (override !== undefined) {
      bigintToU64(override, this.#record, at);
      return;
    }
    // Related counters share the jitter (their stream's salt), so a
    // priority counter starts below its port counter; the low word is random.
    const jitter = 0.9 + 0.2 * mix32(this.#salts[k] ^ 0x5bd1e995) / TWO_32;
    const v = uptimeS * LIFETIME_RATE[kind] * jitter;
    if (v < TWO_32) {
      this.#record[at] = Math.floor(v);
      this.#record[at + 1] = 0;
    } else {
      this.#record[at] = mix32(this.#salts[k] ^ (k + 1) ^ 0x27d4eb2f);
      this.#record[at + 1] = Math.floor(v / TWO_32);
    }
  }
}
