import assert from "node:assert/strict";
import { SampleRing } from "./ring.ts";
import { Monitor } from "./monitor.ts";
import {
  MAX_SHARED_RING_BYTES,
  sharedRingBuffer,
  sharedRingBytes,
  sharedRingCapacity,
  SharedRingReader,
} from "./shared_ring.ts";

const COLUMNS = 3;

/** Writes record `k`: timestamp k, and every value word k (hi: k + 1). */
function write(ring: SampleRing, k: number): number {
  const at = ring.claim();
  for (let w = 0; w < ring.stride; w += 2) {
    ring.words[at + w] = k;
    ring.words[at + w + 1] = w === 0 ? 0 : k + 1;
  }
  return at / ring.stride;
}

/** Whether a copied record is one whole record `k`; its k, or -1. */
function wholeRecord(words: Uint32Array, at: number, stride: number): number {
  const k = words[at];
  if (words[at + 1] !== 0) return -1;
  for (let w = 2; w < stride; w += 2) {
    if (words[at + w] !== k || words[at + w + 1] !== k + 1) return -1;
  }
  return k;
}

Deno.test("a shared ring's reader copies the published records, oldest first, once the ring wraps too", () => {
  const buffer = sharedRingBuffer(COLUMNS, 4);
  const ring = new SampleRing(COLUMNS, 4, buffer);
  const reader = new SharedRingReader(buffer, COLUMNS);
  assert.equal(reader.capacity, 4);
  assert.equal(reader.read().count, 0, "nothing written yet");
  for (let k = 1; k <= 6; k++) {
    write(ring, k);
    ring.publish();
  }
  const records = reader.read();
  assert.equal(records.count, 4);
  assert.equal(records.dropped, 0);
  const ks = Array.from(
    { length: 4 },
    (_, i) => wholeRecord(records.words, i * records.stride, records.stride),
  );
  assert.deepEqual(ks, [3, 4, 5, 6]);
});

Deno.test("a claimed record is not readable until it is published; the one it overwrites is gone", () => {
  const buffer = sharedRingBuffer(COLUMNS, 2);
  const ring = new SampleRing(COLUMNS, 2, buffer);
  const reader = new SharedRingReader(buffer, COLUMNS);
  write(ring, 1);
  ring.publish();
  write(ring, 2);
  ring.publish();
  // The writer claims slot 0 again and fills it: the shared copy still
  // holds record 1, whole, until the publish.
  const slot = write(ring, 3);
  assert.equal(slot, 0);
  assert.deepEqual(
    Array.from(
      { length: 2 },
      (_, i) =>
        wholeRecord(
          reader.read().words,
          i * reader.stride,
          reader.stride,
        ),
    ),
    [1, 2],
  );
  ring.publish();
  const after = reader.read();
  assert.equal(wholeRecord(after.words, 0, after.stride), 2);
  assert.equal(wholeRecord(after.words, after.stride, after.stride), 3);
});

Deno.test("a reader racing the writer, step by step: every interleaving gives a whole record or none", () => {
  // One record: every publish rewrites the slot the reader reads.
  const buffer = sharedRingBuffer(COLUMNS, 1);
  const ring = new SampleRing(COLUMNS, 1, buffer);
  const reader = new SharedRingReader(buffer, COLUMNS);
  const into = new Uint32Array(reader.stride);
  let k = 0;
  const next = () => {
    write(ring, ++k);
    ring.publish();
  };
  next();
  // Where the writer's publish can fall against the reader's three steps:
  // before begin, between begin and copy, between copy and the check,
  // after the check.
  for (const at of ["before", "after begin", "after copy", "after"]) {
    if (at === "before") next();
    const s = reader.begin(0);
    if (at === "after begin") next();
    reader.copy(0, into, 0);
    if (at === "after copy") next();
    const ok = s >= 0 && reader.settled(0, s);
    if (at === "after") next();
    if (at === "after begin" || at === "after copy") {
      assert.equal(ok, false, `${at}: the rewrite is seen`);
    } else {
      assert.equal(ok, true, `${at}: nothing changed meanwhile`);
      assert.notEqual(wholeRecord(into, 0, reader.stride), -1, at);
    }
  }
  // A publish under way (its sequence word odd, some words copied): the
  // reader does not begin; had it begun before, the check fails.
  const s = reader.begin(0);
  const sequence = new Int32Array(buffer, 4 * reader.stride, 1);
  const shared = new Uint32Array(buffer, 0, reader.stride);
  Atomics.store(sequence, 0, s + 1);
  Atomics.store(shared, 2, 999); // a word of the next record
  assert.equal(reader.begin(0), -1);
  reader.copy(0, into, 0);
  assert.equal(wholeRecord(into, 0, reader.stride), -1, "torn, as copied");
  assert.equal(reader.settled(0, s), false, "and the check says so");
  // read() leaves it out and counts it; the publish completes, and the
  // record reads whole.
  assert.deepEqual(
    [reader.read().count, reader.read().dropped],
    [0, 1],
  );
  next();
  const records = reader.read();
  assert.equal(records.count, 1);
  assert.equal(wholeRecord(records.words, 0, records.stride), k);
});

