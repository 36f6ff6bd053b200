/**
 * End to end with a real Prometheus: `promtool check metrics` on a scrape,
 * then a Prometheus on loopback scraping two agents (plain HTTP, and TLS
 * with basic auth from an exporter-toolkit web config), checked through
 * Prometheus's own HTTP API with PromQL.
 *
 * Needs `prometheus`, `promtool` and `openssl` on PATH (Debian:
 * `apt-get install prometheus openssl`); `.ci/run` installs them. Run with
 * `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { type StartedAgent, startedAgent } from "../agent_util.ts";
import { tempDir } from "../temp_dir.ts";
import { loadConfig } from "../../config/load.ts";
import { startPrometheus } from "./prometheus_util.ts";

const NEEDS = "install it with: apt-get install prometheus openssl";

async function tool(name: string, args: string[], stdin?: string) {
  let child;
  try {
    child = new Deno.Command(name, {
      args,
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${name} is not on PATH; ${NEEDS}`);
    }
    throw error;
  }
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** One PromQL instant query; returns the result vector. */
async function query(
  base: string,
  promql: string,
): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(
    `${base}/api/v1/query?query=${encodeURIComponent(promql)}`,
  );
  const body = await res.json();
  assert.equal(body.status, "success", JSON.stringify(body));
  return body.data.result;
}

