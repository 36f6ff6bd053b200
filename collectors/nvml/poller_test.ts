import assert from "node:assert/strict";
import { GPU_READINGS } from "../../config/gpu_readings.ts";
import {
  allColumns,
  assertReadings,
  decode,
  open,
  withSim,
} from "./poller_test_util.ts";

Deno.test("NvmlPoller decodes every reading of every GPU exactly, poll after poll", async () => {
  await withSim({ NVML_SIM_GPUS: "4" }, ({ dir }) => {
    const poller = open(dir);
    try {
      const columns = allColumns([0, 1, 2, 3]);
      poller.start(columns);
      const record = new Uint32Array(poller.recordWords);
      assert.equal(record.length, 2 * (1 + 4 * GPU_READINGS.length));
      // 60 ticks cover the ECC step at 50 and the used-memory wrap at 64 - g.
      for (let tick = 1; tick <= 60; tick++) {
        const wallMs = 1_795_000_000_123.5 + tick;
        poller.poll(record, wallMs);
        const got = decode(record, columns);
        for (let g = 0; g < 4; g++) assertReadings(got, g, tick);
        const ns = BigInt(record[0]) + (BigInt(record[1]) << 32n);
        assert.equal(
          ns,
          1_795_000_000_123_500_000n + BigInt(tick) * 1_000_000n,
        );
      }
      assert.deepEqual(poller.takeNotes(), []);
      assert.deepEqual([...poller.errors].filter((n) => n !== 0), []);
    } finally {
      assert.deepEqual(poller.close(), []);
    }
  });
});
