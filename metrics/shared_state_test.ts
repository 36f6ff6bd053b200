import assert from "node:assert/strict";
import { AgentMetrics, type ServedMonitor } from "./agent_metrics.ts";
import { fedMonitor, mixedConfig } from "./metrics_test_util.ts";
import { MetricsRenderer } from "../endpoint/render.ts";
import {
  PublishedState,
  shapeOf,
  sharedStateBuffer,
  StatePublisher,
} from "./shared_state.ts";
import { buildSnapshot } from "../endpoint/snapshot.ts";
import { PollStats } from "../collectors/poll_stats.ts";
import { ReadStats } from "../collectors/read_stats.ts";
import type { Monitor } from "../rules/monitor.ts";

const NOW = 1_700_000_100_000;

/** Renders that depend on the clock at render time, not on the state. */
function timeless(text: string): string {
  return text.split("\n")
    .filter((l) =>
      !l.startsWith("process_") && !l.includes("rule_active_seconds_total")
    )
    .join("\n");
}

/** A hand-fed monitor, a publisher of it and the endpoint's reader, over one buffer. */
async function sharedPair(startMs = NOW) {
  const fed = await fedMonitor(1e9, mixedConfig);
  const live = fed.agentMonitor;
  const buffer = sharedStateBuffer([shapeOf(live)]);
  return {
    fed,
    live,
    buffer,
    publisher: new StatePublisher([live], buffer, startMs),
    state: new PublishedState(buffer, [shapeOf(live)]),
    [Symbol.asyncDispose]: () => fed.close(),
  };
}

Deno.test("what the endpoint renders from the published state is what it would render from the live monitors", async () => {
  await using pair = await sharedPair(NOW - 5000);
  const { fed, live, publisher, state } = pair;
  // Two windows of samples; `lat "high"` goes active and stays, so does
  // `rx rate` (10,000/s, its peak); `lat rising` is pending from sample
  // 16 (lat 640), its 10 s never met; `rx\total` never fires.
  for (let i = 0; i < 25; i++) {
    fed.feed(BigInt(i) * 100_000_000n, BigInt(i * 1000), BigInt(i * 40));
  }
  const rules = live.monitor.rules;
  assert.deepEqual(
    rules.map((r) => [r.active, r.pending, r.peak]),
    [[true, false, 960], [false, false, NaN], [false, true, NaN], [
      true,
      false,
      10_000,
    ]],
  );
  const stats = live.collector.pollStats!;
  stats.recordPoll(0.3);
  stats.recordPoll(40);
  stats.recordBatch(10, 100);
  stats.recordError("DOCA_ERROR_AGAIN");
  stats.recordError("DOCA_ERROR_AGAIN");
  stats.recordError("DOCA_ERROR_IO_FAILED");
  assert.equal(live.monitor.activeRules, 2);

  publisher.publish(NOW);
  assert.equal(state.refresh(), true);
  const published = new AgentMetrics(
    state.monitors,
    fed.metrics.info,
    state.freshness,
  );
  fed.metrics.tick(NOW);

  assert.deepEqual(
    timeless(new MetricsRenderer(published).render("openmetrics", NOW)),
    timeless(new MetricsRenderer(fed.metrics).render("openmetrics", NOW)),
  );
  const fromShared = buildSnapshot(published, NOW);
  const fromLive = buildSnapshot(fed.metrics, NOW);
  for (const s of [fromShared, fromLive]) {
    for (const m of s.monitors) {
      for (const r of m.rules) {
        (r as { active_seconds: number }).active_seconds = 0;
      }
    }
  }
  assert.deepEqual(fromShared, fromLive);
  assert.equal(fromShared.monitors[0].poll?.errors.DOCA_ERROR_AGAIN, 2);
  // The new fields went through the shared memory, not around it.
  assert.deepEqual(
    state.monitors[0].monitor.rules.map((r) => [r.pending, r.peak]),
    [[false, 960], [false, NaN], [true, NaN], [false, 10_000]],
  );
  assert.deepEqual(
    fromShared.monitors[0].rules.map((r) => [r.pending, r.peak, r.severity]),
    [[false, 960, "warning"], [false, null, "warning"], [
      true,
      null,
      "warning",
    ], [false, 10_000, "critical"]],
  );
});

