import assert from "node:assert/strict";
import {
  GPU_COLORS,
  type GpuChart,
  gpuChartSummary,
  gpuChartSvg,
  MAX_STEPS,
} from "./gpu_chart.ts";

/** Samples every `period` ms from `from` ms, `n` of them, valued by `f`. */
function chart(
  n: number,
  from: number,
  period: number,
  f: (k: number) => number,
  span = { t0: from, t1: from + n * period },
): GpuChart {
  const times = Float64Array.from({ length: n }, (_, k) => from + k * period);
  return {
    span,
    periodMs: period,
    times,
    gpus: ["GPU 0 (PIX)", "GPU 1 (PXB)"],
    panels: [{
      heading: "PCIe throughput (solid TX, dashed RX)",
      unit: "B/s",
      lines: [
        { gpu: 0, values: Float64Array.from(times, (_, k) => f(k)) },
        {
          gpu: 0,
          values: Float64Array.from(times, (_, k) => 2 * f(k)),
          dashed: true,
        },
        { gpu: 1, values: Float64Array.from(times, () => 5) },
      ],
    }],
  };
}

const paths = (svg: string) =>
  [...svg.matchAll(/<path d="([^"]+)"([^>]*)\/>/g)].map((m) => ({
    d: m[1],
    attributes: m[2],
  }));

Deno.test("each sample is a step over the period before it, clipped to the axis; a loss breaks the line", () => {
  // Samples at 0.5, 1.5, 2.5 s, then 6.5 s (three lost); the axis 1 s to 7 s.
  const c = chart(4, 500, 1000, (k) => 10 * (k + 1), { t0: 1000, t1: 7000 });
  (c.times as Float64Array)[3] = 6500;
  const svg = gpuChartSvg(c);
  const [tx, rx, other] = paths(svg);
  // 0.5 s covers the time before the axis: left out. 1.5 s covers 1 to
  // 1.5 s (clipped), 2.5 s covers 1.5 to 2.5 s; 6.5 s covers 5.5 to 6.5 s
  // alone (a period: what came before it was lost).
  const xs = [...tx.d.matchAll(/[MLH]([\d.]+)/g)].map((m) => Number(m[1]));
  const x = (ms: number) =>
    Math.round((64 + (ms - 1000) / 6000 * 484) * 10) / 10;
  assert.deepEqual(xs, [x(1000), x(1500), x(2500), x(5500), x(6500)]);
  assert.match(tx.d, /^M\S+ [\d.]+H\S+V[\d.]+H\S+M\S+ [\d.]+H\S+$/);
  assert.equal((tx.d.match(/M/g) ?? []).length, 2, "broken at the loss");
  assert.match(rx.attributes, /stroke-dasharray="5 3"/);
  assert.match(tx.attributes, new RegExp(`stroke="${GPU_COLORS[0]}"`));
  assert.match(other.attributes, new RegExp(`stroke="${GPU_COLORS[1]}"`));
  assert.equal(
    gpuChartSummary(c),
    "GPU 0 (PIX): PCIe throughput TX 20 B/s to 40 B/s, RX 40 B/s to 80 B/s. GPU 1 (PXB): PCIe throughput 5 B/s.",
  );
});

Deno.test(`past ${MAX_STEPS} samples, runs share a step from their lowest to their highest: a one-sample spike stays, the size stays bounded`, () => {
  const n = 100_000;
  const spike = 77_777;
  const c = chart(n, 0, 10, (k) => k === spike ? 1e9 : 100);
  const svg = gpuChartSvg(c);
  const [tx] = paths(svg);
  assert.ok(
    (tx.d.match(/H/g) ?? []).length <= MAX_STEPS,
    `${(tx.d.match(/H/g) ?? []).length} steps`,
  );
  // The spike's run is drawn up to the spike: the panel's top.
  assert.match(tx.d, /V87\.5V130H/);
  assert.match(gpuChartSummary(c), /TX 100 B\/s to 1G B\/s/);
  assert.ok(svg.length < 30_000, `${svg.length} bytes`);
});

Deno.test("names from outside are escaped; colours are attributes, never a style", () => {
  const c = chart(3, 0, 1000, () => 1);
  const svg = gpuChartSvg({
    ...c,
    gpus: ['GPU 0 (<script>"x")', "GPU 1 (PXB)"],
  });
  assert.match(svg, /GPU 0 \(&lt;script&gt;&quot;x&quot;\)/);
  assert.doesNotMatch(svg, /<script|style=/);
  assert.equal(gpuChartSvg({ ...c, panels: [] }), "");
});

Deno.test("the worst case: four GPUs, four lines each, every step a new level, stays within 40 KB", () => {
  const n = 100_000;
  const times = Float64Array.from({ length: n }, (_, k) => k * 10);
  // A value per sample that makes every step's lowest, highest and last
  // differ, so each step draws all it can.
  const noisy = (seed: number) =>
    Float64Array.from(
      times,
      (_, k) => ((k * 7919 + seed * 104729) % 1000) * 1e6 + k,
    );
  const lines = (unit: number) =>
    [0, 1, 2, 3].flatMap((gpu) =>
      unit === 1
        ? [
          { gpu, values: noisy(gpu) },
          { gpu, values: noisy(gpu + 10), dashed: true },
        ]
        : [{ gpu, values: noisy(gpu + 20 * unit) }]
    );
  const svg = gpuChartSvg({
    span: { t0: 0, t1: n * 10, endMs: n * 5 },
    periodMs: 10,
    times,
    gpus: ["GPU 0 (NODE)", "GPU 1 (NODE)", "GPU 2 (NODE)", "GPU 3 (NODE)"],
    panels: [0, 1, 2].map((unit) => ({
      heading: `panel ${unit}`,
      unit: "W",
      lines: lines(unit),
    })),
  });
  assert.ok(svg.length < 40_000, `${svg.length} bytes`);
});
