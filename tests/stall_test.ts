import assert from "node:assert/strict";
import { SimCollector } from "../collectors/sim.ts";
import type { SignalRuleConfig } from "../config/types.ts";
import { Monitor } from "../rules/monitor.ts";
import { RecordingSink } from "../rules/rules_test_util.ts";
import { join } from "node:path";
import { startedAgent } from "./agent_util.ts";
import { tempDir } from "./temp_dir.ts";

// A stalled agent, on the simulated NIC with its clock injected: the
// device keeps counting while nobody polls, its buffer (4096 samples, 0.41 s
// at 10 kHz) overflows and the samples before the newest 4096 are lost.
// Across the loss the counters jump; beyond 10 s of loss the simulator
// also stops advancing them (a suspend, not a hiccup), so a window spanning
// the loss reads about half the true rate. docs/spec/signal-rules.md §2: a
// signal that spans the loss is unknown, so none of these rules starts or
// ends because of the stall.

const PERIOD_NS = 100_000;
const T0_MS = 1_795_272_600_000;
const MS = 1_000_000;

/** Signal-rule config with the fields these rules do not use defaulted. */
function signalRule(
  fields: Partial<SignalRuleConfig> & Pick<SignalRuleConfig, "name">,
): SignalRuleConfig {
  return {
    signal: "rate",
    column: 0,
    windowNs: 1 * MS,
    direction: "above",
    threshold: 0,
    clear: fields.threshold ?? 0,
    forNs: 0,
    keepFiringForNs: 0,
    ...fields,
  };
}

// The simulated port receives about 25 GB/s (2.5 MB a sample, +-8 %) in the
// steady parts of its cycle, which are all this test samples.
const RULES: SignalRuleConfig[] = [
  signalRule({ name: "rx above 20 GB/s", threshold: 20e9, clear: 20e9 }),
  signalRule({
    name: "rx below 15 GB/s",
    direction: "below",
    threshold: 15e9,
    clear: 15e9,
  }),
  signalRule({
    name: "rx over 10 MB in one sample",
    signal: "increase",
    windowNs: 0,
    threshold: 10_000_000n,
    clear: 10_000_000n,
  }),
];

Deno.test("a 20 s stall neither starts nor ends a signal rule, and the log marks the loss", () => {
  let clockMs = T0_MS;
  const sim = new SimCollector({
    columns: [{ name: "port_0_rx_bytes", dataId: "0x1020000100000000" }],
    samplePeriodNs: PERIOD_NS,
    seed: 7,
    now: () => clockMs,
  });
  const sink = new RecordingSink(RULES.map((r) => r.name));
  const changes: string[] = [];
  const monitor = new Monitor(
    { name: "nic", depth: 1000, columns: ["rx"], rules: RULES },
    sink,
    {
      onTransition: (m, rule, active) =>
        changes.push(
          `${active ? "start" : "end"} ${
            RULES[rule].name
          } at sample ${m.samples}`,
        ),
    },
  );
  const pollFor = (ms: number) => {
    for (const end = clockMs + ms; clockMs < end;) {
      clockMs += 50;
      sim.poll(monitor);
    }
  };

  pollFor(2_000); // sample time 0-2 s: steady
  assert.deepEqual(changes, ["start rx above 20 GB/s at sample 11"]);
  const before = monitor.samples;
  const rowsBefore = sink.entries.length;

  clockMs += 20_000; // the stall: nobody polls for 20 s
  pollFor(2_000); // lands at 21.6-24 s of the 20 s cycle: steady again

  // The first poll after it, 20.05 s on, finds 200,500 samples due and
  // the newest 4096 in the buffer; the 39 polls after it 500 each.
  const lost = 200_500 - 4096;
  assert.equal(monitor.droppedSamples, lost);
  assert.equal(monitor.samples, before + 4096 + 39 * 500);
  assert.deepEqual(changes, ["start rx above 20 GB/s at sample 11"]);
  // The active rule keeps writing rows; the first one after the stall is
  // marked, at its own sample time.
  assert.equal(sink.entries[rowsBefore], `gap ${lost}`);
  assert.match(sink.entries[rowsBefore + 1], /^row /);
  // Sample 0 is stamped at the first poll, 50 ms after T0.
  const firstAfter = before + lost;
  assert.deepEqual(sink.gapTimes, [
    T0_MS + 50 + firstAfter * PERIOD_NS / MS,
  ]);
});

