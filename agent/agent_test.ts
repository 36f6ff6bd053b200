import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { runReview } from "../cli/review.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { Agent } from "./agent.ts";

Deno.test("the agent journals every start and end as events.log and the tally have them", async () => {
  await using dir = await tempDir("agent");
  const config = parseConfig(
    `{ "diag_sample_period_ns": 1000000, "sample_history_depth": 2,
       "data-ids": [{ "name": "port_0_rx_bytes", "data_id": "0x1020000100000000" }],
       "rules": [
         { "name": "never", "data_id": "0x1020000100000000",
           "comparison_type": "lt", "comparison_value": 0 },
         { "name": "rx_fast", "data_id": "0x1020000100000000",
           "comparison_type": "inc_gt", "comparison_value": 40000000 }] }`,
    `${dir.path}/rules.json`,
  );
  const agent = await Agent.open({
    ...config,
    monitors: config.monitors.map((m) => ({
      ...m,
      source: "sim" as const,
      eventLog: `${dir.path}/events.log`,
    })),
  }, { version: "test 1.0" });
  try {
    await agent.run(AbortSignal.timeout(300));
  } finally {
    assert.deepEqual(await agent.close(), []);
  }
  const events = agent.journal.recent();
  // The simulated rx hovers around 40 MB a sample: it starts and ends.
  assert.ok(events.some((e) => e.endNs !== undefined), "an event ended");
  let out = "";
  const code = await runReview([`${dir.path}/events.log`, "--json"], {
    out: (t) => {
      out += t;
      return Promise.resolve();
    },
    error: (m) => assert.fail(m),
    warn: () => {},
    info: () => {},
  });
  assert.equal(code, 0);
  const logged = JSON.parse(out).events as {
    rule: string;
    start_ns: string;
    end_ns: string | null;
  }[];
  // Newest first in the journal, oldest first in the log.
  assert.deepEqual(
    events.toReversed().map((e) => [
      agent.monitors[0].config.rules[e.rule].name,
      String(e.startNs),
      e.endNs === undefined ? null : String(e.endNs),
    ]),
    logged.map((e) => [e.rule, e.start_ns, e.end_ns]),
  );
  assert.equal(agent.journal.open(0, 0), undefined);
  assert.equal(agent.journal.last(0, 0), undefined);
  // Sample numbers, sample times (ns) and peaks, as the tally (the closing
  // table) has them.
  assert.deepEqual(
    events.toReversed().map((e) => [
      e.startSample,
      e.endSample ?? null,
      e.startNs,
      e.endNs ?? null,
      Number.isNaN(e.peak) ? "open" : e.peak,
    ]),
    agent.tally.events.map((t) => [
      t.startSample,
      t.endSample,
      t.startNs,
      t.endNs,
      t.endNs === null ? "open" : t.peak,
    ]),
  );
  const newest = events[0];
  const last = agent.journal.last(0, 1)!;
  assert.ok(last.id === newest.id || last.id === newest.id - 1);
});

Deno.test("the journal's value at start is what started the rule: over its threshold", async () => {
  await using dir = await tempDir("agent");
  const config = parseConfig(
    `monitors:
  - name: nic
    source: sim
    sample_period_ns: 1000000
    depth: 2
    event_log: ${JSON.stringify(`${dir.path}/events.log`)}
    seed: 1
    columns:
      - { name: rx, data_id: "0x1020000100000000" }
    rules:
      - { name: rx seen, column: rx, comparison_type: gt, comparison_value: 1000 }
      - name: rx fast
        increase: rx
        above: 25000000
        clear: 25000000
      - name: rx rate
        rate: rx
        window: 2ms
        above: 25G/s
        clear: 25G/s
`,
    `${dir.path}/agent.yaml`,
  );
  const agent = await Agent.open(config, { version: "test 1.0" });
  try {
    await agent.run(AbortSignal.timeout(300));
  } finally {
    assert.deepEqual(await agent.close(), []);
  }
  const events = agent.journal.recent();
  const thresholds = [1000, 25_000_000, 25e9];
  for (let r = 0; r < thresholds.length; r++) {
    const ofRule = events.filter((e) => e.rule === r);
    assert.ok(ofRule.length > 0, `rule ${r} started`);
    for (const e of ofRule) {
      assert.ok(
        e.value > thresholds[r],
        `rule ${r} event ${e.id}: value at start ${e.value}`,
      );
      // Once ended, the peak is at least the start's value (all fire high).
      if (e.endNs !== undefined) assert.ok(e.peak >= e.value);
    }
  }
  // The counter only grows: "rx seen" started once and is still open,
  // its value the counter on the start sample, below its value now.
  const open = agent.journal.open(0, 0)!;
  assert.equal(events.filter((e) => e.rule === 0).length, 1);
  assert.ok(open.value <= agent.monitors[0].monitor.rules[0].peak);
});
