import assert from "node:assert/strict";
import { GpuMailbox } from "./mailbox.ts";

Deno.test("GpuMailbox: a second view of the buffer sees what the first publishes", () => {
  const writer = new GpuMailbox(4, undefined, 8);
  const reader = new GpuMailbox(4, writer.buffer, 8);
  assert.equal(reader.written(), 0);
  for (let n = 0; n < 10; n++) {
    writer.publish(new Uint32Array([n, 0, 100 + n, 0]), n / 10);
  }
  assert.equal(reader.written(), 10);
  // Record 9 sits in slot 1, the 8 before it in the other slots.
  const at = reader.offsetOf(9);
  assert.deepEqual([...reader.records.subarray(at, at + 4)], [9, 0, 109, 0]);
  assert.equal(reader.lateness[at / 4], 0.9);
});

Deno.test("GpuMailbox: slots stay in step when the written count wraps past 2^31", () => {
  const box = new GpuMailbox(2, undefined, 64);
  Atomics.store(box.control, 0, 0x7fffffff);
  const before = box.offsetOf(box.written());
  box.publish(new Uint32Array([1, 2]), 0);
  assert.equal(box.written(), -0x80000000);
  assert.equal(box.offsetOf(box.written()), (before + 2) % (64 * 2));
  assert.throws(() => new GpuMailbox(2, undefined, 48), /power of two, got 48/);
});
