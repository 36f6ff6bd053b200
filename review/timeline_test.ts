import assert from "node:assert/strict";
import type { ReviewEvent } from "./event.ts";
import { readFixtures } from "./test_util.ts";
import { timelineSvg } from "./timeline.ts";

Deno.test("the timeline has one lane per monitor and rule, one bar per event", async () => {
  const log = await readFixtures(["gpu-events.log", "reference-events.log"]);
  const svg = timelineSvg(log.events);
  assert.equal((svg.match(/class="event-bar"/g) ?? []).length, 3);
  assert.equal((svg.match(/<a href="#event-/g) ?? []).length, 3);
  assert.ok(svg.includes("gpu · GPU hot &gt; 85 C"));
  assert.ok(svg.includes("reference · Rx &lt; 1000 per 2 samples"));
});

Deno.test("a flapping rule's events that would touch are one bar saying how many: bounded whatever their number", async () => {
  const [e] = (await readFixtures(["gpu-events.log"])).events;
  // 20,000 events 10 ms apart, 300 ms each, and one a day later.
  const events: ReviewEvent[] = [];
  for (let k = 0; k < 20_000; k++) {
    const ns = (k % 100) * 10_000_000;
    const sec = e.start!.sec + Math.floor(k / 100);
    events.push({
      ...e,
      id: k + 1,
      start: { sec, ns },
      end: { sec, ns: ns + 300_000_000 },
      last: { sec, ns: ns + 300_000_000 },
    });
  }
  events.push({
    ...e,
    id: 20_001,
    state: "open",
    start: { sec: e.start!.sec + 86400, ns: 0 },
    end: null,
    last: { sec: e.start!.sec + 86400, ns: 500 },
  });
  const svg = timelineSvg(events);
  const bars = svg.match(/class="event-bar"/g) ?? [];
  assert.equal(bars.length, 2);
  assert.match(
    svg,
    /#1 to #20000 gpu · GPU hot &gt; 85 C: 20,000 events \(20,000 ended\)/,
  );
  assert.match(svg, /#20001 gpu · GPU hot &gt; 85 C: .* \(open\)/);
  assert.ok(svg.length < 10_000, `${svg.length} characters`);
});
