/**
 * The NVML side of the GPU monitor: ties the parts of a poll together.
 * NVML is opened and its GPUs listed (gpu_list.ts); each poll makes every
 * GPU's calls in order (readers.ts), lets the failure policy judge each
 * failed call and each GPU (gpu_health.ts), drains the Xid events
 * (xid_events.ts) and stamps the record. No GPU can stop the others.
 *
 * Every NVML call can block (init and handle lookups wake GPUs; a sick
 * driver can hang any call), so this runs in a Worker
 * (collectors/nvml/worker.ts), never on the thread that polls the NIC.
 * It is synchronous so that tests can drive it directly.
 *
 * @module
 */

import {
  type NVML_SYMBOLS,
  NvmlReturn,
  nvmlReturnName,
  type NvmlSymbols,
} from "../../ffi/nvml.ts";
import { msToNsU64 } from "../../base/u64.ts";
import { type GpuHandle, type NvmlOpenResult, openNvml } from "./gpu_list.ts";
import { ERROR_SLOTS, GPU_SLOTS, GpuHealth } from "./gpu_health.ts";
import { type GpuState, statesForColumns } from "./gpu_state.ts";
import { type PollerNote, PollerNotes } from "./notes.ts";
import { GpuReaders } from "./readers.ts";
import { EVENT_WAIT, type GpuColumn } from "./readings.ts";
import { wantsXidEvents, XidEvents } from "./xid_events.ts";

/**
 * NVML opened in this thread.
 *
 * @example
 * ```ts ignore
 * const opened = NvmlPoller.open(["/usr/lib/x86_64-linux-gnu"]);
 * if (opened.poller) {
 *   opened.poller.start([{ gpu: 0, reading: 0 }]);
 *   const record = new Uint32Array(opened.poller.recordWords);
 *   opened.poller.poll(record, Date.now());
 *   opened.poller.close();
 * }
 * ```
 */
export class NvmlPoller {
  /** What opening NVML found: the library, driver version and GPUs. */
  readonly result: NvmlOpenResult & { ok: true };
  /** Failed calls by `nvmlReturn_t` code (code 31 and up share the last slot). */
  errors: Float64Array = new Float64Array(ERROR_SLOTS);
  /** 1 while the GPU with that index is read, 0 once it is down. */
  gpuUp: Int32Array = new Int32Array(GPU_SLOTS);
  /** Words in one record: timestamp and every column, 2 words each. */
  recordWords = 2;
  /**
   * Where the call in progress is published for a watchdog on another
   * thread: `busy[0]` is `gpu << 8 | (call + 1)` during an NVML call (call
   * indexes `CALL_NAMES` of readings.ts), 0 between polls.
   */
  busy: Int32Array = new Int32Array(1);

  /**
   * Keeps {@linkcode errors}, {@linkcode gpuUp} and {@linkcode busy} in
   * memory another thread reads (the worker's mailbox) instead of this
   * poller's own arrays. Call before {@linkcode start}.
   */
  share(shared: {
    readonly errors: Float64Array;
    readonly gpuUp: Int32Array;
    readonly busy: Int32Array;
  }): void {
    this.errors = shared.errors;
    this.gpuUp = shared.gpuUp;
    this.busy = shared.busy;
  }

  #lib: Deno.DynamicLibrary<typeof NVML_SYMBOLS> | null;
  #nvml: NvmlSymbols;
  #handles: Map<number, GpuHandle>;
  #gpus: GpuState[] = [];
  #notes = new PollerNotes();
  #readers: GpuReaders;
  // The policy reads errors and gpuUp through this poller, so that it
  // follows share().
  #health = new GpuHealth(this, this.#notes);
  #xid: XidEvents | null = null;

