import assert from "node:assert/strict";
import { GPU_READINGS } from "../../config/gpu_readings.ts";
import { nvmlSimValues } from "../../tests/fixtures/libnvml_sim/build.ts";
import {
  allColumns,
  assertReadings,
  decode,
  open,
  withSim,
} from "./poller_test_util.ts";
import type { GpuColumn } from "./readings.ts";

Deno.test("NvmlPoller: unsupported readings read 0, are said once, and are not asked again", async () => {
  await withSim(
    { NVML_SIM_GPUS: "2", NVML_SIM_UNSUPPORTED: "1:ecc,nvlink" },
    ({ dir }) => {
      const poller = open(dir);
      try {
        const columns = allColumns([0, 1]);
        poller.start(columns);
        const record = new Uint32Array(poller.recordWords).fill(0xdead);
        for (let tick = 1; tick <= 3; tick++) {
          poller.poll(record, Date.now());
          const got = decode(record, columns);
          assertReadings(got, 0, tick);
          for (
            const name of [
              "ecc_corrected",
              "ecc_uncorrected",
              "nvlink_crc_flit_errors",
              "nvlink_recovery_errors",
            ]
          ) {
            assert.equal(got.get(`gpu1.${name}`), 0n, name);
          }
          assert.equal(
            got.get("gpu1.pcie_replays"),
            BigInt(nvmlSimValues(1, tick).pcieReplayCounter),
          );
          assert.equal(
            got.get("gpu1.power"),
            BigInt(nvmlSimValues(1, tick).power),
          );
          const notes = poller.takeNotes().map((n) => n.message);
          if (tick === 1) {
            assert.deepEqual(notes, [
              "gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001): ecc_corrected not supported (NVML_ERROR_NOT_SUPPORTED); reading 0",
              "gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001): ecc_uncorrected not supported (NVML_ERROR_NOT_SUPPORTED); reading 0",
              "gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001): nvlink_crc_flit_errors, nvlink_crc_data_errors, nvlink_replay_errors, nvlink_recovery_errors not supported (NVML_ERROR_NOT_SUPPORTED); reading 0",
            ]);
          } else {
            assert.deepEqual(notes, []);
          }
        }
        assert.ok(poller.isUp(1));
      } finally {
        poller.close();
      }
    },
  );
});

Deno.test("NvmlPoller: PCIe byte counters read exactly across their wrap; an older GPU's read 0, said once", async () => {
  // GPU 0 starts 2.5 MB short of 2^64; GPU 1 answers NOT_SUPPORTED for them.
  const spec = "0:-2500000:1000000:2000000";
  await withSim(
    {
      NVML_SIM_GPUS: "2",
      NVML_SIM_PCIE_BYTES: spec,
      NVML_SIM_UNSUPPORTED: "1:pcie_bytes",
    },
    ({ dir }) => {
      const poller = open(dir);
      try {
        const columns = allColumns([0, 1]);
        poller.start(columns);
        const record = new Uint32Array(poller.recordWords).fill(0xdead);
        const seen: bigint[][] = [];
        for (let tick = 1; tick <= 4; tick++) {
          poller.poll(record, Date.now());
          const got = decode(record, columns);
          const want = nvmlSimValues(0, tick, { pcieBytes: spec });
          assert.equal(got.get("gpu0.pcie_tx_bytes"), want.pcieTxBytes);
          assert.equal(got.get("gpu0.pcie_rx_bytes"), want.pcieRxBytes);
          seen.push([
            got.get("gpu0.pcie_tx_bytes")!,
            got.get("gpu0.pcie_rx_bytes")!,
          ]);
          assertReadings(got, 1, tick, false, undefined, [
            "pcie_tx_bytes",
            "pcie_rx_bytes",
          ]);
          assert.equal(got.get("gpu1.pcie_tx_bytes"), 0n);
          assert.equal(got.get("gpu1.pcie_rx_bytes"), 0n);
          const notes = poller.takeNotes().map((n) => n.message);
          assert.deepEqual(
            notes,
            tick === 1
              ? [
                "gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001): pcie_tx_bytes, pcie_rx_bytes not supported (NVML_ERROR_NOT_SUPPORTED); reading 0",
              ]
              : [],
          );
        }
        // The u64 words as NVML gave them, wrap and all.
        const top = 1n << 64n;
        assert.deepEqual(seen, [
          [top - 1500000n, top - 500000n],
          [top - 500000n, 1500000n],
          [500000n, 3500000n],
          [1500000n, 5500000n],
        ]);
        assert.ok(poller.isUp(1));
      } finally {
        poller.close();
      }
    },
  );
});

