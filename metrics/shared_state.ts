/**
 * What the sampling thread publishes for the endpoint's thread: every
 * counter, rule state, source health figure and completed window the
 * endpoint renders, in one SharedArrayBuffer.
 *
 * The sampler must never wait for the endpoint, and the endpoint may be
 * flooded, slow or restarting, so the two share memory under a sequence
 * lock rather than a message queue (which a starved reader would let grow
 * without bound): {@linkcode StatePublisher} builds the whole state in
 * private memory a few times a second, then copies it into the shared
 * buffer word by word, bumping a sequence number before and after;
 * {@linkcode PublishedState} copies it out word by word and keeps the copy
 * only if the sequence number was even and unchanged around it. Every
 * shared access is an `Atomics` operation: plain accesses to shared memory
 * may be reordered around the sequence number (Arm does), which would let a
 * reader keep a copy mixed from two publications. The writer never blocks
 * and never allocates in steady state; the reader keeps its last good copy
 * when a publication overlapped its read.
 *
 * @module
 */

import type { SourceDevice, SourceState } from "../collectors/collector.ts";
import { POLL_SLOTS, PollStats } from "../collectors/poll_stats.ts";
import { READ_SLOTS, ReadStats } from "../collectors/read_stats.ts";
import type { NicGpus } from "../collectors/pcie_affinity.ts";
import type { MonitorConfig } from "../config/types.ts";
import type { EventsLogStats } from "../events/log.ts";
import type { MonitorView, ServedMonitor } from "./agent_metrics.ts";
import type { WindowSnapshot } from "./aggregate.ts";
import { type DataFreshness, Freshness } from "./freshness.ts";

/** What both sides must agree on to lay out one monitor's state. */
export interface MonitorShape {
  /** The monitor's configuration (its columns and rules set the layout). */
  readonly config: MonitorConfig;
  /** Label pairs of each separately failing device (the GPUs), if any. */
  readonly devices: readonly (readonly (readonly [string, string])[])[];
  /** Whether the source keeps poll-loop statistics. */
  readonly polled: boolean;
  /** Whether the source times its reads. */
  readonly timed: boolean;
  /** The events log's path. */
  readonly logPath: string;
  /** The GPUs behind a NIC monitor (ServedMonitor's `nicGpus`), if it has them. */
  readonly nicGpus?: NicGpus;
  /** A GPU monitor's shared ring (ServedMonitor's `sharedRing`), if it has one. */
  readonly sharedRing?: SharedArrayBuffer;
}

/** Distinct error names per monitor whose counts are published. */
export const MAX_ERROR_NAMES = 16;
/** Bytes for a monitor's text (its failure and error names, as JSON). */
const TEXT_BYTES = 4096;
/** Longest failure message published, characters. */
const MAX_ERROR_CHARS = 1000;
/** Longest error name published, characters. */
const MAX_NAME_CHARS = 100;

// Float64 slots of one monitor, from its base.
const SAMPLES = 0;
const DROPPED = 1;
const EVENTS = 2;
const ACTIVE_RULES = 3;
const RING_COUNT = 4;
const RING_CAPACITY = 5;
const STATE = 6;
const SEEN = 7;
const DATA_AT_MS = 8;
const LOG_BYTES = 9;
const LOG_ERRORS = 10;
const LOG_DROPPED = 11;
const LOG_PENDING = 12;
const TEXT_VERSION = 13;
const BLIND_PERIODS = 14;
const POLL = 15; // PollStats.save's slots
const ERROR_COUNTS = POLL + POLL_SLOTS;
const READ = ERROR_COUNTS + MAX_ERROR_NAMES; // ReadStats.save's slots
const FIXED_SLOTS = READ + READ_SLOTS;
// Per rule: active, activations, active ms, changed at ms, pending, and
// the peak (a float64 like every slot; NaN before the first event, which
// the word-by-word copy keeps a NaN).
const RULE_SLOTS = 6;
const RULE_ACTIVE = 0;
const RULE_ACTIVATIONS = 1;
const RULE_ACTIVE_MS = 2;
const RULE_CHANGED_AT_MS = 3;
const RULE_PENDING = 4;
const RULE_PEAK = 5;
const WINDOW_SCALARS = [
  "sequence",
  "samples",
  "startNs",
  "endNs",
  "spanNs",
] as const;
const WINDOW_ARRAYS = [
  "rate",
  "rateMin",
  "rateMax",
  "rateMean",
  "increase",
  "resets",
  "resetsTotal",
  "last",
  "min",
  "max",
  "mean",
  "refresh",
] as const;
const STATES: readonly SourceState[] = ["idle", "running", "ended", "failed"];