Deno.test("a source's failure and new error names reach the endpoint; figures stay put between refreshes", async () => {
  await using pair = await sharedPair();
  const { fed, live, publisher, state } = pair;
  publisher.publish(NOW);
  state.refresh();
  const [nic] = state.monitors;
  assert.equal(nic.status.state, "running");
  assert.equal(nic.status.error, undefined);

  fed.feed(0n, 1n, 1n);
  live.status.state = "failed";
  live.status.error = "query_counters failed: DOCA_ERROR_IO_FAILED";
  live.collector.pollStats!.recordError("DOCA_ERROR_IO_FAILED");
  publisher.publish(NOW + 100);
  // Not refreshed yet: the endpoint's copy has not moved.
  assert.equal(nic.monitor.samples, 0);
  assert.equal(nic.status.state, "running");

  state.refresh();
  assert.equal(nic.monitor.samples, 1);
  assert.deepEqual(nic.status, {
    state: "failed",
    error: "query_counters failed: DOCA_ERROR_IO_FAILED",
  });
  assert.deepEqual([...nic.collector.pollStats!.errors], [[
    "DOCA_ERROR_IO_FAILED",
    1,
  ]]);
  assert.equal(state.freshness.hasData(0), true);
  assert.equal(state.freshness.ageMs(0, NOW + 300), 200);
});

Deno.test("a reader never keeps a copy taken while the sampler was writing", async () => {
  await using pair = await sharedPair();
  const { fed, buffer, publisher, state } = pair;
  fed.feed(0n, 1n, 1n);
  publisher.publish(NOW);
  assert.equal(state.refresh(), true);
  // A writer stopped mid-write: the sequence number stays odd.
  const sequence = new Int32Array(buffer, 0, 1);
  Atomics.add(sequence, 0, 1);
  new Float64Array(buffer, 8)[1 + 0] = 999; // a half-written sample count
  assert.equal(state.refresh(), false);
  assert.equal(state.monitors[0].monitor.samples, 1);
  Atomics.add(sequence, 0, 1);
  assert.equal(state.refresh(), true);
  assert.equal(state.monitors[0].monitor.samples, 999);
});

Deno.test("a buffer laid out for other monitors is refused", async () => {
  await using pair = await sharedPair();
  assert.throws(
    () => new PublishedState(sharedStateBuffer([]), [shapeOf(pair.live)]),
    /shared state buffer is \d+ bytes, the monitors need \d+/,
  );
});

Deno.test("a failure text of escapes that overflows its room is shortened, never cut into broken JSON", async () => {
  await using pair = await sharedPair();
  const { live, publisher, state } = pair;
  live.status.state = "failed";
  // 1000 controls: 6 bytes each as JSON, more than the 4 KiB of room.
  live.status.error = "\x01".repeat(1000);
  publisher.publish(NOW);
  assert.equal(state.refresh(), true);
  const error = state.monitors[0].status.error;
  assert.ok(error !== undefined && error.length > 0, String(error));
  assert.ok(
    error === "\x01".repeat(error.length) && error.length < 1000,
    `${error.length}`,
  );
});

Deno.test("a publication that throws leaves the shared state whole, and start() tells it once", async () => {
  await using pair = await sharedPair();
  const { fed, live, buffer } = pair;
  let broken = false;
  const faulty: ServedMonitor = {
    ...live,
    log: {
      path: live.log.path,
      get stats() {
        if (broken) throw new Error("stats unavailable");
        return live.log.stats;
      },
    },
  };
  const publisher = new StatePublisher([faulty], buffer, NOW);
  const state = new PublishedState(buffer, [shapeOf(faulty)]);
  fed.feed(0n, 1n, 1n);
  publisher.publish(NOW);
  broken = true;
  fed.feed(100_000_000n, 2n, 2n);
  assert.throws(() => publisher.publish(NOW + 100), /stats unavailable/);
  assert.equal(state.refresh(), true); // not left mid-write
  assert.equal(state.monitors[0].monitor.samples, 1);

  const errors: unknown[] = [];
  const running = publisher.start(5, (e) => errors.push(e));
  await new Promise((r) => setTimeout(r, 40));
  running.stop();
  assert.equal(errors.length, 1);
});

