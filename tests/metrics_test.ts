/**
 * The metrics endpoint of a running agent (the demo config on the sim
 * source), scraped over HTTP as Prometheus would.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { errorLines, runMain, spawnMain } from "./cli_util.ts";
import { startedAgent } from "./agent_util.ts";
import { tempDir } from "./temp_dir.ts";
import { loadConfig } from "../config/load.ts";
import { formatLabels } from "../endpoint/exposition.ts";

const DEMO_CONFIG = new URL("../deploy/demo.yaml", import.meta.url).pathname;

Deno.test("a running agent serves rates, bursts, rules and health over HTTP", async () => {
  await using dir = await tempDir();
  const agent = await startedAgent([
    "demo",
    "-q",
    "--event-log",
    join(dir.path, "events.log"),
    "--metrics-window",
    "1",
    "--duration",
    "60",
  ]);
  try {
    await agent.waitReady();
    // The first window is partial (the agent starts mid-second); the
    // second, about two seconds after start, is whole.
    const body = await agent.waitFor(
      "/metrics",
      (text) =>
        /dpu_traceback_window_samples\{[^}]*\} (9999|10000|10001)\n/.test(text),
    );
    const value = (series: string): number => {
      const line = body.split("\n").find((l) => l.startsWith(`${series} `));
      assert.ok(line !== undefined, `no series ${series}`);
      return Number(line.slice(series.length + 1));
    };
    const nic = 'monitor="nic"';
    // 10 kHz for a 1 s window. Window edges are compared in floating point
    // (256 ns resolution today), so a sample right at an edge may count in
    // the neighbouring window.
    assert.ok(
      Math.abs(value(`dpu_traceback_window_samples{${nic}}`) - 10_000) <= 1,
    );
    assert.ok(value(`dpu_traceback_samples_total{${nic}}`) >= 10_000);
    assert.equal(value(`dpu_traceback_source_up{${nic}}`), 1);
    // The scripted traffic: ~25 GB/s steady, nearly 0 in the quiet spell.
    const rx = value(
      `dpu_traceback_column_rate{${nic},column="port_0_rx_bytes"}`,
    );
    assert.ok(rx >= 0 && rx < 60e9, `rx rate ${rx}`);
    const max = value(
      `dpu_traceback_column_rate_max{${nic},column="port_0_rx_bytes"}`,
    );
    assert.ok(max >= rx, `max ${max} below mean ${rx}`);
    // The latency column is a gauge: min <= mean <= max.
    const lat = (s: string) =>
      value(
        `dpu_traceback_column_${s}{${nic},column="pcie_max_read_latency_ns"}`,
      );
    assert.ok(lat("min") <= lat("mean") && lat("mean") <= lat("max"));
    // Every rule of the demo config has its series: state, pending, the
    // peak of its last event (NaN before one), and its severity.
    const demoRules = (await loadConfig(DEMO_CONFIG)).monitors[0].rules;
    assert.ok(demoRules.length > 0);
    for (const rule of demoRules) {
      const labels = formatLabels([["monitor", "nic"], ["rule", rule.name]]);
      for (const family of ["active", "pending"]) {
        const state = value(`dpu_traceback_rule_${family}${labels}`);
        assert.ok(state === 0 || state === 1, `${family} ${state}`);
      }
      const peak = value(`dpu_traceback_rule_last_event_peak${labels}`);
      const activations = value(
        `dpu_traceback_rule_activations_total${labels}`,
      );
      assert.ok(
        activations === 0 ? Number.isNaN(peak) : !Number.isNaN(peak),
        `${rule.name}: peak ${peak} after ${activations} events`,
      );
      const info = body.split("\n").find((l) =>
        l.startsWith(`dpu_traceback_rule_info${labels.slice(0, -1)},`)
      );
      assert.ok(
        info?.includes(`,severity="${rule.severity}"`),
        `${rule.name}: ${info}`,
      );
    }
    assert.ok(value(`dpu_traceback_poll_lateness_seconds_count{${nic}}`) > 10);

    const snapshot = await (await agent.get("/api/v1/snapshot")).json();
    assert.equal(snapshot.monitors[0].name, "nic");
    assert.equal(snapshot.monitors[0].up, true);
    assert.deepEqual(
      snapshot.monitors[0].rules.map((
        r: { name: string; severity: string; pending: unknown },
      ) => [r.name, r.severity, typeof r.pending]),
      demoRules.map((r) => [r.name, r.severity, "boolean"]),
    );

    // The events the sampling thread journaled, from the endpoint's thread.
    const listed = await agent.get("/api/v1/events?limit=1000");
    assert.equal(listed.status, 200);
    const { events } = await listed.json();
    const later = await (await agent.get("/api/v1/snapshot")).json();
    const started = later.monitors[0].rules.reduce(
      (sum: number, r: { activations: number }) => sum + r.activations,
      0,
    );
    assert.ok(events.length <= started, `${events.length} of ${started}`);
    const names = new Set(demoRules.map((r) => r.name));
    for (const [i, e] of events.entries()) {
      assert.ok(names.has(e.rule), e.rule);
      // Newest first: by start, two rules may start on one sample.
      assert.ok(
        i === 0 || BigInt(e.start_ns) <= BigInt(events[i - 1].start_ns),
      );
      assert.ok(e.state === "open" ? e.end === null : e.end >= e.start);
    }
    if (events.length > 0) {
      const one = await (await agent.get(`/api/v1/events/${events[0].id}`))
        .json();
      assert.match(
        one.review,
        /^dpu-traceback review .+ --event \S+Z --rule='/,
      );
    }
    assert.equal((await agent.get("/api/v1/events?limit=0")).status, 400);

    const om = await agent.get("/metrics", {
      accept: "application/openmetrics-text; version=1.0.0",
    });
    assert.match(om.headers.get("content-type") ?? "", /openmetrics-text/);
    assert.ok((await om.text()).endsWith("# EOF\n"));
  } finally {
    const { code } = await agent.stop();
    assert.equal(code, 0);
  }
});

Deno.test("--listen off serves nothing; a port in use is one line and exit 1", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const blocker = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const child = spawnMain([
      "demo",
      "-q",
      "--event-log",
      log,
      "--duration",
      "5",
      "--listen",
      `127.0.0.1:${blocker.addr.port}`,
    ]);
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1);
    assert.match(
      stderr,
      new RegExp(
        `^dpu-traceback: Cannot serve metrics on 127\\.0\\.0\\.1:${blocker.addr.port}: the address is in use .*\\n$`,
      ),
    );
  } finally {
    blocker.close();
  }
  const off = spawnMain([
    "demo",
    "-q",
    "--event-log",
    log,
    "--duration",
    "1",
    "--listen",
    "off",
  ]);
  const out = await off.output();
  assert.equal(out.code, 0);
  assert.ok(!new TextDecoder().decode(out.stderr).includes("metrics on"));
});

Deno.test("a web config that cannot be used is a configuration error: one line, exit 2", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    `${dir.path}/web.yml`,
    "tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n",
  );
  for (
    const args of [
      ["demo", "-q", "--web-config-file", `${dir.path}/web.yml`],
      ["check-config", `${dir.path}/c.yaml`],
    ]
  ) {
    await Deno.writeTextFile(
      `${dir.path}/c.yaml`,
      `web_config_file: ${dir.path}/web.yml\nmonitors: [{name: nic, source: sim, columns: [{name: a, data_id: "0x1"}]}]\n`,
    );
    const result = await runMain(args);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, "");
    assert.deepEqual(errorLines(result.stderr), [
      `dpu-traceback: Cannot load web config ${dir.path}/web.yml: tls_server_config.cert_file: no such file ${dir.path}/missing.crt`,
    ]);
  }
});
