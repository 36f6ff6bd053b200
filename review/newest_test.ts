import assert from "node:assert/strict";
import { type Kept, Newest } from "./newest.ts";

Deno.test("Newest keeps the newest items whatever order they come in", () => {
  let x = 7;
  const times = Array.from({ length: 500 }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % 1000;
  });
  const evicted: number[] = [];
  const keep = new Newest<number>(20, (i) => evicted.push(i));
  const kept = new Set<number>();
  times.forEach((t, i) => {
    if (keep.offer(t, 0, i) !== undefined) kept.add(i);
  });
  for (const i of evicted) kept.delete(i);
  const expected = times.map((t, i) => [t, i]).sort((a, b) =>
    b[0] - a[0] || b[1] - a[1]
  ).slice(0, 20).map(([, i]) => i).sort((a, b) => a - b);
  assert.deepEqual([...kept].sort((a, b) => a - b), expected);
  assert.equal(keep.size, 20);
});

Deno.test("Newest: nanoseconds and arrival break ties; unknown times are oldest", () => {
  const evicted: string[] = [];
  const keep = new Newest<string>(2, (s) => evicted.push(s));
  keep.offer(NaN, 0, "unknown");
  keep.offer(5, 2, "b");
  keep.offer(5, 1, "a"); // pushes out "unknown"
  assert.equal(keep.offer(5, 0, "older"), undefined);
  keep.offer(5, 2, "b2"); // same time as "b", later: newer; "a" goes
  assert.deepEqual(evicted, ["unknown", "a"]);
  assert.deepEqual([...keep].sort(), ["b", "b2"]);
});

Deno.test("Newest: a removed item frees its place; capacity 0 keeps nothing", () => {
  const keep = new Newest<string>(2, () => assert.fail("nothing is evicted"));
  const a = keep.offer(1, 0, "a") as Kept;
  keep.offer(2, 0, "b");
  keep.remove(a);
  keep.remove(a); // twice is harmless
  assert.equal(keep.size, 1);
  assert.ok(keep.offer(0, 0, "old") !== undefined);
  assert.equal(new Newest<string>(0, () => {}).offer(9, 0, "x"), undefined);
});
