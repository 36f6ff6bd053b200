import assert from "node:assert/strict";
import { AgentMetrics } from "../metrics/agent_metrics.ts";
import { testEndpoint } from "./endpoint_test_util.ts";
import { endpointRoutes } from "./routes.ts";
import {
  type FedMonitor,
  fedMonitor,
  mixedConfig,
} from "../metrics/metrics_test_util.ts";
import type { AgentSnapshot } from "./snapshot.ts";
import { mergeLabels } from "../config/topology.ts";
import { PollStats } from "../collectors/poll_stats.ts";
import { ReadStats } from "../collectors/read_stats.ts";

const T0 = 1_700_000_000_000_000_000n; // ns, on a whole second
const MS = 1_000_000n;

/**
 * `fed`'s metrics with `topology` among the agent-wide facts, sorted as
 * the agent's are: by mergeLabels, as resolveTopology does at start.
 */
function withTopology(
  fed: FedMonitor,
  topology?: Record<string, string>,
): AgentMetrics {
  const { info } = fed.metrics;
  return new AgentMetrics(
    [fed.agentMonitor],
    topology === undefined
      ? info
      : { ...info, topology: mergeLabels(topology, {}, "") },
  );
}

async function scrape(metrics: AgentMetrics, accept?: string): Promise<string> {
  await using app = testEndpoint(endpointRoutes(metrics));
  const res = await app.request("/metrics", {
    headers: accept === undefined ? {} : { accept },
  });
  assert.equal(res.status, 200);
  return await res.text();
}

/** The lines of `body` that are samples of `name` (any labels). */
function samplesOf(body: string, name: string): string[] {
  return body.split("\n").filter((l) =>
    l.startsWith(`${name}{`) || l.startsWith(`${name} `)
  );
}

/**
 * The label names of one exposition sample line, read with the format's
 * escapes (`\\`, `\"`, `\n`) so a quote inside a value does not end it.
 */
function labelNames(line: string): string[] {
  const open = line.indexOf("{");
  if (open === -1) return [];
  const names: string[] = [];
  let i = open + 1;
  while (line[i] !== "}") {
    const eq = line.indexOf("=", i);
    names.push(line.slice(i, eq));
    assert.equal(line[eq + 1], '"', line);
    i = eq + 2;
    while (line[i] !== '"') i += line[i] === "\\" ? 2 : 1;
    i++;
    if (line[i] === ",") i++;
  }
  return names;
}

Deno.test("dpu_traceback_topology_info is there without labels when none are configured", async () => {
  const fed = await fedMonitor(1e9);
  try {
    const body = await scrape(withTopology(fed));
    assert.ok(
      body.includes(
        "# TYPE dpu_traceback_topology_info gauge\ndpu_traceback_topology_info 1\n",
      ),
      body,
    );
    assert.deepEqual(samplesOf(body, "dpu_traceback_topology_info"), [
      "dpu_traceback_topology_info 1",
    ]);
    // An empty topology reads the same as none.
    assert.deepEqual(
      samplesOf(
        await scrape(withTopology(fed, {})),
        "dpu_traceback_topology_info",
      ),
      ["dpu_traceback_topology_info 1"],
    );
  } finally {
    await fed.close();
  }
});

Deno.test("dpu_traceback_topology_info carries the topology labels, sorted and escaped, and no instance", async () => {
  const fed = await fedMonitor(1e9);
  try {
    const metrics = withTopology(fed, {
      switch_port: "Ethernet12",
      rack: "r12",
      rail: "3",
      plane: 'a "west" \\ b',
      switch: "leaf-12",
    });
    const body = await scrape(metrics);
    assert.deepEqual(samplesOf(body, "dpu_traceback_topology_info"), [
      'dpu_traceback_topology_info{plane="a \\"west\\" \\\\ b",rack="r12",rail="3",switch="leaf-12",switch_port="Ethernet12"} 1',
    ]);
    // Prometheus's instance (the scrape target) must stay the join key.
    assert.ok(!/dpu_traceback_topology_info\{[^}]*instance=/.test(body));
    // Never onto any other series.
    for (const line of body.split("\n")) {
      if (line.startsWith("#") || line.startsWith("dpu_traceback_topology")) {
        continue;
      }
      assert.ok(!labelNames(line).includes("rack"), line);
    }
    const open = await scrape(
      metrics,
      "application/openmetrics-text;version=1.0.0",
    );
    assert.ok(open.includes("# TYPE dpu_traceback_topology info\n"), open);
    assert.equal(
      samplesOf(open, "dpu_traceback_topology_info").length,
      1,
    );
  } finally {
    await fed.close();
  }
});

