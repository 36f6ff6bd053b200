import assert from "node:assert/strict";
import { until } from "../tests/until.ts";
import type { MonitorConfig } from "../config/types.ts";
import { EventJournal } from "../events/event_journal.ts";
import { WindowAggregator } from "../metrics/aggregate.ts";
import type { ServedMonitor } from "../metrics/agent_metrics.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import {
  shapeOf,
  sharedStateBuffer,
  StatePublisher,
} from "../metrics/shared_state.ts";
import { fakeAlertmanager } from "./fake_alertmanager_test_util.ts";
import { alertMonitors } from "./sender.ts";
import {
  MIN_LOOK_GAP_MS,
  runSender,
  type SenderReply,
  type SenderStart,
} from "./sender_worker.ts";

const CONFIG: MonitorConfig = {
  name: "nic",
  source: "sim",
  samplePeriodNs: 100_000,
  depth: 4,
  seed: 1,
  columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" }],
  rules: [{
    name: "rx high",
    column: 0,
    comparisonType: "gt",
    comparisonValue: 5n,
    severity: "critical",
    runbookUrl: "https://wiki.example.com/runbooks/rx-high",
  }],
  eventLog: "/var/log/dpu-traceback/events.log",
};

/** A monitor whose one rule's state the test sets, as the sampler would. */
function servedMonitor() {
  const rule = {
    active: false,
    activations: 0,
    pending: false,
    peak: NaN,
    changedAtMs: NaN,
  };
  const served: ServedMonitor = {
    config: CONFIG,
    monitor: {
      name: "nic",
      samples: 0,
      droppedSamples: 0,
      blindPeriods: 0,
      events: 0,
      activeRules: 0,
      ring: { count: 0, capacity: 8 },
      rules: [rule],
      ruleChangedAtMs: () => rule.changedAtMs,
      ruleActiveMs: () => 0,
    },
    collector: {},
    log: {
      path: CONFIG.eventLog,
      stats: {
        bytesWritten: 0,
        writeErrors: 0,
        droppedRows: 0,
        pendingBytes: 0,
      },
    },
    aggregator: new WindowAggregator({ columns: CONFIG.columns }),
    status: { state: "running" },
  };
  return { served, rule };
}

function sample(unixMs: number): Uint32Array {
  const ns = BigInt(unixMs) * 1_000_000n;
  return new Uint32Array([Number(ns & 0xffff_ffffn), Number(ns >> 32n), 0, 0]);
}

/**
 * The start of a sender for CONFIG's monitor, pushing to `urls` over
 * `journal` and `stats`; it looks at start and stop, when the test says,
 * and when the journal changes (or an alert is due).
 */
function senderStart(
  urls: readonly string[],
  journal: EventJournal,
  stats: AlertStats,
  more: Partial<SenderStart> = {},
): SenderStart {
  return {
    type: "start",
    alerting: {
      alertmanagers: urls.map((url) => ({ url, timeoutMs: 1000 })),
      resendIntervalMs: 60_000,
      holdMs: 60_000,
    },
    credentials: urls.map(() => ({})),
    instance: "dpu-9",
    labels: {},
    monitors: alertMonitors([CONFIG]),
    journal: journal.buffer,
    stats: stats.buffer,
    heartbeat: new SharedArrayBuffer(4),
    version: "0.1.0",
    maxLookMs: 60_000, // the heartbeat's bound never decides a look here
    drainMs: 1000,
    // Sent at once; the tests of the wait for the peak give their own.
    peakWaitMs: 0,
    ...more,
  };
}

