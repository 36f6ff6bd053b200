/**
 * The shared memory through which the NVML worker hands records to the
 * GPU monitor on the main thread: a ring of records, each poll's lateness,
 * error counts and which GPUs are up. One writer (the worker), one reader
 * (the main thread); the written count, stored last with `Atomics.store`,
 * publishes a record. Nothing is allocated per record on either side.
 *
 * @module
 */

import { ERROR_SLOTS, GPU_SLOTS } from "./gpu_health.ts";

/** Records the ring holds: a minute of 1 s polls is far more than a drain needs. */
export const MAILBOX_RECORDS = 64;

/** One side's view of the shared memory. */
export class GpuMailbox {
  /** The memory itself, to post to the other side. */
  readonly buffer: SharedArrayBuffer;
  /** Words per record (timestamp and columns, 2 words each). */
  readonly recordWords: number;
  readonly capacity: number;
  /**
   * [0]: records written so far (wraps at 2^31, compared by difference);
   * [1]: the NVML call in progress (`NvmlPoller.busy`).
   */
  readonly control: Int32Array;
  /** How late each record's poll started, ms, by slot. */
  readonly lateness: Float64Array;
  /** Failed NVML calls by return code, as the worker counts them. */
  readonly errors: Float64Array;
  /** 1 while a GPU (by index) contributes, 0 once it is down. */
  readonly gpuUp: Int32Array;
  readonly records: Uint32Array;

  /**
   * A new mailbox for records of `recordWords` words, or a view of an
   * existing `buffer` (the worker's side).
   */
  constructor(
    recordWords: number,
    buffer?: SharedArrayBuffer,
    capacity = MAILBOX_RECORDS,
  ) {
    // A power of two divides 2^32, so slots stay in step when n wraps.
    if (capacity <= 0 || (capacity & (capacity - 1)) !== 0) {
      throw new RangeError(
        `GpuMailbox capacity must be a power of two, got ${capacity}`,
      );
    }
    const controlBytes = 8;
    const latenessBytes = capacity * 8;
    const errorBytes = ERROR_SLOTS * 8;
    const gpuBytes = GPU_SLOTS * 4;
    const recordBytes = capacity * recordWords * 4;
    this.buffer = buffer ?? new SharedArrayBuffer(
      controlBytes + latenessBytes + errorBytes + gpuBytes + recordBytes,
    );
    this.recordWords = recordWords;
    this.capacity = capacity;
    let at = 0;
    this.control = new Int32Array(this.buffer, at, 2);
    at += controlBytes;
    this.lateness = new Float64Array(this.buffer, at, capacity);
    at += latenessBytes;
    this.errors = new Float64Array(this.buffer, at, ERROR_SLOTS);
    at += errorBytes;
    this.gpuUp = new Int32Array(this.buffer, at, GPU_SLOTS);
    at += gpuBytes;
    this.records = new Uint32Array(this.buffer, at, capacity * recordWords);
  }

  /** Records written so far. */
  written(): number {
    return Atomics.load(this.control, 0);
  }

  /** Writer: publishes `record` with its poll's lateness. */
  publish(record: Uint32Array, latenessMs: number): void {
    const n = Atomics.load(this.control, 0);
    const slot = (n >>> 0) % this.capacity;
    this.records.set(record, slot * this.recordWords);
    this.lateness[slot] = latenessMs;
    Atomics.store(this.control, 0, (n + 1) | 0);
  }

  /** Offset in {@linkcode records} of record number `n`. */
  offsetOf(n: number): number {
    return ((n >>> 0) % this.capacity) * this.recordWords;
  }
}
