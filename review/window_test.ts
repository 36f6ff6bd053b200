import assert from "node:assert/strict";
import { GrowingSeries, POINT_STRIDE, RecentSeries } from "./window.ts";

function points(series: Float64Array) {
  const out = [];
  for (let i = 0; i < series.length; i += POINT_STRIDE) {
    const [t0, t1, vMin, vMax, rMin, rMax] = series.subarray(
      i,
      i + POINT_STRIDE,
    );
    out.push({ t0, t1, vMin, vMax, rMin, rMax });
  }
  return out;
}

Deno.test("GrowingSeries keeps every row below its capacity", () => {
  const s = new GrowingSeries(10);
  for (let i = 0; i < 7; i++) s.add(i, i * 2, i === 0 ? NaN : 1);
  const p = points(s.points());
  assert.equal(p.length, 7);
  assert.deepEqual(p.map((x) => x.vMax), [0, 2, 4, 6, 8, 10, 12]);
  assert.ok(Number.isNaN(p[0].rMin));
});

Deno.test("GrowingSeries stays bounded, covers all rows and keeps a one-row spike", () => {
  for (const n of [11, 1000, 123457]) {
    const s = new GrowingSeries(64);
    const spikeAt = Math.floor(n * 0.37);
    for (let i = 0; i < n; i++) {
      s.add(i, i === spikeAt ? 1e9 : i % 7, i === spikeAt ? -5 : i % 3);
    }
    const p = points(s.points());
    assert.ok(
      n < 64 ? p.length === n : p.length <= 64 && p.length >= 32,
      `${n} rows: ${p.length} points`,
    );
    assert.equal(p[0].t0, 0);
    assert.equal(p[p.length - 1].t1, n - 1);
    for (let k = 1; k < p.length; k++) assert.equal(p[k].t0, p[k - 1].t1 + 1);
    assert.equal(Math.max(...p.map((x) => x.vMax)), 1e9);
    assert.equal(Math.min(...p.map((x) => x.rMin)), -5);
    const spike = p.find((x) => x.vMax === 1e9)!;
    assert.ok(spike.t0 <= spikeAt && spikeAt <= spike.t1);
  }
});

Deno.test("RecentSeries covers the last span rows, not more than one bucket beyond", () => {
  const s = new RecentSeries(10, 100); // buckets of 10 rows
  for (let i = 0; i < 1005; i++) s.add(i, i, 0);
  const p = points(s.points());
  assert.equal(p[p.length - 1].t1, 1004);
  // The newest 100 rows are there; at most one bucket older.
  assert.ok(p[0].t0 <= 905 && p[0].t0 >= 895, `first row ${p[0].t0}`);
  for (let k = 1; k < p.length; k++) assert.equal(p[k].t0, p[k - 1].t1 + 1);
  s.clear();
  assert.equal(s.points().length, 0);
  s.add(5, 1, 1);
  assert.deepEqual(points(s.points()).map((x) => x.t0), [5]);
});

Deno.test("a GrowingSeries reset is as new; RecentSeries writes its points into a buffer", () => {
  const used = new GrowingSeries(4);
  for (let i = 0; i < 100; i++) used.add(i, i, 1);
  used.reset();
  const fresh = new GrowingSeries(4);
  for (const s of [used, fresh]) for (let i = 0; i < 3; i++) s.add(i, 5, 2);
  assert.deepEqual(used.points(), fresh.points());
  assert.equal(used.points().length, 3 * POINT_STRIDE);

  const recent = new RecentSeries(4, 100);
  for (let i = 0; i < 1000; i++) recent.add(i, i, 1);
  const out = new Float64Array(recent.maxLength);
  const n = recent.pointsInto(out);
  assert.deepEqual(out.subarray(0, n), recent.points());
});
