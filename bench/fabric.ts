/**
 * Fabric traffic of the metrics endpoint against the alternatives, for the
 * demo config (sim source, 10 columns at 10 kHz):
 *
 * - ours: one scrape as Prometheus makes it (OpenMetrics, gzip accepted),
 *   counted in bytes on the wire (request and response, headers included),
 *   every 15 s;
 * - raw: every sample shipped as it is sampled (8-byte timestamp and 8
 *   bytes per column), the stream this agent exists to avoid;
 * - DTS-like: every counter's last value exported once a second in the
 *   Prometheus text format (what DOCA Telemetry Service does), also on the
 *   wire with gzip.
 *
 * Run: deno run -A bench/fabric.ts [--window SECONDS]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startedAgent } from "../tests/agent_util.ts";
import { PROMETHEUS_ACCEPT, wireGet } from "./wire.ts";

const SCRAPE_INTERVAL_S = 15;

/** gzip size of `text`, as a DTS-like exporter would send it. */
async function gzipSize(text: string): Promise<number> {
  const stream = new Blob([text]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return (await new Response(stream).arrayBuffer()).byteLength;
}

const { values } = parseArgs({
  args: Deno.args,
  options: { window: { type: "string", default: "15" } },
});

const agent = await startedAgent([
  "demo",
  "-q",
  "--duration",
  "600",
  "--metrics-window",
  values.window,
]);
try {
  await agent.waitReady();
  // The first window is partial (the agent starts mid-window): wait for a
  // whole one, so the scrape and the sample rate are what a long run sees.
  await agent.waitFor(
    "/api/v1/snapshot",
    (t) => (JSON.parse(t).monitors[0].window?.sequence ?? 0) >= 2,
    4 * Number(values.window) * 1000 + 10_000,
  );
  const url = new URL(agent.url);
  const port = Number(url.port);
  const om = await wireGet(url.hostname, port, "/metrics", PROMETHEUS_ACCEPT);
  const text = await wireGet(url.hostname, port, "/metrics", "text/plain");
  const plainBody = await (await agent.get("/metrics")).text();
  const snapshot = await (await agent.get("/api/v1/snapshot")).json();
  const nic = snapshot.monitors[0];
  const columns = nic.window.columns as { name: string; last: number }[];
  const windowSamples = nic.window.samples as number;
  const windowS = Number(values.window);
  const samplesPerS = windowSamples / windowS;

  const rawPerS = samplesPerS * 8 * (1 + columns.length);
  // DTS-like: one line per counter with its device label, once a second.
  const dtsText = columns.map((c) =>
    `# TYPE ${c.name} counter\n${c.name}{device="0000:03:00.0",source="diag"} ${c.last}\n`
  ).join("");
  const dtsPerS = await gzipSize(dtsText) + (om.received - omBodyBytes(om)) +
    om.sent;

  const oursPerS = (om.sent + om.received) / SCRAPE_INTERVAL_S;
  const row = (name: string, perS: number) =>
    `| ${name} | ${Math.round(perS).toLocaleString("en-US")} | ${
      (rawPerS / perS).toFixed(0)
    }x |`;
  console.log(
    `demo config: ${columns.length} columns, ${samplesPerS} samples/s, window ${windowS} s, scrape every ${SCRAPE_INTERVAL_S} s`,
  );
  console.log(
    `scrape (OpenMetrics, gzip): ${om.sent} B request + ${om.received} B response; ${om.status}; ${
      om.headers.toLowerCase().includes("content-encoding: gzip")
        ? "gzip"
        : "not compressed"
    }`,
  );
  console.log(
    `scrape (text 0.0.4, gzip): ${text.received} B response; uncompressed body ${
      new TextEncoder().encode(plainBody).length
    } B`,
  );
  console.log("| stream | bytes/s | raw / this |");
  console.log("| --- | ---: | ---: |");
  console.log(row("raw samples", rawPerS));
  console.log(row("DTS-like: every counter's last value each second", dtsPerS));
  console.log(
    row(`this agent: one scrape per ${SCRAPE_INTERVAL_S} s`, oursPerS),
  );
} finally {
  await agent.stop();
}

/** Response body bytes: what follows the blank line after the headers. */
function omBodyBytes(r: { received: number; headers: string }): number {
  return r.received - r.headers.length - 4;
}
