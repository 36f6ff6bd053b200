/**
 * What a failed NVML call means for one GPU. An unsupported reading reads
 * 0, is said once and is not asked again. Any other failure is counted by
 * its NVML error. A call failing {@linkcode FAILURES_BEFORE_DOWN} polls in
 * a row while the GPU's other calls answer is one broken reading: it alone
 * is dropped. A GPU that is lost, or whose every call fails that many
 * polls in a row, is taken down: no longer read, its columns keep their
 * last values. Whatever happens to one GPU, the others are read as before.
 *
 * @module
 */

import { GPU_READINGS, MAX_GPU_INDEX } from "../../config/gpu_readings.ts";
import { NvmlReturn, nvmlReturnName } from "../../ffi/nvml.ts";
import { gpuLabel } from "./gpu_list.ts";
import { dropCall, type GpuState } from "./gpu_state.ts";
import type { PollerNotes } from "./notes.ts";
import {
  type Call,
  CALL_NAMES,
  CALL_OF,
  isUnsupported,
  put32,
} from "./readings.ts";

/** GPUs whose up/down state is kept (NVML indexes 0..63). */
export const GPU_SLOTS = MAX_GPU_INDEX + 1;
/** Polls in a row with a failed call before a GPU is taken down. */
export const FAILURES_BEFORE_DOWN = 3;
/** Error counts by code: 0..30, then one slot for everything else. */
export const ERROR_SLOTS = 32;

/**
 * Where health is published. The arrays are looked up on every use: the
 * poller may swap them for ones in shared memory before it starts.
 */
export interface HealthBoard {
  /** Failed calls by `nvmlReturn_t` code (31 and up share the last slot). */
  readonly errors: Float64Array;
  /** 1 while the GPU with that index is read, 0 once it is down. */
  readonly gpuUp: Int32Array;
}

/** Counts one failed call with NVML code `code` in `errors`. */
export function countError(errors: Float64Array, code: number): void {
  errors[code < ERROR_SLOTS - 1 ? code : ERROR_SLOTS - 1]++;
}

/** The failure policy of the GPUs of one poller. */
export class GpuHealth {
  #board: HealthBoard;
  #notes: PollerNotes;

  /** Publishes to `board`; says in `notes` what it gives up on. */
  constructor(board: HealthBoard, notes: PollerNotes) {
    this.#board = board;
    this.#notes = notes;
  }

  /** `call` answered: its run of failures is over. */
  answered(gpu: GpuState, call: Call): void {
    gpu.streaks[call] = 0;
  }

  /**
   * Decides what a failed call means. Returns the code if it counts
   * against the GPU's health, 0 if not (an unsupported reading).
   */
  failed(
    gpu: GpuState,
    call: Call,
    code: number,
    record: Uint32Array,
  ): number {
    if (isUnsupported(code)) {
      dropCall(gpu, call);
      for (let r = 0; r < GPU_READINGS.length; r++) {
        if (CALL_OF[r] === call) put32(record, gpu.at[r], 0);
      }
      this.#notes.push({
        level: "info",
        message: `${gpuLabel(gpu.info)}: ${CALL_NAMES[call]} not supported (${
          nvmlReturnName(code)
        }); reading 0`,
      });
      return 0;
    }
    countError(this.#board.errors, code);
    if (code === NvmlReturn.GPU_IS_LOST) {
      this.#down(gpu, `is lost (${nvmlReturnName(code)})`);
    }
    gpu.streaks[call]++;
    gpu.lastErrors[call] = code;
    return code;
  }

  /**
   * Judges `gpu` after a poll in which it was asked `tried` calls that
   * count, `failures` of which failed, the last with `last`.
   */
  endPoll(gpu: GpuState, tried: number, failures: number, last: number): void {
    if (this.#board.gpuUp[gpu.info.index] === 0) return;
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
      return;
    }
    gpu.failedPolls = 0;
    if (failures > 0) this.#dropFailingCalls(gpu);
  }

  /**
   * A call that fails poll after poll while others answer is one broken
   * reading: it is no longer asked, and its columns keep their last values.
   */
  #dropFailingCalls(gpu: GpuState): void {
    for (const call of gpu.calls) {
      if (gpu.streaks[call] < FAILURES_BEFORE_DOWN) continue;
      dropCall(gpu, call);
      this.#notes.push({
        level: "warning",
        message: `${gpuLabel(gpu.info)}: ${
          CALL_NAMES[call]
        } failed ${FAILURES_BEFORE_DOWN} polls in a row (${
          nvmlReturnName(gpu.lastErrors[call])
        }): no longer read, keeps its last value; the GPU's other readings go on`,
      });
    }
  }

  #down(gpu: GpuState, why: string): void {
    this.#board.gpuUp[gpu.info.index] = 0;
    this.#notes.push({
      level: "warning",
      message: `${
        gpuLabel(gpu.info)
      } ${why}: no longer read, its columns keep their last values; other GPUs are read as before`,
      downGpu: gpu.info.index,
    });
  }
}
