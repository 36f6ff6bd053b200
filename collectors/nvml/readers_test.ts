import assert from "node:assert/strict";
import {
  allColumns,
  assertReadings,
  decode,
  open,
  withSim,
} from "./poller_test_util.ts";

Deno.test("NvmlPoller falls back to the old calls on a driver without the newer symbols", async () => {
  await withSim(
    { NVML_SIM_GPUS: "2", NVML_SIM_TEMPERATURE: "1:4:6:90" },
    ({ legacyDir }) => {
      const poller = open(legacyDir);
      try {
        const columns = allColumns([0, 1]);
        poller.start(columns);
        const record = new Uint32Array(poller.recordWords);
        for (let tick = 1; tick <= 8; tick++) {
          poller.poll(record, Date.now());
          const got = decode(record, columns);
          // Legacy nvmlMemory_t counts the driver's reserve as used; the
          // throttle-reasons call gives the same bits (0x40 while hot).
          assertReadings(got, 0, tick, true);
          assertReadings(got, 1, tick, true, "1:4:6:90");
        }
        assert.deepEqual(poller.takeNotes(), []);
      } finally {
        poller.close();
      }
    },
  );
});