// Agent-wide slots, before the first monitor.
const PUBLISHED_AT_MS = 0;
const GLOBAL_SLOTS = 1;
/** Bytes before the Float64 slots: the sequence number (Int32) and padding. */
const HEADER_BYTES = 8;

/** Where each monitor's slots and text lie in the buffer. */
interface Layout {
  readonly bytes: number;
  readonly bases: readonly number[];
  readonly devices: readonly number[];
  readonly rules: readonly number[];
  readonly windows: readonly number[];
  readonly texts: readonly number[];
}

function layoutOf(shapes: readonly MonitorShape[]): Layout {
  const bases: number[] = [];
  const devices: number[] = [];
  const rules: number[] = [];
  const windows: number[] = [];
  let slot = GLOBAL_SLOTS;
  for (const s of shapes) {
    bases.push(slot);
    slot += FIXED_SLOTS;
    devices.push(slot);
    slot += s.devices.length;
    rules.push(slot);
    slot += RULE_SLOTS * s.config.rules.length;
    windows.push(slot);
    slot += WINDOW_SCALARS.length +
      WINDOW_ARRAYS.length * s.config.columns.length;
  }
  const textStart = HEADER_BYTES + 8 * slot;
  const texts = shapes.map((_, i) => textStart + i * TEXT_BYTES);
  return {
    bytes: textStart + shapes.length * TEXT_BYTES,
    bases,
    devices,
    rules,
    windows,
    texts,
  };
}

/**
 * The shared buffer for `shapes`: pass it to both sides. With `startMs`
 * (when the agent started), a reader that looks before the first
 * publication (an endpoint started before the monitors' logs open) sees
 * each monitor idle with no data since then, as the first publication
 * would say, rather than no data since 1970.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sharedStateBuffer } from "./shared_state.ts";
 *
 * assert.ok(sharedStateBuffer([]) instanceof SharedArrayBuffer);
 * ```
 */
export function sharedStateBuffer(
  shapes: readonly MonitorShape[],
  startMs?: number,
): SharedArrayBuffer {
  const layout = layoutOf(shapes);
  const buffer = new SharedArrayBuffer(layout.bytes);
  if (startMs !== undefined) {
    // No reader has the buffer yet: plain writes.
    const slots = new Float64Array(buffer, HEADER_BYTES);
    for (const b of layout.bases) slots[b + DATA_AT_MS] = startMs;
  }
  return buffer;
}

/**
 * The sampling thread's side: copies the live monitors' state into the
 * shared buffer on each {@linkcode publish}. It also keeps the monitors'
 * freshness, so the data age the endpoint reports is measured where the
 * samples arrive, not on a thread that may be starved.
 *
 * @example See {@linkcode PublishedState}.
 */
export class StatePublisher {
  readonly #monitors: readonly ServedMonitor[];
  readonly #layout: Layout;
  readonly #sequence: Int32Array;
  readonly #shared: Int32Array;
  readonly #staged: Int32Array;
  readonly #slots: Float64Array;
  readonly #bytes: Uint8Array;
  readonly #freshness: Freshness;
  readonly #errors: (string | undefined)[];
  readonly #names: number[];
  readonly #encoder = new TextEncoder();

  /**
   * Publishes `monitors` (shaped as {@linkcode shapeOf} describes them)
   * into `buffer`, from {@linkcode sharedStateBuffer}; `startMs` is when
   * the agent started (the age of no data).
   */
  constructor(
    monitors: readonly ServedMonitor[],
    buffer: SharedArrayBuffer,
    startMs: number,
  ) {
    this.#monitors = monitors;
    this.#layout = layoutOf(monitors.map(shapeOf));
    if (buffer.byteLength !== this.#layout.bytes) {
      throw new RangeError(
        `shared state buffer is ${buffer.byteLength} bytes, the monitors need ${this.#layout.bytes}`,
      );
    }
    this.#sequence = new Int32Array(buffer, 0, 1);
    this.#shared = new Int32Array(buffer);
    // Built here with plain writes, then published with atomic ones.
    const staging = new ArrayBuffer(buffer.byteLength);
    this.#staged = new Int32Array(staging);
    this.#slots = new Float64Array(staging, HEADER_BYTES);
    this.#bytes = new Uint8Array(staging);
    this.#freshness = new Freshness(monitors.map((m) => m.monitor), startMs);
    this.#errors = monitors.map(() => undefined);
    this.#names = monitors.map(() => 0);
  }

