/**
 * The NVML side of the GPU monitor: opens the library, lists the GPUs, and
 * reads every configured column of every GPU into one record per poll.
 * Policy lives here: which call stands in for a missing newer one, when a
 * reading is unsupported (reads 0, said once), when a GPU is down (lost,
 * or failing three polls in a row: its columns keep their last values and
 * it is no longer called), and that no GPU can stop the others.
 *
 * Every NVML call can block (init and handle lookups wake GPUs; a sick
 * driver can hang any call), so this runs in a Worker
 * (collectors/nvml/worker.ts), never on the thread that polls the NIC.
 * It is synchronous so that tests can drive it directly.
 *
 * @module
 */

import { GPU_READINGS, MAX_GPU_INDEX } from "../../config/gpu_readings.ts";
import {
  cStringFromBuffer,
  libraryPaths,
  openFirst,
} from "../../ffi/library.ts";
import {
  ClockType,
  decodePciInfo,
  DRIVER_VERSION_BUFFER_SIZE,
  EccCounterType,
  EVENT_DATA_BYTES,
  EVENT_XID_CRITICAL_ERROR,
  FIELD_VALUE_BYTES,
  FieldId,
  MEMORY_BYTES,
  MEMORY_V2_BYTES,
  MEMORY_V2_VERSION,
  MemoryErrorType,
  NAME_BUFFER_SIZE,
  normalizePciBusId,
  NVML_SONAME,
  NVML_SYMBOLS,
  nvmlErrorString,
  NvmlReturn,
  nvmlReturnName,
  type NvmlSymbols,
  PCI_INFO_BYTES,
  readFieldValue,
  TEMPERATURE_V1_BYTES,
  TEMPERATURE_V1_VERSION,
  TemperatureSensor,
  UTILIZATION_BYTES,
  UUID_BUFFER_SIZE,
} from "../../ffi/nvml.ts";
import { addNumberU64, msToNsU64 } from "../../base/u64.ts";

/** One GPU as NVML names it. */
export interface GpuInfo {
  /** NVML's index (the `N` of `gpuN.` column names). */
  readonly index: number;
  readonly uuid: string;
  /** `0000:18:00.0`, as DOCA and lspci write it. */
  readonly pciBusId: string;
  readonly name: string;
}

/** What opening NVML found. */
export type NvmlOpenResult =
  | {
    readonly ok: true;
    readonly library: string;
    readonly driverVersion: string;
    readonly gpus: readonly GpuInfo[];
    /** GPUs that were counted but could not be opened, one line each. */
    readonly skipped: readonly string[];
  }
  | {
    readonly ok: false;
    /**
     * `info` when there is simply no NVML here (no library, no driver
     * loaded, no GPU); `warning` when there is one that does not work.
     */
    readonly level: "info" | "warning";
    readonly reason: string;
  };

/** One column of the record: a reading of a GPU. */
export interface GpuColumn {
  readonly gpu: number;
  /** Index into {@linkcode GPU_READINGS}. */
  readonly reading: number;
}

/** Something an operator should hear about, said once. */
export interface PollerNote {
  readonly level: "info" | "warning";
  readonly message: string;
  /** Set when the note is that this GPU went down. */
  readonly downGpu?: number;
}

const R = Object.fromEntries(GPU_READINGS.map((r, i) => [r.name, i])) as {
  readonly [name: string]: number;
};

/** Field-value readings and the field each comes from. */
const FIELD_READINGS: readonly (readonly [number, number])[] = [
  [R.pcie_replays, FieldId.PCIE_REPLAY_COUNTER],
  [R.nvlink_crc_flit_errors, FieldId.NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL],
  [R.nvlink_crc_data_errors, FieldId.NVLINK_CRC_DATA_ERROR_COUNT_TOTAL],
  [R.nvlink_replay_errors, FieldId.NVLINK_REPLAY_ERROR_COUNT_TOTAL],
  [R.nvlink_recovery_errors, FieldId.NVLINK_RECOVERY_ERROR_COUNT_TOTAL],
];

