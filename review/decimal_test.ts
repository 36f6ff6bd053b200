import assert from "node:assert/strict";
import {
  compareDecimal,
  decimalToNumber,
  formatDecimal,
  increaseOf,
  signedDelta,
} from "./decimal.ts";

const M = 1n << 64n;

function values(): bigint[] {
  const list = [
    0n,
    1n,
    999999999n,
    1000000000n,
    2n ** 53n - 1n,
    2n ** 53n,
    2n ** 53n + 1n,
    2n ** 63n - 1n,
    2n ** 63n,
    10n ** 19n,
    M - 2n,
    M - 1n,
  ];
  let x = 987654321n;
  for (let i = 0; i < 300; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % M;
    list.push(x >> BigInt(i % 64));
  }
  return list;
}

const split = (v: bigint): [number, number] => [
  Number(v / 1000000000n),
  Number(v % 1000000000n),
];

Deno.test("formatDecimal writes every u64 exactly", () => {
  for (const v of values()) {
    assert.equal(formatDecimal(...split(v)), v.toString());
  }
});

Deno.test("compareDecimal orders like BigInt", () => {
  const list = values();
  for (let i = 1; i < list.length; i++) {
    const [a, b] = [list[i - 1], list[i]];
    const [ah, al] = split(a);
    const [bh, bl] = split(b);
    assert.equal(
      Math.sign(compareDecimal(ah, al, bh, bl)),
      a < b ? -1 : a > b ? 1 : 0,
    );
  }
});

Deno.test("signedDelta is (a - b) mod 2^64 read as signed, exact for small differences", () => {
  const list = values();
  for (let i = 1; i < list.length; i++) {
    for (const [a, b] of [[list[i], list[i - 1]], [list[i - 1], list[i]]]) {
      let d = ((a - b) % M + M) % M;
      if (d >= 1n << 63n) d -= M;
      const [ah, al] = split(a);
      const [bh, bl] = split(b);
      const got = signedDelta(ah, al, bh, bl);
      // Exact where a double can be; within rounding beyond 2^53.
      if (d > -(2n ** 53n) && d < 2n ** 53n) assert.equal(got, Number(d));
      else assert.ok(Math.abs(got / Number(d) - 1) < 1e-15, `${a} - ${b}`);
    }
  }
  // A counter wrapping past 2^64 - 1 rose by 10; a gauge falling by 3.
  assert.equal(signedDelta(...split(4n), ...split(M - 6n)), 10);
  assert.equal(signedDelta(...split(M - 6n), ...split(4n)), -10);
  assert.equal(signedDelta(0, 5, 0, 8), -3);
});

Deno.test("increaseOf is (a - b) mod 2^64, exact at any size, a reset from 2^63 on", () => {
  const list = values();
  const out = new Float64Array(2);
  for (let i = 1; i < list.length; i++) {
    for (const [a, b] of [[list[i], list[i - 1]], [list[i - 1], list[i]]]) {
      const d = ((a - b) % M + M) % M;
      const increase = increaseOf(out, ...split(a), ...split(b));
      assert.equal(formatDecimal(out[0], out[1]), d.toString(), `${a} - ${b}`);
      assert.ok(out[1] >= 0 && out[1] < 1e9);
      assert.equal(increase, d < 1n << 63n);
    }
  }
  // The edges of a reset: 2^63 - 1 is an increase, 2^63 is not.
  assert.equal(increaseOf(out, ...split((1n << 63n) - 1n), 0, 0), true);
  assert.equal(increaseOf(out, ...split(1n << 63n), 0, 0), false);
});

Deno.test("decimalToNumber is the value as a double", () => {
  assert.equal(decimalToNumber(1795272600, 102400000), 1795272600102400000);
});
