import assert from "node:assert/strict";
import { renderReport } from "./html.ts";
import type { FileSummary } from "./read.ts";
import {
  EVERY_EVENT,
  readFixtures,
  readHostileLog,
  TERMINAL_CONTROL,
} from "./test_util.ts";

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
  ], { charts: EVERY_EVENT });
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
  const log = await readFixtures(["gpu-events.log"], { charts: EVERY_EVENT });
  const evil = {
    ...log.events[0],
    rule: '<script>alert("x")</script>',
    monitor: "a&b",
  };
  const page = renderReport([evil], context(log.files, 1));
  assert.ok(!page.includes("<script>"));
  assert.ok(page.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
  assert.ok(page.includes("a&amp;b"));
});

Deno.test("over the chart budget: every event in the table, sections only for the charted, and a true note", async () => {
  const log = await readFixtures([
    "nic-events.log",
    "gpu-events.log",
    "reference-events.log",
  ], { charts: EVERY_EVENT, maxCharts: 2 });
  const page = renderReport(log.events, {
    ...context(log.files, log.events.length),
    chartsLeftOut: log.chartsLeftOut,
    maxCharts: 2,
  });
  assert.equal(log.events.length, 6);
  assert.equal((page.match(/<tr/g) ?? []).length - 1 - 1 - log.files.length, 6);
  assert.equal((page.match(/<svg class="chart"/g) ?? []).length, 2);
  // The newest two (nic's last two) have sections; the others' rows are
  // what #event-N leads to.
  assert.deepEqual(
    [...page.matchAll(/<section class="event" id="event-(\d+)"/g)].map((m) =>
      m[1]
    ),
    ["5", "6"],
  );
  for (const id of [1, 2, 3, 4]) {
    assert.ok(page.includes(`<tr id="event-${id}">`));
  }
  assert.match(
    page,
    /4 events have no chart and no section of their own \(their facts are in the table\): the report charts at most 2 events, the newest of those shown\. Narrow it with --rule, --monitor, --since or --until/,
  );
});

Deno.test("facts use singular nouns for one", async () => {
  const log = await readFixtures(["nic-events.log"], { charts: EVERY_EVENT });
  const page = renderReport(log.events, context(log.files, 3));
  assert.ok(page.includes("&gt;= 100 µs, 1 sample</dd>"), "1 sample");
  assert.ok(!page.includes(" 1 samples"));
});

Deno.test("--html of a hostile log: names shown with escapes, no control or bidi override in the page", async () => {
  const log = await readHostileLog();
  const page = renderReport(log.events, context(log.files, 1));
  // The page may be written to a terminal (--html -), and a browser
  // would reorder the text after U+202E.
  assert.doesNotMatch(page, TERMINAL_CONTROL);
  const rule =
    "GPU \\u202ehot\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 \\u009b31m";
  assert.ok(page.includes(`<td>${rule}</td>`));
  assert.ok(page.includes(`<td>=1+1\\u001b[2J</td>`));
  // In the chart too (its title names the rule and the column).
  assert.ok(
    page.includes(
      `<title>#1 ${rule}: =HYPERLINK(&quot;http://evil.example/&quot;,&quot;click&quot;) and its rate per second</title>`,
    ),
  );
});