Deno.test("with 10 topology labels every series stays under 20 labels once Prometheus adds job and instance", async () => {
  const fed = await fedMonitor(1e9, mixedConfig);
  try {
    // A completed window, so the column families are there too.
    for (let i = 0; i <= 1001; i++) {
      fed.feed(T0 + BigInt(i) * MS, BigInt(i) * 1000n, 700n);
    }
    const topology = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`level_${i}`, "x".repeat(128)]),
    );
    const body = await scrape(withTopology(fed, topology));
    const lines = body.split("\n").filter((l) =>
      l !== "" && !l.startsWith("#")
    );
    assert.ok(lines.some((l) => l.startsWith("dpu_traceback_column_rate{")));
    let widest = 0;
    for (const line of lines) {
      widest = Math.max(widest, labelNames(line).length);
    }
    assert.equal(
      labelNames(samplesOf(body, "dpu_traceback_topology_info")[0]).length,
      10,
    );
    assert.ok(widest + 2 < 20, `a series has ${widest} labels`);
  } finally {
    await fed.close();
  }
});

Deno.test("the snapshot carries the topology", async () => {
  const fed = await fedMonitor(1e9);
  try {
    const get = async (metrics: AgentMetrics): Promise<AgentSnapshot> => {
      await using app = testEndpoint(endpointRoutes(metrics));
      return await (await app.request("/api/v1/snapshot")).json();
    };
    assert.deepEqual((await get(withTopology(fed))).topology, {});
    const snap = await get(withTopology(fed, { rail: "3", rack: "r12" }));
    assert.deepEqual(Object.entries(snap.topology), [
      ["rack", "r12"],
      ["rail", "3"],
    ]);
  } finally {
    await fed.close();
  }
});

Deno.test("/metrics serves a source's read times: a histogram, the last and longest, and the reads longer than the period", async () => {
  const fed = await fedMonitor(1e9);
  try {
    const readStats = new ReadStats(1); // the monitor's 1 ms period
    readStats.record(0.02); // 20 µs
    readStats.record(2.5); // 2.5 ms: longer than the period
    readStats.record(0.3); // 300 µs, the last
    const timed = new AgentMetrics([{
      ...fed.agentMonitor,
      collector: { pollStats: new PollStats(), readStats },
    }], fed.metrics.info);
    const nic = 'monitor="nic"';
    const body = await scrape(timed);
    for (
      const line of [
        "# TYPE dpu_traceback_source_read_seconds histogram",
        `dpu_traceback_source_read_seconds_bucket{${nic},le="0.00001"} 0`,
        `dpu_traceback_source_read_seconds_bucket{${nic},le="0.000025"} 1`,
        `dpu_traceback_source_read_seconds_bucket{${nic},le="0.0005"} 2`,
        `dpu_traceback_source_read_seconds_bucket{${nic},le="0.001"} 2`,
        `dpu_traceback_source_read_seconds_bucket{${nic},le="0.0025"} 3`,
        `dpu_traceback_source_read_seconds_bucket{${nic},le="+Inf"} 3`,
        `dpu_traceback_source_read_seconds_sum{${nic}} 0.00282`,
        `dpu_traceback_source_read_seconds_count{${nic}} 3`,
        "# TYPE dpu_traceback_source_read_last_seconds gauge",
        `dpu_traceback_source_read_last_seconds{${nic}} 0.0003`,
        "# TYPE dpu_traceback_source_read_max_seconds gauge",
        `dpu_traceback_source_read_max_seconds{${nic}} 0.0025`,
        "# TYPE dpu_traceback_source_slow_reads_total counter",
        `dpu_traceback_source_slow_reads_total{${nic}} 1`,
      ]
    ) {
      assert.ok(body.split("\n").includes(line), `no line ${line}\n${body}`);
    }
    const open = await scrape(timed, "application/openmetrics-text");
    assert.ok(
      open.includes("# UNIT dpu_traceback_source_read_seconds seconds\n"),
    );
    assert.ok(
      open.includes(`dpu_traceback_source_slow_reads_total{${nic}} 1\n`),
    );
    // A source that does not time its reads has no such samples.
    const plain = await scrape(fed.metrics);
    for (
      const name of [
        "dpu_traceback_source_read_seconds_count",
        "dpu_traceback_source_read_last_seconds",
        "dpu_traceback_source_read_max_seconds",
        "dpu_traceback_source_slow_reads_total",
      ]
    ) {
      assert.deepEqual(samplesOf(plain, name), [], name);
    }
  } finally {
    await fed.close();
  }
});
