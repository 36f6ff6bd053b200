import assert from "node:assert/strict";
import { CHART_SIZE, chartTimeAxis, eventChartSvg } from "./event_chart.ts";
import { EVERY_EVENT, readFixtures } from "./test_util.ts";

/** The x of a marker line (its x1), as drawn. */
function markerX(svg: string, cls: string): number {
  const m = new RegExp(`class="${cls}" x1="([^"]+)" x2="([^"]+)"`).exec(svg);
  assert.ok(m, cls);
  assert.equal(m[1], m[2], `${cls} is vertical`);
  return Number(m[1]);
}

/** The x of every vertex of a path, in order. */
function vertexXs(svg: string, cls: string): number[] {
  const d = new RegExp(`class="${cls}" d="([^"]+)"`).exec(svg)![1];
  return d.split(/[ML]/).filter(Boolean).map((p) => Number(p.split(" ")[0]));
}

Deno.test("an event chart has both panels, the start and end, and the peak", async () => {
  const log = await readFixtures(["reference-events.log"], {
    charts: EVERY_EVENT,
  });
  const svg = eventChartSvg(log.events[0]);
  for (
    const cls of [
      "value-line",
      "rate-line",
      "start-marker",
      "end-marker",
      "event-span",
    ]
  ) {
    assert.ok(svg.includes(`class="${cls}"`), cls);
  }
  assert.equal((svg.match(/class="peak"/g) ?? []).length, 2);
  // The value line visits the 8 window rows (4 before, 4 during).
  assert.equal(vertexXs(svg, "value-line").length, 8);
  // An open event has no end line; an event without chart data no chart.
  const nic = await readFixtures(["nic-events.log"], { charts: EVERY_EVENT });
  assert.ok(!eventChartSvg(nic.events[2]).includes("end-marker"));
  assert.ok(eventChartSvg(nic.events[2]).includes("still open"));
  assert.equal(eventChartSvg({ ...nic.events[2], chart: undefined }), "");
});

Deno.test("the start and end marks sit where the scale puts the start and end samples", async () => {
  // reference-events.log, ECN: rows 100 µs apart from -300 µs (the first
  // of the dump) to +400 µs (the end sample); the plot spans x 80 to 942.
  // gpu-events.log: rows 100 ms apart from -300 ms to +300 ms.
  const ref = await readFixtures(["reference-events.log"], {
    charts: EVERY_EVENT,
  });
  const gpu = await readFixtures(["gpu-events.log"], { charts: EVERY_EVENT });
  const plot = [80, CHART_SIZE.width - 18];
  const at = (fraction: number) =>
    Math.round((plot[0] + fraction * (plot[1] - plot[0])) * 10) / 10;
  for (
    const [e, start, end, peak] of [
      [ref.events[0], at(3 / 7), at(1), at(7 / 7)], // peak 620: the end sample
      [gpu.events[0], at(3 / 6), at(1), at(4 / 6)], // peak 90 at +100 ms
    ] as const
  ) {
    const svg = eventChartSvg(e);
    const axis = chartTimeAxis(e)!;
    const round = (x: number) => Math.round(x * 10) / 10;
    // Against the known sample times...
    assert.equal(markerX(svg, "start-marker"), start, `#${e.id} start`);
    assert.equal(markerX(svg, "end-marker"), end, `#${e.id} end`);
    // ... against the chart's own scale ...
    assert.equal(markerX(svg, "start-marker"), round(axis.sx(0)));
    assert.equal(markerX(svg, "end-marker"), round(axis.sx(e.durationS!)));
    // ... and against the drawn rows: the start sample is the last row of
    // the history, the end sample the last row of all.
    const xs = vertexXs(svg, "value-line");
    assert.equal(xs.length, e.historyRows + e.rows);
    assert.equal(markerX(svg, "start-marker"), xs[e.historyRows - 1]);
    assert.equal(markerX(svg, "end-marker"), xs[xs.length - 1]);
    // The value's peak is circled on its row.
    const circle = /class="peak" cx="([^"]+)"/.exec(svg)!;
    assert.equal(Number(circle[1]), peak, `#${e.id} peak`);
  }
});
