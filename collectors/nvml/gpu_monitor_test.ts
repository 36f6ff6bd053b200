import assert from "node:assert/strict";
import type { MonitorConfig } from "../../config/types.ts";
import { expandGpuMonitor } from "./gpu_monitor.ts";

function monitor(columns: string[], rules: [string, number][]): MonitorConfig {
  return {
    name: "gpu",
    source: "nvml",
    samplePeriodNs: 1e9,
    depth: 60,
    eventLog: "gpu-events.log",
    seed: 1,
    columns: columns.map((name) => ({
      name,
      dataId: `nvml ${name}`,
      kind: "gauge",
    })),
    rules: rules.map(([name, column]) => ({
      name,
      column,
      comparisonType: "gt",
      comparisonValue: 1n,
    })),
  };
}

Deno.test("expandGpuMonitor: columns grouped by GPU, patterns in config order, no repeats", () => {
  const expanded = expandGpuMonitor(
    monitor([
      "gpu*.power",
      "gpu1.temperature",
      "gpu*.temperature",
      "gpu3.energy",
    ], [
      ["watts", 0],
      ["one hot", 1],
      ["hot", 2],
    ]),
    [0, 1, 3],
  );
  assert.deepEqual(
    expanded.config.columns.map((c) => [c.name, c.dataId, c.kind]),
    [
      ["gpu0.power", "nvml gpu0.power", "gauge"],
      ["gpu0.temperature", "nvml gpu0.temperature", "gauge"],
      ["gpu1.power", "nvml gpu1.power", "gauge"],
      ["gpu1.temperature", "nvml gpu1.temperature", "gauge"],
      ["gpu3.power", "nvml gpu3.power", "gauge"],
      ["gpu3.temperature", "nvml gpu3.temperature", "gauge"],
      ["gpu3.energy", "nvml gpu3.energy", "counter"],
    ],
  );
  assert.deepEqual(expanded.columns, [
    { gpu: 0, reading: 1 },
    { gpu: 0, reading: 0 },
    { gpu: 1, reading: 1 },
    { gpu: 1, reading: 0 },
    { gpu: 3, reading: 1 },
    { gpu: 3, reading: 0 },
    { gpu: 3, reading: 2 },
  ]);
  assert.deepEqual(
    expanded.config.rules.map((
      r,
    ) => [r.name, expanded.config.columns[r.column].name]),
    [
      ["watts [gpu0]", "gpu0.power"],
      ["watts [gpu1]", "gpu1.power"],
      ["watts [gpu3]", "gpu3.power"],
      // A rule on one GPU's column keeps its name.
      ["one hot", "gpu1.temperature"],
      ["hot [gpu0]", "gpu0.temperature"],
      ["hot [gpu1]", "gpu1.temperature"],
      ["hot [gpu3]", "gpu3.temperature"],
    ],
  );
  assert.deepEqual(expanded.leftOut, []);
});

Deno.test("expandGpuMonitor: a column for a GPU that is not there is left out, with its rules, and said", () => {
  const expanded = expandGpuMonitor(
    monitor(["gpu*.power", "gpu5.temperature"], [["hot5", 1], ["again", 1]]),
    [0, 1],
  );
  assert.deepEqual(expanded.config.columns.map((c) => c.name), [
    "gpu0.power",
    "gpu1.power",
  ]);
  assert.deepEqual(expanded.config.rules, []);
  assert.deepEqual(expanded.leftOut, [
    "gpu5.temperature: there is no GPU 5 (NVML found gpus 0, 1); left out with 2 rules",
  ]);
});
