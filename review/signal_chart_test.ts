import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../tests/cli_util.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { resolveInputs } from "./files.ts";
import { readReview } from "./read.ts";
import {
  BUCKET_STRIDE,
  MAX_BUCKETS,
  SignalChartData,
  signalChartSvg,
} from "./signal_chart.ts";
import { readWindow } from "./window_rows.ts";
import type { ReviewEvent } from "./event.ts";

const T0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z, ns
const PERIOD = 100_000n; // 10 kHz

/**
 * `rows` samples: rx rises 1000 a sample, 5000 on samples 2000-2999, and
 * 900,000 on sample 2500 alone (one spike); drops rises 1 a sample there,
 * and the source lost samples before sample 2700 (a hole in time).
 */
function capture(rows: number): string {
  const lines = ["timestamp,rx,drops"];
  let rx = 10n ** 12n;
  let drops = 0n;
  let t = T0;
  for (let i = 0; i < rows; i++) {
    if (i > 0) {
      rx += i === 2500 ? 900_000n : i >= 2000 && i < 3000 ? 5000n : 1000n;
      if (i >= 2000 && i < 3000) drops += 1n;
      t += i === 2700 ? 5n * PERIOD : PERIOD;
    }
    lines.push(`${t},${rx},${drops}`);
  }
  return lines.join("\n") + "\n";
}

const CONFIG = (log: string) => `
monitors:
  - name: nic
    source: replay
    sample_period_ns: 100000
    depth: 500
    event_log: ${JSON.stringify(log)}
    columns:
      - { name: rx, data_id: "0x1020000100000000" }
      - { name: drops, data_id: "0x1020000500000000" }
    rules:
      - name: rx fast
        rate: rx
        window: 1ms
        above: 30M/s
        clear: 20M/s
      - name: drops share
        ratio: drops
        to: rx
        window: 1ms
        above: 0.01 %
`;

/** The events of one replay of 6000 rows, run once for every test here. */
let replayed: Promise<ReviewEvent[]> | undefined;
function events6000(): Promise<ReviewEvent[]> {
  return replayed ??= events(6000);
}

async function events(rows: number): Promise<ReviewEvent[]> {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const input = join(dir.path, "capture.csv");
  const config = join(dir.path, "config.yaml");
  await Deno.writeTextFile(input, capture(rows));
  await Deno.writeTextFile(config, CONFIG(log));
  const run = await runMain([
    "run",
    "--config",
    config,
    "--input",
    input,
    "--listen",
    "off",
    "-q",
  ]);
  assert.equal(run.code, 0, run.stderr);
  const review = await readReview(await resolveInputs([log]));
  const all = [...review.events];
  // Read each window while the files are there.
  for (const e of all) {
    const data = new SignalChartData(e);
    await readWindow(e, data);
    (e as ReviewEvent & { signalChart: unknown }).signalChart = data.chart();
  }
  return all;
}

type Charted = ReviewEvent & {
  signalChart: ReturnType<SignalChartData["chart"]>;
};

function series(chart: Charted["signalChart"], slot: number) {
  const p = chart.points;
  let lo = Infinity;
  let hi = -Infinity;
  for (let o = 0; o < p.length; o += BUCKET_STRIDE) {
    if (p[o + slot] < lo) lo = p[o + slot];
    if (p[o + slot + 1] > hi) hi = p[o + slot + 1];
  }
  return { lo, hi };
}

Deno.test("an event's chart keeps its one-sample spike and the rule's peak, in a bounded number of columns", async () => {
  const [fast] = (await events6000()).filter((e) =>
    e.rule === "rx fast"
  ) as Charted[];
  const chart = fast.signalChart;
  const buckets = chart.points.length / BUCKET_STRIDE;
  assert.ok(buckets <= MAX_BUCKETS && buckets >= MAX_BUCKETS / 2, `${buckets}`);
  // Every row of the window was read: the history dump and the event.
  assert.equal(chart.rows, fast.historyRows + fast.rows);
  // The signal's highest is the agent's own peak, to the float.
  assert.equal(series(chart, 2).hi, fast.rulePeak);
  // The column's rate keeps the spike: 900,000 in 100 µs.
  assert.equal(series(chart, 4).hi, 9e9);
  // The capture's hole in time (row 2700) is no lost sample: nothing is
  // ticked as lost.
  assert.equal(chart.gaps.length, 0);
  assert.equal(chart.signalHeading, "rx rate/1ms (/s)");
  // Bucket times go forward, and the event's start is inside the span.
  const p = chart.points;
  for (let o = BUCKET_STRIDE; o < p.length; o += BUCKET_STRIDE) {
    assert.ok(p[o] >= p[o - BUCKET_STRIDE + 1]);
  }
  assert.ok(p[0] < 0 && p[p.length - BUCKET_STRIDE + 1] > 0);
});

Deno.test("the SVG marks threshold, clear level, start and end, and a ratio charts both columns", async () => {
  const all = await events6000() as Charted[];
  const fast = all.find((e) => e.rule === "rx fast")!;
  const svg = signalChartSvg(fast, fast.signalChart);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /);
  assert.match(svg, />threshold 30000000\/s</);
  assert.match(svg, />clear 20000000\/s</);
  assert.match(svg, />start</);
  assert.match(svg, />end</);
  assert.match(
    svg,
    /<title id="chart-title">rx fast: rx rate\/1ms \(\/s\), and the rate of rx per second/,
  );
  assert.doesNotMatch(svg, /<script|href=|url\(|style=/);
  assert.ok(svg.length < 60_000, `${svg.length} bytes`);
  const share = all.find((e) => e.rule === "drops share")!;
  const ratio = signalChartSvg(share, share.signalChart);
  assert.match(ratio, /the rates of drops and rx per second/);
  assert.match(ratio, />threshold 0\.01 %</);
  // The signal, the numerator and the denominator: a panel each.
  assert.equal(share.signalChart.denominator, "rx");
  assert.equal(series(share.signalChart, 6).hi, 9e9);
  assert.equal((ratio.match(/<path /g) ?? []).length, 3);
  assert.match(ratio, />rx \(the ratio(&#39;|')s denominator\), per second</);
});