  /** Writes the state as of host time `nowMs` (Unix ms). */
  publish(nowMs: number = Date.now()): void {
    this.#freshness.tick(nowMs);
    const s = this.#slots;
    s[PUBLISHED_AT_MS] = nowMs;
    for (let i = 0; i < this.#monitors.length; i++) {
      const m = this.#monitors[i];
      const b = this.#layout.bases[i];
      const monitor = m.monitor;
      s[b + SAMPLES] = monitor.samples;
      s[b + DROPPED] = monitor.droppedSamples;
      s[b + BLIND_PERIODS] = monitor.blindPeriods;
      s[b + EVENTS] = monitor.events;
      s[b + ACTIVE_RULES] = monitor.activeRules;
      s[b + RING_COUNT] = monitor.ring.count;
      s[b + RING_CAPACITY] = monitor.ring.capacity;
      s[b + STATE] = STATES.indexOf(m.status.state);
      s[b + SEEN] = this.#freshness.hasData(i) ? 1 : 0;
      s[b + DATA_AT_MS] = nowMs - this.#freshness.ageMs(i, nowMs);
      const stats = m.collector.pollStats;
      if (stats !== undefined) this.#writePoll(b, i, stats);
      const reads = m.collector.readStats;
      if (reads !== undefined) reads.save(s, b + READ);
      const log = m.log.stats;
      s[b + LOG_BYTES] = log.bytesWritten;
      s[b + LOG_ERRORS] = log.writeErrors;
      s[b + LOG_DROPPED] = log.droppedRows;
      s[b + LOG_PENDING] = log.pendingBytes;
      const devices = m.collector.devices ?? [];
      const d = this.#layout.devices[i];
      for (let k = 0; k < devices.length; k++) {
        s[d + k] = devices[k].up() ? 1 : 0;
      }
      const r = this.#layout.rules[i];
      for (let j = 0; j < monitor.rules.length; j++) {
        const rule = monitor.rules[j];
        const at = r + RULE_SLOTS * j;
        s[at + RULE_ACTIVE] = rule.active ? 1 : 0;
        s[at + RULE_ACTIVATIONS] = rule.activations;
        s[at + RULE_ACTIVE_MS] = monitor.ruleActiveMs(j);
        s[at + RULE_CHANGED_AT_MS] = monitor.ruleChangedAtMs(j);
        s[at + RULE_PENDING] = rule.pending ? 1 : 0;
        s[at + RULE_PEAK] = rule.peak;
      }
      this.#writeWindow(this.#layout.windows[i], m.aggregator.completed);
      if (m.status.error !== this.#errors[i]) {
        this.#errors[i] = m.status.error;
        this.#writeText(i);
      }
    }
    // Nothing below can throw: a failure above leaves the shared state as
    // it was, never half written.
    const shared = this.#shared;
    const staged = this.#staged;
    Atomics.add(this.#sequence, 0, 1); // odd: a write is under way
    for (let k = HEADER_BYTES / 4; k < staged.length; k++) {
      Atomics.store(shared, k, staged[k]);
    }
    Atomics.add(this.#sequence, 0, 1); // even: consistent again
  }

  /**
   * Publishes every `intervalMs` until the returned stop (which publishes
   * once more). A publication that throws is told to `onError` (once
   * until one succeeds again) and skipped: the endpoint then serves the
   * last state, and the sampler goes on.
   */
  start(
    intervalMs = 100,
    onError: (error: unknown) => void = () => {},
  ): { stop(): void } {
    let failing = false;
    const publish = () => {
      try {
        this.publish();
        failing = false;
      } catch (error) {
        if (!failing) onError(error);
        failing = true;
      }
    };
    publish();
    const timer = setInterval(publish, intervalMs);
    // The publisher never keeps the process alive by itself.
    Deno.unrefTimer(timer);
    return {
      stop: () => {
        clearInterval(timer);
        publish();
      },
    };
  }

  #writePoll(b: number, i: number, stats: PollStats): void {
    const s = this.#slots;
    stats.save(s, b + POLL);
    if (stats.errors.size !== this.#names[i]) {
      // A new error name: rare (names come from a fixed set), so the text
      // is rewritten only then.
      this.#names[i] = stats.errors.size;
      this.#writeText(i);
    }
    let k = 0;
    for (const count of stats.errors.values()) {
      if (k === MAX_ERROR_NAMES) break;
      s[b + ERROR_COUNTS + k++] = count;
    }
  }

  #writeWindow(w: number, snapshot: WindowSnapshot): void {
    const s = this.#slots;
    for (let k = 0; k < WINDOW_SCALARS.length; k++) {
      s[w + k] = snapshot[WINDOW_SCALARS[k]];
    }
    let at = w + WINDOW_SCALARS.length;
    for (let k = 0; k < WINDOW_ARRAYS.length; k++) {
      const values = snapshot[WINDOW_ARRAYS[k]];
      s.set(values, at);
      at += values.length;
    }
  }

