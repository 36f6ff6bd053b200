import assert from "node:assert/strict";
import { alertmanagerLabel, AlertStats } from "./alert_stats.ts";
import { fedMonitor } from "./metrics_test_util.ts";
import { MetricsRenderer } from "../endpoint/render.ts";

Deno.test("each Alertmanager's counters are its own and add up", () => {
  const stats = AlertStats.create(3);
  stats.addSent(0, 2);
  stats.addSent(0, 5);
  stats.addFailed(2, 64);
  stats.addDropped(2, 1);
  stats.setQueueLength(2, 9);
  stats.setQueueLength(2, 7);
  stats.setLastSuccess(0, 1_700_000_000_000.4);
  const reader = new AlertStats(stats.buffer);
  assert.deepEqual(reader.read(0), {
    sent: 7,
    failed: 0,
    dropped: 0,
    queueLength: 0,
    lastSuccessMs: 1_700_000_000_000,
  });
  assert.deepEqual(reader.read(1), {
    sent: 0,
    failed: 0,
    dropped: 0,
    queueLength: 0,
    lastSuccessMs: 0,
  });
  assert.deepEqual(reader.read(2), {
    sent: 0,
    failed: 64,
    dropped: 1,
    queueLength: 7,
    lastSuccessMs: 0,
  });
});

Deno.test("a new writer counts the queues it takes over as dropped and keeps every total", () => {
  const dead = AlertStats.create(2);
  dead.addSent(0, 4);
  dead.addFailed(1, 6);
  dead.addDropped(1, 1);
  dead.setQueueLength(0, 0);
  dead.setQueueLength(1, 3);
  dead.setLastSuccess(0, 1_700_000_000_000);
  const next = new AlertStats(dead.buffer);
  assert.deepEqual(next.takeOver(), [0, 3]);
  assert.deepEqual(next.read(0), {
    sent: 4,
    failed: 0,
    dropped: 0,
    queueLength: 0,
    lastSuccessMs: 1_700_000_000_000,
  });
  assert.deepEqual(next.read(1), {
    sent: 0,
    failed: 6,
    dropped: 4,
    queueLength: 0,
    lastSuccessMs: 0,
  });
  // Taking over twice loses nothing more.
  assert.deepEqual(next.takeOver(), [0, 0]);
  assert.equal(next.read(1).dropped, 4);
});

Deno.test("a counter written in a worker is read on this thread", async () => {
  const stats = AlertStats.create(1);
  const source = `
    import { AlertStats } from ${
    JSON.stringify(new URL("./alert_stats.ts", import.meta.url).href)
  };
    self.onmessage = (e) => {
      const s = new AlertStats(e.data);
      for (let k = 0; k < 1000; k++) s.addSent(0, 1);
      self.postMessage("done");
    };`;
  const url = `data:application/typescript,${encodeURIComponent(source)}`;
  const worker = new Worker(url, { type: "module" });
  try {
    const done = new Promise((resolve) => worker.onmessage = resolve);
    worker.postMessage(stats.buffer);
    await done;
    assert.equal(stats.read(0).sent, 1000);
  } finally {
    worker.terminate();
  }
});

Deno.test("an index out of range or a bad count is a RangeError", () => {
  const stats = AlertStats.create(1);
  assert.throws(() => stats.addSent(1, 1), RangeError);
  assert.throws(() => AlertStats.create(-1), RangeError);
  assert.throws(() => new AlertStats(new SharedArrayBuffer(12)), RangeError);
  assert.equal(AlertStats.create(0).count, 0);
});

Deno.test("the alertmanager label drops credentials, query and trailing slash", () => {
  assert.equal(
    alertmanagerLabel("http://admin:pw@10.0.0.5:9093/"),
    "http://10.0.0.5:9093",
  );
  assert.equal(alertmanagerLabel("https://am.example"), "https://am.example");
});

Deno.test("the endpoint renders each Alertmanager's counters, and none without alerting", async () => {
  const fed = await fedMonitor(1_000_000_000);
  try {
    const stats = AlertStats.create(2);
    stats.addSent(0, 12);
    stats.addFailed(1, 3);
    stats.addDropped(1, 2);
    stats.setQueueLength(1, 40);
    stats.setLastSuccess(0, 1_700_000_000_500);
    const alerts = {
      alertmanagers: ["http://am-1:9093", "https://am-2:9093"],
      stats: new AlertStats(stats.buffer),
    };
    const text = new MetricsRenderer(fed.metrics, alerts).render(
      "prometheus",
      1_700_000_001_000,
    );
    const lines = text.split("\n").filter((l) =>
      /^dpu_traceback_(alerts|alertmanager)_/.test(l)
    );
    assert.deepEqual(lines, [
      'dpu_traceback_alerts_sent_total{alertmanager="http://am-1:9093"} 12',
      'dpu_traceback_alerts_sent_total{alertmanager="https://am-2:9093"} 0',
      'dpu_traceback_alerts_failed_total{alertmanager="http://am-1:9093"} 0',
      'dpu_traceback_alerts_failed_total{alertmanager="https://am-2:9093"} 3',
      'dpu_traceback_alerts_dropped_total{alertmanager="http://am-1:9093"} 0',
      'dpu_traceback_alerts_dropped_total{alertmanager="https://am-2:9093"} 2',
      'dpu_traceback_alerts_queue_length{alertmanager="http://am-1:9093"} 0',
      'dpu_traceback_alerts_queue_length{alertmanager="https://am-2:9093"} 40',
      'dpu_traceback_alertmanager_last_success_timestamp_seconds{alertmanager="http://am-1:9093"} 1700000000.5',
      'dpu_traceback_alertmanager_last_success_timestamp_seconds{alertmanager="https://am-2:9093"} 0',
    ]);
    const without = new MetricsRenderer(fed.metrics).render(
      "prometheus",
      1_700_000_001_000,
    );
    assert.equal(/alerts_|alertmanager/.test(without), false);
  } finally {
    await fed.close();
  }
});
