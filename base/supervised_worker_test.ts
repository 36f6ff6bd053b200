import assert from "node:assert/strict";
import { SupervisedWorker } from "./supervised_worker.ts";

function workerOf(code: string, onSpawn: () => void = () => {}) {
  const url = `data:application/javascript,${encodeURIComponent(code)}`;
  return () => {
    onSpawn();
    return new Worker(url, { type: "module" });
  };
}

Deno.test("SupervisedWorker: an uncaught error restarts the thread with a growing delay, and other replies pass through", async () => {
  let spawned = 0;
  const spawn = workerOf(
    `self.postMessage({ type: "hello" }); setTimeout(() => { throw new Error("boom"); }, 5);`,
    () => spawned++,
  );
  const lines: string[] = [];
  const replies: unknown[] = [];
  const thread = new SupervisedWorker(spawn(), {
    name: "t",
    spawn,
    restartMs: 20,
    onError: (l) => lines.push(l),
    onReply: (r) => replies.push(r),
  });
  for (let i = 0; i < 100 && thread.restarts < 2; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await thread.stop("stop", 100);
  assert.ok(thread.restarts >= 2);
  assert.equal(spawned, thread.restarts + 1);
  assert.match(lines[0], /^t failed: .*boom; restarting it in 0\.02 s/);
  assert.match(lines[1], /restarting it in 0\.04 s/);
  assert.ok(replies.length >= 2);
  assert.deepEqual(replies[0], { type: "hello" });
});

Deno.test("SupervisedWorker: stop waits for closed at most the grace, then ends the thread; nothing restarts after", async () => {
  let spawned = 0;
  // Never answers the stop message.
  const spawn = workerOf(`self.onmessage = () => {};`, () => spawned++);
  const thread = new SupervisedWorker(spawn(), {
    name: "t",
    spawn,
    restartMs: 10,
    onError: () => {},
  });
  const started = performance.now();
  await thread.stop("stop", 150);
  const took = performance.now() - started;
  assert.ok(took >= 140 && took < 2000, `stop took ${took} ms`);
  assert.equal(thread.worker, undefined);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(spawned, 1);
  assert.equal(thread.restarts, 0);
});