  /** Rewrites monitor `i`'s text: its failure and its error names. */
  #writeText(i: number): void {
    const m = this.#monitors[i];
    const names = [...(m.collector.pollStats?.errors.keys() ?? [])]
      .slice(0, MAX_ERROR_NAMES)
      .map((n) => n.slice(0, MAX_NAME_CHARS));
    const at = this.#layout.texts[i];
    const room = this.#bytes.subarray(at + 4, at + TEXT_BYTES);
    // JSON of controls or other escapes takes up to 6 bytes a character:
    // shorten until the whole text fits, so the reader always gets JSON.
    let errorChars = MAX_ERROR_CHARS;
    let nameCount = names.length;
    for (;;) {
      const text = JSON.stringify({
        error: m.status.error?.slice(0, errorChars),
        names: names.slice(0, nameCount),
      });
      const { read, written } = this.#encoder.encodeInto(text, room);
      if (read === text.length) {
        new DataView(this.#bytes.buffer).setUint32(at, written, true);
        break;
      }
      if (errorChars > 0) errorChars = Math.floor(errorChars / 2);
      else nameCount = Math.floor(nameCount / 2);
    }
    this.#slots[this.#layout.bases[i] + TEXT_VERSION]++;
  }
}

/**
 * The shape {@linkcode StatePublisher} gives a served monitor: what the
 * endpoint's side needs to read it back.
 *
 * @example See {@linkcode PublishedState}.
 */
export function shapeOf(
  m: Pick<ServedMonitor, "config" | "collector" | "nicGpus" | "sharedRing"> & {
    readonly log: Pick<ServedMonitor["log"], "path">;
  },
): MonitorShape {
  return {
    config: m.config,
    devices: (m.collector.devices ?? []).map((d) => d.labels),
    polled: m.collector.pollStats !== undefined,
    timed: m.collector.readStats !== undefined,
    logPath: m.log.path,
    ...(m.nicGpus === undefined ? {} : { nicGpus: m.nicGpus }),
    ...(m.sharedRing === undefined ? {} : { sharedRing: m.sharedRing }),
  };
}

/**
 * The endpoint's side: served monitors backed by a private copy of the
 * shared state, refreshed by {@linkcode refresh}. Between refreshes every
 * figure stays put, so one render sees one consistent state.
 *
 * @example The sampler publishes; the endpoint reads
 * ```ts
 * import assert from "node:assert/strict";
 * import { WindowAggregator } from "./aggregate.ts";
 * import type { ServedMonitor } from "./agent_metrics.ts";
 * import {
 *   PublishedState,
 *   shapeOf,
 *   sharedStateBuffer,
 *   StatePublisher,
 * } from "./shared_state.ts";
 * import { Monitor } from "../rules/monitor.ts";
 * import type { MonitorConfig } from "../config/types.ts";
 *
 * const config: MonitorConfig = {
 *   name: "nic",
 *   source: "sim",
 *   samplePeriodNs: 1_000_000,
 *   depth: 2,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" }],
 *   rules: [],
 *   eventLog: "events.log",
 *   seed: 1,
 * };
 * const aggregator = new WindowAggregator({ columns: config.columns });
 * const noLog = { columnNames() {}, row() {}, eventStart() {}, eventEnd() {}, gap() {} };
 * const monitor = new Monitor(config, noLog, { observer: aggregator });
 * const live: ServedMonitor = {
 *   config,
 *   monitor,
 *   aggregator,
 *   collector: {},
 *   log: {
 *     path: "events.log",
 *     stats: { bytesWritten: 0, writeErrors: 0, droppedRows: 0, pendingBytes: 0 },
 *   },
 *   status: { state: "running" },
 * };
 * // The sampling thread:
 * const buffer = sharedStateBuffer([shapeOf(live)]);
 * const publisher = new StatePublisher([live], buffer, 0);
 * monitor.claim();
 * monitor.commit();
 * publisher.publish(1000);
 * // The endpoint's thread (given the same buffer and shapes):
 * const state = new PublishedState(buffer, [shapeOf(live)]);
 * assert.equal(state.refresh(), true);
 * const [nic] = state.monitors;
 * assert.equal(nic.monitor.samples, 1);
 * assert.equal(nic.status.state, "running");
 * assert.equal(state.freshness.ageMs(0, 1500), 500);
 * assert.equal(state.publishedAtMs, 1000);
 * ```
 */
