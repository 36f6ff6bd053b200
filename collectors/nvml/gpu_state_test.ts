import assert from "node:assert/strict";
import { GPU_READINGS } from "../../config/gpu_readings.ts";
import { nvmlSimValues } from "../../tests/fixtures/libnvml_sim/build.ts";
import { decode, open, withSim } from "./poller_test_util.ts";
import type { GpuColumn } from "./readings.ts";

Deno.test("NvmlPoller reads only the columns asked for, into their places", async () => {
  await withSim({ NVML_SIM_GPUS: "2" }, ({ dir }) => {
    const poller = open(dir);
    try {
      const R = (name: string) =>
        GPU_READINGS.findIndex((r) => r.name === name);
      const columns: GpuColumn[] = [
        { gpu: 1, reading: R("temperature") },
        { gpu: 1, reading: R("nvlink_replay_errors") },
        { gpu: 1, reading: R("energy") },
      ];
      poller.start(columns);
      const record = new Uint32Array(poller.recordWords);
      assert.equal(record.length, 8);
      poller.poll(record, Date.now());
      poller.poll(record, Date.now());
      const v = nvmlSimValues(1, 2);
      assert.deepEqual([...decode(record, columns).values()], [
        BigInt(v.temperature),
        v.nvlinkReplay,
        v.energy,
      ]);
    } finally {
      poller.close();
    }
  });
});