/** GPUs whose up/down state is kept (NVML indexes 0..63). */
export const GPU_SLOTS = MAX_GPU_INDEX + 1;

const NO_NOTES: readonly PollerNote[] = Object.freeze([]);

/** Polls in a row with a failed call before a GPU is taken down. */
export const FAILURES_BEFORE_DOWN = 3;
/** Events drained per poll at most, so an event storm cannot hold a poll. */
const MAX_EVENTS_PER_POLL = 64;
/** Error counts by code: 0..30, then one slot for everything else. */
export const ERROR_SLOTS = 32;

/** The calls a poll makes, in this order; temperature first. */
const Call = {
  Temperature: 0,
  Power: 1,
  Energy: 2,
  Utilization: 3,
  Memory: 4,
  SmClock: 5,
  MemClock: 6,
  Reasons: 7,
  EccCorrected: 8,
  EccUncorrected: 9,
  Fields: 10,
} as const;
type Call = typeof Call[keyof typeof Call];

/** Which call reads each reading (events are read once for all GPUs). */
const CALL_OF: readonly (Call | -1)[] = GPU_READINGS.map((r) => {
  switch (r.name) {
    case "temperature":
      return Call.Temperature;
    case "power":
      return Call.Power;
    case "energy":
      return Call.Energy;
    case "gpu_utilization":
    case "memory_utilization":
      return Call.Utilization;
    case "memory_used":
    case "memory_total":
      return Call.Memory;
    case "sm_clock":
      return Call.SmClock;
    case "memory_clock":
      return Call.MemClock;
    case "clock_event_reasons":
      return Call.Reasons;
    case "ecc_corrected":
      return Call.EccCorrected;
    case "ecc_uncorrected":
      return Call.EccUncorrected;
    case "xid_errors":
    case "last_xid":
      return -1;
    default:
      return Call.Fields;
  }
});

/**
 * What each call reads, for messages; the last entry is the Xid event
 * wait. Index + 1 is what {@linkcode NvmlPoller.busy} holds during a call.
 */
export const CALL_NAMES: readonly string[] = [
  "temperature",
  "power",
  "energy",
  "utilization",
  "memory",
  "sm_clock",
  "memory_clock",
  "clock_event_reasons",
  "ecc_corrected",
  "ecc_uncorrected",
  "field values (pcie_replays, nvlink_*)",
  "Xid event wait",
];
const EVENT_WAIT = CALL_NAMES.length - 1;

