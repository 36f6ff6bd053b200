import assert from "node:assert/strict";
import { parseGpuColumn } from "./gpu_readings.ts";
import { parseConfig } from "./load.ts";
import { withAutoGpuMonitor } from "./normalize.ts";
import { isReferenceRule } from "./types.ts";
import { applyRunOptions } from "../cli/overrides.ts";

const NIC = `  - name: nic
    device: "03:00.0"
    columns: [{ name: rx, data_id: "0x1020000100000000" }]
`;

function agent(gpuMonitor: string, top = ""): string {
  return `${top}monitors:\n${NIC}${gpuMonitor}`;
}

function problem(text: string): string {
  try {
    parseConfig(text, "a.yaml");
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a config error");
}

Deno.test("parseGpuColumn: GPU and reading, or * for either", () => {
  assert.deepEqual(parseGpuColumn("gpu0.temperature"), {
    ok: true,
    value: { gpu: 0, reading: 0 },
  });
  assert.deepEqual(parseGpuColumn("gpu*.power"), {
    ok: true,
    value: { gpu: "*", reading: 1 },
  });
  assert.deepEqual(parseGpuColumn("gpu12.*"), {
    ok: true,
    value: { gpu: 12, reading: "*" },
  });
  assert.equal(parseGpuColumn("gpu01.power").ok, false);
  assert.equal(parseGpuColumn("gpu64.power").ok, false);
  assert.equal(parseGpuColumn("GPU0.power").ok, false);
  const unknown = parseGpuColumn("gpu0.temp");
  assert.equal(unknown.ok, false);
  assert.match(
    unknown.ok ? "" : unknown.problem,
    /^names no GPU reading "temp"; readings are temperature, power, /,
  );
});

Deno.test("a GPU monitor: readings expand to one column per reading, GPU defaults", () => {
  const config = parseConfig(
    agent(`  - name: gpu
    source: nvml
    readings: [gpu*.temperature, gpu0.*, gpu*.temperature]
    rules:
      - { name: hot, column: gpu*.temperature, comparison_type: gt, comparison_value: 85 }
`),
    "a.yaml",
  );
  const gpu = config.monitors[1];
  assert.equal(gpu.source, "nvml");
  assert.equal(gpu.samplePeriodNs, 1_000_000_000);
  assert.equal(gpu.depth, 60);
  assert.equal(gpu.device, undefined);
  // The NIC keeps the reference's file name; the GPU log goes beside it.
  assert.deepEqual(config.monitors.map((m) => m.eventLog), [
    "events.log",
    "gpu-events.log",
  ]);
  assert.equal(gpu.columns.length, 1 + 21);
  assert.deepEqual(gpu.columns[0], {
    name: "gpu*.temperature",
    dataId: "nvml gpu*.temperature",
    kind: "gauge",
  });
  assert.deepEqual(gpu.columns[3], {
    name: "gpu0.energy",
    dataId: "nvml gpu0.energy",
    kind: "counter",
  });
  assert.deepEqual(gpu.rules, [{
    name: "hot",
    column: 0,
    comparisonType: "gt",
    comparisonValue: 85n,
    severity: "warning",
  }]);
  assert.equal(config.gpu, "auto");
});

Deno.test("a GPU monitor without readings reads everything", () => {
  const config = parseConfig(
    agent("  - { name: gpu, source: nvml }\n"),
    "a.yaml",
  );
  assert.equal(config.monitors[1].columns.length, 21);
  assert.ok(
    config.monitors[1].columns.every((c) => c.name.startsWith("gpu*.")),
  );
});

Deno.test("GPU monitor mistakes are one line naming the place", () => {
  assert.equal(
    problem(agent("  - { name: gpu, source: nvml, readings: [gpu0.temp] }\n")),
    'Cannot load config a.yaml:5: monitors[1].readings[0] names no GPU reading "temp"; readings are temperature, power, energy, gpu_utilization, memory_utilization, memory_used, memory_total, sm_clock, memory_clock, clock_event_reasons, ecc_corrected, ecc_uncorrected, pcie_replays, pcie_tx_bytes, pcie_rx_bytes, nvlink_crc_flit_errors, nvlink_crc_data_errors, nvlink_replay_errors, nvlink_recovery_errors, xid_errors, last_xid, got "gpu0.temp"',
  );
  assert.match(
    problem(
      agent(
        '  - { name: gpu, source: nvml, columns: [{ name: t, data_id: "0x0000000000000001" }] }\n',
      ),
    ),
    /monitors\[1\]\.columns is not for GPU monitors \(source nvml\); name GPU columns in readings/,
  );
  assert.match(
    problem(agent('  - { name: gpu, source: nvml, device: "03:00.0" }\n')),
    /monitors\[1\]\.device is for NIC monitors; a GPU monitor \(source nvml\) reads every GPU NVML finds/,
  );
  assert.match(
    problem(agent(`  - name: gpu
    source: nvml
    rules: [{ name: r, data_id: "0x0000000000000001", comparison_type: gt, comparison_value: 1 }]
`)),
    /monitors\[1\]\.rules\[0\] \("r"\)\.data_id is for NIC monitors; a GPU rule names its column/,
  );
  assert.match(
    problem(agent(`  - name: gpu
    source: nvml
    readings: [gpu*.power]
    rules: [{ name: r, column: gpu*.temperature, comparison_type: gt, comparison_value: 1 }]
`)),
    /monitors\[1\]\.rules\[0\] \("r"\)\.column must be one of this monitor's column names \(gpu\*\.power\)/,
  );
  assert.match(
    problem(
      `monitors:\n  - { name: nic, device: x, readings: [gpu0.power], columns: [{ name: rx, data_id: "0x0000000000000001" }] }\n`,
    ),
    /monitors\[0\]\.readings is for GPU monitors \(source nvml\)/,
  );
  assert.match(
    problem(agent("", "gpu: maybe\n")),
    /^Cannot load config a\.yaml:1: gpu must be one of auto, off/,
  );
});

Deno.test("withAutoGpuMonitor adds a GPU monitor beside a NIC monitor, unless told not to", () => {
  const reference = parseConfig(
    JSON.stringify({
      "data-ids": [{ name: "rx", data_id: "0x0000000000000001" }],
      rules: [],
    }),
    "rules.json",
  );
  const auto = withAutoGpuMonitor(reference);
  assert.deepEqual(auto.monitors.map((m) => [m.name, m.source, m.eventLog]), [
    ["nic", "doca", "events.log"],
    ["gpu", "nvml", "gpu-events.log"],
  ]);
  const gpu = auto.monitors[1];
  assert.equal(gpu.columns.length, 21);
  assert.deepEqual(
    gpu.rules.map((r) =>
      isReferenceRule(r)
        ? [
          r.name,
          gpu.columns[r.column].name,
          r.comparisonType,
          r.comparisonValue,
        ]
        : [r.name, r.signal]
    ),
    [
      ["GPU Xid error", "gpu*.xid_errors", "inc_gt", 1n],
      ["GPU uncorrected ECC error", "gpu*.ecc_uncorrected", "inc_gt", 1n],
    ],
  );
  // The log goes beside the NIC's, wherever that is.
  const placed = withAutoGpuMonitor(
    applyRunOptions(reference, {
      eventLog: "/var/log/dpu-traceback/events.log",
      forceOwnership: false,
      quiet: true,
      device: "03:00.0",
    }),
  );
  assert.equal(
    placed.monitors[1].eventLog,
    "/var/log/dpu-traceback/gpu-events.log",
  );
  // Beside the kernel source too: it reads a real NIC.
  const kernel = parseConfig(
    'monitors:\n  - { name: host, source: kernel, device: eth0, columns: [{ name: rx, data_id: "netdev:rx_packets" }] }\n',
    "a.yaml",
  );
  assert.deepEqual(
    withAutoGpuMonitor(kernel).monitors.map((m) => [m.name, m.source]),
    [["host", "kernel"], ["gpu", "nvml"]],
  );
  // Off, a simulated NIC, or a GPU monitor already there: nothing added.
  assert.equal(
    withAutoGpuMonitor({ ...reference, gpu: "off" }).monitors.length,
    1,
  );
  assert.equal(
    withAutoGpuMonitor(
      applyRunOptions(reference, {
        source: "sim",
        forceOwnership: false,
        quiet: true,
      }),
    ).monitors.length,
    1,
  );
  const explicit = parseConfig(
    agent("  - { name: mine, source: nvml }\n"),
    "a.yaml",
  );
  assert.equal(withAutoGpuMonitor(explicit).monitors.length, 2);
  assert.equal(
    applyRunOptions(reference, {
      gpu: "off",
      device: "03:00.0",
      forceOwnership: false,
      quiet: true,
    }).gpu,
    "off",
  );
});

Deno.test("run options leave a GPU monitor alone", () => {
  const config = parseConfig(
    agent("  - { name: gpu, source: nvml }\n"),
    "a.yaml",
  );
  const applied = applyRunOptions(config, {
    source: "sim",
    device: "04:00.0",
    eventLog: "nic.log",
    forceOwnership: false,
    quiet: true,
  });
  assert.deepEqual(
    applied.monitors.map((m) => [m.source, m.device, m.eventLog]),
    [
      ["sim", "04:00.0", "nic.log"],
      ["nvml", undefined, "gpu-events.log"],
    ],
  );
});

Deno.test("GPU monitors: [gpuN] rule names are reserved and the period has a floor", () => {
  assert.match(
    problem(agent(`  - name: gpu
    source: nvml
    rules: [{ name: "hot [gpu0]", column: gpu*.temperature, comparison_type: gt, comparison_value: 1 }]
`)),
    /monitors\[1\]\.rules\[0\]\.name ends in " \[gpuN\]", which names the per-GPU copies of a rule on a gpu\* column/,
  );
  assert.match(
    problem(agent("  - { name: gpu, source: nvml, sample_period_ns: 1000 }\n")),
    /monitors\[1\]\.sample_period_ns must be between 10000000 and 3600000000000 for source nvml \(10 ms to 1 h\)/,
  );
});

Deno.test("withAutoGpuMonitor never shares a log with a monitor already configured", () => {
  const config = parseConfig(
    `gpu: auto
monitors:
  - name: nic
    device: "03:00.0"
    event_log: logs/gpu-events.log
    columns: [{ name: rx, data_id: "0x1020000100000000" }]
  - name: other
    source: sim
    event_log: logs/gpu-2-events.log
    columns: [{ name: rx, data_id: "0x1020000100000000" }]
`,
    "a.yaml",
  );
  assert.equal(
    withAutoGpuMonitor(config).monitors[2].eventLog,
    "logs/gpu-3-events.log",
  );
});

Deno.test("a GPU monitor takes signal rules on gpu* and gpuN columns", () => {
  const config = parseConfig(
    agent(`  - name: gpu
    source: nvml
    readings: [gpu*.*, gpu1.*]
    rules:
      - { name: hot, value: gpu*.temperature, above: 85, clear: 80, for: 10s, severity: critical }
      - { name: Xid, increase: gpu*.xid_errors, above: 0 }
      - { name: power, rate: gpu1.energy, window: 10s, above: 400k/s, for: 2 of 3 }
      - name: NVLink replays per CRC error
        ratio: gpu*.nvlink_replay_errors
        to: gpu*.nvlink_crc_flit_errors
        window: 119s
        above: 50%
`),
    "a.yaml",
  );
  const gpu = config.monitors[1];
  const named = (name: string) => gpu.columns.findIndex((c) => c.name === name);
  assert.deepEqual(gpu.rules, [
    {
      name: "hot",
      signal: "value",
      column: named("gpu*.temperature"),
      windowNs: 0,
      direction: "above",
      threshold: 85n,
      clear: 80n,
      forNs: 10_000_000_000,
      keepFiringForNs: 0,
      severity: "critical",
    },
    {
      name: "Xid",
      signal: "increase",
      column: named("gpu*.xid_errors"),
      windowNs: 0,
      direction: "above",
      threshold: 0n,
      clear: 0n,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      name: "power",
      signal: "rate",
      column: named("gpu1.energy"),
      windowNs: 10_000_000_000,
      direction: "above",
      threshold: 400_000,
      clear: 400_000,
      forNs: 0,
      mOfN: { m: 2, n: 3 },
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      // 119 s is the longest window a 60-sample depth at 1 s holds.
      name: "NVLink replays per CRC error",
      signal: "ratio",
      column: named("gpu*.nvlink_replay_errors"),
      denominator: named("gpu*.nvlink_crc_flit_errors"),
      windowNs: 119_000_000_000,
      direction: "above",
      threshold: 0.5,
      clear: 0.5,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "warning",
    },
  ]);
});

Deno.test("a GPU ratio divides one GPU's readings: a mix of GPUs is refused", () => {
  const rule = (top: string, bottom: string) =>
    agent(`  - name: gpu
    source: nvml
    readings: [gpu*.*, gpu0.*, gpu1.*]
    rules:
      - { name: r, ratio: ${top}, to: ${bottom}, window: 10s, above: 1% }
`);
  const at = 'Cannot load config a.yaml:9: monitors[1].rules[0] ("r").to';
  assert.equal(
    problem(rule("gpu*.nvlink_replay_errors", "gpu0.nvlink_crc_flit_errors")),
    `${at} must be on the same GPUs as ratio (gpu*.nvlink_replay_errors), as in to: gpu*.nvlink_crc_flit_errors: a ratio divides each GPU's readings by the same GPU's, got "gpu0.nvlink_crc_flit_errors"`,
  );
  assert.equal(
    problem(rule("gpu0.nvlink_replay_errors", "gpu*.nvlink_crc_flit_errors")),
    `${at} must be on the same GPUs as ratio (gpu0.nvlink_replay_errors), as in to: gpu0.nvlink_crc_flit_errors: a ratio divides each GPU's readings by the same GPU's, got "gpu*.nvlink_crc_flit_errors"`,
  );
  assert.equal(
    problem(rule("gpu1.nvlink_replay_errors", "gpu0.nvlink_crc_flit_errors")),
    `${at} must be on the same GPUs as ratio (gpu1.nvlink_replay_errors), as in to: gpu1.nvlink_crc_flit_errors: a ratio divides each GPU's readings by the same GPU's, got "gpu0.nvlink_crc_flit_errors"`,
  );
  // The same GPU, or gpu* on both sides, is fine.
  for (
    const [top, bottom] of [
      ["gpu1.nvlink_replay_errors", "gpu1.nvlink_crc_flit_errors"],
      ["gpu*.nvlink_replay_errors", "gpu*.nvlink_crc_flit_errors"],
    ]
  ) {
    assert.equal(parseConfig(rule(top, bottom), "a.yaml").monitors.length, 2);
  }
});

Deno.test("a GPU monitor's window must fit its ring at its period", () => {
  assert.equal(
    problem(agent(`  - name: gpu
    source: nvml
    rules: [{ name: r, rate: gpu*.energy, window: 2m, above: 1 }]
`)),
    'Cannot load config a.yaml:7: monitors[1].rules[0] ("r").window 2m needs depth >= 61 at a 1 s period (W <= (2 x depth - 1) x period), got depth 60 (the default), which fits a window of at most 119 s',
  );
  assert.equal(
    problem(agent(`  - name: gpu
    source: nvml
    rules: [{ name: r, value: gpu*.temperature, above: 1, data_id: "0x1" }]
`)),
    'Cannot load config a.yaml:7: monitors[1].rules[0] ("r").data_id is for reference rules; a signal rule names its column in value (value: <column name>), got "0x1"',
  );
});
