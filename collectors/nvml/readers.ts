/**
 * How each call of a poll is made and its answer put in the record. A
 * newer form of a call (temperature V, memory info v2, clock-event
 * reasons) is tried first and given up on for the older one when the
 * driver lacks it or will not answer it, so one agent reads old and new
 * drivers alike. Field values NVML does not support for a GPU are taken
 * out of the request and read 0.
 *
 * @module
 */

import { GPU_READINGS } from "../../config/gpu_readings.ts";
import {
  ClockType,
  EccCounterType,
  FIELD_VALUE_BYTES,
  MEMORY_BYTES,
  MEMORY_V2_BYTES,
  MEMORY_V2_VERSION,
  MemoryErrorType,
  NvmlReturn,
  nvmlReturnName,
  type NvmlSymbols,
  readFieldValue,
  TEMPERATURE_V1_BYTES,
  TEMPERATURE_V1_VERSION,
  TemperatureSensor,
  UTILIZATION_BYTES,
} from "../../ffi/nvml.ts";
import { gpuLabel } from "./gpu_list.ts";
import { dropCall, type GpuState, sizeFields } from "./gpu_state.ts";
import type { PollerNotes } from "./notes.ts";
import { Call, isUnsupported, put32, put64, R } from "./readings.ts";

/** The readers of one NVML, with their out-parameters allocated once. */
export class GpuReaders {
  #nvml: NvmlSymbols;
  #notes: PollerNotes;
  // Out-parameters, allocated once.
  #u32 = new Uint32Array(2);
  #u64 = new Uint32Array(2);
  #util = new Uint32Array(UTILIZATION_BYTES / 4);
  #mem = new Uint32Array(MEMORY_BYTES / 4);
  #memV2 = new Uint32Array(MEMORY_V2_BYTES / 4);
  #temperatureV = new Int32Array(TEMPERATURE_V1_BYTES / 4);

  /** Reads through `nvml`; says in `notes` which field values it drops. */
  constructor(nvml: NvmlSymbols, notes: PollerNotes) {
    this.#nvml = nvml;
    this.#notes = notes;
  }

  /** One call's readings into `record`; returns NVML's code. */
  read(gpu: GpuState, call: Call, record: Uint32Array): number {
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
            return this.read(gpu, call, record);
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
    sizeFields(gpu);
    if (ids.length === 0) dropCall(gpu, Call.Fields);
    this.#notes.push({
      level: "info",
      message: `${gpuLabel(gpu.info)}: ${dropped.join(", ")} not supported (${
        nvmlReturnName(NvmlReturn.NOT_SUPPORTED)
      }); reading 0`,
    });
  }
}