Deno.test("with the published state, alerts show the live peak and count bursts the journal folds", async () => {
  await using am = fakeAlertmanager();
  const { served, rule } = servedMonitor();
  const shapes = [shapeOf(served)];
  const buffer = sharedStateBuffer(shapes);
  const publisher = new StatePublisher([served], buffer, 0);
  const journal = EventJournal.create([1], 8);
  const stats = AlertStats.create(1);
  const replies: SenderReply[] = [];
  const t = Date.now();
  publisher.publish(t);
  const sender = runSender(
    senderStart([am.url], journal, stats, {
      state: { buffer, shapes },
      peakWaitMs: 60_000,
    }),
    (r) => replies.push(r),
  );
  try {
    sender.tick(t); // nothing yet
    // Two bursts between looks, then a third still open: the journal
    // holds only the last ended and the open one.
    journal.started(0, 0, sample(t), 0, 1, t);
    journal.ended(0, 0, sample(t + 1), 0, 2, 6, t + 1);
    journal.started(0, 0, sample(t + 2), 0, 3, t + 2);
    journal.ended(0, 0, sample(t + 3), 0, 4, 7, t + 3);
    journal.started(0, 0, sample(t + 4), 0, 5, t + 4);
    Object.assign(rule, {
      active: true,
      activations: 3,
      peak: 1234,
      changedAtMs: t + 4,
    });
    publisher.publish(t + 5);
    // The open event's first send waits for its peak (the clock is the
    // test's: the thread's own looks are on the real one, a minute short):
    // a send at t + 10 would carry peak 1234, which the text below refuses.
    sender.tick(t + 10);
    Object.assign(rule, { peak: 2345 });
    publisher.publish(t + 504);
    sender.tick(t + 4 + 60_000);
    await am.received(1);
    // One push: a send at t + 10, before the wait, would have gone first.
    assert.equal(am.pushes.length, 1);
    const [alert] = am.pushes[0].alerts;
    assert.equal(alert.labels.severity, "critical");
    assert.equal(alert.labels.device, "sim");
    assert.equal(alert.annotations.events, "3");
    assert.equal(alert.startsAt, new Date(t + 2).toISOString());
    assert.match(
      alert.annotations.description,
      /is active now\. Value at start unknown; threshold: rx > 5 for 4 samples in a row\. Peak so far 2345 in its first 500 ms\. /,
    );
    // The rule in check-config's words, for whoever gets the page.
    assert.equal(
      alert.annotations.rule,
      '"rx high" (critical): gt rx > 5 for 4 samples in a row',
    );
    // The configured runbook, passed through.
    assert.equal(
      alert.annotations.runbook_url,
      "https://wiki.example.com/runbooks/rx-high",
    );
    assert.equal(alert.generatorURL, undefined);
    assert.deepEqual(replies, []);
  } finally {
    await sender.stop();
  }
});

Deno.test("a thread that replaces a failed one counts its lost queue as dropped, keeps the totals and resends what is active", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([1], 8);
  const t = Date.now();
  journal.started(0, 0, sample(t), 0, 1, t);
  // As the failed thread left them: 3 alerts still queued.
  const stats = AlertStats.create(1);
  stats.addSent(0, 5);
  stats.addFailed(0, 2);
  stats.addDropped(0, 1);
  stats.setQueueLength(0, 3);
  stats.setLastSuccess(0, t - 60_000);
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  const replies: SenderReply[] = [];
  const sender = runSender(
    senderStart([am.url], journal, stats, { heartbeat }),
    (r) => replies.push(r),
  );
  try {
    assert.deepEqual(replies, [{
      type: "error",
      line:
        `Alertmanager ${am.url}: 3 alerts queued by the sender's failed thread lost (counted as dropped)`,
    }]);
    // Its first look found the open event and sent it again.
    await am.received(1);
    assert.equal(am.pushes[0].alerts[0].labels.rule, "rx high");
    // Every look is a heartbeat: the first one at start, then one each.
    assert.equal(Atomics.load(beats, 0), 1);
    sender.tick();
    assert.equal(Atomics.load(beats, 0), 2);
  } finally {
    await sender.stop();
  }
  const { lastSuccessMs, ...counts } = stats.read(0);
  assert.deepEqual(counts, {
    sent: 1 + 5,
    failed: 2,
    dropped: 3 + 1,
    queueLength: 0,
  });
  assert.ok(
    lastSuccessMs >= t,
    `last success ${lastSuccessMs}, test began ${t}`,
  );
});

Deno.test("a thread that replaces a failed one and has nothing to send shows empty queues", async () => {
  const stats = AlertStats.create(2);
  stats.setQueueLength(0, 2);
  stats.setQueueLength(1, 1);
  const replies: SenderReply[] = [];
  const sender = runSender(
    senderStart(
      ["http://127.0.0.1:9", "http://127.0.0.1:10"],
      EventJournal.create([1], 8),
      stats,
      { drainMs: 100 },
    ),
    (r) => replies.push(r),
  );
  try {
    assert.equal(stats.read(0).queueLength, 0);
    assert.equal(stats.read(1).queueLength, 0);
    assert.equal(stats.read(0).dropped, 2);
    assert.equal(stats.read(1).dropped, 1);
    assert.deepEqual(replies.map((r) => r.type === "error" && r.line), [
      "Alertmanager http://127.0.0.1:9: 2 alerts queued by the sender's failed thread lost (counted as dropped)",
      "Alertmanager http://127.0.0.1:10: 1 alert queued by the sender's failed thread lost (counted as dropped)",
    ]);
  } finally {
    await sender.stop();
  }
});