Deno.test("NvmlPoller: a lost GPU is taken down and keeps its last values; the others go on", async () => {
  await withSim({ NVML_SIM_GPUS: "3", NVML_SIM_LOST: "1:4" }, ({ dir }) => {
    const poller = open(dir);
    try {
      const columns = allColumns([0, 1, 2]);
      poller.start(columns);
      const record = new Uint32Array(poller.recordWords);
      for (let tick = 1; tick <= 10; tick++) {
        poller.poll(record, Date.now());
        const got = decode(record, columns);
        assertReadings(got, 0, tick);
        assertReadings(got, 2, tick);
        assertReadings(got, 1, Math.min(tick, 3));
        const notes = poller.takeNotes();
        if (tick === 4) {
          assert.equal(notes.length, 1);
          assert.equal(notes[0].level, "warning");
          assert.equal(notes[0].downGpu, 1);
          assert.match(
            notes[0].message,
            /^gpu1 \(0000:28:00\.0, GPU-[0-9a-f-]+\) is lost \(NVML_ERROR_GPU_IS_LOST\): no longer read/,
          );
        } else {
          assert.deepEqual(notes, [], `tick ${tick}`);
        }
      }
      assert.equal(poller.isUp(1), false);
      assert.ok(poller.isUp(0) && poller.isUp(2));
      // One failed call (the temperature read that found it lost), counted.
      assert.equal(poller.errors[15], 1);
    } finally {
      assert.deepEqual(poller.close(), []);
    }
  });
});

Deno.test("NvmlPoller: a reading failing 3 polls in a row is dropped alone; fewer failures are ridden out", async () => {
  // gpu0's power fails at ticks 2-3 (twice), gpu1's from tick 3 on.
  await withSim({
    NVML_SIM_GPUS: "2",
    NVML_SIM_POWER_FAIL: "0:2:4:999;1:3:100:2",
  }, ({ dir }) => {
    const poller = open(dir);
    try {
      const columns = allColumns([0, 1]);
      poller.start(columns);
      const record = new Uint32Array(poller.recordWords);
      const notes: string[] = [];
      for (let tick = 1; tick <= 8; tick++) {
        poller.poll(record, Date.now());
        const got = decode(record, columns);
        // A failed power read keeps the last good value; the rest is fresh.
        const power0 = tick === 2 || tick === 3 ? 1 : tick;
        assert.equal(
          got.get("gpu0.power"),
          BigInt(nvmlSimValues(0, power0).power),
        );
        assert.equal(
          got.get("gpu1.power"),
          BigInt(nvmlSimValues(1, Math.min(tick, 2)).power),
        );
        got.set("gpu0.power", BigInt(nvmlSimValues(0, tick).power));
        got.set("gpu1.power", BigInt(nvmlSimValues(1, tick).power));
        assertReadings(got, 0, tick);
        assertReadings(got, 1, tick);
        notes.push(
          ...poller.takeNotes().map((n) => `${tick} ${n.level} ${n.message}`),
        );
      }
      assert.deepEqual(notes, [
        "5 warning gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001): power failed 3 polls in a row (NVML_ERROR_INVALID_ARGUMENT): no longer read, keeps its last value; the GPU's other readings go on",
      ]);
      assert.ok(poller.isUp(0) && poller.isUp(1));
      assert.equal(poller.errors[31], 2, "gpu0's two UNKNOWN (999) failures");
      assert.equal(
        poller.errors[2],
        3,
        "gpu1's three INVALID_ARGUMENT failures",
      );
    } finally {
      poller.close();
    }
  });
});

Deno.test("NvmlPoller: a GPU whose every call fails 3 polls in a row goes down", async () => {
  await withSim(
    { NVML_SIM_GPUS: "2", NVML_SIM_POWER_FAIL: "1:0:100:2" },
    ({ dir }) => {
      const poller = open(dir);
      try {
        const R = (name: string) =>
          GPU_READINGS.findIndex((r) => r.name === name);
        const columns: GpuColumn[] = [
          { gpu: 0, reading: R("temperature") },
          { gpu: 1, reading: R("power") },
        ];
        poller.start(columns);
        const record = new Uint32Array(poller.recordWords);
        const notes: string[] = [];
        for (let tick = 1; tick <= 5; tick++) {
          poller.poll(record, Date.now());
          notes.push(
            ...poller.takeNotes().map((n) =>
              `${tick} ${n.downGpu} ${n.message}`
            ),
          );
          assert.equal(
            decode(record, columns).get("gpu0.temperature"),
            BigInt(nvmlSimValues(0, tick).temperature),
          );
        }
        assert.deepEqual(notes, [
          "3 1 gpu1 (0000:28:00.0, GPU-5a1e0000-0000-4000-8000-000000000001) failed every call 3 polls in a row (last: NVML_ERROR_INVALID_ARGUMENT): no longer read, its columns keep their last values; other GPUs are read as before",
        ]);
        assert.equal(poller.isUp(1), false);
        assert.equal(poller.errors[2], 3);
      } finally {
        poller.close();
      }
    },
  );
});
