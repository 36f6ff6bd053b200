import assert from "node:assert/strict";
import {
  U64Writer,
  writeU64,
  writeUint,
  writeUtcMillis,
  writeUtcSecond,
} from "./format.ts";

const text = (buf: Uint8Array, end: number) =>
  new TextDecoder().decode(buf.subarray(0, end));

Deno.test("writeU64 matches BigInt's decimal for edge and spread values", () => {
  const buf = new Uint8Array(32);
  const values = [
    0n,
    9n,
    10n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 53n - 1n,
    2n ** 53n,
    2n ** 53n + 1n,
    10n ** 19n,
    2n ** 64n - 1n,
  ];
  // Every length, either side of each power of ten, and zeros inside.
  for (let k = 1n; k <= 19n; k++) {
    values.push(
      10n ** k - 1n,
      10n ** k,
      10n ** k + 1n,
      10n ** k + 10n ** (k / 2n),
    );
  }
  values.push(100_005n, 1_000_000_007n, 4_294_900_001n, 10_000_099_000n);
  let x = 12345n;
  for (let i = 0; i < 300; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    values.push(x >> BigInt(i % 64));
  }
  for (const v of values) {
    const end = writeU64(buf, 0, Number(v & 0xffffffffn), Number(v >> 32n));
    assert.equal(text(buf, end), v.toString());
  }
});

Deno.test("writeUint writes at an offset and returns the end", () => {
  const buf = new Uint8Array(8).fill(32);
  assert.equal(writeUint(buf, 2, 407), 5);
  assert.equal(text(buf, 8), "  407   ");
});

Deno.test("writeUtcSecond agrees with Date#toISOString across eras", () => {
  const buf = new Uint8Array(20);
  const times = [
    0,
    951782400000,
    951868799999,
    1709164800123,
    1795272600999,
    4102444800000,
    253402300799000,
  ];
  for (let t = 0; t < 4e12; t += 7919 * 86400 * 1000 + 12345) times.push(t);
  for (const ms of times) {
    const end = writeUtcSecond(buf, 0, ms);
    assert.equal(
      text(buf, end),
      new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(
        ".000Z",
        "Z",
      ),
    );
  }
});

Deno.test("writeUtcMillis agrees with Date#toISOString, fractions of a ms truncated", () => {
  const buf = new Uint8Array(24);
  for (
    const ms of [
      0,
      0.999,
      999.5,
      1000,
      951868799999.9,
      1795272600007,
      4102444800123,
    ]
  ) {
    const end = writeUtcMillis(buf, 0, ms);
    assert.equal(end, 24);
    assert.equal(text(buf, end), new Date(Math.floor(ms)).toISOString());
  }
});

Deno.test("writeUint and writeU64 are exact next to multiples of 1e9 up to 2^53", () => {
  const buf = new Uint8Array(32);
  for (let q = 9_007_199; q > 0; q = Math.floor(q * 0.77)) {
    for (const r of [0, 1, 999_999_998, 999_999_999]) {
      const n = q * 1e9 + r;
      if (n > Number.MAX_SAFE_INTEGER) continue;
      const expected = BigInt(q) * 1_000_000_000n + BigInt(r);
      assert.equal(text(buf, writeUint(buf, 0, n)), expected.toString());
      const end = writeU64(
        buf,
        0,
        Number(expected & 0xffffffffn),
        Number(expected >> 32n),
      );
      assert.equal(text(buf, end), expected.toString());
    }
  }
  for (const n of [4294967295, 4294967296, 999_999_999, 1e9, 9_999_999_999]) {
    assert.equal(text(buf, writeUint(buf, 0, n)), String(n));
  }
});

Deno.test("U64Writer writes what BigInt does, column by column, whether the high digits repeat or change", () => {
  const buf = new Uint8Array(32);
  const writer = new U64Writer(3);
  const words = (v: bigint) =>
    [Number(v & 0xffffffffn), Number(v >> 32n)] as const;
  // Per column a run of values: a ns timestamp stepping 100 us (across a
  // second), a counter crossing 2^32 and 2^53 and a multiple of 1e9, and
  // one jumping about (high digits change every time, or go back).
  const starts = [1_700_000_000_999_000_000n, 2n ** 32n - 3n, 2n ** 53n - 2n];
  let x = 99n;
  for (let i = 0; i < 2000; i++) {
    for (let slot = 0; slot < 3; slot++) {
      let v: bigint;
      if (slot === 0) v = starts[0] + BigInt(i) * 100_000n;
      else if (slot === 1) v = starts[1] + BigInt(i) * 1_000_003n;
      else {
        x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
        v = i % 3 === 0 ? starts[2] + BigInt(i) : x >> BigInt(i % 40);
      }
      const [lo, hi] = words(v);
      const end = writer.write(buf, 0, lo, hi, slot);
      assert.equal(text(buf, end), v.toString(), `slot ${slot}, row ${i}`);
    }
  }
  // The same high digits at another offset are copied where asked.
  const [lo, hi] = words(starts[0]);
  const end = writer.write(buf, 5, lo, hi, 0);
  assert.equal(text(buf, end).slice(5), starts[0].toString());
});
