import assert from "node:assert/strict";
import { watchHeartbeat } from "./heartbeat.ts";
import { SupervisedWorker } from "./supervised_worker.ts";

/**
 * A supervised thread over `beats`: it beats every 50 ms, or (`stuck`)
 * beats once and then blocks its event loop for good.
 */
function thread(beats: Int32Array, stuck: boolean, lines: string[]) {
  const code = `self.onmessage = (e) => {
    if (e.data === "stop") return self.postMessage({ type: "closed" });
    const beats = new Int32Array(e.data);
    Atomics.add(beats, 0, 1);
    if (${stuck}) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    setInterval(() => Atomics.add(beats, 0, 1), 50);
  };`;
  const url = `data:application/javascript,${encodeURIComponent(code)}`;
  const spawn = () => {
    const worker = new Worker(url, { type: "module" });
    worker.postMessage(beats.buffer);
    return worker;
  };
  return new SupervisedWorker(spawn(), {
    name: stuck ? "stuck thread" : "beating thread",
    spawn,
    restartMs: 10,
    onError: (line) => lines.push(line),
  });
}

Deno.test("the watchdog restarts a thread whose heartbeat stopped, and only while it watches", async () => {
  const lines: string[] = [];
  const stuckBeats = new Int32Array(new SharedArrayBuffer(4));
  const liveBeats = new Int32Array(new SharedArrayBuffer(4));
  const stuck = thread(stuckBeats, true, lines);
  const live = thread(liveBeats, false, lines);
  const unwatchedBeats = new Int32Array(new SharedArrayBuffer(4));
  const unwatched = thread(unwatchedBeats, true, lines);
  const watches = [
    watchHeartbeat(stuck, stuckBeats, 3000),
    watchHeartbeat(live, liveBeats, 1), // raised to the 3 s floor
  ];
  watchHeartbeat(unwatched, unwatchedBeats, 3000).stop();
  const startedAt = performance.now();
  try {
    while (stuck.restarts === 0 && performance.now() - startedAt < 6000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const restartedIn = performance.now() - startedAt;
    assert.equal(stuck.restarts, 1);
    assert.ok(
      restartedIn >= 3000 && restartedIn < 3000 + 2000,
      `restarted ${restartedIn.toFixed(0)} ms after the start`,
    );
    // The one that beats lived as long, past its 3 s, and stays.
    assert.equal(live.restarts, 0);
    assert.ok(Atomics.load(liveBeats, 0) > 30);
    // Stuck as long, but its watchdog was stopped.
    assert.equal(unwatched.restarts, 0);
    assert.deepEqual(lines, [
      "stuck thread failed: it has not answered for 3 s (stuck); restarting it in 0.01 s (sampling goes on)",
    ]);
  } finally {
    for (const watch of watches) watch.stop();
    await Promise.all(
      [stuck, live, unwatched].map((t) => t.stop("stop", 100)),
    );
  }
});
