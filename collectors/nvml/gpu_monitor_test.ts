import assert from "node:assert/strict";
import {
  isReferenceRule,
  type MonitorConfig,
  type SignalRuleConfig,
} from "../../config/types.ts";
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

/** A signal rule on `column` (and `denominator`, making it a ratio). */
function signalRule(
  name: string,
  column: number,
  denominator?: number,
): SignalRuleConfig {
  return {
    name,
    signal: denominator === undefined ? "rate" : "ratio",
    column,
    ...(denominator === undefined ? {} : { denominator }),
    windowNs: 10_000_000_000,
    direction: "above",
    threshold: 0.5,
    clear: 0.25,
    forNs: 0,
    mOfN: { m: 2, n: 3 },
    keepFiringForNs: 5_000_000_000,
    severity: "critical",
    summary: "replays",
  };
}

Deno.test("expandGpuMonitor: a signal rule is copied per GPU, a ratio with both columns on that GPU", () => {
  const config: MonitorConfig = {
    ...monitor([
      "gpu*.nvlink_replay_errors",
      "gpu*.energy",
      "gpu*.nvlink_crc_flit_errors",
      "gpu2.nvlink_replay_errors",
      "gpu2.nvlink_crc_flit_errors",
      "gpu7.energy",
      "gpu7.pcie_replays",
    ], []),
    rules: [
      signalRule("replays per CRC error", 0, 2),
      signalRule("energy", 1),
      signalRule("GPU 2 replays", 3, 4),
      signalRule("GPU 7 replays", 6, 5),
    ],
  };
  const expanded = expandGpuMonitor(config, [2, 0]);
  const names = expanded.config.columns.map((c) => c.name);
  const described = expanded.config.rules.map((r) => {
    assert.ok(!isReferenceRule(r));
    return [
      r.name,
      names[r.column],
      r.denominator === undefined ? undefined : names[r.denominator],
    ];
  });
  assert.deepEqual(described, [
    [
      "replays per CRC error [gpu0]",
      "gpu0.nvlink_replay_errors",
      "gpu0.nvlink_crc_flit_errors",
    ],
    [
      "replays per CRC error [gpu2]",
      "gpu2.nvlink_replay_errors",
      "gpu2.nvlink_crc_flit_errors",
    ],
    ["energy [gpu0]", "gpu0.energy", undefined],
    ["energy [gpu2]", "gpu2.energy", undefined],
    // On one GPU's columns, the rule keeps its name; GPU 7 is not there.
    [
      "GPU 2 replays",
      "gpu2.nvlink_replay_errors",
      "gpu2.nvlink_crc_flit_errors",
    ],
  ]);
  // Everything else about the rule is copied as it is.
  for (const rule of expanded.config.rules) {
    assert.ok(!isReferenceRule(rule));
    assert.deepEqual(
      [
        rule.windowNs,
        rule.direction,
        rule.threshold,
        rule.clear,
        rule.mOfN,
        rule.keepFiringForNs,
        rule.severity,
        rule.summary,
      ],
      [
        10_000_000_000,
        "above",
        0.5,
        0.25,
        { m: 2, n: 3 },
        5e9,
        "critical",
        "replays",
      ],
    );
  }
  assert.deepEqual(expanded.leftOut, [
    "gpu7.energy: there is no GPU 7 (NVML found gpus 2, 0); left out with 1 rule",
    "gpu7.pcie_replays: there is no GPU 7 (NVML found gpus 2, 0); left out with 1 rule",
  ]);
});

Deno.test("expandGpuMonitor: a ratio across GPUs, built in code, is refused", () => {
  const config: MonitorConfig = {
    ...monitor(
      ["gpu*.nvlink_replay_errors", "gpu0.nvlink_crc_flit_errors"],
      [],
    ),
    rules: [signalRule("mixed", 0, 1)],
  };
  assert.throws(() => expandGpuMonitor(config, [0, 1]), {
    name: "TypeError",
    message:
      'monitor "gpu": rule "mixed" divides gpu*.nvlink_replay_errors by gpu0.nvlink_crc_flit_errors, which is on other GPUs; name the same GPUs in both',
  });
});
