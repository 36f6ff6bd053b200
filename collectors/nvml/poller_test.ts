import assert from "node:assert/strict";
import { GPU_READINGS } from "../../config/gpu_readings.ts";
import {
  buildNvmlSim,
  NVML_SIM_DEVICE_NAME,
  NVML_SIM_DRIVER_VERSION,
  nvmlSimIdentity,
  nvmlSimValues,
} from "../../tests/fixtures/libnvml_sim/build.ts";
import { type GpuColumn, NvmlPoller } from "./poller.ts";

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
];

/** Runs `fn` with the simulator's variables set as given (others unset). */
async function withSim(
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

function open(dir: string): NvmlPoller {
  const opened = NvmlPoller.open([dir]);
  assert.ok(opened.poller, JSON.stringify(opened.result));
  return opened.poller;
}

/** Every reading of every GPU in `gpus`. */
function allColumns(gpus: readonly number[]): GpuColumn[] {
  return gpus.flatMap((gpu) =>
    GPU_READINGS.map((_, reading) => ({ gpu, reading }))
  );
}

/** The record's columns as `gpuN.reading` -> exact value. */
function decode(
  record: Uint32Array,
  columns: readonly GpuColumn[],
): Map<string, bigint> {
  return new Map(columns.map((c, k) => [
    `gpu${c.gpu}.${GPU_READINGS[c.reading].name}`,
    BigInt(record[2 + 2 * k]) + (BigInt(record[3 + 2 * k]) << 32n),
  ]));
}

/** What the poller must read for GPU `gpu` at tick `tick` (xids aside). */
function expected(
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
    nvlink_crc_flit_errors: v.nvlinkCrcFlit,
    nvlink_crc_data_errors: v.nvlinkCrcData,
    nvlink_replay_errors: v.nvlinkReplay,
    nvlink_recovery_errors: v.nvlinkRecovery,
  };
}

function assertReadings(
  got: Map<string, bigint>,
  gpu: number,
  tick: number,
  legacy = false,
  temperature?: string,
): void {
  for (
    const [name, value] of Object.entries(
      expected(gpu, tick, legacy, temperature),
    )
  ) {
    assert.equal(
      got.get(`gpu${gpu}.${name}`),
      value,
      `gpu${gpu}.${name} at tick ${tick}`,
    );
  }
}

Deno.test("NvmlPoller lists every GPU with its identity and the driver version", async () => {
  await withSim({ NVML_SIM_GPUS: "3" }, ({ dir }) => {
    const poller = open(dir);
    try {
      assert.equal(poller.result.driverVersion, NVML_SIM_DRIVER_VERSION);
      assert.equal(poller.result.library, `${dir}/libnvidia-ml.so.1`);
      assert.deepEqual(
        poller.result.gpus,
        [0, 1, 2].map((g) => {
          const id = nvmlSimIdentity(g);
          return {
            index: g,
            uuid: id.uuid,
            pciBusId: id.busIdLegacy.toLowerCase(),
            name: NVML_SIM_DEVICE_NAME,
          };
        }),
      );
    } finally {
      assert.deepEqual(poller.close(), []);
    }
  });
});

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

Deno.test("NvmlPoller: a GPU it may not open is left out with a line; the rest are read", async () => {
  await withSim(
    { NVML_SIM_GPUS: "3", NVML_SIM_NO_PERMISSION: "0" },
    ({ dir }) => {
      const poller = open(dir);
      try {
        assert.deepEqual(poller.result.gpus.map((g) => g.index), [1, 2]);
        assert.deepEqual(poller.result.skipped, [
          "gpu0: cannot be opened: NVML_ERROR_NO_PERMISSION (Insufficient Permissions); left out",
        ]);
      } finally {
        poller.close();
      }
    },
  );
});

Deno.test("NvmlPoller.open: no library, no driver and no GPU are info, not errors", async () => {
  const missing = NvmlPoller.open(["/nonexistent-nvml-dir"]);
  assert.equal(missing.poller, undefined);
  assert.deepEqual(missing.result, {
    ok: false,
    level: "info",
    reason: "no NVML (libnvidia-ml.so.1 not found in /nonexistent-nvml-dir)",
  });
  await withSim({ NVML_SIM_INIT_RETURN: "9" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.equal(opened.poller, undefined);
    assert.equal(opened.result.ok, false);
    assert.equal(opened.result.ok === false && opened.result.level, "info");
    assert.match(
      opened.result.ok === false ? opened.result.reason : "",
      /^NVML did not initialize: NVML_ERROR_DRIVER_NOT_LOADED \(.+\) from /,
    );
  });
  await withSim({ NVML_SIM_GPUS: "0" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.deepEqual(opened.result, {
      ok: false,
      level: "info",
      reason: `NVML (driver ${NVML_SIM_DRIVER_VERSION}) found no GPU`,
    });
  });
  await withSim({ NVML_SIM_INIT_RETURN: "18" }, ({ dir }) => {
    const opened = NvmlPoller.open([dir]);
    assert.equal(opened.result.ok === false && opened.result.level, "warning");
  });
});

Deno.test("NvmlPoller: a file that is not a usable library is a warning naming it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/libnvidia-ml.so.1`, "not an ELF file");
    const opened = NvmlPoller.open([dir]);
    assert.equal(opened.poller, undefined);
    assert.equal(opened.result.ok === false && opened.result.level, "warning");
    assert.match(
      opened.result.ok === false ? opened.result.reason : "",
      new RegExp(`^Cannot load ${dir}/libnvidia-ml\\.so\\.1: `),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
