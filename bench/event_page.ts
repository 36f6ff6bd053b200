/**
 * Serving event pages from a sampling agent (issue 24, item 3): the time
 * to serve the page of a 1 s and of a 60 s event at 10 kHz, found in a
 * log the agent is writing, and what 20 clients loading pages in a loop
 * do to the sampling (samples lost, how late the poll loop ran).
 *
 * The log is written first by the real writer (tests/monitor_log.ts: 3
 * columns, depth 1024), as monitor `nic`; then the agent, run as an
 * operator runs it (`main.ts run -c`, a child process), samples the
 * built-in simulator at 10 kHz into the same log and serves its endpoint.
 * Each client loops over: the 1 s event's page, the 60 s event's page
 * (both kept once drawn: an ended event cannot change), the 1 s event's
 * rows as CSV (drawn every time), and the page of an event that is not
 * there (a lookup every time).
 *
 * ```sh
 * deno run -A bench/event_page.ts [--seconds 30] [--clients 20]
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { eventId, eventPagePath } from "../events/event_link.ts";
import { writeMonitorLog } from "../tests/monitor_log.ts";
import { startedAgent } from "../tests/agent_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "30" },
    clients: { type: "string", default: "20" },
  },
});
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);

const PERIOD = 100_000n; // 10 kHz
const T0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z
const SHORT = {
  rule: 0,
  startNs: T0 + 60n * 10_000n * PERIOD,
  samples: 10_000,
};
const LONG = {
  rule: 1,
  startNs: T0 + 120n * 10_000n * PERIOD,
  samples: 600_000,
};
const RULES = ["rx burst", "rx storm"];

const dir = await Deno.makeTempDir({ prefix: "bench-page-" });
const log = join(dir, "nic-events.log");
await writeMonitorLog({
  path: log,
  monitor: "nic",
  depth: 1024,
  periodNs: PERIOD,
  rules: RULES,
  events: [SHORT, LONG],
});
const logBytes = (await Deno.stat(log)).size;
const config = join(dir, "agent.yaml");
await Deno.writeTextFile(
  config,
  `metrics_window_s: 1
monitors:
  - name: nic
    source: sim
    sample_period_ns: 100000
    depth: 1024
    event_log: ${JSON.stringify(log)}
    columns:
      - { name: c0, data_id: "rx_bytes{port=0}" }
      - { name: c1, data_id: "tx_bytes{port=0}" }
      - { name: c2, data_id: "rx_packets{port=0}" }
`,
);
const agent = await startedAgent([
  "run",
  "-q",
  "--config",
  config,
  "--listen",
  "127.0.0.1:0",
]);
const page = (e: typeof SHORT) =>
  eventPagePath({ monitor: "nic", rule: RULES[e.rule], startNs: e.startNs });

async function timed(path: string): Promise<[number, number, number]> {
  const t = performance.now();
  const res = await agent.get(path);
  const bytes = (await res.arrayBuffer()).byteLength;
  return [performance.now() - t, res.status, bytes];
}

async function metric(name: string): Promise<number> {
  const text = await (await agent.get("/metrics")).text();
  const line = text.split("\n").find((l) =>
    l.startsWith(`dpu_traceback_${name}{`) ||
    l.startsWith(`dpu_traceback_${name} `)
  );
  return line === undefined ? NaN : Number(line.split(" ").at(-1));
}

try {
  await agent.waitReady();
  console.log(
    `log ${
      (logBytes / 1e6).toFixed(1)
    } MB; 1 s event ${SHORT.samples} samples, 60 s event ${LONG.samples} samples, 10 kHz`,
  );
  for (const [name, e] of [["1 s", SHORT], ["60 s", LONG]] as const) {
    const [cold, status, bytes] = await timed(page(e));
    const [warm] = await timed(page(e));
    console.log(
      `page of the ${name} event: ${
        cold.toFixed(0)
      } ms drawn (${status}, ${bytes} bytes), ${warm.toFixed(1)} ms kept`,
    );
  }
  const [rowsMs, , rowsBytes] = await timed(`${page(SHORT)}/rows.csv`);
  console.log(
    `rows.csv of the 1 s event: ${rowsMs.toFixed(0)} ms, ${
      (rowsBytes / 1e6).toFixed(1)
    } MB`,
  );

  const lostBefore = await metric("lost_samples_total");
  const samplesBefore = await metric("samples_total");
  const missing = eventId({
    monitor: "nic",
    rule: RULES[0],
    startNs: SHORT.startNs + 1n,
  });
  const paths = [
    page(SHORT),
    page(LONG),
    `${page(SHORT)}/rows.csv`,
    `/events/${missing}`,
  ];
  const statuses = new Map<number, number>();
  let requests = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = c; performance.now() < end; i++) {
        const res = await agent.get(paths[i % paths.length]);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        requests++;
      }
    }),
  );
  const lost = await metric("lost_samples_total") - lostBefore;
  const samples = await metric("samples_total") - samplesBefore;
  const lateMax = await metric("poll_lateness_max_seconds");
  console.log(
    `${CLIENTS} clients for ${SECONDS} s: ${requests} requests (${
      [...statuses].map(([s, n]) => `${n} × ${s}`).join(", ")
    }); the sampler took ${samples} samples, lost ${lost}; poll lateness max ${
      (lateMax * 1000).toFixed(2)
    } ms`,
  );
} finally {
  const { code, stderr } = await agent.stop();
  if (code !== 0) console.error(`agent exit ${code}: ${stderr}`);
  await Deno.remove(dir, { recursive: true });
}
