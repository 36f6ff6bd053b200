import assert from "node:assert/strict";
import { allColumns, decode, open, withSim } from "./poller_test_util.ts";

Deno.test("NvmlPoller counts Xid critical errors per GPU and keeps the last code", async () => {
  await withSim(
    { NVML_SIM_GPUS: "2", NVML_SIM_XID: "1:2:79;1:2:48;0:5:13" },
    ({ dir }) => {
      const poller = open(dir);
      try {
        const columns = allColumns([0, 1]);
        poller.start(columns);
        const record = new Uint32Array(poller.recordWords);
        const seen: string[] = [];
        for (let tick = 1; tick <= 6; tick++) {
          poller.poll(record, Date.now());
          const got = decode(record, columns);
          seen.push(
            [0, 1].map((g) =>
              `${got.get(`gpu${g}.xid_errors`)}/${got.get(`gpu${g}.last_xid`)}`
            ).join(" "),
          );
        }
        assert.deepEqual(seen, [
          "0/0 0/0",
          "0/0 2/48",
          "0/0 2/48",
          "0/0 2/48",
          "1/13 2/48",
          "1/13 2/48",
        ]);
      } finally {
        poller.close();
      }
    },
  );
});
