/**
 * A fleet on one machine, end to end: 16 agents on the simulated NIC, each
 * on its own loopback port with its own rack and rail, push their events
 * to one real Alertmanager (Debian's `prometheus-alertmanager`), and one
 * real Prometheus scrapes them with the shipped rules loaded. Through
 * Alertmanager's and Prometheus's own HTTP APIs:
 *
 * 1. every agent's alerts are there, with `alertname`, `monitor`, `device`,
 *    `instance`, `severity` and that agent's topology labels;
 * 2. an alert stays firing for its hold after its event ended, then
 *    resolves;
 * 3. an Alertmanager restarted with an empty data directory while an event
 *    is active has the alert again within one resend interval;
 * 4. with Alertmanager down the agents lose no sample, keep sampling at
 *    10 kHz and serve /metrics as before, counting the failed pushes and
 *    queueing the alert, which arrives once Alertmanager is back;
 * 5. rail-level PromQL over `dpu_traceback_topology_info` and the shipped
 *    `rail:` recording rules finds the agents of one rail.
 *
 * Needs `prometheus` and `prometheus-alertmanager` on PATH; `.ci/run`
 * installs them. Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../cli_util.ts";
import { tempDir } from "../temp_dir.ts";
import {
  agentEvents,
  Alertmanager,
  eventually,
  type FleetAgent,
  type FleetPrometheus,
  freePorts,
  type GettableAlert,
  nsToMs,
  sampleValue,
  startFleet,
  startFleetPrometheus,
  stopFleet,
} from "./fleet_util.ts";

const RULES = join(ROOT, "deploy/prometheus/dpu-traceback.rules.yml");
/** The job name the shipped rules expect (docs/fleet.md). */
const JOB = "dpu-traceback";
const RACKS = 4;
const RAILS = 4;
const RESEND_MS = 2_000;
const HOLD_MS = 3_000;
/** What a loaded 2-core machine may add to any deadline below. */
const SLACK_MS = 2_000;
/** The sim's sample rate: one sample every 100 us. */
const SAMPLES_PER_S = 10_000;

/**
 * Active from the first sample to the last (the receive counter is never
 * 0): the "event that is active" when Alertmanager restarts or goes down.
 */
const ALWAYS = {
  name: "Port 0 receiving",
  value: "port_0_rx_bytes",
  above: 0,
  severity: "info",
  summary: "port 0 carries traffic",
};
/**
 * deploy/demo.yaml's ECN storm: it starts about 5.25 s into each 20 s
 * cycle of the simulated NIC and ends about 3.7 s later, so with a 3 s
 * hold its alert fires and resolves within every cycle.
 */
const BURST = {
  name: "ECN storm",
  rate: "port_0_rx_ecn_packets",
  window: "1ms",
  above: "250k/s",
  for: "500us",
  clear: "50k/s",
  keep_firing_for: "10ms",
  severity: "warning",
  summary: "ECN marks above 250k/s on port 0",
};

/** What an agent says of itself on /metrics, and when it said it. */
interface AgentReading {
  readonly atMs: number;
  readonly scrapeMs: number;
  /** The metric families served (`# TYPE` lines). */
  readonly families: number;
  readonly samples: number;
  readonly lost: number;
  readonly sent: number;
  readonly failed: number;
  readonly queued: number;
}

async function readAgent(member: FleetAgent): Promise<AgentReading> {
  const before = Date.now();
  const res = await member.agent.get("/metrics");
  const text = await res.text();
  const after = Date.now();
  assert.equal(res.status, 200, `${member.name} /metrics: ${text}`);
  const value = (name: string, labels = {}) => {
    const v = sampleValue(text, name, labels);
    assert.ok(v !== undefined, `${member.name} serves no ${name}`);
    return v;
  };
  return {
    atMs: (before + after) / 2,
    scrapeMs: after - before,
    families: text.split("\n").filter((l) => l.startsWith("# TYPE ")).length,
    samples: value("dpu_traceback_samples_total", { monitor: "nic" }),
    lost: value("dpu_traceback_lost_samples_total", { monitor: "nic" }),
    sent: value("dpu_traceback_alerts_sent_total"),
    failed: value("dpu_traceback_alerts_failed_total"),
    queued: value("dpu_traceback_alerts_queue_length"),
  };
}

function alertOf(
  alerts: readonly GettableAlert[],
  member: FleetAgent,
  rule: string,
): GettableAlert | undefined {
  return alerts.find((a) =>
    a.labels.instance === member.instance &&
    a.labels.alertname === "DpuTracebackRuleFired" && a.labels.rule === rule
  );
}

