/**
 * Xid critical errors, which NVML reports as events rather than as a
 * reading: one event set for all GPUs whose `xid_errors` or `last_xid` is
 * a column, drained without waiting once per poll. Each event counts
 * toward its GPU's `xid_errors` and sets its `last_xid`. A GPU without Xid
 * events reads 0 there, said once.
 *
 * @module
 */

import {
  EVENT_DATA_BYTES,
  EVENT_XID_CRITICAL_ERROR,
  NvmlReturn,
  nvmlReturnName,
  type NvmlSymbols,
} from "../../ffi/nvml.ts";
import { addNumberU64 } from "../../base/u64.ts";
import { gpuLabel } from "./gpu_list.ts";
import { countError, type HealthBoard } from "./gpu_health.ts";
import type { GpuState } from "./gpu_state.ts";
import type { PollerNotes } from "./notes.ts";
import { put32, R } from "./readings.ts";

/** Events drained per poll at most, so an event storm cannot hold a poll. */
const MAX_EVENTS_PER_POLL = 64;

/** Whether any of `gpus` has an Xid reading as a column. */
export function wantsXidEvents(gpus: readonly GpuState[]): boolean {
  return gpus.some((g) => g.at[R.xid_errors] >= 0 || g.at[R.last_xid] >= 0);
}

/** An NVML event set registered for the Xid events of some GPUs. */
export class XidEvents {
  #nvml: NvmlSymbols;
  #set: Deno.PointerValue;
  #gpus: readonly GpuState[];
  #board: HealthBoard;
  #data = new Uint8Array(EVENT_DATA_BYTES);
  #words = new Uint32Array(this.#data.buffer);

  private constructor(
    nvml: NvmlSymbols,
    set: Deno.PointerValue,
    gpus: readonly GpuState[],
    board: HealthBoard,
  ) {
    this.#nvml = nvml;
    this.#set = set;
    this.#gpus = gpus;
    this.#board = board;
  }

  /**
   * Registers every one of `gpus` with an Xid column for Xid events, saying
   * in `notes` which cannot be. Returns null when none could be (no
   * event set is then kept); failed waits are counted in `board`.
   */
  static register(
    nvml: NvmlSymbols,
    gpus: readonly GpuState[],
    board: HealthBoard,
    notes: PollerNotes,
  ): XidEvents | null {
    const cell = new BigUint64Array(1);
    const created = nvml.nvmlEventSetCreate(cell);
    if (created !== NvmlReturn.SUCCESS) {
      notes.push({
        level: "warning",
        message: `Xid events unavailable: nvmlEventSetCreate: ${
          nvmlReturnName(created)
        }; xid_errors and last_xid read 0`,
      });
      return null;
    }
    const set = Deno.UnsafePointer.create(cell[0]);
    let registered = 0;
    for (const gpu of gpus) {
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
        notes.push({
          level: "info",
          message: `${gpuLabel(gpu.info)}: Xid events not available (${
            nvmlReturnName(code)
          }); xid_errors and last_xid read 0`,
        });
      }
    }
    if (registered === 0) {
      nvml.nvmlEventSetFree(set);
      return null;
    }
    return new XidEvents(nvml, set, gpus, board);
  }

  /** Counts the events waiting into `record`, without waiting for more. */
  drain(record: Uint32Array): void {
    const words = this.#words;
    for (let n = 0; n < MAX_EVENTS_PER_POLL; n++) {
      const code = this.#nvml.nvmlEventSetWait_v2(this.#set, this.#data, 0);
      if (code === NvmlReturn.TIMEOUT) return;
      if (code !== NvmlReturn.SUCCESS) {
        countError(this.#board.errors, code);
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

  /** Frees the event set. Returns the problem as a line, or null. */
  free(): string | null {
    const freed = this.#nvml.nvmlEventSetFree(this.#set);
    return freed === NvmlReturn.SUCCESS
      ? null
      : `nvmlEventSetFree: ${nvmlReturnName(freed)}`;
  }
}