/** Per-GPU state during polling. */
interface GpuState {
  readonly info: GpuInfo;
  readonly handle: Deno.PointerValue;
  /** The device pointer's words, to match event data without BigInt. */
  readonly handleLo: number;
  readonly handleHi: number;
  /** Record offset (word) of each reading's lo word, or -1 when not a column. */
  readonly at: Int32Array;
  /** Calls to make, in order. */
  calls: Call[];
  /** Field IDs asked for, and the reading of each entry. */
  fieldIds: number[];
  fieldReadings: number[];
  fieldBuffer: Uint8Array;
  fieldView: DataView;
  /** Polls in a row in which every call failed. */
  failedPolls: number;
  /** Polls in a row in which each call failed, by call. */
  readonly streaks: Int32Array;
  /** The latest failure code of each call. */
  readonly lastErrors: Int32Array;
  useMemoryV2: boolean;
  useEventReasons: boolean;
  useTemperatureV: boolean;
}

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
   * indexes {@linkcode CALL_NAMES}), 0 between polls.
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
  #handles: Map<number, { handle: Deno.PointerValue; lo: number; hi: number }>;
  #gpus: GpuState[] = [];
  #notes: PollerNote[] = [];
  #eventSet: Deno.PointerValue = null;
  #eventData = new Uint8Array(EVENT_DATA_BYTES);
  #eventWords = new Uint32Array(this.#eventData.buffer);
  // Out-parameters, allocated once.
  #u32 = new Uint32Array(2);
  #u64 = new Uint32Array(2);
  #util = new Uint32Array(UTILIZATION_BYTES / 4);
  #mem = new Uint32Array(MEMORY_BYTES / 4);
  #memV2 = new Uint32Array(MEMORY_V2_BYTES / 4);
  #temperatureV = new Int32Array(TEMPERATURE_V1_BYTES / 4);

  private constructor(
    lib: Deno.DynamicLibrary<typeof NVML_SYMBOLS>,
    result: NvmlOpenResult & { ok: true },
    handles: Map<number, { handle: Deno.PointerValue; lo: number; hi: number }>,
  ) {
    this.#lib = lib;
    this.#nvml = lib.symbols;
    this.result = result;
    this.#handles = handles;
  }

  /**
   * Loads `libnvidia-ml.so.1` from the first of `dirs` that has it,
   * initializes NVML and lists the GPUs. Never throws for a host without
   * NVML or GPUs: `poller` is then absent and `result` says why.
   */
  static open(
    dirs: readonly string[],
  ): { poller?: NvmlPoller; result: NvmlOpenResult } {
    const paths = libraryPaths(NVML_SONAME.replace(/\.so\.1$/, ""), dirs, [
      ".so.1",
    ]);
    let opened;
    try {
      opened = openFirst(paths, NVML_SYMBOLS);
    } catch (error) {
      return {
        result: { ok: false, level: "warning", reason: messageOf(error) },
      };
    }
    if (opened === null) {
      return {
        result: {
          ok: false,
          level: "info",
          reason: `no NVML (${NVML_SONAME} not found in ${dirs.join(", ")})`,
        },
      };
    }
    const { library, path } = opened;
    const nvml = library.symbols;
    const init = nvml.nvmlInit_v2();
    if (init !== NvmlReturn.SUCCESS) {
      const reason = `NVML did not initialize: ${nvmlReturnName(init)} (${
        nvmlErrorString(nvml, init)
      }) from ${path}`;
      library.close();
      return {
        result: {
          ok: false,
          level: init === NvmlReturn.DRIVER_NOT_LOADED ? "info" : "warning",
          reason,
        },
      };
    }
    const close = () => {
      nvml.nvmlShutdown();
      library.close();
    };
    try {
      const driver = new Uint8Array(DRIVER_VERSION_BUFFER_SIZE);
      const driverVersion =
        nvml.nvmlSystemGetDriverVersion(driver, driver.length) ===
            NvmlReturn.SUCCESS
          ? cStringFromBuffer(driver)
          : "unknown";
      const count = new Uint32Array(1);
      const counted = nvml.nvmlDeviceGetCount_v2(count);
      if (counted !== NvmlReturn.SUCCESS) {
        close();
        return {
          result: {
            ok: false,
            level: "warning",
            reason: `NVML cannot count GPUs: ${nvmlReturnName(counted)} (${
              nvmlErrorString(nvml, counted)
            })`,
          },
        };
      }
      const gpus: GpuInfo[] = [];
      const skipped: string[] = [];
      const handles = new Map<
        number,
        { handle: Deno.PointerValue; lo: number; hi: number }
      >();
      const cell = new BigUint64Array(1);
      const words = new Uint32Array(cell.buffer);
      for (let index = 0; index < count[0]; index++) {
        const got = nvml.nvmlDeviceGetHandleByIndex_v2(index, cell);
        if (got !== NvmlReturn.SUCCESS) {
          skipped.push(
            `gpu${index}: cannot be opened: ${nvmlReturnName(got)} (${
              nvmlErrorString(nvml, got)
            }); left out`,
          );
          continue;
        }
        const handle = Deno.UnsafePointer.create(cell[0]);
        const info = describeGpu(nvml, handle, index);
        if (typeof info === "string") {
          skipped.push(info);
          continue;
        }
        gpus.push(info);
        handles.set(index, { handle, lo: words[0], hi: words[1] });
      }
      if (gpus.length === 0) {
        close();
        return {
          result: {
            ok: false,
            level: skipped.length === 0 ? "info" : "warning",
            reason: skipped.length === 0
              ? `NVML (driver ${driverVersion}) found no GPU`
              : `NVML found no GPU it could open: ${skipped.join("; ")}`,
          },
        };
      }
      const result = {
        ok: true as const,
        library: path,
        driverVersion,
        gpus,
        skipped,
      };
      return { poller: new NvmlPoller(library, result, handles), result };
    } catch (error) {
      close();
      throw error;
    }
  }

  /**
   * Prepares polling of `columns` (the record's columns in order; GPUs
   * must be among {@linkcode result}'s). Registers for Xid events when a
   * column needs them.
   */
  start(columns: readonly GpuColumn[]): void {
    this.recordWords = 2 * (1 + columns.length);
    const states = new Map<number, GpuState>();
    for (const [k, column] of columns.entries()) {
      let state = states.get(column.gpu);
      if (state === undefined) {
        const found = this.#handles.get(column.gpu);
        const info = this.result.gpus.find((g) => g.index === column.gpu);
        if (found === undefined || info === undefined) {
          throw new RangeError(`gpu${column.gpu} is not an open GPU`);
        }
        state = {
          info,
          handle: found.handle,
          handleLo: found.lo,
          handleHi: found.hi,
          at: new Int32Array(GPU_READINGS.length).fill(-1),
          calls: [],
          fieldIds: [],
          fieldReadings: [],
          fieldBuffer: new Uint8Array(0),
          fieldView: new DataView(new ArrayBuffer(0)),
          failedPolls: 0,
          streaks: new Int32Array(EVENT_WAIT),
          lastErrors: new Int32Array(EVENT_WAIT),
          useMemoryV2: this.#nvml.nvmlDeviceGetMemoryInfo_v2 !== null,
          useEventReasons:
            this.#nvml.nvmlDeviceGetCurrentClocksEventReasons !== null,
          useTemperatureV: this.#nvml.nvmlDeviceGetTemperatureV !== null,
        };
        states.set(column.gpu, state);
      }
      state.at[column.reading] = 2 * (1 + k);
    }
    this.#gpus = [...states.values()];
    for (const gpu of this.#gpus) this.gpuUp[gpu.info.index] = 1;
    for (const gpu of this.#gpus) {
      const calls = new Set<Call>();
      for (let r = 0; r < GPU_READINGS.length; r++) {
        if (gpu.at[r] >= 0 && CALL_OF[r] !== -1) calls.add(CALL_OF[r] as Call);
      }
      gpu.calls = [...calls].sort((a, b) => a - b);
      for (const [reading, field] of FIELD_READINGS) {
        if (gpu.at[reading] < 0) continue;
        gpu.fieldIds.push(field);
        gpu.fieldReadings.push(reading);
      }
      this.#sizeFields(gpu);
    }
    if (
      this.#gpus.some((g) => g.at[R.xid_errors] >= 0 || g.at[R.last_xid] >= 0)
    ) {
      this.#registerXidEvents();
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
        const code = this.#read(gpu, call, record);
        if (code === NvmlReturn.SUCCESS) {
          tried++;
          gpu.streaks[call] = 0;
          continue;
        }
        const counted = this.#failure(gpu, call, code, record);
        if (counted === 0) continue;
        tried++;
        failures++;
        last = counted;
        gpu.streaks[call]++;
        gpu.lastErrors[call] = counted;
      }
      if (this.gpuUp[gpu.info.index] === 0) continue;
      if (tried > 0 && failures === tried) {
        // Nothing answers: the GPU, not a reading, is in trouble.
        if (++gpu.failedPolls >= FAILURES_BEFORE_DOWN) {
          this.#down(
            gpu,
            `failed every call ${FAILURES_BEFORE_DOWN} polls in a row (last: ${
              nvmlReturnName(last)
            })`,
          );
        }
        continue;
      }
      gpu.failedPolls = 0;
      if (failures > 0) this.#dropFailingCalls(gpu);
    }
    if (this.#eventSet !== null) {
      Atomics.store(this.busy, 0, EVENT_WAIT + 1);
      this.#drainEvents(record);
    }
    Atomics.store(this.busy, 0, 0);
  }

  /** Notes gathered since the last call (unsupported readings, GPUs down). */
  takeNotes(): readonly PollerNote[] {
    // Most polls have nothing to say: hand back one shared empty list.
    if (this.#notes.length === 0) return NO_NOTES;
    const notes = this.#notes;
    this.#notes = [];
    return notes;
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
    if (this.#eventSet !== null) {
      const freed = this.#nvml.nvmlEventSetFree(this.#eventSet);
      if (freed !== NvmlReturn.SUCCESS) {
        problems.push(`nvmlEventSetFree: ${nvmlReturnName(freed)}`);
      }
      this.#eventSet = null;
    }
    const shut = this.#nvml.nvmlShutdown();
    if (shut !== NvmlReturn.SUCCESS) {
      problems.push(`nvmlShutdown: ${nvmlReturnName(shut)}`);
    }
    this.#lib.close();
    this.#lib = null;
    return problems;
  }

  /** One call's readings into `record`; returns NVML's code. */
  #read(gpu: GpuState, call: Call, record: Uint32Array): number {
    const nvml = this.#nvml;
    const h = gpu.handle;
    const at = gpu.at;
    const u32 = this.#u32;
    const u64 = this.#u64;
    let code: number;
    switch (call) {
      case Call.Temperature:
        if (gpu.useTemperatureV) {
          const v = this.#temperatureV;
          v[0] = TEMPERATURE_V1_VERSION;
          v[1] = TemperatureSensor.GPU;
          v[2] = 0;
          code = nvml.nvmlDeviceGetTemperatureV!(h, v);
          if (code === 0) {
            put32(record, at[R.temperature], v[2] > 0 ? v[2] : 0);
            return code;
          }
          if (
            !isUnsupported(code) &&
            code !== NvmlReturn.ARGUMENT_VERSION_MISMATCH
          ) {
            return code;
          }
          gpu.useTemperatureV = false;
        }
        if (nvml.nvmlDeviceGetTemperature === null) {
          return NvmlReturn.FUNCTION_NOT_FOUND;
        }
        code = nvml.nvmlDeviceGetTemperature(h, TemperatureSensor.GPU, u32);
        if (code === 0) put32(record, at[R.temperature], u32[0]);
        return code;
      case Call.Power:
        code = nvml.nvmlDeviceGetPowerUsage(h, u32);
        if (code === 0) put32(record, at[R.power], u32[0]);
        return code;
      case Call.Energy:
        code = nvml.nvmlDeviceGetTotalEnergyConsumption(h, u64);
        if (code === 0) put64(record, at[R.energy], u64[0], u64[1]);
        return code;
      case Call.Utilization:
        code = nvml.nvmlDeviceGetUtilizationRates(h, this.#util);
        if (code === 0) {
          put32(record, at[R.gpu_utilization], this.#util[0]);
          put32(record, at[R.memory_utilization], this.#util[1]);
        }
        return code;
      case Call.Memory:
        return this.#readMemory(gpu, record);
      case Call.SmClock:
        code = nvml.nvmlDeviceGetClockInfo(h, ClockType.SM, u32);
        if (code === 0) put32(record, at[R.sm_clock], u32[0]);
        return code;
      case Call.MemClock:
        code = nvml.nvmlDeviceGetClockInfo(h, ClockType.MEM, u32);
        if (code === 0) put32(record, at[R.memory_clock], u32[0]);
        return code;
      case Call.Reasons:
        if (gpu.useEventReasons) {
          code = nvml.nvmlDeviceGetCurrentClocksEventReasons!(h, u64);
          if (
            code === NvmlReturn.FUNCTION_NOT_FOUND ||
            code === NvmlReturn.NOT_SUPPORTED
          ) {
            // Older drivers export the name but only answer the old one.
            gpu.useEventReasons = false;
            return this.#read(gpu, call, record);
          }
        } else if (nvml.nvmlDeviceGetCurrentClocksThrottleReasons !== null) {
          code = nvml.nvmlDeviceGetCurrentClocksThrottleReasons(h, u64);
        } else {
          return NvmlReturn.FUNCTION_NOT_FOUND;
        }
        if (code === 0) {
          put64(record, at[R.clock_event_reasons], u64[0], u64[1]);
        }
        return code;
      case Call.EccCorrected:
        code = nvml.nvmlDeviceGetTotalEccErrors(
          h,
          MemoryErrorType.CORRECTED,
          EccCounterType.VOLATILE,
          u64,
        );
        if (code === 0) put64(record, at[R.ecc_corrected], u64[0], u64[1]);
        return code;
      case Call.EccUncorrected:
        code = nvml.nvmlDeviceGetTotalEccErrors(
          h,
          MemoryErrorType.UNCORRECTED,
          EccCounterType.VOLATILE,
          u64,
        );
        if (code === 0) put64(record, at[R.ecc_uncorrected], u64[0], u64[1]);
        return code;
      case Call.Fields:
        return this.#readFields(gpu, record);
    }
  }

  #readMemory(gpu: GpuState, record: Uint32Array): number {
    const at = gpu.at;
    if (gpu.useMemoryV2) {
      const v2 = this.#memV2;
      v2.fill(0);
      v2[0] = MEMORY_V2_VERSION;
      const code = this.#nvml.nvmlDeviceGetMemoryInfo_v2!(gpu.handle, v2);
      if (code === 0) {
        // total at byte 8, used (without the driver's reserve) at byte 32.
        put64(record, at[R.memory_total], v2[2], v2[3]);
        put64(record, at[R.memory_used], v2[8], v2[9]);
        return code;
      }
      if (
        code !== NvmlReturn.ARGUMENT_VERSION_MISMATCH &&
        code !== NvmlReturn.FUNCTION_NOT_FOUND &&
        code !== NvmlReturn.NOT_SUPPORTED
      ) {
        return code;
      }
      gpu.useMemoryV2 = false;
    }
    const v1 = this.#mem;
    const code = this.#nvml.nvmlDeviceGetMemoryInfo(gpu.handle, v1);
    if (code === 0) {
      put64(record, at[R.memory_total], v1[0], v1[1]);
      put64(record, at[R.memory_used], v1[4], v1[5]);
    }
    return code;
  }

  #readFields(gpu: GpuState, record: Uint32Array): number {
    const view = gpu.fieldView;
    const n = gpu.fieldIds.length;
    for (let i = 0; i < n; i++) {
      // fieldId and scopeId in; the rest is NVML's to fill.
      view.setUint32(i * FIELD_VALUE_BYTES, gpu.fieldIds[i], true);
      view.setUint32(i * FIELD_VALUE_BYTES + 4, 0, true);
      view.setInt32(i * FIELD_VALUE_BYTES + 28, NvmlReturn.UNKNOWN, true);
    }
    const code = this.#nvml.nvmlDeviceGetFieldValues(
      gpu.handle,
      n,
      gpu.fieldBuffer,
    );
    if (code !== NvmlReturn.SUCCESS) return code;
    let worst = 0;
    let unsupported = false;
    for (let i = 0; i < n; i++) {
      const status = readFieldValue(
        view,
        i,
        record,
        gpu.at[gpu.fieldReadings[i]],
      );
      if (status === NvmlReturn.SUCCESS) continue;
      if (isUnsupported(status)) unsupported = true;
      else if (worst === 0 || status === NvmlReturn.GPU_IS_LOST) worst = status;
    }
    if (unsupported) this.#dropUnsupportedFields(gpu, record);
    return worst;
  }

  /** Entries NVML said it does not support read 0 from now on. */
  #dropUnsupportedFields(gpu: GpuState, record: Uint32Array): void {
    const dropped: string[] = [];
    const ids: number[] = [];
    const readings: number[] = [];
    for (let i = 0; i < gpu.fieldIds.length; i++) {
      const status = gpu.fieldView.getInt32(i * FIELD_VALUE_BYTES + 28, true);
      if (isUnsupported(status)) {
        const r = gpu.fieldReadings[i];
        put32(record, gpu.at[r], 0);
        dropped.push(GPU_READINGS[r].name);
      } else {
        ids.push(gpu.fieldIds[i]);
        readings.push(gpu.fieldReadings[i]);
      }
    }
    gpu.fieldIds = ids;
    gpu.fieldReadings = readings;
    this.#sizeFields(gpu);
    if (ids.length === 0) {
      gpu.calls = gpu.calls.filter((c) => c !== Call.Fields);
    }
    this.#notes.push({
      level: "info",
      message: `${label(gpu.info)}: ${dropped.join(", ")} not supported (${
        nvmlReturnName(NvmlReturn.NOT_SUPPORTED)
      }); reading 0`,
    });
  }

  #sizeFields(gpu: GpuState): void {
    gpu.fieldBuffer = new Uint8Array(gpu.fieldIds.length * FIELD_VALUE_BYTES);
    gpu.fieldView = new DataView(gpu.fieldBuffer.buffer);
  }

  /**
   * Decides what a failed call means. Returns the code if it counts
   * against the GPU's health, 0 if not (an unsupported reading).
   */
  #failure(
    gpu: GpuState,
    call: Call,
    code: number,
    record: Uint32Array,
  ): number {
    if (isUnsupported(code)) {
      gpu.calls = gpu.calls.filter((c) => c !== call);
      for (let r = 0; r < GPU_READINGS.length; r++) {
        if (CALL_OF[r] === call) put32(record, gpu.at[r], 0);
      }
      this.#notes.push({
        level: "info",
        message: `${label(gpu.info)}: ${CALL_NAMES[call]} not supported (${
          nvmlReturnName(code)
        }); reading 0`,
      });
      return 0;
    }
    this.errors[code < ERROR_SLOTS - 1 ? code : ERROR_SLOTS - 1]++;
    if (code === NvmlReturn.GPU_IS_LOST) {
      this.#down(gpu, `is lost (${nvmlReturnName(code)})`);
    }
    return code;
  }

  /**
   * A call that fails poll after poll while others answer is one broken
   * reading: it is no longer asked, and its columns keep their last values.
   */
  #dropFailingCalls(gpu: GpuState): void {
    for (const call of gpu.calls) {
      if (gpu.streaks[call] < FAILURES_BEFORE_DOWN) continue;
      gpu.calls = gpu.calls.filter((c) => c !== call);
      this.#notes.push({
        level: "warning",
        message: `${label(gpu.info)}: ${
          CALL_NAMES[call]
        } failed ${FAILURES_BEFORE_DOWN} polls in a row (${
          nvmlReturnName(gpu.lastErrors[call])
        }): no longer read, keeps its last value; the GPU's other readings go on`,
      });
    }
  }

  #down(gpu: GpuState, why: string): void {
    this.gpuUp[gpu.info.index] = 0;
    this.#notes.push({
      level: "warning",
      message: `${
        label(gpu.info)
      } ${why}: no longer read, its columns keep their last values; other GPUs are read as before`,
      downGpu: gpu.info.index,
    });
  }

  #registerXidEvents(): void {
    const nvml = this.#nvml;
    const cell = new BigUint64Array(1);
    const created = nvml.nvmlEventSetCreate(cell);
    if (created !== NvmlReturn.SUCCESS) {
      this.#notes.push({
        level: "warning",
        message: `Xid events unavailable: nvmlEventSetCreate: ${
          nvmlReturnName(created)
        }; xid_errors and last_xid read 0`,
      });
      return;
    }
    const set = Deno.UnsafePointer.create(cell[0]);
    let registered = 0;
    for (const gpu of this.#gpus) {
      if (gpu.at[R.xid_errors] < 0 && gpu.at[R.last_xid] < 0) continue;
      const supported = new BigUint64Array(1);
      let code = nvml.nvmlDeviceGetSupportedEventTypes(gpu.handle, supported);
      if (
        code === NvmlReturn.SUCCESS &&
        (supported[0] & BigInt(EVENT_XID_CRITICAL_ERROR)) === 0n
      ) {
        code = NvmlReturn.NOT_SUPPORTED;
      }
      if (code === NvmlReturn.SUCCESS) {
        code = nvml.nvmlDeviceRegisterEvents(
          gpu.handle,
          BigInt(EVENT_XID_CRITICAL_ERROR),
          set,
        );
      }
      if (code === NvmlReturn.SUCCESS) {
        registered++;
      } else {
        this.#notes.push({
          level: "info",
          message: `${label(gpu.info)}: Xid events not available (${
            nvmlReturnName(code)
          }); xid_errors and last_xid read 0`,
        });
      }
    }
    if (registered === 0) {
      nvml.nvmlEventSetFree(set);
      return;
    }
    this.#eventSet = set;
  }

  #drainEvents(record: Uint32Array): void {
    const words = this.#eventWords;
    for (let n = 0; n < MAX_EVENTS_PER_POLL; n++) {
      const code = this.#nvml.nvmlEventSetWait_v2(
        this.#eventSet,
        this.#eventData,
        0,
      );
      if (code === NvmlReturn.TIMEOUT) return;
      if (code !== NvmlReturn.SUCCESS) {
        this.errors[code < ERROR_SLOTS - 1 ? code : ERROR_SLOTS - 1]++;
        return;
      }
      // eventType (byte 8) must include Xid; eventData (byte 16) is the Xid.
      if ((words[2] & EVENT_XID_CRITICAL_ERROR) === 0) continue;
      for (let i = 0; i < this.#gpus.length; i++) {
        const gpu = this.#gpus[i];
        if (gpu.handleLo !== words[0] || gpu.handleHi !== words[1]) continue;
        const count = gpu.at[R.xid_errors];
        if (count >= 0) {
          addNumberU64(record, count, record[count], record[count + 1], 1);
        }
        put32(record, gpu.at[R.last_xid], words[4]);
        break;
      }
    }
  }
}