Deno.test("before the first publication a reader sees each monitor idle, with no data since the start it was given", async () => {
  const fed = await fedMonitor(1e9, mixedConfig);
  try {
    const shapes = [shapeOf(fed.agentMonitor)];
    const state = new PublishedState(
      sharedStateBuffer(shapes, NOW - 2500),
      shapes,
    );
    state.refresh();
    const metrics = new AgentMetrics(state.monitors, {
      version: "test",
      startMs: NOW - 2500,
      windowNs: 1e9,
    }, state.freshness);
    assert.equal(state.freshness.hasData(0), false);
    assert.equal(state.freshness.ageMs(0, NOW), 2500);
    assert.deepEqual(metrics.readiness(NOW).problems, [
      `${fed.agentMonitor.config.name}: not started`,
    ]);
  } finally {
    await fed.close();
  }
});

Deno.test("a source's read times reach the endpoint: rendered and snapshotted from the published state as from the live source", async () => {
  await using pair = await sharedPair();
  const { fed, buffer } = pair;
  // A source that times its reads (the kernel source does), at the
  // monitor's 1 ms period.
  const readStats = new ReadStats(1);
  const live: ServedMonitor = {
    ...pair.live,
    collector: { pollStats: new PollStats(), readStats },
  };
  const publisher = new StatePublisher([live], buffer, NOW);
  const state = new PublishedState(buffer, [shapeOf(live)]);
  readStats.record(0.02);
  readStats.record(2.5); // longer than the period
  readStats.record(0.3);
  publisher.publish(NOW);
  assert.equal(state.refresh(), true);
  const reads = state.monitors[0].collector.readStats!;
  assert.deepEqual(
    [reads.reads, reads.readLastS, reads.readMaxS, reads.slowReads],
    [3, 0.0003, 0.0025, 1],
  );
  assert.deepEqual([...reads.readCounts], [...readStats.readCounts]);
  const published = new AgentMetrics(state.monitors, fed.metrics.info);
  const direct = new AgentMetrics([live], fed.metrics.info);
  assert.deepEqual(
    timeless(new MetricsRenderer(published).render("openmetrics", NOW)),
    timeless(new MetricsRenderer(direct).render("openmetrics", NOW)),
  );
  const snapshot = buildSnapshot(published, NOW).monitors[0];
  assert.deepEqual(snapshot.read, {
    reads: 3,
    last_seconds: 0.0003,
    max_seconds: 0.0025,
    mean_seconds: readStats.readSumS / 3,
    slow_reads: 1,
  });
  // A source that does not time its reads has none published.
  const plain = new PublishedState(
    sharedStateBuffer([shapeOf(pair.live)]),
    [shapeOf(pair.live)],
  );
  assert.equal(plain.monitors[0].collector.readStats, undefined);
  assert.equal(
    buildSnapshot(new AgentMetrics(plain.monitors, fed.metrics.info), NOW)
      .monitors[0].read,
    null,
  );
});

Deno.test("blind periods reach the endpoint: dpu_traceback_blind_periods_total counts separate losses", async () => {
  await using pair = await sharedPair();
  const { fed, live, publisher, state } = pair;
  const monitor = live.monitor as Monitor; // the live one, not a view
  fed.feed(0n, 1n, 1n);
  monitor.gap(3);
  fed.feed(900_000_000n, 2n, 1n);
  monitor.gap(1);
  monitor.gap(2); // before the next sample: the same loss
  fed.feed(1_900_000_000n, 3n, 1n);
  publisher.publish(NOW);
  state.refresh();
  const [nic] = state.monitors;
  assert.equal(nic.monitor.blindPeriods, 2);
  assert.equal(nic.monitor.droppedSamples, 6);
  const published = new AgentMetrics(state.monitors, fed.metrics.info);
  for (const metrics of [published, fed.metrics]) {
    const text = new MetricsRenderer(metrics).render("openmetrics", NOW);
    assert.ok(
      text.includes(
        "# TYPE dpu_traceback_blind_periods counter\n" +
          "# HELP dpu_traceback_blind_periods Separate losses",
      ),
      text,
    );
    assert.ok(
      text.includes('dpu_traceback_blind_periods_total{monitor="nic"} 2\n'),
    );
  }
});