/** Polls `promql` until `accept` holds for its result (at most 60 s). */
async function eventually(
  base: string,
  promql: string,
  accept: (values: number[]) => boolean,
): Promise<number[]> {
  const end = Date.now() + 60_000;
  let last: number[] = [];
  while (Date.now() < end) {
    last = (await query(base, promql)).map((r) => Number(r.value[1]));
    if (accept(last)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${promql} never held; last result ${JSON.stringify(last)}`);
}

Deno.test("promtool accepts /metrics, and a real Prometheus scrapes it plainly and over TLS with basic auth", async () => {
  await using dir = await tempDir("dpu-traceback-e2e-");
  const agents: StartedAgent[] = [];
  let prometheus: Deno.ChildProcess | undefined;
  try {
    // A test CA, and a certificate it signs for 127.0.0.1 (TLS clients
    // refuse a CA certificate used as the server's own).
    const cert = `${dir.path}/agent.crt`;
    const key = `${dir.path}/agent.key`;
    const caCert = `${dir.path}/ca.crt`;
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    for (
      const args of [
        ["req", "-x509", ...ec, "-nodes", "-days", "1", "-subj", "/CN=e2e CA"]
          .concat(["-keyout", `${dir.path}/ca.key`, "-out", caCert]),
        ["req", ...ec, "-nodes", "-subj", "/CN=127.0.0.1"]
          .concat(["-keyout", key, "-out", `${dir.path}/agent.csr`]),
        ["x509", "-req", "-in", `${dir.path}/agent.csr`, "-CA", caCert]
          .concat([
            "-CAkey",
            `${dir.path}/ca.key`,
            "-CAcreateserial",
            "-days",
            "1",
          ])
          .concat(["-extfile", `${dir.path}/ext.cnf`, "-out", cert]),
      ]
    ) {
      await Deno.writeTextFile(
        `${dir.path}/ext.cnf`,
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n",
      );
      const made = await tool("openssl", args);
      assert.equal(made.code, 0, made.stderr);
    }
    const password = "scrape: s3cret";
    await Deno.writeTextFile(
      `${dir.path}/web.yml`,
      `tls_server_config:
  cert_file: agent.crt
  key_file: agent.key
basic_auth_users:
  prometheus: "${bcrypt.hashSync(password, 10)}"
`,
    );

    const common = ["demo", "-q", "--metrics-window", "1", "--duration", "300"];
    const plain = await startedAgent([
      ...common,
      "--event-log",
      `${dir.path}/a.log`,
    ]);
    agents.push(plain);
    const ca = await Deno.readTextFile(caCert);
    const secure = await startedAgent(
      [
        ...common,
        "--event-log",
        `${dir.path}/b.log`,
        "--web-config-file",
        `${dir.path}/web.yml`,
      ],
      {
        client: Deno.createHttpClient({ caCerts: [ca] }),
        authorization: `Basic ${btoa(`prometheus:${password}`)}`,
      },
    );
    agents.push(secure);
    assert.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+\/$/);

    // promtool lints what Prometheus will parse.
    const text = await plain.waitFor(
      "/metrics",
      (t) => t.includes("dpu_traceback_window_samples{"),
    );
    const lint = await tool("promtool", ["check", "metrics"], text);
    assert.equal(lint.code, 0, `promtool: ${lint.stdout}${lint.stderr}`);

    // Without credentials the TLS agent refuses.
    const anonymous = await fetch(new URL("metrics", secure.url), {
      client: Deno.createHttpClient({ caCerts: [ca] }),
    });
    await anonymous.body?.cancel();
    assert.equal(anonymous.status, 401);

    const port = freePort();
    const hostOf = (url: string) => new URL(url).host;
    await Deno.writeTextFile(
      `${dir.path}/prometheus.yml`,
      `global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: plain
    static_configs: [{ targets: ["${hostOf(plain.url)}"] }]
  - job_name: secure
    scheme: https
    tls_config:
      ca_file: ${caCert}
    basic_auth:
      username: prometheus
      password: "${password}"
    static_configs: [{ targets: ["${hostOf(secure.url)}"] }]
`,
    );
    prometheus = startPrometheus(dir.path, port, NEEDS);
    const base = `http://127.0.0.1:${port}`;
    // Prometheus takes a moment to listen.
    const end = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`${base}/-/ready`);
        await res.body?.cancel();
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error("prometheus never became ready");
      await new Promise((r) => setTimeout(r, 250));
    }

    // The demo config the agents run, so the counts follow it.
    const demo = (await loadConfig("deploy/demo.yaml")).monitors[0];
    const counters = demo.columns.filter((c) => c.kind === "counter").length;
    const gauges = demo.columns.length - counters;
    for (const job of ["plain", "secure"]) {
      await eventually(base, `up{job="${job}"}`, (v) => v[0] === 1);
      const sel = `job="${job}",monitor="nic"`;
      // The sim samples at 10 kHz: a whole 1 s window holds 10,000
      // samples (give or take one at an edge, see tests/metrics_test.ts).
      await eventually(
        base,
        `dpu_traceback_window_samples{${sel}}`,
        (v) => Math.abs(v[0] - 10_000) <= 1,
      );
      // Every rule and every column of the demo config is a series.
      await eventually(
        base,
        `count(dpu_traceback_rule_active{${sel}})`,
        (v) => v[0] === demo.rules.length,
      );
      await eventually(
        base,
        `count(dpu_traceback_column_rate{${sel}})`,
        (v) => v[0] === counters,
      );
      await eventually(
        base,
        `count(dpu_traceback_column_max{${sel}})`,
        (v) => v[0] === gauges,
      );
      // Prometheus's own rate() over the agent's counter agrees with the
      // sampling rate, within what 1 s scrapes on a busy machine allow.
      await eventually(
        base,
        `rate(dpu_traceback_samples_total{${sel}}[5s])`,
        (v) => v.length === 1 && v[0] > 8000 && v[0] < 12_000,
      );
      // The burst statistic is never below the window's mean rate.
      await eventually(
        base,
        `count(dpu_traceback_column_rate_max{${sel}} >= dpu_traceback_column_rate{${sel}})`,
        (v) => v[0] === counters,
      );
      // Each rule's pending state and last peak are series Prometheus
      // stores (a peak is NaN until the rule's first event), and a rule's
      // info carries its severity for alert routing.
      for (const family of ["rule_pending", "rule_last_event_peak"]) {
        await eventually(
          base,
          `count(dpu_traceback_${family}{${sel}})`,
          (v) => v[0] === demo.rules.length,
        );
      }
      await eventually(
        base,
        `count(dpu_traceback_rule_info{${sel},severity="critical"})`,
        (v) =>
          v[0] === demo.rules.filter((r) => r.severity === "critical").length,
      );
      const build = await query(
        base,
        `dpu_traceback_build_info{job="${job}"}`,
      );
      assert.equal(build.length, 1);
      assert.equal(build[0].metric.version, "0.1.0");
    }
  } finally {
    if (prometheus !== undefined) {
      prometheus.kill("SIGTERM");
      await prometheus.status;
    }
    for (const agent of agents) {
      const { code, stderr } = await agent.stop();
      assert.equal(code, 0, stderr);
    }
  }
});