/** Identity of one GPU, or a line saying why it is left out. */
function describeGpu(
  nvml: NvmlSymbols,
  handle: Deno.PointerValue,
  index: number,
): GpuInfo | string {
  const name = new Uint8Array(NAME_BUFFER_SIZE);
  const uuid = new Uint8Array(UUID_BUFFER_SIZE);
  const pci = new Uint8Array(PCI_INFO_BYTES);
  for (
    const [call, code] of [
      ["nvmlDeviceGetName", nvml.nvmlDeviceGetName(handle, name, name.length)],
      ["nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID(handle, uuid, uuid.length)],
      ["nvmlDeviceGetPciInfo_v3", nvml.nvmlDeviceGetPciInfo_v3(handle, pci)],
    ] as const
  ) {
    if (code !== NvmlReturn.SUCCESS) {
      return `gpu${index}: ${call}: ${nvmlReturnName(code)} (${
        nvmlErrorString(nvml, code)
      }); left out`;
    }
  }
  return {
    index,
    uuid: cStringFromBuffer(uuid),
    pciBusId: normalizePciBusId(decodePciInfo(pci).busId),
    name: cStringFromBuffer(name),
  };
}

function label(gpu: GpuInfo): string {
  return `gpu${gpu.index} (${gpu.pciBusId}, ${gpu.uuid})`;
}

function isUnsupported(code: number): boolean {
  return code === NvmlReturn.NOT_SUPPORTED ||
    code === NvmlReturn.FUNCTION_NOT_FOUND;
}

function put32(record: Uint32Array, at: number, value: number): void {
  if (at < 0) return;
  record[at] = value;
  record[at + 1] = 0;
}

function put64(record: Uint32Array, at: number, lo: number, hi: number): void {
  if (at < 0) return;
  record[at] = lo;
  record[at + 1] = hi;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
