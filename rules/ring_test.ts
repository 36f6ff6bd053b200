import assert from "node:assert/strict";
import { SampleRing } from "./ring.ts";
import { join, M, P53, readValue, writeRecord } from "./rules_test_util.ts";

Deno.test("SampleRing: geometry (capacity, columns, stride, storage)", () => {
  const cases: Array<
    { columns: number; capacity: number; stride: number; words: number }
  > = [
    { columns: 1, capacity: 1, stride: 4, words: 4 },
    { columns: 1, capacity: 2, stride: 4, words: 8 },
    { columns: 3, capacity: 5, stride: 8, words: 40 },
    { columns: 16, capacity: 2048, stride: 34, words: 34 * 2048 },
  ];
  for (const c of cases) {
    const ring = new SampleRing(c.columns, c.capacity);
    assert.equal(ring.capacity, c.capacity);
    assert.equal(ring.columns, c.columns);
    assert.equal(ring.stride, c.stride);
    assert.equal(ring.words.length, c.words);
    assert.equal(ring.count, 0);
  }
});

Deno.test("SampleRing: rejects bad columns and capacity", () => {
  for (
    const [columns, capacity] of [[0, 4], [1, 0], [1.5, 4], [1, 2.5], [-1, 4], [
      1,
      NaN,
    ]]
  ) {
    assert.throws(() => new SampleRing(columns, capacity), RangeError);
  }
});

Deno.test("SampleRing: claim wraps and count saturates (capacity 3, 1 column)", () => {
  const ring = new SampleRing(1, 3); // stride 4
  // Slot of sample i is i mod 3; offset = slot * 4.
  const expected = [
    { at: 0, count: 1 },
    { at: 4, count: 2 },
    { at: 8, count: 3 },
    { at: 0, count: 3 },
    { at: 4, count: 3 },
    { at: 8, count: 3 },
    { at: 0, count: 3 },
  ];
  expected.forEach((e, i) => {
    assert.equal(ring.claim(), e.at, `claim of sample ${i}`);
    assert.equal(ring.count, e.count, `count after sample ${i}`);
    assert.equal(ring.offsetBack(0), e.at, `newest after sample ${i}`);
  });
});

Deno.test("SampleRing: offsetBack across the wrap, hand table (capacity 3)", () => {
  const ring = new SampleRing(1, 3); // stride 4
  // After sample k the head is slot k mod 3 and d back is slot (k - d) mod 3.
  const table: Array<{ after: number; back: number[] }> = [
    { after: 0, back: [0] },
    { after: 1, back: [4, 0] },
    { after: 2, back: [8, 4, 0] },
    { after: 3, back: [0, 8, 4] },
    { after: 4, back: [4, 0, 8] },
    { after: 5, back: [8, 4, 0] },
    { after: 6, back: [0, 8, 4] },
  ];
  for (const row of table) {
    ring.claim();
    assert.equal(ring.count, row.back.length);
    row.back.forEach((at, d) =>
      assert.equal(ring.offsetBack(d), at, `after ${row.after}, back ${d}`)
    );
  }
});

Deno.test("SampleRing: depth 1 (capacity 1) always reuses slot 0", () => {
  const ring = new SampleRing(2, 1);
  for (let i = 0; i < 5; i++) {
    const at = ring.claim();
    assert.equal(at, 0);
    writeRecord(ring.words, at, BigInt(i), [
      BigInt(i) * 10n,
      M - 1n - BigInt(i),
    ]);
    assert.equal(ring.count, 1);
    assert.equal(ring.offsetBack(0), 0);
    assert.equal(join(ring.words, ring.offsetBack(0)), BigInt(i));
    assert.equal(readValue(ring.words, 0, 0), BigInt(i) * 10n);
    assert.equal(readValue(ring.words, 0, 1), M - 1n - BigInt(i));
  }
});

Deno.test("SampleRing: value d back is sample i - d, for every d < count (odd and even capacities)", () => {
  for (const capacity of [1, 2, 3, 5, 7, 8]) {
    for (const columns of [1, 2]) {
      const ring = new SampleRing(columns, capacity);
      for (let i = 0; i < 3 * capacity + 2; i++) {
        const values = [1000n + BigInt(i), 5000n + BigInt(i)].slice(0, columns);
        writeRecord(ring.words, ring.claim(), BigInt(i), values);
        assert.equal(ring.count, Math.min(i + 1, capacity));
        for (let d = 0; d < ring.count; d++) {
          const at = ring.offsetBack(d);
          const label =
            `capacity ${capacity}, columns ${columns}, sample ${i}, back ${d}`;
          assert.equal(at % ring.stride, 0, label);
          assert.ok(at >= 0 && at < ring.words.length, label);
          assert.equal(join(ring.words, at), BigInt(i - d), label);
          assert.equal(
            readValue(ring.words, at, 0),
            1000n + BigInt(i - d),
            label,
          );
          if (columns === 2) {
            assert.equal(
              readValue(ring.words, at, 1),
              5000n + BigInt(i - d),
              label,
            );
          }
        }
      }
    }
  }
});

Deno.test("SampleRing: u64 values round-trip exactly through the halves", () => {
  const ring = new SampleRing(4, 2);
  const values = [M - 1n, P53 + 1n, (1n << 32n) - 1n, 1n << 32n];
  writeRecord(ring.words, ring.claim(), M - 2n, values);
  const at = ring.offsetBack(0);
  assert.equal(join(ring.words, at), M - 2n);
  values.forEach((v, col) => assert.equal(readValue(ring.words, at, col), v));
});

Deno.test("SampleRing: clear forgets records and restarts at slot 0", () => {
  const ring = new SampleRing(1, 3);
  ring.claim();
  ring.claim();
  ring.clear();
  assert.equal(ring.count, 0);
  assert.equal(ring.claim(), 0);
  assert.equal(ring.count, 1);
  assert.equal(ring.offsetBack(0), 0);
});
