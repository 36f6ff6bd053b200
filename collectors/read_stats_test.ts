import assert from "node:assert/strict";
import { READ_BOUNDS_S, ReadStats } from "./read_stats.ts";

Deno.test("ReadStats puts each read in its bucket (a bound is inside its bucket) and keeps the sum, last and max", () => {
  const stats = new ReadStats(10); // a 10 ms period
  stats.record(0.005); // 5 µs: the first bucket
  stats.record(0.01); // 10 µs: on the first bound, still the first bucket
  stats.record(0.3); // 300 µs: (250 µs, 500 µs]
  stats.record(200); // 200 ms: past the largest bound
  stats.record(0.02);
  const counts = new Array(READ_BOUNDS_S.length + 1).fill(0);
  counts[0] = 2;
  counts[1] = 1; // 20 µs: (10 µs, 25 µs]
  counts[READ_BOUNDS_S.indexOf(0.0005)] = 1;
  counts[READ_BOUNDS_S.length] = 1;
  assert.deepEqual([...stats.readCounts], counts);
  assert.equal(stats.reads, 5);
  assert.ok(Math.abs(stats.readSumS - 0.200335) < 1e-12, `${stats.readSumS}`);
  assert.equal(stats.readLastS, 0.00002);
  assert.equal(stats.readMaxS, 0.2);
  assert.equal(stats.slowReads, 1);
});

Deno.test("ReadStats: a read of exactly the period keeps up; one longer does not; a clock step back counts as 0", () => {
  const stats = new ReadStats(10);
  assert.equal(stats.record(10), false);
  assert.equal(stats.record(10.001), true);
  assert.equal(stats.record(-3), false);
  assert.equal(stats.slowReads, 1);
  assert.equal(stats.readLastS, 0);
  assert.equal(stats.readCounts[0], 1);
  assert.equal(stats.periodS, 0.01);
});
