import assert from "node:assert/strict";
import {
  addNumberU64,
  addU64,
  bigintToU64,
  divmod1e9,
  formatU64,
  geU64,
  gtU64,
  ltU64,
  mulAdd1e9U64,
  parseU64,
  subU64,
} from "./u64.ts";

const M = 1n << 64n;
const split = (
  v: bigint,
): [number, number] => [Number(v & 0xffffffffn), Number(v >> 32n)];
const join = (a: Uint32Array, at = 0): bigint =>
  (BigInt(a[at + 1]) << 32n) | BigInt(a[at]);

// Edge values plus a deterministic spread; the reference is BigInt.
function* samples(): Generator<bigint> {
  const edges = [
    0n,
    1n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 53n - 1n,
    2n ** 53n,
    2n ** 53n + 1n,
    M - 1n,
    M - 2n,
  ];
  yield* edges;
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < 200; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % M;
    yield x >> BigInt(i % 64);
  }
}

Deno.test("u64 compare, add and subtract agree with BigInt mod 2^64", () => {
  const out = new Uint32Array(2);
  const all = [...samples()];
  for (const a of all) {
    for (const b of all.slice(0, 40)) {
      const [al, ah] = split(a);
      const [bl, bh] = split(b);
      assert.equal(gtU64(al, ah, bl, bh), a > b);
      assert.equal(ltU64(al, ah, bl, bh), a < b);
      assert.equal(geU64(al, ah, bl, bh), a >= b);
      subU64(out, 0, al, ah, bl, bh);
      assert.equal(join(out), ((a - b) % M + M) % M, `${a} - ${b}`);
      addU64(out, 0, al, ah, bl, bh);
      assert.equal(join(out), (a + b) % M, `${a} + ${b}`);
    }
  }
});

Deno.test("addNumberU64 wraps past 2^64", () => {
  const out = new Uint32Array(2);
  const [l, h] = split(M - 3n);
  addNumberU64(out, 0, l, h, 5);
  assert.equal(join(out), 2n);
  addNumberU64(out, 0, 7, 0, 2 ** 53 - 1);
  assert.equal(join(out), 2n ** 53n + 6n);
});

Deno.test("parseU64 and formatU64 round-trip every sample; bad text rejected", () => {
  const out = new Uint32Array(2);
  for (const v of samples()) {
    assert.ok(parseU64(v.toString(), out, 0), v.toString());
    assert.equal(join(out), v);
    assert.equal(formatU64(out[0], out[1]), v.toString());
  }
  assert.ok(parseU64("000123", out, 0));
  assert.equal(join(out), 123n);
  for (
    const bad of [
      "",
      "18446744073709551616",
      "99999999999999999999",
      "-1",
      "1.5",
      "12a",
      "123456789012345678901",
    ]
  ) {
    out.fill(7);
    assert.equal(parseU64(bad, out, 0), false, bad);
    assert.deepEqual([...out], [7, 7]);
  }
});

Deno.test("divmod1e9 and mulAdd1e9U64 are inverse and exact", () => {
  const rem = new Float64Array(1);
  const out = new Uint32Array(2);
  for (const v of samples()) {
    const [l, h] = split(v);
    const q = divmod1e9(l, h, rem);
    assert.equal(BigInt(q), v / 1_000_000_000n);
    assert.equal(BigInt(rem[0]), v % 1_000_000_000n);
    mulAdd1e9U64(out, 0, q, rem[0]);
    assert.equal(join(out), v);
  }
  mulAdd1e9U64(out, 0, 0xffffffff, 999_999_999);
  assert.equal(join(out), 0xffffffffn * 1_000_000_000n + 999_999_999n);
});

Deno.test("bigintToU64 rejects values outside [0, 2^64)", () => {
  const out = new Uint32Array(2);
  bigintToU64(M - 1n, out, 0);
  assert.deepEqual([...out], [0xffffffff, 0xffffffff]);
  assert.throws(() => bigintToU64(M, out, 0), RangeError);
  assert.throws(() => bigintToU64(-1n, out, 0), RangeError);
});