export class PublishedState {
  /** The monitors as served, in configuration order. */
  readonly monitors: readonly ServedMonitor[];
  /** When each monitor last delivered a sample, as the sampler saw it. */
  readonly freshness: DataFreshness;
  readonly #shared: Int32Array;
  readonly #sequence: Int32Array;
  readonly #copy: Uint8Array;
  readonly #copyWords: Int32Array;
  readonly #slots: Float64Array;
  readonly #layout: Layout;
  readonly #textVersions: Float64Array;
  readonly #readers: MonitorReader[];

  /** Reads `buffer`, laid out for `shapes` (the publisher's {@linkcode shapeOf}). */
  constructor(buffer: SharedArrayBuffer, shapes: readonly MonitorShape[]) {
    this.#layout = layoutOf(shapes);
    if (buffer.byteLength !== this.#layout.bytes) {
      throw new RangeError(
        `shared state buffer is ${buffer.byteLength} bytes, the monitors need ${this.#layout.bytes}`,
      );
    }
    this.#shared = new Int32Array(buffer);
    this.#sequence = new Int32Array(buffer, 0, 1);
    this.#copy = new Uint8Array(buffer.byteLength);
    this.#copyWords = new Int32Array(this.#copy.buffer);
    this.#slots = new Float64Array(this.#copy.buffer, HEADER_BYTES);
    this.#textVersions = new Float64Array(shapes.length);
    this.#readers = shapes.map((shape, i) =>
      new MonitorReader(shape, this.#slots, this.#layout, i)
    );
    this.monitors = this.#readers.map((r) => r.served);
    const slots = this.#slots;
    const bases = this.#layout.bases;
    this.freshness = {
      hasData: (i) => slots[bases[i] + SEEN] === 1,
      ageMs: (i, nowMs) => Math.max(0, nowMs - slots[bases[i] + DATA_AT_MS]),
    };
  }

  /** Host time (Unix ms) of the state last copied; 0 before the first. */
  get publishedAtMs(): number {
    return this.#slots[PUBLISHED_AT_MS];
  }