Deno.test("an event's start is pushed at once: the journal wakes the sender, no look by the clock comes first", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([1], 8);
  const stats = AlertStats.create(1);
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  // Looks by the clock a minute apart, resends and holds a minute long:
  // only the journal can make this sender look within the test.
  const sender = runSender(
    senderStart([am.url], journal, stats, { heartbeat }),
    () => {},
  );
  try {
    assert.equal(Atomics.load(beats, 0), 1); // the look at start
    const t = Date.now();
    journal.started(0, 0, sample(t), 0, 1, t);
    await am.received(1);
    assert.equal(am.pushes[0].alerts[0].labels.rule, "rx high");
    assert.equal(am.pushes[0].alerts[0].startsAt, new Date(t).toISOString());
    // One look for the start, woken by it.
    assert.equal(Atomics.load(beats, 0), 2);
    // Its end wakes it too (nothing to send: the hold runs a minute).
    journal.ended(0, 0, sample(t + 1), 0, 2, 6, t + 1);
    await until("the third beat", () => Atomics.load(beats, 0) === 3);
    assert.equal(am.pushes.length, 1);
  } finally {
    await sender.stop();
  }
});

Deno.test("with nothing due and no event the sender looks only as often as its heartbeat needs", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([1], 8);
  const t = Date.now();
  journal.started(0, 0, sample(t), 0, 1, t); // firing, resent in a minute
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  const sender = runSender(
    senderStart([am.url], journal, AlertStats.create(1), { heartbeat }),
    () => {},
  );
  try {
    await am.received(1); // the look at start sent it
    // Work to stand in for time, each step a round trip through this
    // thread's event loop (where the sender's loop runs): a sender that
    // looked on a timer of milliseconds would look meanwhile.
    for (let i = 0; i < 50; i++) {
      await fetch(`${am.url}/api/v2/alerts`).then((r) => r.body?.cancel());
    }
    assert.equal(Atomics.load(beats, 0), 1);
    assert.equal(am.pushes.length, 1);
  } finally {
    await sender.stop();
  }
  // With a heartbeat bound of 100 ms, looks come that often and no more.
  const hb = new SharedArrayBuffer(4);
  const looks = new Int32Array(hb);
  const maxLookMs = 100;
  const bounded = runSender(
    senderStart([am.url], journal, AlertStats.create(1), {
      heartbeat: hb,
      maxLookMs,
    }),
    () => {},
  );
  try {
    const from = performance.now();
    await until("five more looks", () => Atomics.load(looks, 0) >= 1 + 5);
    const took = performance.now() - from;
    // Timers may round down by a millisecond each, never more.
    assert.ok(took >= 5 * (maxLookMs - 1), `5 looks in ${took.toFixed(0)} ms`);
  } finally {
    await bounded.stop();
  }
});

Deno.test("stop sends what is due though the loop has not looked since", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([1], 8);
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  const sender = runSender(
    senderStart([am.url], journal, AlertStats.create(1), { heartbeat }),
    () => {},
  );
  const t = Date.now();
  journal.started(0, 0, sample(t), 0, 1, t);
  const stopping = sender.stop(); // before the woken loop could run
  assert.equal(Atomics.load(beats, 0), 1);
  await stopping;
  assert.equal(am.pushes.length, 1);
  assert.equal(am.pushes[0].alerts[0].labels.rule, "rx high");
  assert.equal(Atomics.load(beats, 0), 2); // stop's look, not the loop's
});

Deno.test("a rule flapping at every sample is taken in a few looks, not one per change", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([1], 8);
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  const sender = runSender(
    senderStart([am.url], journal, AlertStats.create(1), { heartbeat }),
    () => {},
  );
  try {
    const t = Date.now();
    const from = performance.now();
    // 200 events, each written in its own turn of the event loop: the
    // sender's loop can wake between any two of them.
    for (let k = 0; k < 200; k++) {
      journal.started(0, 0, sample(t + 2 * k), 0, 2 * k + 1, t + 2 * k);
      journal.ended(0, 0, sample(t + 2 * k + 1), 0, 2 * k + 2, 6, t);
      await new Promise((r) => setTimeout(r, 0));
    }
    await am.received(1);
    const took = performance.now() - from;
    const looks = Atomics.load(beats, 0) - 1;
    // At least one, and never two within MIN_LOOK_GAP_MS (a timer may
    // round down by a millisecond), however slowly the turns went.
    const most = Math.floor(took / (MIN_LOOK_GAP_MS - 1)) + 1;
    assert.ok(
      looks >= 1 && looks <= most,
      `${looks} looks for 400 changes in ${took.toFixed(0)} ms`,
    );
  } finally {
    await sender.stop();
  }
});
