/**
 * Shared helpers for the NVML poller tests: running a test against the
 * C simulator of libnvidia-ml (tests/fixtures/libnvml_sim) with its
 * environment set, opening a poller on it, and decoding a record into
 * `gpuN.reading` values to compare with what the simulator gives.
 *
 * @module
 */

import assert from "node:assert/strict";
import { GPU_READINGS } from "../../config/gpu_readings.ts";
import {
  buildNvmlSim,
  nvmlSimValues,
} from "../../tests/fixtures/libnvml_sim/build.ts";
import { NvmlPoller } from "./poller.ts";
import type { GpuColumn } from "./readings.ts";

/** The simulator's variables, all unset around each test. */
const SIM_ENV = [
  "NVML_SIM_GPUS",
  "NVML_SIM_INIT_RETURN",
  "NVML_SIM_LOST",
  "NVML_SIM_UNSUPPORTED",
  "NVML_SIM_NO_PERMISSION",
  "NVML_SIM_XID",
  "NVML_SIM_TEMPERATURE",
  "NVML_SIM_SLOW",
  "NVML_SIM_POWER_FAIL",
  "NVML_SIM_PCIE_BYTES",
];

/** Runs `fn` with the simulator's variables set as given (others unset). */
export async function withSim(
  env: Record<string, string>,
  fn: (dirs: { dir: string; legacyDir: string }) => void | Promise<void>,
): Promise<void> {
  const sim = await buildNvmlSim();
  for (const name of SIM_ENV) Deno.env.delete(name);
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  try {
    await fn(sim);
  } finally {
    for (const name of SIM_ENV) Deno.env.delete(name);
    await sim.cleanup();
  }
}

/** Opens the NVML in `dir`, which must have a GPU. */
export function open(dir: string): NvmlPoller {
  const opened = NvmlPoller.open([dir]);
  assert.ok(opened.poller, JSON.stringify(opened.result));
  return opened.poller;
}

/** Every reading of every GPU in `gpus`. */
export function allColumns(gpus: readonly number[]): GpuColumn[] {
  return gpus.flatMap((gpu) =>
    GPU_READINGS.map((_, reading) => ({ gpu, reading }))
  );
}

/** The record's columns as `gpuN.reading` -> exact value. */
export function decode(
  record: Uint32Array,
  columns: readonly GpuColumn[],
): Map<string, bigint> {
  return new Map(columns.map((c, k) => [
    `gpu${c.gpu}.${GPU_READINGS[c.reading].name}`,
    BigInt(record[2 + 2 * k]) + (BigInt(record[3 + 2 * k]) << 32n),
  ]));
}

/** What the poller must read for GPU `gpu` at tick `tick` (xids aside). */
export function expected(
  gpu: number,
  tick: number,
  legacy = false,
  temperature?: string,
): Record<string, bigint> {
  const v = nvmlSimValues(gpu, tick, { temperature });
  return {
    temperature: BigInt(v.temperature),
    power: BigInt(v.power),
    energy: v.energy,
    gpu_utilization: BigInt(v.utilizationGpu),
    memory_utilization: BigInt(v.utilizationMemory),
    memory_used: legacy ? v.memoryUsedV1 : v.memoryUsed,
    memory_total: v.memoryTotal,
    sm_clock: BigInt(v.clockSm),
    memory_clock: BigInt(v.clockMem),
    clock_event_reasons: v.clocksEventReasons,
    ecc_corrected: v.eccCorrectedVolatile,
    ecc_uncorrected: v.eccUncorrectedVolatile,
    pcie_replays: BigInt(v.pcieReplayCounter),
    pcie_tx_bytes: v.pcieTxBytes,
    pcie_rx_bytes: v.pcieRxBytes,
    nvlink_crc_flit_errors: v.nvlinkCrcFlit,
    nvlink_crc_data_errors: v.nvlinkCrcData,
    nvlink_replay_errors: v.nvlinkReplay,
    nvlink_recovery_errors: v.nvlinkRecovery,
  };
}

/**
 * Asserts that `got` holds what the simulator gives for GPU `gpu` at tick
 * `tick` (see {@linkcode expected}), but for the readings in `except`.
 */
export function assertReadings(
  got: Map<string, bigint>,
  gpu: number,
  tick: number,
  legacy = false,
  temperature?: string,
  except: readonly string[] = [],
): void {
  for (
    const [name, value] of Object.entries(
      expected(gpu, tick, legacy, temperature),
    )
  ) {
    if (except.includes(name)) continue;
    assert.equal(
      got.get(`gpu${gpu}.${name}`),
      value,
      `gpu${gpu}.${name} at tick ${tick}`,
    );
  }
}
