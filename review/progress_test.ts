import assert from "node:assert/strict";
import { createProgress, Progress, PROGRESS_MIN_BYTES } from "./progress.ts";

Deno.test("a bar only on a terminal, and only for big logs", () => {
  const tty = { write: () => {}, isTerminal: () => true };
  const pipe = { write: () => {}, isTerminal: () => false };
  assert.equal(createProgress(PROGRESS_MIN_BYTES * 10, pipe), undefined);
  assert.equal(createProgress(PROGRESS_MIN_BYTES - 1, tty), undefined);
  assert.ok(createProgress(PROGRESS_MIN_BYTES, tty) instanceof Progress);
});

Deno.test("the bar redraws at most five times a second and clears itself", () => {
  let now = 0;
  const writes: string[] = [];
  const p = new Progress(1000, {
    write: (t) => writes.push(t),
    isTerminal: () => true,
  }, () => now);
  p.add(100); // drawn
  now = 100;
  p.add(100); // too soon
  now = 250;
  p.add(300); // drawn
  assert.equal(writes.length, 2);
  assert.ok(writes[0].startsWith("\r\x1b[2Kreviewing ["), writes[0]);
  assert.match(writes[0], /\[=*>? *\] 10%/);
  // Byte counts as everywhere else (base/units.ts's formatBytes).
  assert.match(writes[1], /\] 50% {2}500 bytes of 1000 bytes {2}2 KiB\/s$/);
  p.done();
  assert.equal(writes.at(-1), "\r\x1b[2K");
  assert.equal(p.read, 500);
});
