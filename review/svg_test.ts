import assert from "node:assert/strict";
import {
  coord,
  escapeXml,
  formatTick,
  niceTicks,
  scale,
  timeTicks,
} from "./svg.ts";

Deno.test("axis labels: round ticks, enough decimals to tell them apart", () => {
  assert.deepEqual(niceTicks(0, 97, 5), [0, 20, 40, 60, 80]);
  assert.deepEqual(niceTicks(-0.3, 0.25, 4), [-0.2, 0, 0.2]);
  assert.equal(formatTick(64947500000, 500000, 64950000000), "64.9475G");
  assert.equal(formatTick(300, 100, 900), "300");
  assert.equal(formatTick(1500, 500, 3000), "1.5k");
});

Deno.test("time ticks are round UTC clock times", () => {
  const t0 = Date.UTC(2026, 10, 21, 14, 50, 7);
  assert.deepEqual(
    timeTicks(t0, t0 + 300_000, 5).map((t) => t.label),
    ["14:51", "14:52", "14:53", "14:54", "14:55"],
  );
});

Deno.test("escaping, scales and coordinates", () => {
  assert.equal(escapeXml(`<&>"'`), "&lt;&amp;&gt;&quot;&#39;");
  const sx = scale(-1, 3, 100, 500);
  assert.deepEqual([sx(-1), sx(0), sx(3)], [100, 200, 500]);
  assert.deepEqual([coord(1.26), coord(NaN)], ["1.3", "0"]);
});

Deno.test("escapeXml shows terminal controls and bidi overrides as escapes", () => {
  assert.equal(
    escapeXml("a\u202e<b>\x1b[2J\x9b"),
    "a\\u202e&lt;b&gt;\\u001b[2J\\u009b",
  );
});
