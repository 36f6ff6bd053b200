import assert from "node:assert/strict";
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
import { runSender, type SenderReply } from "./sender_worker.ts";

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
  }],
  eventLog: "/var/log/dpu-traceback/events.log",
};

/** A monitor whose one rule's state the test sets, as the sampler would. */
function servedMonitor() {
  const rule = { active: false, activations: 0, pending: false, peak: NaN };
  const served: ServedMonitor = {
    config: CONFIG,
    monitor: {
      name: "nic",
      samples: 0,
      droppedSamples: 0,
      events: 0,
      activeRules: 0,
      ring: { count: 0, capacity: 8 },
      rules: [rule],
      ruleChangedAtMs: () => NaN,
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
  const sender = runSender({
    type: "start",
    alerting: {
      alertmanagers: [{ url: am.url, timeoutMs: 1000 }],
      resendIntervalMs: 60_000,
      holdMs: 60_000,
    },
    credentials: [{}],
    instance: "dpu-9",
    labels: {},
    monitors: alertMonitors([CONFIG]),
    journal: journal.buffer,
    state: { buffer, shapes },
    stats: stats.buffer,
    version: "0.1.0",
    tickMs: 60_000, // the test looks by hand
    drainMs: 1000,
  }, (r) => replies.push(r));
  try {
    sender.tick(t); // nothing yet
    // Two bursts between looks, then a third still open: the journal
    // holds only the last ended and the open one.
    journal.started(0, 0, sample(t), 0, 1, t);
    journal.ended(0, 0, sample(t + 1), 0, 2, 6, t + 1);
    journal.started(0, 0, sample(t + 2), 0, 3, t + 2);
    journal.ended(0, 0, sample(t + 3), 0, 4, 7, t + 3);
    journal.started(0, 0, sample(t + 4), 0, 5, t + 4);
    Object.assign(rule, { active: true, activations: 3, peak: 1234 });
    publisher.publish(t + 5);
    sender.tick(t + 10);
    await am.received(1);
    const [alert] = am.pushes[0].alerts;
    assert.equal(alert.labels.severity, "critical");
    assert.equal(alert.labels.device, "sim");
    assert.equal(alert.annotations.events, "3");
    assert.equal(alert.startsAt, new Date(t + 2).toISOString());
    assert.match(alert.annotations.description, /active now, peak so far 1234/);
    assert.equal(alert.generatorURL, undefined);
    assert.deepEqual(replies, []);
  } finally {
    await sender.stop();
  }
});