  /**
   * Copies the newest consistent state. Returns false, keeping the last
   * copy (at most one publication older), when the sampler published
   * during every try.
   */
  refresh(): boolean {
    const shared = this.#shared;
    const words = this.#copyWords;
    for (let attempt = 0; attempt < 100; attempt++) {
      const before = Atomics.load(this.#sequence, 0);
      if ((before & 1) === 1) continue;
      for (let k = HEADER_BYTES / 4; k < words.length; k++) {
        words[k] = Atomics.load(shared, k);
      }
      if (Atomics.load(this.#sequence, 0) !== before) continue;
      for (let i = 0; i < this.#readers.length; i++) {
        const version = this.#slots[this.#layout.bases[i] + TEXT_VERSION];
        if (version !== this.#textVersions[i]) {
          this.#textVersions[i] = version;
          this.#readers[i].readText(this.#copy, this.#layout.texts[i]);
        }
      }
      return true;
    }
    return false;
  }
}

/** One monitor's served view over the private copy. */
class MonitorReader {
  readonly served: ServedMonitor;
  readonly #status: { state: SourceState; error?: string };
  #names: string[] = [];

  constructor(
    shape: MonitorShape,
    slots: Float64Array,
    layout: Layout,
    i: number,
  ) {
    const b = layout.bases[i];
    const r = layout.rules[i];
    const status: { state: SourceState; error?: string } = { state: "idle" };
    this.#status = status;
    const rules = shape.config.rules.map((_, j) => {
      const at = r + RULE_SLOTS * j;
      return {
        get active() {
          return slots[at + RULE_ACTIVE] === 1;
        },
        get activations() {
          return slots[at + RULE_ACTIVATIONS];
        },
        get pending() {
          return slots[at + RULE_PENDING] === 1;
        },
        get peak() {
          return slots[at + RULE_PEAK];
        },
      };
    });
    const monitor: MonitorView = {
      name: shape.config.name,
      get samples() {
        return slots[b + SAMPLES];
      },
      get droppedSamples() {
        return slots[b + DROPPED];
      },
      get blindPeriods() {
        return slots[b + BLIND_PERIODS];
      },
      get events() {
        return slots[b + EVENTS];
      },
      get activeRules() {
        return slots[b + ACTIVE_RULES];
      },
      ring: {
        get count() {
          return slots[b + RING_COUNT];
        },
        get capacity() {
          return slots[b + RING_CAPACITY];
        },
      },
      rules,
      ruleChangedAtMs: (j) => slots[r + RULE_SLOTS * j + RULE_CHANGED_AT_MS],
      // Counted up to now: the time since publication is still active time.
      ruleActiveMs: (j) =>
        slots[r + RULE_SLOTS * j + RULE_ACTIVE_MS] +
        (slots[r + RULE_SLOTS * j + RULE_ACTIVE] === 1
          ? Math.max(0, Date.now() - slots[PUBLISHED_AT_MS])
          : 0),
    };
    const d = layout.devices[i];
    const devices: SourceDevice[] = shape.devices.map((labels, k) => ({
      labels,
      up: () => slots[d + k] === 1,
    }));
    const stats = shape.polled ? new PollStats() : undefined;
    const reads = shape.timed
      ? new ReadStats(shape.config.samplePeriodNs / 1e6)
      : undefined;
    const names = () => this.#names;
    const logStats: EventsLogStats = {
      get bytesWritten() {
        return slots[b + LOG_BYTES];
      },
      get writeErrors() {
        return slots[b + LOG_ERRORS];
      },
      get droppedRows() {
        return slots[b + LOG_DROPPED];
      },
      get pendingBytes() {
        return slots[b + LOG_PENDING];
      },
    };
    const window = windowView(slots, layout.windows[i], shape.config);
    this.served = {
      config: shape.config,
      monitor,
      collector: {
        get pollStats() {
          if (stats === undefined) return undefined;
          stats.load(slots, b + POLL);
          stats.errors.clear();
          const known = names();
          for (let k = 0; k < known.length; k++) {
            stats.errors.set(known[k], slots[b + ERROR_COUNTS + k]);
          }
          return stats;
        },
        get readStats() {
          if (reads === undefined) return undefined;
          reads.load(slots, b + READ);
          return reads;
        },
        ...(shape.devices.length > 0 ? { devices } : {}),
      },
      log: { path: shape.logPath, stats: logStats },
      aggregator: { completed: window },
      get status() {
        status.state = STATES[slots[b + STATE]] ?? "idle";
        return status;
      },
      // Worked out once at start: it travels with the shape, not the buffer.
      ...(shape.nicGpus === undefined ? {} : { nicGpus: shape.nicGpus }),
      // Shared memory of its own, which the sampler writes as it samples.
      ...(shape.sharedRing === undefined
        ? {}
        : { sharedRing: shape.sharedRing }),
    };
  }

  readText(copy: Uint8Array, at: number): void {
    const length = new DataView(copy.buffer).getUint32(at, true);
    const text = new TextDecoder().decode(
      copy.subarray(at + 4, at + 4 + length),
    );
    const parsed = JSON.parse(text) as { error?: string; names: string[] };
    if (parsed.error === undefined) delete this.#status.error;
    else this.#status.error = parsed.error;
    this.#names = parsed.names;
  }
}

/** A WindowSnapshot whose fields are views of the private copy. */
function windowView(
  slots: Float64Array,
  w: number,
  config: MonitorConfig,
): WindowSnapshot {
  const n = config.columns.length;
  const arrays: Record<string, Float64Array> = {};
  let at = w + WINDOW_SCALARS.length;
  for (const key of WINDOW_ARRAYS) {
    arrays[key] = slots.subarray(at, at + n);
    at += n;
  }
  const view = { ...arrays } as Record<string, unknown>;
  WINDOW_SCALARS.forEach((key, k) => {
    Object.defineProperty(view, key, {
      get: () => slots[w + k],
      enumerable: true,
    });
  });
  return view as unknown as WindowSnapshot;
}
