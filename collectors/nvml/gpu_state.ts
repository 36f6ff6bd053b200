/**
 * One GPU as the poller keeps it between polls: where each of its
 * readings goes in the record, which calls are still asked (and whether
 * the newer form of a call is still tried first), and how its calls have
 * been answering. The readers, the failure policy and the Xid events all
 * work on this one object, built once at start, so that a poll allocates
 * nothing.
 *
 * @module
 */

import { GPU_READINGS } from "../../config/gpu_readings.ts";
import { FIELD_VALUE_BYTES, type NvmlSymbols } from "../../ffi/nvml.ts";
import type { GpuHandle, GpuInfo } from "./gpu_list.ts";
import {
  type Call,
  CALL_OF,
  EVENT_WAIT,
  FIELD_READINGS,
  type GpuColumn,
} from "./readings.ts";

/** Per-GPU state during polling. */
export interface GpuState {
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
  /**
   * Whether the newer form of a call is still tried first: false once
   * this GPU's driver lacked it or would not answer it, so that the older
   * form is asked straight away from then on.
   */
  useMemoryV2: boolean;
  useEventReasons: boolean;
  useTemperatureV: boolean;
}

/**
 * The state of each GPU that `columns` (the record's columns in order)
 * read, in order of first appearance, with its calls planned.
 *
 * @throws {RangeError} when a column names a GPU not among `gpus`.
 */
export function statesForColumns(
  columns: readonly GpuColumn[],
  gpus: readonly GpuInfo[],
  handles: ReadonlyMap<number, GpuHandle>,
  nvml: NvmlSymbols,
): GpuState[] {
  const states = new Map<number, GpuState>();
  for (const [k, column] of columns.entries()) {
    let state = states.get(column.gpu);
    if (state === undefined) {
      const found = handles.get(column.gpu);
      const info = gpus.find((g) => g.index === column.gpu);
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
        useMemoryV2: nvml.nvmlDeviceGetMemoryInfo_v2 !== null,
        useEventReasons: nvml.nvmlDeviceGetCurrentClocksEventReasons !== null,
        useTemperatureV: nvml.nvmlDeviceGetTemperatureV !== null,
      };
      states.set(column.gpu, state);
    }
    state.at[column.reading] = 2 * (1 + k);
  }
  const planned = [...states.values()];
  for (const gpu of planned) planCalls(gpu);
  return planned;
}

/**
 * Sizes the field-value request buffer to `gpu.fieldIds`; called again
 * whenever entries are dropped, since NVML fills one entry per field asked.
 */
export function sizeFields(gpu: GpuState): void {
  gpu.fieldBuffer = new Uint8Array(gpu.fieldIds.length * FIELD_VALUE_BYTES);
  gpu.fieldView = new DataView(gpu.fieldBuffer.buffer);
}

/** Stops asking `gpu` for `call` from the next poll on. */
export function dropCall(gpu: GpuState, call: Call): void {
  gpu.calls = gpu.calls.filter((c) => c !== call);
}

/** The calls and field values the columns of `gpu` need, in call order. */
function planCalls(gpu: GpuState): void {
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
  sizeFields(gpu);
}
