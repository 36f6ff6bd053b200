import assert from "node:assert/strict";
import { SampleRing } from "../rules/ring.ts";
import { sharedRingBuffer } from "../rules/shared_ring.ts";
import { gpuChartSummary } from "../review/gpu_chart.ts";
import { type GpuRingMonitor, gpuWindow } from "./gpu_window.ts";

// A GPU monitor's shared ring written as the sampler would, with the PCIe
// byte counters of two GPUs: GPU 1 counts, GPU 2 reads 0 (its driver does
// not support them).

const COLUMNS = [
  "gpu1.pcie_tx_bytes",
  "gpu1.pcie_rx_bytes",
  "gpu1.power",
  "gpu2.pcie_tx_bytes",
  "gpu2.pcie_rx_bytes",
].map((name) => ({ name }));
const SECOND = 1_000_000_000n;
const TOP = 1n << 64n;
/** The NIC event's start sample: host time, ns (past 2^53 as real ones are). */
const START = 1_790_000_000_123_456_789n;
const BEHIND = {
  nic: "0000:03:00.0",
  gpus: [1, 2].map((index) => ({
    index,
    uuid: `GPU-0000000${index}-2222-3333-4444-555555555555`,
    busId: `00000000:0${index + 3}:00.0`,
    link: "PIX" as const,
  })),
};

function monitorOf(
  samples: readonly { t: bigint; values: readonly bigint[] }[],
): GpuRingMonitor {
  const sharedRing = sharedRingBuffer(COLUMNS.length, 16);
  const ring = new SampleRing(COLUMNS.length, 16, sharedRing);
  for (const { t, values } of samples) {
    const at = ring.claim();
    [t, ...values].forEach((v, c) => {
      ring.words[at + 2 * c] = Number(v & 0xffff_ffffn);
      ring.words[at + 2 * c + 1] = Number(v >> 32n);
    });
    ring.publish();
  }
  return {
    config: {
      name: "gpu",
      source: "nvml",
      samplePeriodNs: 1e9,
      columns: COLUMNS,
    },
    sharedRing,
  };
}

Deno.test("gpuWindow charts PCIe throughput as the byte counters' rate between samples: exact, unknown across a wrap or reset, never negative", () => {
  // Sample times from the start sample, ns: one a second, then a 2 s gap
  // and one 0.25 s after it.
  const offsets = [-3n, -2n, -1n, 0n, 1n, 3n].map((s) => s * SECOND)
    .concat([3n * SECOND + SECOND / 4n]);
  // TX starts 2.5 MB short of 2^64 and wraps between the 3rd and 4th
  // samples; RX is past 2^53 and is reset (to a low count) before the 6th.
  const tx = [
    TOP - 2_500_000n,
    TOP - 1_500_000n, // +1 MB in 1 s
    TOP - 500_000n, // +1 MB
    700_000n, // wrapped: unknown
    3_700_001n, // +3 000 001 B
    7_700_001n, // +4 MB in 2 s
    8_200_001n, // +0.5 MB in 0.25 s
  ];
  const rx = [
    (1n << 60n) + 12_345n,
    (1n << 60n) + 12_345n + 3_000_000_007n,
    (1n << 60n) + 12_345n + 3_000_000_007n, // idle
    (1n << 60n) + 12_345n + 3_000_000_008n,
    (1n << 60n) + 12_345n + 5_000_000_008n,
    1_000n, // reset: unknown
    501_000n,
  ];
  const monitor = monitorOf(offsets.map((o, k) => ({
    t: START + o,
    values: [tx[k], rx[k], 300_000n + BigInt(k) * 1000n, 0n, 0n],
  })));
  const window = gpuWindow(BEHIND, [monitor], START, { t0: -10, t1: 20 });
  assert.ok(window?.chart, JSON.stringify(window));
  const chart = window.chart;
  assert.deepEqual(chart.gpus, ["GPU 1 (PIX)", "GPU 2 (PIX)"]);
  assert.deepEqual(
    chart.panels.map((p) => [p.heading, p.unit]),
    [["PCIe throughput (solid TX, dashed RX)", "B/s"], ["power", "W"]],
  );
  const pcie = chart.panels[0].lines.map((l) => ({
    gpu: l.gpu,
    dashed: l.dashed ?? false,
    values: [...l.values],
  }));
  assert.deepEqual(pcie, [
    {
      gpu: 0,
      dashed: false,
      values: [NaN, 1e6, 1e6, NaN, 3_000_001, 2e6, 2e6],
    },
    {
      gpu: 0,
      dashed: true,
      values: [NaN, 3_000_000_007, 0, 1, 2e9, NaN, 2e6],
    },
    // GPU 2 reads 0 throughout: no reading, not an idle link.
    { gpu: 1, dashed: false, values: new Array(7).fill(NaN) },
    { gpu: 1, dashed: true, values: new Array(7).fill(NaN) },
  ]);
  assert.deepEqual(
    [...chart.panels[1].lines[0].values].map((w) => Math.round(w)),
    [300, 301, 302, 303, 304, 305, 306],
  );
  // In words, over the span's two readings (to the start sample and the
  // one after): TX unknown across its wrap, then 3 MB/s.
  assert.equal(
    gpuChartSummary(chart),
    "GPU 1 (PIX): PCIe throughput TX 3M B/s, RX 1 B/s to 2G B/s; power 303 W to 304 W. GPU 2 (PIX): no reading.",
  );
  // The counters are columns, so PCIe throughput is read (a GPU reading 0
  // is a gap in its lines, not a reading missing from the monitor).
  assert.match(
    window.caption ?? "",
    /Not read by that monitor: GPU utilisation\.$/,
  );
});

Deno.test("gpuWindow without the PCIe byte columns says PCIe throughput is not read", () => {
  const monitor = monitorOf([{ t: START, values: [0n, 0n, 1n, 0n, 0n] }]);
  const without: GpuRingMonitor = {
    ...monitor,
    config: {
      ...monitor.config,
      columns: COLUMNS.map((c) =>
        c.name.includes("pcie") ? { name: c.name.replace("pcie", "nic") } : c
      ),
    },
  };
  const window = gpuWindow(BEHIND, [without], START, { t0: -10, t1: 0 });
  assert.deepEqual(window?.chart?.panels.map((p) => p.heading), ["power"]);
  assert.match(
    window?.caption ?? "",
    /Not read by that monitor: GPU utilisation, PCIe throughput\./,
  );
});
