import assert from "node:assert/strict";
import { join } from "node:path";
import { docaCounterIds } from "../config/doca_counters.ts";
import {
  buildDocaSim,
  simCounterValue,
} from "../tests/fixtures/libdoca_sim/build.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { discoverDocaCounters } from "./doca_discovery.ts";

const DEVICE = "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0s0";
// Two of port 0's, one of port 1's and one device counter.
const UNSUPPORTED = [
  "0x1020000600000300", // priority_rx_pause_packets{port=0,priority=3}
  "0x1080000400000000", // rx_transport_ecn_packets{port=0}
  "0x1140000100000001", // tx_bytes{port=1}
  "0x1180000300000000", // global_icmc_miss
];

/** Runs `fn` with DOCA_SIM_* set and the call log at `calls`, then restores them. */
async function withSimEnv(
  vars: Record<string, string>,
  fn: (calls: string) => void,
): Promise<string> {
  await using dir = await tempDir();
  const calls = join(dir.path, "calls.log");
  const all = { ...vars, DOCA_SIM_LOG: calls };
  const before = Object.fromEntries(
    Object.keys(all).map((k) => [k, Deno.env.get(k)]),
  );
  for (const [k, v] of Object.entries(all)) Deno.env.set(k, v);
  try {
    fn(calls);
  } finally {
    for (const [k, v] of Object.entries(before)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
  }
  return await Deno.readTextFile(calls);
}

Deno.test("discovery lists every known counter as the device supports it, with the simulator's values, then shuts down in order", async () => {
  const sim = await buildDocaSim();
  try {
    const known = docaCounterIds([0, 1]);
    let found: ReturnType<typeof discoverDocaCounters> | undefined;
    const log = await withSimEnv({
      // More supported counters than the device samples at once.
      DOCA_SIM_DEVICES: `${DEVICE},max_data_ids=100,unsupported=${
        UNSUPPORTED.join("+")
      }`,
    }, () => {
      found = discoverDocaCounters({ device: "mlx5_0", libDir: sim.dir });
    });
    assert.ok(found);
    assert.equal(found.device, "0000:03:00.0 (mlx5_0, p0s0)");
    assert.equal(found.checked, true);
    assert.equal(found.maxDataIds, 100);
    assert.deepEqual(
      found.counters.map((c) => [c.name, c.dataId, c.meaning]),
      known.map((c) => [c.name, c.dataId, c.meaning]),
    );
    assert.deepEqual(
      found.counters.filter((c) => !c.supported).map((c) => c.dataId),
      UNSUPPORTED,
    );
    // The first 100 supported in table order are read: sample 0's values.
    const supported = found.counters.filter((c) => c.supported);
    assert.equal(supported.length, known.length - UNSUPPORTED.length);
    supported.forEach((c, i) => {
      assert.equal(
        c.value,
        i < 100 ? simCounterValue(BigInt(c.dataId), 0n).toString() : undefined,
        c.name,
      );
    });
    assert.ok(found.counters.every((c) => c.supported || !("value" in c)));
    assert.ok(
      found.readNs !== undefined && found.readNs > 0 && found.readNs < 1e9,
      String(found.readNs),
    );
    const lines = log.trimEnd().split("\n");
    assert.ok(
      lines.includes(
        "telemetry_diag_check_data_id data_id=0x1180000300000000 -> DOCA_ERROR_NOT_SUPPORTED",
      ),
      log,
    );
    assert.ok(
      lines.includes(
        "telemetry_diag_apply_counters_list_by_id num_data_ids=100 -> DOCA_SUCCESS counter_id_failure=0x0000000000000000",
      ),
      log,
    );
    const order = lines.filter((l) =>
      /^(telemetry_diag_(start|stop|destroy)|dev_close) /.test(l)
    ).map((l) => l.split(" ")[0]);
    assert.deepEqual(order, [
      "telemetry_diag_start",
      "telemetry_diag_stop",
      "telemetry_diag_destroy",
      "dev_close",
    ]);
    assert.equal(lines.at(-1), "leaks lists=0 devices=0 diags=0");
  } finally {
    await sim.cleanup();
  }
});

Deno.test("discovery of one port; a library without check_data_id reads nothing and says so", async () => {
  const sim = await buildDocaSim();
  try {
    let found: ReturnType<typeof discoverDocaCounters> | undefined;
    await withSimEnv({ DOCA_SIM_DEVICES: DEVICE }, () => {
      found = discoverDocaCounters({
        device: "03:00.0",
        libDir: sim.dir,
        ports: [0],
      });
    });
    assert.ok(found);
    assert.equal(found.counters.length, docaCounterIds([0]).length);
    // 60 counters, 64 at once: every one read.
    assert.ok(
      found.counters.every((c) => c.supported && c.value !== undefined),
    );

    const log = await withSimEnv({ DOCA_SIM_DEVICES: DEVICE }, () => {
      found = discoverDocaCounters({
        device: "03:00.0",
        libDir: sim.withoutCheckDataIdDir,
      });
    });
    assert.equal(found.checked, false);
    assert.equal(found.readNs, undefined);
    assert.equal(found.counters.length, docaCounterIds([0, 1]).length);
    assert.ok(
      found.counters.every((c) =>
        c.supported === undefined && c.value === undefined
      ),
    );
    assert.doesNotMatch(log, /check_data_id|telemetry_diag_start/);
    assert.match(log, /\nleaks lists=0 devices=0 diags=0\n$/);
  } finally {
    await sim.cleanup();
  }
});

Deno.test("discovery fails in one line as the collector does: no device, a context in use", async () => {
  const sim = await buildDocaSim();
  try {
    const cases: [Record<string, string>, string, RegExp][] = [
      [
        { DOCA_SIM_DEVICES: DEVICE },
        "04:00.0",
        /^Cannot start DOCA source: no device matches "04:00.0"; found 0000:03:00\.0 \(mlx5_0, p0s0\)$/,
      ],
      [
        { DOCA_SIM_DEVICES: DEVICE, DOCA_SIM_FAULT_CREATE: "IN_USE" },
        "03:00.0",
        /in use by another program; stop it, or take it over with --force-ownership$/,
      ],
    ];
    for (const [env, device, pattern] of cases) {
      let message = "";
      const log = await withSimEnv(env, () => {
        try {
          discoverDocaCounters({ device, libDir: sim.dir });
        } catch (error) {
          message = (error as Error).message;
        }
      });
      assert.match(message, pattern);
      assert.match(log, /\nleaks lists=0 devices=0 diags=0\n$/);
    }
  } finally {
    await sim.cleanup();
  }
});
