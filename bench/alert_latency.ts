/**
 * How fast an event reaches Alertmanager, across a fleet on one machine:
 * the agent's own push against the scrape path, on the same events.
 *
 * A fleet of agents (default 16) runs the demo's `nic` monitor (simulated
 * NIC, 10 kHz, nine rules that each fire once per 20 s cycle), each on its
 * own port with its own topology labels, pushing to one real Alertmanager
 * (Debian's 0.25) with the default resend interval and a 1 s hold, so that
 * every cycle's events open new alerts. One real Prometheus (Debian's
 * 2.42) scrapes them every 15 s, evaluates the shipped rules every 15 s
 * and sends its alerts to the same Alertmanager. This process reads
 * Alertmanager's API (`GET /api/v2/alerts`) every 100 ms.
 *
 * - Push path: for each event that opened an alert (it started more than
 *   the hold after its rule's last event ended) within the window, from
 *   its start sample's time (the alert's `startsAt`, to the ms) to
 *   Alertmanager's `updatedAt` when first seen: when Alertmanager received
 *   it, or a later update of it, so never less than the true figure. The
 *   poll's own time is reported beside it (100 ms coarser). Alertmanager
 *   is still watched for 10 s after the window; an event whose alert never
 *   arrived counts as "never", so it shows in p99 and max.
 * - Scrape path: for each agent and rule, from the start of the first
 *   event after Prometheus first scraped that agent to the
 *   `DpuTracebackRuleFired` alert Prometheus sent for it, received as
 *   above. The rule looks back 5 minutes, so each agent and rule gives one
 *   figure per run; pairs with an event going on at the first scrape are
 *   left out (the rule also fires on `rule_active`).
 *
 * Also: series per agent and bytes per scrape (one scrape as Prometheus
 * makes it, on the wire), and the samples the fleet lost meanwhile.
 *
 * Needs `prometheus` and `prometheus-alertmanager` (Debian packages).
 * Run: deno run -A bench/alert_latency.ts [--agents 16] [--seconds 180]
 * Raw figures go to bench/out/alert_latency.json.
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { ROOT } from "../tests/cli_util.ts";
import {
  type AgentEvent,
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
} from "../tests/e2e/fleet_util.ts";
import { PROMETHEUS_ACCEPT, wireGet } from "./wire.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    agents: { type: "string", default: "16" },
    seconds: { type: "string", default: "180" },
  },
});
const AGENTS = Number(values.agents);
const SECONDS = Number(values.seconds);
if (!Number.isInteger(AGENTS) || AGENTS < 1 || AGENTS > 64) {
  throw new RangeError(`--agents must be 1-64, got "${values.agents}"`);
}
if (!(SECONDS >= 60)) {
  throw new RangeError(
    `--seconds must be at least 60, got "${values.seconds}"`,
  );
}

/** The job name the shipped rules expect (docs/fleet.md). */
const JOB = "dpu-traceback";
const SCRAPE_S = 15;
const POLL_MS = 100;
const RULES = join(ROOT, "deploy/prometheus/dpu-traceback.rules.yml");
const SCRAPE_ALERT = "DpuTracebackRuleFired";
/** The agents' hold: short, so that every cycle's events open alerts. */
const HOLD_MS = 1_000;
/** How long Alertmanager is still watched after the window. */
const TAIL_MS = 10_000;

/** One alert as first seen in Alertmanager. */
interface Sighting {
  readonly labels: Record<string, string>;
  readonly startsMs: number;
  readonly receivedMs: number;
  readonly seenMs: number;
}

/** The nearest-rank percentile of sorted `xs`. */
function percentile(xs: readonly number[], p: number): number {
  return xs[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)];
}

/** n, p50, p99, max and min; an alert never seen is Infinity, "never". */
function summary(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return "n 0";
  const f = (ms: number) =>
    Number.isFinite(ms) ? `${(ms / 1000).toFixed(3)} s` : "never";
  return `n ${s.length}, p50 ${f(percentile(s, 50))}, p99 ${
    f(percentile(s, 99))
  }, max ${f(s.at(-1)!)}, min ${f(s[0])}`;
}

