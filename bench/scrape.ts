/**
 * Scrape cost under a storm: 50 concurrent scrapers (wrk, loopback,
 * bounded in time, Prometheus's Accept and Accept-Encoding headers)
 * against an agent ingesting the demo config at 10 kHz, and the poll
 * loop's lateness during each storm against an equally long quiet period
 * before them. Two storms: paced (each scraper 10 times a second, 500
 * scrapes/s in all: far more than any real set of Prometheus servers) and
 * saturating (each scraper sends its next request as soon as the last
 * answer arrives: as many scrapes as the agent can serve).
 *
 * Lateness comes from the agent's own histogram
 * (dpu_traceback_poll_lateness_seconds, read from /metrics between the
 * phases), so the figures are bucket bounds, not exact percentiles.
 *
 * Needs wrk (Debian: apt-get install wrk).
 * Run: deno run -A bench/scrape.ts [--seconds 15] [--connections 50]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { LATENESS_BOUNDS_S } from "../collectors/poll_stats.ts";
import { type StartedAgent, startedAgent } from "../tests/agent_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "15" },
    connections: { type: "string", default: "50" },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);

/** Cumulative lateness bucket counts of the nic monitor, from /metrics. */
async function lateness(agent: StartedAgent): Promise<number[]> {
  const text = await (await agent.get("/metrics", { accept: "text/plain" }))
    .text();
  const counts: number[] = [];
  for (const bound of [...LATENESS_BOUNDS_S.map(String), "+Inf"]) {
    const series =
      `dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="${bound}"}`;
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    if (line === undefined) throw new Error(`no series ${series}`);
    counts.push(Number(line.slice(series.length + 1)));
  }
  return counts;
}

/** What share of polls between two readings were later than each bound. */
function describe(before: number[], after: number[]): string {
  const polls = after.at(-1)! - before.at(-1)!;
  const parts = [`${polls} polls`];
  for (const [i, bound] of LATENESS_BOUNDS_S.entries()) {
    if (![0.001, 0.002, 0.005, 0.01, 0.025].includes(bound)) continue;
    const within = after[i] - before[i];
    parts.push(`> ${bound * 1000} ms: ${polls - within}`);
  }
  // The smallest bound that covers 99% of the polls.
  const p99 = LATENESS_BOUNDS_S.find((_, i) =>
    after[i] - before[i] >= 0.99 * polls
  );
  parts.push(`p99 <= ${p99 === undefined ? "> 1 s" : `${p99 * 1000} ms`}`);
  return parts.join(", ");
}

const agent = await startedAgent([
  "demo",
  "-q",
  "--duration",
  String(seconds * 4 + 60),
  "--metrics-window",
  "1",
]);
try {
  await agent.waitReady();
  await agent.waitFor("/metrics", (t) => t.includes("window_samples{"));
  const start = await lateness(agent);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const quietEnd = await lateness(agent);
  console.log(
    `poll lateness, quiet ${seconds} s: ${describe(start, quietEnd)}`,
  );
  const paced = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(paced, "function delay()\n  return 100\nend\n");
  let before = quietEnd;
  const storms: [string, string | undefined][] = [
    ["paced", paced],
    ["saturating", undefined],
  ];
  for (const [name, script] of storms) {
    const wrk = await new Deno.Command("wrk", {
      args: [
        "-t2",
        `-c${connections}`,
        `-d${seconds}s`,
        "--latency",
        ...(script === undefined ? [] : ["-s", script]),
        "-H",
        "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        "-H",
        "Accept-Encoding: gzip",
        new URL("metrics", agent.url).href,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const after = await lateness(agent);
    const report = new TextDecoder().decode(wrk.stdout);
    if (wrk.code !== 0) {
      throw new Error(`wrk failed: ${new TextDecoder().decode(wrk.stderr)}`);
    }
    const percentile = (p: string) =>
      new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(report)?.[1];
    const rps = /Requests\/sec:\s+(\S+)/.exec(report)?.[1];
    const errors = /Non-2xx or 3xx responses: (\d+)/.exec(report)?.[1] ?? "0";
    console.log(
      `${name} storm: wrk -t2 -c${connections} -d${seconds}s: p50 ${
        percentile("50")
      }, p99 ${percentile("99")}, ${rps} requests/s, non-2xx ${errors}`,
    );
    console.log(
      `poll lateness, ${name} storm ${seconds} s: ${describe(before, after)}`,
    );
    before = after;
  }
  await Deno.remove(paced);
} finally {
  await agent.stop();
}
