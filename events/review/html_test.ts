import assert from "node:assert/strict";
import { renderReport } from "./html.ts";
import type { FileSummary } from "./read.ts";
import {
  escapeXml,
  eventChartSvg,
  formatTick,
  niceTicks,
  timelineSvg,
} from "./svg.ts";
import { readFixtures } from "./test_util.ts";

const context = (files: readonly FileSummary[], total: number) => ({
  files,
  total,
  filters: [],
  chartsLeftOut: 0,
  generator: "dpu-traceback test",
  nowMs: Date.UTC(2026, 10, 21),
});

Deno.test("the report is self-contained: no scripts, no resources from elsewhere", async () => {
  const log = await readFixtures([
    "nic-events.log",
    "gpu-events.log",
    "reference-events.log",
  ], { chartFor: () => true });
  const page = renderReport(log.events, context(log.files, log.events.length));
  assert.ok(page.startsWith("<!doctype html>"));
  assert.ok(!/<script/i.test(page));
  assert.ok(!/<(link|img|iframe)\b/i.test(page));
  // The only URLs are the SVG namespace.
  const urls = page.match(/https?:\/\/[^"'\s)]+/g) ?? [];
  assert.deepEqual([...new Set(urls)], ["http://www.w3.org/2000/svg"]);
  // A timeline, and a section with a chart per event.
  assert.equal((page.match(/<svg class="timeline"/g) ?? []).length, 1);
  assert.equal(
    (page.match(/<svg class="chart"/g) ?? []).length,
    log.events.length,
  );
  for (const e of log.events) assert.ok(page.includes(`id="event-${e.id}"`));
});

Deno.test("names from the log cannot inject markup", async () => {
  const log = await readFixtures(["gpu-events.log"], { chartFor: () => true });
  const evil = {
    ...log.events[0],
    rule: '<script>alert("x")</script>',
    monitor: "a&b",
  };
  const page = renderReport([evil], context(log.files, 1));
  assert.ok(!page.includes("<script>"));
  assert.ok(page.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
  assert.ok(page.includes("a&amp;b"));
  assert.equal(escapeXml(`<&>"'`), "&lt;&amp;&gt;&quot;&#39;");
});

Deno.test("an event chart has both panels, the start and end, and the peak", async () => {
  const log = await readFixtures(["reference-events.log"], {
    chartFor: () => true,
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
  const d = /class="value-line" d="([^"]+)"/.exec(svg)![1];
  assert.equal(d.split(/[ML]/).filter(Boolean).length, 8);
  // An open event has no end line; an event without chart data no chart.
  const nic = await readFixtures(["nic-events.log"], { chartFor: () => true });
  assert.ok(!eventChartSvg(nic.events[2]).includes("end-marker"));
  assert.ok(eventChartSvg(nic.events[2]).includes("still open"));
  assert.equal(eventChartSvg({ ...nic.events[2], chart: undefined }), "");
});

Deno.test("the timeline has one lane per monitor and rule, one bar per event", async () => {
  const log = await readFixtures(["nic-events.log", "reference-events.log"]);
  const svg = timelineSvg(log.events);
  assert.equal((svg.match(/class="event-bar"/g) ?? []).length, 5);
  assert.equal((svg.match(/<a href="#event-/g) ?? []).length, 5);
  assert.ok(svg.includes("nic · ECN &gt; 100 per 2 samples"));
  assert.ok(svg.includes("reference · Rx &lt; 1000 per 2 samples"));
});

Deno.test("axis labels: round ticks, enough decimals to tell them apart", () => {
  assert.deepEqual(niceTicks(0, 97, 5), [0, 20, 40, 60, 80]);
  assert.deepEqual(niceTicks(-0.3, 0.25, 4), [-0.2, 0, 0.2]);
  assert.equal(formatTick(64947500000, 500000, 64950000000), "64.9475G");
  assert.equal(formatTick(300, 100, 900), "300");
  assert.equal(formatTick(1500, 500, 3000), "1.5k");
});