Deno.test("a shared buffer that is no whole number of records is refused in one line", () => {
  const odd = sharedRingBytes(COLUMNS, 3) + 4;
  assert.throws(
    () => new SampleRing(COLUMNS, 4, new SharedArrayBuffer(odd)),
    (e: unknown) =>
      e instanceof RangeError &&
      e.message ===
        `Cannot share ring: ${odd} bytes is no whole number of 3-column records`,
  );
  assert.throws(
    () => new SharedRingReader(new SharedArrayBuffer(0), COLUMNS),
    /^RangeError: Cannot share ring: 0 bytes is no whole number of 3-column records$/,
  );
});

Deno.test("a shared copy smaller than the ring keeps the newest records; a deep ring's copy is bounded in bytes", () => {
  const buffer = sharedRingBuffer(COLUMNS, 3);
  const ring = new SampleRing(COLUMNS, 100, buffer);
  for (let k = 1; k <= 10; k++) {
    write(ring, k);
    ring.publish();
  }
  const records = new SharedRingReader(buffer, COLUMNS).read();
  assert.deepEqual(
    [0, 1, 2].map((i) =>
      wholeRecord(records.words, i * records.stride, records.stride)
    ),
    [8, 9, 10],
  );
  assert.equal(sharedRingCapacity(COLUMNS, 120), 120);
  const most = sharedRingCapacity(1216, 1_000_000); // 64 GPUs, every reading
  assert.ok(sharedRingBytes(1216, most) <= MAX_SHARED_RING_BYTES);
  assert.ok(sharedRingBytes(1216, most + 1) > MAX_SHARED_RING_BYTES);
  assert.ok(most >= 240, `${most} records: 2 min at 1 s twice over`);
});

Deno.test("a monitor with a shared ring publishes every record it commits", () => {
  const buffer = sharedRingBuffer(1, 4);
  const noLog = {
    columnNames() {},
    row() {},
    eventStart() {},
    eventEnd() {},
    gap() {},
  };
  const monitor = new Monitor(
    { name: "gpu", depth: 2, columns: ["util"], rules: [] },
    noLog,
    { sharedRing: buffer },
  );
  for (let k = 1; k <= 3; k++) {
    const at = monitor.claim();
    monitor.words[at] = k * 1000;
    monitor.words[at + 2] = k;
    monitor.commit();
  }
  const records = new SharedRingReader(buffer, 1).read();
  assert.equal(records.count, 3);
  assert.deepEqual(
    [0, 1, 2].map((i) => records.words[i * records.stride + 2]),
    [1, 2, 3],
  );
});

Deno.test({
  name:
    "a reader on another thread, racing a writer that publishes as fast as it can, never sees a torn record",
  sanitizeResources: false,
  fn: async () => {
    const capacity = 8;
    const buffer = sharedRingBuffer(COLUMNS, capacity);
    const ring = new SampleRing(COLUMNS, capacity, buffer);
    // [0]: the reader started; [1]: stop; [2]: the reader's reads so far;
    // [3]: the records it has read so far.
    const flags = new Int32Array(new SharedArrayBuffer(16));
    const code = `
      import { SharedRingReader } from ${
      JSON.stringify(new URL("./shared_ring.ts", import.meta.url).href)
    };
      self.onmessage = ({ data }) => {
        const flags = new Int32Array(data.flags);
        const reader = new SharedRingReader(data.buffer, ${COLUMNS});
        Atomics.store(flags, 0, 1);
        Atomics.notify(flags, 0);
        let reads = 0, records = 0, dropped = 0;
        const problems = [];
        while (Atomics.load(flags, 1) === 0 && problems.length < 10) {
          const got = reader.read();
          for (let i = 0; i < got.count; i++) {
            const at = i * got.stride;
            const k = got.words[at];
            let whole = got.words[at + 1] === 0;
            for (let w = 2; w < got.stride; w += 2) {
              if (got.words[at + w] !== k || got.words[at + w + 1] !== k + 1) whole = false;
            }
            if (!whole) problems.push(Array.from(got.words.subarray(at, at + got.stride)).join(","));
            if (i > 0 && got.words[at] <= got.words[at - got.stride]) problems.push("out of order at " + k);
          }
          records += got.count;
          dropped += got.dropped;
          Atomics.store(flags, 3, records);
          Atomics.store(flags, 2, ++reads);
        }
        Atomics.store(flags, 2, 0x7fffffff);
        self.postMessage({ reads, records, dropped, problems });
      };
    `;
    const worker = new Worker(
      URL.createObjectURL(new Blob([code], { type: "text/javascript" })),
      { type: "module" },
    );
    try {
      const done = new Promise<
        { reads: number; records: number; dropped: number; problems: string[] }
      >((resolve, reject) => {
        worker.onmessage = (event) => resolve(event.data);
        worker.onerror = (event) => {
          event.preventDefault();
          reject(new Error(event.message));
        };
      });
      worker.postMessage({ buffer, flags: flags.buffer });
      await Atomics.waitAsync(flags, 0, 0).value;
      // Written until both sides have done enough, however the threads
      // are scheduled (a reader may spin through many empty reads while the
      // writer waits for a core): no clock involved.
      let k = 0;
      while (
        k < 20_000 || Atomics.load(flags, 2) < 200 ||
        Atomics.load(flags, 3) < 1000
      ) {
        for (let n = 0; n < 100; n++) {
          write(ring, ++k);
          ring.publish();
        }
      }
      Atomics.store(flags, 1, 1);
      const { reads, records, problems } = await done;
      assert.deepEqual(problems, []);
      assert.ok(reads >= 200, `${reads} reads`);
      assert.ok(records >= 1000, `${records} records read`);
    } finally {
      worker.terminate();
    }
  },
});