Deno.test("a fleet of 16 agents pushes to a real Alertmanager and is scraped by a real Prometheus: alerts with topology, hold, restarts, outages, rail queries", async () => {
  await using dir = await tempDir("dpu-traceback-fleet-");
  const amDir = join(dir.path, "alertmanager");
  const promDir = join(dir.path, "prometheus");
  await Deno.mkdir(amDir);
  await Deno.mkdir(promDir);
  // Picked together, so none of the agents can get Prometheus's port.
  const [amPort, promPort, ...agentPorts] = freePorts(2 + RACKS * RAILS);
  // Agent i sits in rack r(i/4 + 1) on rail (i % 4) + 1: every rack has
  // one agent on each rail, and every agent's labels are its own.
  const members = Array.from({ length: RACKS * RAILS }, (_, i) => ({
    name: `a${String(i).padStart(2, "0")}`,
    labels: {
      rack: `r${Math.floor(i / RAILS) + 1}`,
      rail: String((i % RAILS) + 1),
      plane: "a",
      switch_port: `swp${i + 1}`,
    },
  }));

  let am: Alertmanager | undefined;
  let fleet: FleetAgent[] = [];
  let prometheus: FleetPrometheus | undefined;
  let stopped: Awaited<ReturnType<typeof stopFleet>> = [];
  try {
    am = await Alertmanager.start(amDir, amPort);
    const t0 = Date.now();
    fleet = await startFleet({
      dir: dir.path,
      members,
      ports: agentPorts,
      monitor: {
        source: "sim",
        sample_period_ns: 100_000,
        depth: 1000,
        seed: 7,
        columns: [
          { name: "port_0_rx_bytes", data_id: "0x1020000100000000" },
          { name: "port_0_rx_ecn_packets", data_id: "0x1080000400000000" },
        ],
        rules: [ALWAYS, BURST],
      },
      alerting: {
        alertmanagers: [{ url: am.url, timeout: "1s" }],
        resend_interval: `${RESEND_MS}ms`,
        hold: `${HOLD_MS}ms`,
      },
    });
    assert.equal(fleet.length, 16);
    assert.equal(new Set(fleet.map((m) => m.instance)).size, 16);
    prometheus = await startFleetPrometheus({
      dir: promDir,
      port: promPort,
      job: JOB,
      targets: fleet.map((m) => m.instance),
      ruleFiles: [RULES],
      deadline: Date.now() + 30_000,
    });

    // --- 1 and 2: every agent's alerts, labelled; the burst's resolves
    // after its hold -------------------------------------------------------
    // One look at Alertmanager every 250 ms follows each agent's burst
    // alert: when it was last seen firing and when it was first gone.
    const always = new Map<string, GettableAlert>();
    const bursts = new Map<
      string,
      { alert: GettableAlert; lastSeenMs: number; goneMs?: number }
    >();
    await eventually(
      "every agent's alerts in Alertmanager, and each burst alert resolved",
      async () => {
        const lookMs = Date.now();
        const alerts = await am!.alerts();
        const goneMs = Date.now();
        for (const member of fleet) {
          const a = alertOf(alerts, member, ALWAYS.name);
          if (a !== undefined && !always.has(member.name)) {
            always.set(member.name, a);
          }
          const b = alertOf(alerts, member, BURST.name);
          const seen = bursts.get(member.name);
          if (seen?.goneMs !== undefined) continue;
          if (b !== undefined) {
            bursts.set(member.name, { alert: b, lastSeenMs: lookMs });
          } else if (seen !== undefined) {
            seen.goneMs = goneMs;
          }
        }
        return {
          always: always.size,
          resolved: [...bursts.values()].filter((b) => b.goneMs).length,
        };
      },
      (n) => n.always === fleet.length && n.resolved === fleet.length,
      // Starting 16 agents, then a burst 5 s into the cycle and its hold.
      t0 + 60_000,
    );
    const startMs = Date.now() - t0;

    for (const member of fleet) {
      for (
        const [rule, alert] of [
          [ALWAYS, always.get(member.name)!],
          [BURST, bursts.get(member.name)!.alert],
        ] as const
      ) {
        assert.deepEqual(alert.labels, {
          alertname: "DpuTracebackRuleFired",
          rule: rule.name,
          monitor: "nic",
          device: "sim",
          instance: member.instance,
          severity: rule.severity,
          ...member.labels,
        }, `${member.name}: ${rule.name}`);
        assert.equal(alert.annotations.summary, rule.summary);
        // The link back leads to the agent's own record of the event.
        assert.ok(alert.generatorURL, `${member.name}: no generatorURL`);
        // The event's page; its JSON summary has the same ID.
        assert.ok(
          alert.generatorURL.startsWith(`${member.agent.url}events/`),
          alert.generatorURL,
        );
        const res = await fetch(
          alert.generatorURL.replace(/\/events\//, "/api/v1/events/"),
        );
        const event = await res.json();
        assert.equal(res.status, 200, JSON.stringify(event));
        assert.equal(event.rule, rule.name);
        assert.equal(nsToMs(event.start_ns), Date.parse(alert.startsAt));
      }
    }

    // The hold: each burst alert was still firing well after its event
    // ended, and left Alertmanager's list once the hold had passed.
    for (const member of fleet) {
      const { alert, lastSeenMs, goneMs } = bursts.get(member.name)!;
      const events = (await agentEvents(member.agent)).filter((e) =>
        e.rule === BURST.name
      );
      const alertStart = Date.parse(alert.startsAt);
      // The events the alert covered: from its first until it was gone.
      const covered = events.filter((e) =>
        nsToMs(e.start_ns) >= alertStart && e.end_ns !== null &&
        nsToMs(e.end_ns) <= goneMs!
      );
      assert.ok(
        covered.length > 0,
        `${member.name}: no ended ${BURST.name} event from ${alert.startsAt}: ${
          JSON.stringify(events)
        }`,
      );
      const endMs = Math.max(...covered.map((e) => nsToMs(e.end_ns!)));
      const ended = new Date(endMs).toISOString();
      assert.ok(
        lastSeenMs >= endMs + HOLD_MS - 1_000,
        `${member.name}: last seen firing ${
          lastSeenMs - endMs
        } ms after its event ended at ${ended}; the hold is ${HOLD_MS} ms`,
      );
      // 200 ms: the sampler's clock and this process's may differ a little.
      assert.ok(
        goneMs! >= endMs + HOLD_MS - 200,
        `${member.name}: resolved ${goneMs! - endMs} ms after ${ended}`,
      );
      assert.ok(
        goneMs! <= endMs + HOLD_MS + SLACK_MS,
        `${member.name}: still firing ${goneMs! - endMs} ms after ${ended}`,
      );
    }

    // --- 5: rail-level PromQL over the topology --------------------------
    const deadline5 = Date.now() + 30_000;
    await eventually(
      "Prometheus scrapes all 16 agents",
      () => prometheus!.query(`count(up{job="${JOB}"} == 1)`),
      (r) => r.length === 1 && r[0].value[1] === "16",
      deadline5,
    );
    const perRail = await prometheus.query(
      `count by (rail) (dpu_traceback_topology_info{job="${JOB}"})`,
    );
    assert.deepEqual(
      perRail.map((s) => [s.metric.rail, s.value[1]]).sort(),
      [["1", "4"], ["2", "4"], ["3", "4"], ["4", "4"]],
    );
    const rail2 = fleet.filter((m) => m.labels.rail === "2");
    const onRail2 = await prometheus.query(
      `dpu_traceback_topology_info{job="${JOB}", rail="2"}`,
    );
    assert.deepEqual(
      onRail2.map((s) => s.metric.instance).sort(),
      rail2.map((m) => m.instance).sort(),
    );
    // The shipped recording rules, per rail and plane.
    await eventually(
      "rail:dpu_traceback_agents_up:sum says rail 2 has 4 agents up",
      () => prometheus!.query(`rail:dpu_traceback_agents_up:sum{rail="2"}`),
      (r) =>
        r.length === 1 && r[0].metric.plane === "a" && r[0].value[1] === "4",
      deadline5,
    );
    await eventually(
      `rail:dpu_traceback_rule_active:sum counts rail 2's ${ALWAYS.name}`,
      () => prometheus!.query(`rail:dpu_traceback_rule_active:sum{rail="2"}`),
      // Each of the 4 has ALWAYS active, and BURST maybe.
      (r) => r.length === 1 && [4, 5, 6, 7, 8].includes(Number(r[0].value[1])),
      deadline5,
    );
    // The join docs/fleet.md shows, for one rule across every rail.
    const active = await prometheus.query(
      `sum by (rail) (dpu_traceback_rule_active{job="${JOB}", rule="${ALWAYS.name}"} * on (instance, job) group_left (rail) dpu_traceback_topology_info)`,
    );
    assert.deepEqual(
      active.map((s) => [s.metric.rail, s.value[1]]).sort(),
      [["1", "4"], ["2", "4"], ["3", "4"], ["4", "4"]],
    );

    // --- 3: a restarted Alertmanager has the active alert again ----------
    const stopMs = Date.now();
    await am.stop();
    await am.startAgain();
    const readyMs = Date.now();
    const back = await eventually(
      `every agent's ${ALWAYS.name} alert in the restarted Alertmanager`,
      () => am!.alerts(),
      (alerts) => fleet.every((m) => alertOf(alerts, m, ALWAYS.name)),
      readyMs + RESEND_MS + SLACK_MS,
      100,
    );
    const restartMs = Date.now() - readyMs;
    // A new process (with a fresh data directory), not the old one.
    assert.ok((await am.startedAt()).getTime() >= stopMs - 1_000);
    for (const member of fleet) {
      const alert = alertOf(back, member, ALWAYS.name)!;
      // The same alert: the event's start, not the resend's.
      assert.equal(alert.startsAt, always.get(member.name)!.startsAt);
      assert.deepEqual(alert.labels, always.get(member.name)!.labels);
    }

    // --- 4: Alertmanager down: no sample lost, /metrics as before --------
    const before = await Promise.all(fleet.map(readAgent));
    await am.stop();
    const downMs = Date.now();
    // Every agent notices at its next resend: failed pushes counted, and
    // its active alert kept in the queue.
    await eventually(
      "every agent counts failed pushes and queues its alert",
      () => Promise.all(fleet.map(readAgent)),
      (now) =>
        now.every((r, i) => r.failed > before[i].failed && r.queued >= 1),
      downMs + RESEND_MS + SLACK_MS,
    );
    // Meanwhile, and for 5 s in all, every agent keeps answering scrapes.
    let slowestScrapeMs = 0;
    let during: AgentReading[] = [];
    while (Date.now() < downMs + 5_000) {
      during = await Promise.all(fleet.map(readAgent));
      slowestScrapeMs = Math.max(
        slowestScrapeMs,
        ...during.map((r) => r.scrapeMs),
      );
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(
      slowestScrapeMs < 1_000,
      `a scrape took ${slowestScrapeMs} ms with Alertmanager down`,
    );
    for (const [i, member] of fleet.entries()) {
      const [a, b] = [before[i], during[i]];
      assert.equal(b.lost, a.lost, `${member.name} lost samples`);
      assert.equal(b.families, a.families, `${member.name} /metrics changed`);
      const rate = (b.samples - a.samples) / ((b.atMs - a.atMs) / 1000);
      assert.ok(
        rate > 0.9 * SAMPLES_PER_S && rate < 1.1 * SAMPLES_PER_S,
        `${member.name}: ${Math.round(rate)} samples/s`,
      );
    }
    // Prometheus saw every agent up for the whole outage.
    const upThrough = await prometheus.query(
      `count(min_over_time(up{job="${JOB}"}[${
        Math.floor((Date.now() - downMs) / 1000)
      }s]) == 1)`,
    );
    assert.deepEqual(upThrough.map((s) => s.value[1]), ["16"]);

    // Back up, empty: the queued alerts arrive within one resend interval,
    // as after a quick restart: the senders' retry delay is capped at it
    // (plus its 25 % jitter).
    const outageMs = Date.now() - downMs;
    await am.startAgain();
    const upAgainMs = Date.now();
    await eventually(
      `every agent's ${ALWAYS.name} alert after the outage`,
      () => am!.alerts(),
      (alerts) => fleet.every((m) => alertOf(alerts, m, ALWAYS.name)),
      upAgainMs + 1.25 * RESEND_MS + SLACK_MS,
      100,
    );
    const recoveryMs = Date.now() - upAgainMs;
    const after = await eventually(
      "every agent's queue drained",
      () => Promise.all(fleet.map(readAgent)),
      (now) => now.every((r, i) => r.queued === 0 && r.sent > during[i].sent),
      Date.now() + RESEND_MS + SLACK_MS,
    );
    assert.ok(after.every((r, i) => r.lost === before[i].lost));
    console.log(
      `fleet of ${fleet.length}: started and first bursts resolved in ${startMs} ms; ` +
        `alerts back ${restartMs} ms after a restart, ${recoveryMs} ms after a ${outageMs} ms outage; ` +
        `slowest scrape during the outage ${slowestScrapeMs} ms`,
    );
  } finally {
    await prometheus?.stop();
    stopped = await stopFleet(fleet);
    await am?.stop();
  }
  for (const { name, code, stderr } of stopped) {
    assert.equal(code, 0, `${name}: ${stderr}`);
  }
});