const demo = parse(await Deno.readTextFile(join(ROOT, "deploy/demo.yaml")));
const { name: _name, event_log: _log, ...monitor } = demo.monitors.find((
  m: { name: string },
) => m.name === "nic");

const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-alert-bench-" });
const amDir = join(dir, "alertmanager");
const promDir = join(dir, "prometheus");
await Deno.mkdir(amDir);
await Deno.mkdir(promDir);
const [amPort, promPort, ...agentPorts] = freePorts(2 + AGENTS);
const members = Array.from({ length: AGENTS }, (_, i) => ({
  name: `a${String(i).padStart(2, "0")}`,
  labels: { rack: `r${Math.floor(i / 4) + 1}`, rail: String((i % 4) + 1) },
}));
const instances = new Set(agentPorts.map((p) => `127.0.0.1:${p}`));

let am: Alertmanager | undefined;
let prometheus: FleetPrometheus | undefined;
let fleet: FleetAgent[] = [];
try {
  am = await Alertmanager.start(amDir, amPort);
  // Prometheus first, so that it scrapes the agents from their start.
  prometheus = await startFleetPrometheus({
    dir: promDir,
    port: promPort,
    job: JOB,
    targets: [...instances],
    ruleFiles: [RULES],
    deadline: Date.now() + 30_000,
    intervalS: SCRAPE_S,
    alertmanager: am.url,
  });
  fleet = await startFleet({
    dir,
    members,
    ports: agentPorts,
    monitor,
    alerting: {
      alertmanagers: [{ url: am.url, timeout: "1s" }],
      hold: `${HOLD_MS}ms`,
    },
  });
  const t0 = Date.now();
  console.log(
    `${AGENTS} agents running; watching Alertmanager for ${SECONDS} s`,
  );
  const lostBefore = await lostSamples(fleet);

  const sightings = new Map<string, Sighting>();
  const windowEndMs = t0 + SECONDS * 1000;
  // Looking goes on after the window, so that a slow alert for an event
  // near its end is measured, not left out.
  while (Date.now() < windowEndMs + TAIL_MS) {
    const lookMs = Date.now();
    let alerts: GettableAlert[];
    try {
      alerts = await am.alerts();
    } catch (error) {
      console.error(`GET /api/v2/alerts: ${error}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
      continue;
    }
    const seenMs = Date.now();
    for (const a of alerts) {
      const key = `${a.fingerprint} ${a.startsAt}`;
      if (sightings.has(key)) continue;
      sightings.set(key, {
        labels: a.labels,
        startsMs: Date.parse(a.startsAt),
        receivedMs: Date.parse(a.updatedAt),
        seenMs,
      });
    }
    await new Promise((r) =>
      setTimeout(r, Math.max(0, lookMs + POLL_MS - Date.now()))
    );
  }
  const lostAfter = await lostSamples(fleet);
  // Each agent's events, oldest first: what the figures are counted over.
  const events = new Map<string, AgentEvent[]>();
  for (const member of fleet) {
    events.set(member.instance, (await agentEvents(member.agent)).reverse());
  }

  // --- Push path ---------------------------------------------------------
  // Per event that opened an alert (it started more than the hold after
  // the last event of its rule ended) in the window: its alert's arrival,
  // or Infinity when it never arrived.
  const pushedBy = new Map<string, Sighting>();
  for (const s of sightings.values()) {
    if (s.labels.job !== undefined || !instances.has(s.labels.instance)) {
      continue;
    }
    pushedBy.set(
      `${s.labels.instance} ${s.labels.rule} ${s.startsMs}`,
      s,
    );
  }
  const pushReceived: number[] = [];
  const pushSeen: number[] = [];
  const missed: string[] = [];
  let nearHold = 0;
  let impossible = 0;
  for (const [instance, list] of events) {
    const lastEnd = new Map<string, number>();
    for (const e of list) {
      const startMs = nsToMs(e.start_ns);
      const previous = lastEnd.get(e.rule) ?? -Infinity;
      lastEnd.set(e.rule, e.end_ns === null ? Infinity : nsToMs(e.end_ns));
      if (startMs < t0 || startMs > windowEndMs) continue;
      // Within 500 ms of the hold's end the agent's look (at the hold's end
      // by its own clock) decides whether it opens a new alert: not counted.
      if (Math.abs(startMs - (previous + HOLD_MS)) <= 500) {
        nearHold++;
        continue;
      }
      if (startMs < previous + HOLD_MS) continue;
      const s = pushedBy.get(`${instance} ${e.rule} ${startMs}`);
      if (s === undefined) {
        missed.push(`${instance} ${e.rule} ${e.start}`);
        pushReceived.push(Infinity);
        pushSeen.push(Infinity);
      } else if (s.receivedMs > s.seenMs || s.receivedMs < s.startsMs) {
        // updatedAt is Alertmanager's clock at receipt (same machine): it
        // can neither follow the poll that saw it nor precede the start.
        impossible++;
      } else {
        pushReceived.push(s.receivedMs - startMs);
        pushSeen.push(s.seenMs - startMs);
      }
    }
  }

  // --- Scrape path -------------------------------------------------------
  // Per agent and rule: the first event after Prometheus first scraped the
  // agent, to Prometheus's alert for it. Pairs with an event going on at
  // (or ending within 1 s before) that first scrape are left out (the rule fires on rule_active too, so
  // its alert may be that event's), and so are events in the last 40 s of
  // the window (two scrape and evaluation intervals may not have passed).
  const firstUpMs = await firstScrapes(prometheus.url, SECONDS + 120);
  const scrape: number[] = [];
  let activeAtFirstScrape = 0;
  let before = 0;
  for (const [instance, list] of events) {
    const upMs = firstUpMs.get(instance) ?? Infinity;
    for (const rule of monitor.rules as { name: string }[]) {
      const ofRule = list.filter((e) => e.rule === rule.name);
      // 1 s: a scrape shows the state published up to 100 ms before, from
      // a render shared for 200 ms (endpoint/scrape_cache.ts).
      if (
        ofRule.some((e) =>
          nsToMs(e.start_ns) <= upMs &&
          (e.end_ns === null || nsToMs(e.end_ns) >= upMs - 1_000)
        )
      ) {
        activeAtFirstScrape++;
        continue;
      }
      const next = ofRule.find((e) => nsToMs(e.start_ns) > upMs);
      if (next === undefined) continue;
      const startMs = nsToMs(next.start_ns);
      if (startMs > windowEndMs - 40_000) continue;
      // The agents push under the same alertname and rule: Prometheus's
      // copy is the one with a job label.
      const fired = [...sightings.values()].filter((s) =>
        s.labels.alertname === SCRAPE_ALERT && s.labels.job !== undefined &&
        s.labels.instance === instance && s.labels.rule === rule.name
      ).map((s) => s.receivedMs).sort((a, b) => a - b);
      if (fired.length === 0) {
        scrape.push(Infinity);
      } else if (fired[0] < startMs) {
        before++;
      } else {
        scrape.push(fired[0] - startMs);
      }
    }
  }

  // --- Series and bytes per scrape ---------------------------------------
  const url = new URL(fleet[0].agent.url);
  const wire = await wireGet(
    url.hostname,
    Number(url.port),
    "/metrics",
    PROMETHEUS_ACCEPT,
  );
  const body = await (await fleet[0].agent.get("/metrics", {
    accept: "text/plain",
  })).text();
  const series = body.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  // Prometheus adds job and instance to every series it stores.
  const labelsPerSeries = series.map((l) =>
    2 + [...(/\{(.*)\}/.exec(l)?.[1] ?? "").matchAll(/\w+="/g)].length
  );
  const scraped = await prometheus.query(
    `scrape_samples_scraped{job="${JOB}"}`,
  );
  const perAgent = scraped.map((s) => Number(s.value[1]));

  const lost = lostAfter.reduce((n, x, i) => n + x - lostBefore[i], 0);
  console.log(
    `machine: ${Deno.build.os} ${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs`,
  );
  console.log(
    `run: ${SECONDS} s, ${AGENTS} agents, Alertmanager polled every ${POLL_MS} ms`,
  );
  console.log(
    `events that opened an alert in the window: ${
      pushReceived.length + impossible
    }; never seen in Alertmanager: ${missed.length}${
      missed.length === 0 ? "" : ` (${missed.slice(0, 5).join("; ")})`
    }; updatedAt outside [start, seen] (left out): ${impossible}; within 0.5 s of a hold's end (left out): ${nearHold}`,
  );
  console.log(
    `push, start sample -> received by Alertmanager: ${summary(pushReceived)}`,
  );
  console.log(
    `push, start sample -> seen by the poll:         ${summary(pushSeen)}`,
  );
  console.log(
    `scrape path (${SCRAPE_S} s scrape and evaluation, ${SCRAPE_ALERT}) -> received: ${
      summary(scrape)
    }; left out: ${activeAtFirstScrape} agent/rule pairs with an event going on at Prometheus's first scrape, ${before} fired before the event measured`,
  );
  console.log(
    `series per agent: ${Math.min(...perAgent)}-${
      Math.max(...perAgent)
    } (scrape_samples_scraped over ${perAgent.length} agents); ${series.length} in one exposition; at most ${
      Math.max(...labelsPerSeries)
    } labels per series once stored`,
  );
  console.log(
    `one scrape on the wire (OpenMetrics, gzip): ${wire.sent} B request + ${wire.received} B response (${
      ((wire.sent + wire.received) / SCRAPE_S).toFixed(0)
    } B/s both ways at ${SCRAPE_S} s); the text 0.0.4 body before gzip ${
      new TextEncoder().encode(body).length
    } B`,
  );
  console.log(`samples lost by the fleet during the run: ${lost}`);
  // A reading that cannot be (a receipt outside [start, seen], a
  // scrape-path alert before its event) or an alert never seen means the
  // figures above are not to be trusted: the run fails.
  if (impossible > 0 || before > 0 || missed.length > 0 || lost > 0) {
    console.error(
      `not a valid run: ${impossible} impossible receipts, ${before} scrape-path alerts before their event, ${missed.length} alerts never seen, ${lost} samples lost`,
    );
    Deno.exitCode = 1;
  }
  await Deno.mkdir(join(ROOT, "bench/out"), { recursive: true });
  await Deno.writeTextFile(
    join(ROOT, "bench/out/alert_latency.json"),
    JSON.stringify(
      { agents: AGENTS, seconds: SECONDS, pushReceived, pushSeen, scrape },
      null,
      1,
    ),
  );
} finally {
  await prometheus?.stop();
  const stopped = await stopFleet(fleet);
  await am?.stop();
  for (const s of stopped) {
    if (s.code !== 0) console.error(`${s.name} exited ${s.code}: ${s.stderr}`);
  }
  await Deno.remove(dir, { recursive: true });
}

/**
 * When Prometheus first scraped each agent successfully: the time of its
 * first `up` sample of 1 (a raw sample: the scrape's start).
 */
async function firstScrapes(
  url: string,
  lookBackS: number,
): Promise<Map<string, number>> {
  const query = `up{job="${JOB}"}[${lookBackS}s]`;
  const res = await fetch(
    `${url}/api/v1/query?query=${encodeURIComponent(query)}`,
  );
  const body = await res.json();
  if (body.status !== "success") {
    throw new Error(`${query}: ${JSON.stringify(body)}`);
  }
  const first = new Map<string, number>();
  for (
    const s of body.data.result as {
      metric: Record<string, string>;
      values: [number, string][];
    }[]
  ) {
    const up = s.values.find(([, v]) => v === "1");
    if (up !== undefined) first.set(s.metric.instance, up[0] * 1000);
  }
  return first;
}

/** Each agent's `dpu_traceback_lost_samples_total` for the nic monitor. */
async function lostSamples(agents: readonly FleetAgent[]): Promise<number[]> {
  return await Promise.all(agents.map((m) =>
    eventually(
      `${m.name} /metrics`,
      async () => {
        const text = await (await m.agent.get("/metrics")).text();
        return sampleValue(text, "dpu_traceback_lost_samples_total", {
          monitor: "nic",
        });
      },
      (v) => v !== undefined,
      Date.now() + 10_000,
    ) as Promise<number>
  ));
}
