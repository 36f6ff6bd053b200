import assert from "node:assert/strict";
import type { MonitorConfig } from "../../config/types.ts";
import {
  buildNvmlSim,
  nvmlSimValues,
} from "../../tests/fixtures/libnvml_sim/build.ts";
import type { SampleSink } from "../../rules/sample_sink.ts";
import { NvmlCollector } from "./collector.ts";

const CONFIG: MonitorConfig = {
  name: "gpu",
  source: "nvml",
  samplePeriodNs: 20_000_000,
  depth: 4,
  eventLog: "gpu-events.log",
  seed: 1,
  columns: ["gpu*.temperature", "gpu*.energy"].map((name) => ({
    name,
    dataId: `nvml ${name}`,
    kind: "gauge" as const,
  })),
  rules: [],
};

/** A sink that keeps every record it is given. */
function recordingSink(columns: number): SampleSink & { records: bigint[][] } {
  const words = new Uint32Array(2 * (1 + columns));
  const records: bigint[][] = [];
  return {
    words,
    columns,
    records,
    claim: () => 0,
    commit() {
      const values: bigint[] = [];
      for (let k = 0; k <= columns; k++) {
        values.push(BigInt(words[2 * k]) + (BigInt(words[2 * k + 1]) << 32n));
      }
      records.push(values);
    },
    gap() {
      throw new Error("no sample may be lost");
    },
  };
}

async function withEnv(env: Record<string, string>, fn: () => Promise<void>) {
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  try {
    await fn();
  } finally {
    for (const k of Object.keys(env)) Deno.env.delete(k);
  }
}

Deno.test("NvmlCollector hands the worker's records to the monitor in order, exactly", async () => {
  const sim = await buildNvmlSim();
  try {
    await withEnv({ NVML_SIM_GPUS: "2" }, async () => {
      const opened = await NvmlCollector.open({
        config: CONFIG,
        libDirs: [sim.dir],
      });
      assert.ok(opened.ok, opened.ok ? undefined : opened.reason);
      const { collector, config } = opened;
      assert.deepEqual(config.columns.map((c) => c.name), [
        "gpu0.temperature",
        "gpu0.energy",
        "gpu1.temperature",
        "gpu1.energy",
      ]);
      assert.equal(collector.library, `${sim.dir}/libnvidia-ml.so.1`);
      const sink = recordingSink(4);
      const started = Date.now();
      await collector.run(sink, AbortSignal.timeout(500));
      await collector.close();
      // 500 ms at 20 ms: about 25 polls, each a record, none lost.
      assert.ok(sink.records.length >= 15, `${sink.records.length} records`);
      sink.records.forEach((r, i) => {
        const tick = i + 1;
        const [g0, g1] = [nvmlSimValues(0, tick), nvmlSimValues(1, tick)];
        assert.deepEqual(r.slice(1), [
          BigInt(g0.temperature),
          g0.energy,
          BigInt(g1.temperature),
          g1.energy,
        ]);
        const ms = Number(r[0] / 1_000_000n);
        assert.ok(
          ms >= started - 5 && ms <= Date.now(),
          `record ${i} stamped ${ms}`,
        );
      });
      assert.equal(collector.pollStats.polls, sink.records.length);
      // The achieved period: one interval between each two records.
      const intervals = collector.pollStats.intervalCounts.reduce((a, b) =>
        a + b
      );
      assert.equal(intervals, sink.records.length - 1);
    });
  } finally {
    await sim.cleanup();
  }
});

Deno.test("NvmlCollector.open gives up on an NVML that does not answer, without blocking", async () => {
  const sim = await buildNvmlSim();
  try {
    await withEnv({ NVML_SIM_SLOW: "nvmlInit_v2:1500" }, async () => {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const opened = await NvmlCollector.open({
        config: CONFIG,
        libDirs: [sim.dir],
        openTimeoutMs: 300,
      });
      clearInterval(ticker);
      assert.deepEqual(opened, {
        ok: false,
        level: "warning",
        reason:
          "NVML did not answer within 300 ms (initializing the driver or listing GPUs hangs)",
      });
      // This thread kept running its timers while NVML hung.
      assert.ok(ticks >= 20, `${ticks} ticks in 300 ms`);
      // Let the stuck call return before the library is deleted.
      await new Promise((r) => setTimeout(r, 1400));
    });
  } finally {
    await sim.cleanup();
  }
});

Deno.test("NvmlCollector.open: no column names a GPU that is there", async () => {
  const sim = await buildNvmlSim();
  try {
    await withEnv({ NVML_SIM_GPUS: "1" }, async () => {
      const warnings: string[] = [];
      const opened = await NvmlCollector.open({
        config: {
          ...CONFIG,
          columns: [{
            name: "gpu2.power",
            dataId: "nvml gpu2.power",
            kind: "gauge",
          }],
        },
        libDirs: [sim.dir],
        warn: (m) => warnings.push(m),
      });
      assert.deepEqual(opened, {
        ok: false,
        level: "warning",
        reason: 'no column of monitor "gpu" names a GPU that is present',
      });
      assert.deepEqual(warnings, [
        'monitor "gpu": gpu2.power: there is no GPU 2 (NVML found gpu 0); left out',
      ]);
    });
  } finally {
    await sim.cleanup();
  }
});

Deno.test("NvmlCollector says which NVML call hangs, marks that GPU down meanwhile, and says when samples resume", async () => {
  const sim = await buildNvmlSim();
  try {
    await withEnv({
      NVML_SIM_GPUS: "2",
      NVML_SIM_SLOW: "nvmlDeviceGetPowerUsage:900",
    }, async () => {
      const warnings: string[] = [];
      const infos: string[] = [];
      const opened = await NvmlCollector.open({
        config: {
          ...CONFIG,
          columns: [{
            name: "gpu1.power",
            dataId: "nvml gpu1.power",
            kind: "gauge",
          }],
        },
        libDirs: [sim.dir],
        stallMs: 300,
        warn: (m) => warnings.push(m),
        info: (m) => infos.push(m),
      });
      assert.ok(opened.ok, opened.ok ? undefined : opened.reason);
      const { collector } = opened;
      assert.ok(collector.isUp(1));
      const sink = recordingSink(1);
      const seen: boolean[] = [];
      const watcher = setInterval(() => seen.push(collector.isUp(1)), 50);
      await collector.run(sink, AbortSignal.timeout(1700));
      clearInterval(watcher);
      await collector.close();
      assert.match(
        warnings[0] ?? "",
        /^monitor "gpu": no GPU sample for [3-9]\d\d ms: NVML's power call on gpu1 has not returned; GPU samples resume when it does$/,
      );
      assert.match(
        infos[0] ?? "",
        /^monitor "gpu": GPU samples again, after [\d.]+ (µs|ms) without$/,
      );
      assert.ok(seen.includes(false), "gpu1 was down while its call hung");
      assert.ok(sink.records.length >= 1);
    });
  } finally {
    await sim.cleanup();
  }
});
