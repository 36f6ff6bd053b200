import assert from "node:assert/strict";
import { ChartBudget } from "./chart_budget.ts";
import { EventStore } from "./event_store.ts";
import { POINT_STRIDE, RecentSeries } from "./window.ts";

const EVERY = { rules: [], monitors: [] };

Deno.test("the newest charts win; their memory is reused, and stored only when reading is over", () => {
  const store = new EventStore();
  const budget = new ChartBudget(store, EVERY, 2, 8);
  const recent = new RecentSeries(4, 8);
  recent.add(0, 1, NaN);
  const drafts = [10, 30, 20, 40].map((sec) => {
    const d = budget.begin("nic", "r", { sec, ns: 0 }, recent, 0)!;
    d.during?.add(1, 2, 3);
    return d;
  });
  // 10 and 30 kept; 20 pushes 10 out and takes its buffers; 40 pushes 20.
  assert.deepEqual(drafts.map((d) => d.during !== null), [
    false,
    true,
    false,
    true,
  ]);
  assert.equal(drafts[0].buffers, null);
  drafts.forEach((d, i) => budget.finish(d, i, { sec: 50, ns: 0 }, "ended"));
  assert.equal(store.charts, 0, "nothing stored while reading");
  budget.settle();
  assert.equal(store.charts, 2);
  assert.equal(budget.leftOut, 2);
});

Deno.test("filters: names and --until at the start, --since at the end", () => {
  const store = new EventStore();
  const budget = new ChartBudget(
    store,
    {
      rules: ["ecn"],
      monitors: [],
      sinceMs: 100_000,
      until: { ns: 200_000_000_000n, spanNs: 1_000_000n }, // 200.000 s
    },
    10,
    8,
  );
  assert.equal(budget.begin("nic", "PFC", { sec: 150, ns: 0 }, null, 0), null);
  assert.equal(budget.begin("nic", "ECN", { sec: 250, ns: 0 }, null, 0), null);
  const early = budget.begin("nic", "ECN", { sec: 50, ns: 0 }, null, 0)!;
  const late = budget.begin("nic", "ECN", { sec: 150, ns: 0 }, null, 0)!;
  budget.finish(early, 0, { sec: 60, ns: 0 }, "ended"); // over before --since
  budget.finish(late, 1, { sec: 160, ns: 0 }, "ended");
  budget.settle();
  assert.equal(store.charts, 1);
  assert.equal(budget.leftOut, 0);
  assert.equal(early.during, null);
  assert.equal(late.before.length % POINT_STRIDE, 0);
});
