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
 * - Push path: for each alert an agent opened, from its `startsAt` (the
 *   start sample's time, to the ms) to Alertmanager's `updatedAt` when
 *   first seen: when Alertmanager received it, or a later update of it,
 *   so never less than the true figure. The poll's own time is reported
 *   beside it (100 ms coarser).
 * - Scrape path: for each agent and rule, from the start of the first
 *   event after Prometheus first scraped that agent to the
 *   `DpuTracebackRuleFired` alert Prometheus sent for it, received as
 *   above. The rule looks back 5 minutes, so each agent and rule gives one
 *   figure per run.
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

function summary(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return "n 0";
  const f = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
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
      hold: "1s",
    },
  });
  const t0 = Date.now();
  console.log(
    `${AGENTS} agents running; watching Alertmanager for ${SECONDS} s`,
  );
  const lostBefore = await lostSamples(fleet);

  const sightings = new Map<string, Sighting>();
  while (Date.now() < t0 + SECONDS * 1000) {
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

  // --- Push path ---------------------------------------------------------
  const pushed = [...sightings.values()].filter((s) =>
    s.labels.job === undefined && instances.has(s.labels.instance)
  );
  // Every event that opened an alert (it started more than the hold after
  // the last one of its rule ended) must have been seen.
  const endMs = Date.now();
  const alertStarts = new Set(
    pushed.map((s) =>
      `${s.labels.instance} ${s.labels.alertname} ${s.startsMs}`
    ),
  );
  let opening = 0;
  const missed: string[] = [];
  for (const member of fleet) {
    const events = (await agentEvents(member.agent)).reverse();
    const lastEnd = new Map<string, number>();
    for (const e of events) {
      const startMs = nsToMs(e.start_ns);
      const previous = lastEnd.get(e.rule);
      lastEnd.set(e.rule, e.end_ns === null ? Infinity : nsToMs(e.end_ns));
      // 2 s: the hold (1 s), and slack for clocks and the last poll.
      if (previous !== undefined && startMs <= previous + 2_000) continue;
      if (startMs < t0 || startMs > endMs - 2_000) continue;
      opening++;
      if (!alertStarts.has(`${member.instance} ${e.rule} ${startMs}`)) {
        missed.push(`${member.name} ${e.rule} ${e.start}`);
      }
    }
  }
  const pushReceived = pushed.map((s) => s.receivedMs - s.startsMs);
  const pushSeen = pushed.map((s) => s.seenMs - s.startsMs);
  // updatedAt is Alertmanager's clock at receipt (same machine): it can
  // never follow the poll that saw it nor precede the start sample.
  const impossible = pushed.filter((s) =>
    s.receivedMs > s.seenMs || s.receivedMs < s.startsMs
  ).length;

  // --- Scrape path -------------------------------------------------------
  const firstUpMs = await firstScrapes(prometheus.url, SECONDS + 120);
  const scrape: number[] = [];
  let notSeen = 0;
  let before = 0;
  for (const instance of instances) {
    const upMs = firstUpMs.get(instance);
    for (const rule of monitor.rules as { name: string }[]) {
      const starts = pushed.filter((s) =>
        s.labels.instance === instance && s.labels.alertname === rule.name &&
        upMs !== undefined && s.startsMs > upMs
      ).map((s) => s.startsMs).sort((a, b) => a - b);
      const fired = [...sightings.values()].filter((s) =>
        s.labels.alertname === SCRAPE_ALERT &&
        s.labels.instance === instance && s.labels.rule === rule.name
      ).map((s) => s.receivedMs).sort((a, b) => a - b);
      if (starts.length === 0) continue;
      if (fired.length === 0) {
        notSeen++;
      } else if (fired[0] < starts[0]) {
        // Prometheus fired on an event already active at its first scrape.
        before++;
      } else {
        scrape.push(fired[0] - starts[0]);
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
    `events that opened an alert: ${opening}; not seen in Alertmanager: ${missed.length}${
      missed.length === 0 ? "" : ` (${missed.slice(0, 5).join("; ")})`
    }`,
  );
  console.log(
    `push, start sample -> received by Alertmanager: ${summary(pushReceived)}`,
  );
  console.log(
    `sightings whose updatedAt lies outside [startsAt, seen]: ${impossible}`,
  );
  console.log(
    `push, start sample -> seen by the poll:         ${summary(pushSeen)}`,
  );
  console.log(
    `scrape path (${SCRAPE_S} s scrape and evaluation, ${SCRAPE_ALERT}) -> received: ${
      summary(scrape)
    }; ${notSeen} never fired within the run, ${before} fired on an event already active at Prometheus's first scrape (not counted)`,
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
      (wire.received / SCRAPE_S).toFixed(0)
    } B/s at ${SCRAPE_S} s); uncompressed body ${
      new TextEncoder().encode(body).length
    } B`,
  );
  console.log(`samples lost by the fleet during the run: ${lost}`);
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
