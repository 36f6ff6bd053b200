import assert from "node:assert/strict";
import { join } from "node:path";
import { DamagedFileError, NotAnEventsLogError } from "./errors.ts";
import { openLogSource, readLines } from "./lines.ts";
import { gzip } from "./test_util.ts";
import { tempDir } from "../tests/temp_dir.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function collect(chunks: Uint8Array[], maxLineBytes?: number) {
  const seen: [string, number, number, boolean][] = [];
  await readLines(chunks, (buf, start, end, line, offset, terminated) => {
    seen.push([dec.decode(buf.subarray(start, end)), line, offset, terminated]);
  }, { maxLineBytes });
  return seen;
}

Deno.test("readLines gives the same lines, numbers and offsets however the bytes are cut", async () => {
  const text = "alpha\nbe\r\n\nlong line here\nlast";
  const bytes = enc.encode(text);
  const expected = await collect([bytes]);
  assert.deepEqual(expected, [
    ["alpha", 1, 0, true],
    ["be", 2, 6, true],
    ["", 3, 10, true],
    ["long line here", 4, 11, true],
    ["last", 5, 26, false],
  ]);
  for (let a = 0; a <= bytes.length; a++) {
    for (let b = a; b <= bytes.length; b += 3) {
      const got = await collect([
        bytes.slice(0, a),
        bytes.slice(a, b),
        bytes.slice(b),
      ]);
      assert.deepEqual(got, expected, `cut at ${a}, ${b}`);
    }
  }
});

Deno.test("readLines stops when the handler returns false", async () => {
  let n = 0;
  const lines = await readLines([enc.encode("a\nb\nc\n")], () => ++n < 2);
  assert.equal(lines, 2);
  assert.equal(n, 2);
});

Deno.test("readLines refuses a line longer than the limit, naming it", async () => {
  await assert.rejects(
    collect([enc.encode("ok\n" + "x".repeat(50) + "\n")], 40),
    /line 2 is longer than 40 bytes/,
  );
  await assert.rejects(
    collect(
      [enc.encode("ok\n" + "x".repeat(30)), enc.encode("x".repeat(30))],
      40,
    ),
    /line 2 is longer than 40 bytes/,
  );
});

Deno.test("readLines skips an over-long line when told, and goes on with the next", async () => {
  const text = "ok\n" + "\u0000".repeat(100) + "\nnext\n" + "x".repeat(60);
  const bytes = enc.encode(text);
  const expected: [string, number, number][] = [["ok", 1, 0], [
    "next",
    3,
    104,
  ]];
  for (const cut of [0, 2, 3, 50, 103, 104, 110, bytes.length]) {
    const seen: [string, number, number][] = [];
    const long: [number, number][] = [];
    const lines = await readLines(
      [bytes.slice(0, cut), bytes.slice(cut)],
      (buf, start, end, line, offset) => {
        seen.push([dec.decode(buf.subarray(start, end)), line, offset]);
      },
      {
        maxLineBytes: 40,
        onLongLine: (line, offset) => long.push([line, offset]),
      },
    );
    assert.deepEqual(seen, expected, `cut at ${cut}`);
    assert.deepEqual(long, [[2, 3], [4, 109]], `cut at ${cut}`);
    assert.equal(lines, 4);
  }
  // Without onLongLine it is not an events log.
  await assert.rejects(
    readLines([bytes], () => {}, { maxLineBytes: 40 }),
    NotAnEventsLogError,
  );
});

Deno.test('a gzipped file cut short is DamagedFileError "truncated", after the lines before the cut', async () => {
  await using dir = await tempDir();
  const text = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n");
  const zipped = await gzip(text);
  const cut = join(dir.path, "cut.gz");
  await Deno.writeFile(cut, zipped.subarray(0, zipped.length - 3000));
  const source = await openLogSource(cut);
  let lines = 0;
  await assert.rejects(
    readLines(source.chunks, () => {
      lines++;
    }),
    (error: Error) => {
      assert.ok(error instanceof DamagedFileError);
      assert.match(error.message, /^truncated \(corrupt gzip stream/);
      return true;
    },
  );
  source.close();
  assert.ok(lines > 0, "the lines before the cut were read");
  // A whole file with a flipped bit in its checksum is corrupt, not cut.
  const flipped = zipped.slice();
  flipped[flipped.length - 6] ^= 0xff;
  const bad = join(dir.path, "bad.gz");
  await Deno.writeFile(bad, flipped);
  const b = await openLogSource(bad);
  await assert.rejects(
    readLines(b.chunks, () => {}),
    /^DamagedFileError: corrupt gzip data \(/,
  );
  b.close();
});

Deno.test("openLogSource reads plain files from an offset and gzip files whole", async () => {
  await using dir = await tempDir();
  const text = "first\nsecond\nthird\n".repeat(20000);
  const plain = join(dir.path, "events.log");
  await Deno.writeTextFile(plain, text);
  const gz = join(dir.path, "events.log-20261121.gz");
  const zipped = await gzip(text);
  await Deno.writeFile(gz, zipped);

  let read = 0;
  const a = await openLogSource(plain, 6, (n) => read += n);
  const lines: string[] = [];
  await readLines(a.chunks, (buf, s, e) => {
    lines.push(dec.decode(buf.subarray(s, e)));
  });
  a.close();
  assert.equal(a.gzip, false);
  assert.equal(lines[0], "second");
  assert.equal(lines.length, 60000 - 1);
  assert.equal(read, text.length);

  read = 0;
  const b = await openLogSource(gz, 6, (n) => read += n);
  let count = 0;
  let first = "";
  await readLines(b.chunks, (buf, s, e) => {
    if (count++ === 0) first = dec.decode(buf.subarray(s, e));
  });
  b.close();
  assert.equal(b.gzip, true);
  assert.equal(first, "first"); // compressed: always from the start
  assert.equal(count, 60000);
  assert.equal(read, zipped.byteLength);
});