Deno.test("an agent stopped with SIGSTOP for 1 s starts no signal rule on the samples it lost; a reference-type event it starts says so", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const config = join(dir.path, "stall.yaml");
  // The simulated port's steady part (the first 5 s of its cycle): about
  // 2.5 MB a sample. The pause loses about 5,900 samples; the first one
  // after it is about 15 GB above the last one before.
  await Deno.writeTextFile(
    config,
    `monitors:
  - name: nic
    source: sim
    sample_period_ns: 100000
    depth: 1000
    event_log: ${JSON.stringify(log)}
    seed: 7
    columns:
      - { name: port_0_rx_bytes, data_id: "0x1020000100000000" }
    rules:
      - name: rx above 20 GB/s
        rate: port_0_rx_bytes
        window: 1ms
        above: 20G/s
      - name: rx over 10 MB in one sample
        increase: port_0_rx_bytes
        above: 10000000
      # A reference type: it compares across the loss, as the reference
      # does (about 2.5 GB per 1000 samples, some 17 GB across the pause).
      - name: rx over 5 GB per depth
        column: port_0_rx_bytes
        comparison_type: dt_gt
        comparison_value: 5000000000
`,
  );
  const agent = await startedAgent(["run", "--config", config]);
  let stopped = false;
  try {
    await agent.waitFor(
      "/metrics",
      (body) => /samples_total\{[^}]*\} [1-9]\d{4,}/.test(body),
    );
    agent.signal("SIGSTOP");
    stopped = true;
    await new Promise((r) => setTimeout(r, 1_000)); // the pause under test
    agent.signal("SIGCONT");
    stopped = false;
    await agent.waitFor(
      "/metrics",
      (body) => /lost_samples_total\{[^}]*\} [1-9]/.test(body),
    );
    // The reference-type rule started on the loss, and says so.
    const api = await agent.waitFor(
      "/api/v1/events",
      (body) => body.includes("rx over 5 GB per depth"),
    );
    const [event] = (JSON.parse(api).events as {
      rule: string;
      lost_before_start: number;
    }[]).filter((e) => e.rule === "rx over 5 GB per depth");
    assert.ok(event.lost_before_start > 0, api);
  } finally {
    if (stopped) agent.signal("SIGCONT");
  }
  const { code } = await agent.stop();
  assert.equal(code, 0);
  const text = await Deno.readTextFile(log);
  const starts = text.match(/^<<Event start>>.*$/gm) ?? [];
  // The signal rules: one start, from the first window, none from the
  // pause. The reference type: at least the pause's (a loaded machine may
  // stall the agent again on its own).
  const started = starts.map((l) => /Rule: "([^"]*)"/.exec(l)?.[1]);
  assert.deepEqual(
    started.filter((r) => r !== "rx over 5 GB per depth"),
    ["rx above 20 GB/s"],
  );
  assert.ok(started.includes("rx over 5 GB per depth"), text.slice(0, 2000));
  // Only the reference-type rule's event may have ended meanwhile.
  assert.deepEqual(
    (text.match(/^<<Event end>>.*$/gm) ?? []).filter((l) =>
      !l.includes("rx over 5 GB per depth")
    ),
    [],
  );
  // The active rule writes every row; the loss is marked before the row
  // after it.
  assert.match(
    text,
    /^<<Gap>> Time: [^,]+, Dropped samples: [1-9]\d*\n\d+, \d+$/m,
  );
});