  private constructor(
    lib: Deno.DynamicLibrary<typeof NVML_SYMBOLS>,
    result: NvmlOpenResult & { ok: true },
    handles: Map<number, GpuHandle>,
  ) {
    this.#lib = lib;
    this.#nvml = lib.symbols;
    this.result = result;
    this.#handles = handles;
    this.#readers = new GpuReaders(this.#nvml, this.#notes);
  }

  /**
   * Loads `libnvidia-ml.so.1` from the first of `dirs` that has it,
   * initializes NVML and lists the GPUs. Never throws for a host without
   * NVML or GPUs: `poller` is then absent and `result` says why.
   */
  static open(
    dirs: readonly string[],
  ): { poller?: NvmlPoller; result: NvmlOpenResult } {
    const { opened, result } = openNvml(dirs);
    if (opened === undefined) return { result };
    const { library, handles } = opened;
    return { poller: new NvmlPoller(library, opened.result, handles), result };
  }

  /**
   * Prepares polling of `columns` (the record's columns in order; GPUs
   * must be among {@linkcode result}'s). Registers for Xid events when a
   * column needs them.
   */
  start(columns: readonly GpuColumn[]): void {
    this.recordWords = 2 * (1 + columns.length);
    this.#gpus = statesForColumns(
      columns,
      this.result.gpus,
      this.#handles,
      this.#nvml,
    );
    for (const gpu of this.#gpus) this.gpuUp[gpu.info.index] = 1;
    if (wantsXidEvents(this.#gpus)) {
      this.#xid = XidEvents.register(this.#nvml, this.#gpus, this, this.#notes);
    }
  }

  /**
   * Reads every column into `record` (which keeps what a failed call could
   * not refresh) and stamps it with `wallMs` (ms since the epoch).
   * Allocates nothing once started (notes aside).
   */
  poll(record: Uint32Array, wallMs: number): void {
    msToNsU64(record, 0, wallMs);
    for (let i = 0; i < this.#gpus.length; i++) {
      const gpu = this.#gpus[i];
      if (this.gpuUp[gpu.info.index] === 0) continue;
      let last = 0;
      let tried = 0;
      let failures = 0;
      // A failed call may drop itself from gpu.calls: walk a stable list.
      const calls = gpu.calls;
      for (
        let c = 0;
        c < calls.length && this.gpuUp[gpu.info.index] === 1;
        c++
      ) {
        const call = calls[c];
        Atomics.store(this.busy, 0, (gpu.info.index << 8) | (call + 1));
        const code = this.#readers.read(gpu, call, record);
        if (code === NvmlReturn.SUCCESS) {
          tried++;
          this.#health.answered(gpu, call);
          continue;
        }
        const counted = this.#health.failed(gpu, call, code, record);
        if (counted === 0) continue;
        tried++;
        failures++;
        last = counted;
      }
      this.#health.endPoll(gpu, tried, failures, last);
    }
    if (this.#xid !== null) {
      Atomics.store(this.busy, 0, EVENT_WAIT + 1);
      this.#xid.drain(record);
    }
    Atomics.store(this.busy, 0, 0);
  }

  /** Notes gathered since the last call (unsupported readings, GPUs down). */
  takeNotes(): readonly PollerNote[] {
    return this.#notes.take();
  }

  /** Whether GPU `index` still contributes. */
  isUp(index: number): boolean {
    return this.gpuUp[index] === 1;
  }

  /**
   * Frees the event set, shuts NVML down and unloads it. Returns problems
   * as lines; never throws.
   */
  close(): string[] {
    const problems: string[] = [];
    if (this.#lib === null) return problems;
    if (this.#xid !== null) {
      const problem = this.#xid.free();
      if (problem !== null) problems.push(problem);
      this.#xid = null;
    }
    const shut = this.#nvml.nvmlShutdown();
    if (shut !== NvmlReturn.SUCCESS) {
      problems.push(`nvmlShutdown: ${nvmlReturnName(shut)}`);
    }
    this.#lib.close();
    this.#lib = null;
    return problems;
  }
}
