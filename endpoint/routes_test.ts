import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { EventJournal } from "../events/event_journal.ts";
import { BasicAuthVerifier } from "./basic_auth.ts";
import { testEndpoint } from "./endpoint_test_util.ts";
import { endpointRoutes, type RoutesOptions } from "./routes.ts";
import type { AgentMetrics } from "../metrics/agent_metrics.ts";
import { fedMonitor, nicConfig } from "../metrics/metrics_test_util.ts";
import type { AgentSnapshot } from "./snapshot.ts";

const T0 = 1_700_000_000_000_000_000n; // ns, on a whole second
const MS = 1_000_000n;
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/**
 * 2001 samples 1 ms apart in 1 s windows: the second window (samples
 * 1000..1999, baseline 999) is the last completed one when sample 2000
 * arrives. rx rises 1000 a sample, 10,000 once (sample 1500); lat is 100
 * but 900 for samples 1200..1210.
 */
async function scenario() {
  const fed = await fedMonitor(1e9);
  let rx = 0n;
  for (let i = 0; i <= 2000; i++) {
    rx += i === 0 ? 0n : i === 1500 ? 10_000n : 1000n;
    const lat = i >= 1200 && i <= 1210 ? 900n : 100n;
    fed.feed(T0 + BigInt(i) * MS, rx, lat);
  }
  return fed;
}

/** The routes behind a real server, as the endpoint's thread serves them. */
function serveRoutes(
  metrics: AgentMetrics,
  options: RoutesOptions & { headers?: ReadonlyMap<string, string> } = {},
) {
  return testEndpoint(endpointRoutes(metrics, options), {
    headers: options.headers,
  });
}

function lineOf(body: string, prefix: string): string {
  const line = body.split("\n").find((l) => l.startsWith(`${prefix} `));
  assert.ok(line !== undefined, `no line for ${prefix}`);
  return line;
}

Deno.test("GET /metrics renders the last completed window exactly", async () => {
  const fed = await scenario();
  try {
    await using app = serveRoutes(fed.metrics);
    const res = await app.request("/metrics");
    assert.equal(res.status, 200);
    assert.equal(
      res.headers.get("content-type"),
      "text/plain; version=0.0.4; charset=utf-8",
    );
    const body = await res.text();
    const nic = 'monitor="nic"';
    const expected: [string, string][] = [
      [`dpu_traceback_samples_total{${nic}}`, "2001"],
      [`dpu_traceback_window_samples{${nic}}`, "1000"],
      [`dpu_traceback_window_end_timestamp_seconds{${nic}}`, "1700000002"],
      [`dpu_traceback_column_rate{${nic},column="rx"}`, "1009000"],
      [`dpu_traceback_column_rate_min{${nic},column="rx"}`, "1000000"],
      // The one-sample burst: 10,000 in 1 ms, invisible in the mean rate.
      [`dpu_traceback_column_rate_max{${nic},column="rx"}`, "10000000"],
      [`dpu_traceback_column_total{${nic},column="rx"}`, "2008000"],
      [`dpu_traceback_column_value{${nic},column="lat"}`, "100"],
      [`dpu_traceback_column_min{${nic},column="lat"}`, "100"],
      [`dpu_traceback_column_max{${nic},column="lat"}`, "900"],
      [`dpu_traceback_column_mean{${nic},column="lat"}`, "108.8"],
      [`dpu_traceback_rule_active{${nic},rule="lat \\"high\\""}`, "0"],
      [
        `dpu_traceback_rule_activations_total{${nic},rule="lat \\"high\\""}`,
        "1",
      ],
      [`dpu_traceback_rule_activations_total{${nic},rule="rx\\\\total"}`, "1"],
      [`dpu_traceback_rule_active{${nic},rule="rx\\\\total"}`, "1"],
      [`dpu_traceback_events_total{${nic}}`, "2"],
      [`dpu_traceback_ring_samples{${nic}}`, "4"],
      [
        `dpu_traceback_build_info{version="0.1.0",deno="${Deno.version.deno}"}`,
        "1",
      ],
    ];
    for (const [series, value] of expected) {
      assert.equal(lineOf(body, series), `${series} ${value}`);
    }
    // A column appears only in the families of its kind.
    assert.ok(
      !body.includes('dpu_traceback_column_rate{monitor="nic",column="lat"}'),
    );
    assert.ok(
      !body.includes('dpu_traceback_column_max{monitor="nic",column="rx"}'),
    );
    // Rule thresholds are exact u64 text, from the config.
    assert.ok(body.includes(
      'dpu_traceback_rule_info{monitor="nic",rule="rx\\\\total",column="rx",comparison_type="gt",comparison_value="2000000",severity="warning"} 1',
    ));
  } finally {
    await fed.close();
  }
});

Deno.test("GET /metrics speaks OpenMetrics when Prometheus asks for it", async () => {
  const fed = await scenario();
  try {
    await using app = serveRoutes(fed.metrics);
    const res = await app.request("/metrics", {
      headers: { accept: PROMETHEUS_ACCEPT },
    });
    assert.equal(
      res.headers.get("content-type"),
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
    const body = await res.text();
    assert.ok(body.endsWith("# EOF\n"));
    assert.ok(body.includes("# TYPE dpu_traceback_samples counter\n"));
    assert.ok(
      body.includes('dpu_traceback_samples_total{monitor="nic"} 2001\n'),
    );
    assert.ok(body.includes("# TYPE dpu_traceback_build info\n"));
  } finally {
    await fed.close();
  }
});

Deno.test("no column series before the first window completes", async () => {
  const fed = await fedMonitor(1e9);
  try {
    fed.feed(T0, 5n, 7n);
    await using app = serveRoutes(fed.metrics);
    const body = await (await app.request("/metrics"))
      .text();
    assert.ok(body.includes('dpu_traceback_samples_total{monitor="nic"} 1\n'));
    assert.ok(!body.includes("dpu_traceback_column_rate{"));
    assert.ok(!body.includes("dpu_traceback_window_samples{"));
    const snap: AgentSnapshot = await (await app
      .request("/api/v1/snapshot")).json();
    assert.equal(snap.monitors[0].window, null);
  } finally {
    await fed.close();
  }
});

Deno.test("GET /api/v1/snapshot carries the same aggregates as JSON", async () => {
  const fed = await scenario();
  try {
    await using app = serveRoutes(fed.metrics);
    const res = await app.request("/api/v1/snapshot");
    assert.equal(res.status, 200);
    const snap: AgentSnapshot = await res.json();
    const nic = snap.monitors[0];
    assert.equal(snap.agent.version, "0.1.0");
    assert.equal(snap.agent.window_seconds, 1);
    assert.equal(nic.samples, 2001);
    assert.equal(nic.events, 2);
    assert.deepEqual(nic.window?.columns, [
      {
        name: "rx",
        kind: "counter",
        rate: 1009000,
        rate_min: 1e6,
        rate_max: 1e7,
        rate_mean: 1009000,
        increase: 1009000,
        resets: 0,
        last: 2008000,
      },
      {
        name: "lat",
        kind: "gauge",
        last: 100,
        min: 100,
        max: 900,
        mean: 108.8,
      },
    ]);
    assert.equal(nic.window?.start, "2023-11-14T22:13:21.000Z");
    assert.equal(nic.window?.samples, 1000);
    assert.deepEqual(nic.rules.map((r) => [r.name, r.activations]), [
      ['lat "high"', 1],
      ["rx\\total", 1],
    ]);
    assert.equal(nic.rules[1].comparison_value, "2000000");
    assert.ok(nic.rules[0].last_transition !== null);
    assert.equal(nic.events_log.write_errors, 0);
  } finally {
    await fed.close();
  }
});

Deno.test("GET /readyz follows the data, not just the process", async () => {
  const fed = await fedMonitor(1e9);
  try {
    let now = 1_700_000_000_000;
    await using app = serveRoutes(fed.metrics, { now: () => now });
    const ready = async () => {
      const res = await app.request("/readyz");
      return [res.status, await res.text()];
    };
    assert.deepEqual(await ready(), [
      503,
      "not ready\nnic: no data yet after 0 ns\n",
    ]);
    fed.feed(T0, 1n, 1n);
    fed.metrics.tick(now);
    assert.deepEqual(await ready(), [200, "ready\n"]);
    // No new sample for longer than 10 periods (at least 1 s): stale.
    now += 1500;
    assert.deepEqual(await ready(), [
      503,
      "not ready\nnic: no data for 1.500 s\n",
    ]);
    fed.feed(T0 + MS, 2n, 1n);
    fed.metrics.tick(now);
    assert.equal((await ready())[0], 200);
    fed.agentMonitor.status.state = "failed";
    fed.agentMonitor.status.error = "DOCA source x: query_counters failed";
    assert.deepEqual(await ready(), [
      503,
      "not ready\nnic: source failed: DOCA source x: query_counters failed\n",
    ]);
    const body = await (await app.request("/metrics")).text();
    assert.ok(body.includes('dpu_traceback_source_up{monitor="nic"} 0\n'));
    // The process itself is alive all along.
    assert.equal((await app.request("/healthz")).status, 200);
  } finally {
    await fed.close();
  }
});

Deno.test("the endpoint is read-only and bounded", async () => {
  const fed = await fedMonitor(1e9);
  try {
    await using app = serveRoutes(fed.metrics);
    const post = await app.request("/metrics", { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    const withBody = await app.request("/metrics", {
      headers: { "content-length": "5" },
    });
    assert.equal(withBody.status, 413);
    const big = await app.request("/metrics", {
      headers: { "x-filler": "a".repeat(17_000) },
    });
    assert.equal(big.status, 431);
    const long = await app.request(`/metrics?${"a".repeat(3000)}`);
    assert.equal(long.status, 414);
    const missing = await app.request("/metrics/../../etc/passwd");
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), "not found\n");
    const head = await app.request("/metrics", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    const index = await app.request("/");
    assert.match(await index.text(), /href="metrics"/);
    assert.equal(index.headers.get("x-content-type-options"), "nosniff");
    assert.equal(index.headers.get("cache-control"), "no-store");
  } finally {
    await fed.close();
  }
});

Deno.test("web config headers are added to every response", async () => {
  const fed = await fedMonitor(1e9);
  try {
    await using app = serveRoutes(fed.metrics, {
      headers: new Map([["strict-transport-security", "max-age=31536000"]]),
    });
    const requests: [string, RequestInit][] = [
      ["/metrics", {}],
      ["/nope", {}],
      ["/metrics", { method: "POST", body: "x" }], // refused before routing
    ];
    for (const [path, init] of requests) {
      const res = await app.request(path, init);
      await res.body?.cancel();
      assert.equal(
        res.headers.get("strict-transport-security"),
        "max-age=31536000",
        `${init.method ?? "GET"} ${path}`,
      );
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("cache-control"), "no-store");
    }
  } finally {
    await fed.close();
  }
});

Deno.test("a signal rule shows pending, then active with its peak, in /metrics and the snapshot", async () => {
  // rate of rx over 2 ms above 1.5M/s, for 3 ms, clear at 1M/s. rx rises
  // 1000 a sample (1 ms apart: 1M/s) to sample 9, then 2000 (the rate over
  // the last 2 increases: 1.5M/s on sample 10, 2M/s from 11, which starts
  // the raise run), 3000 on sample 15 (2.5M/s on 15 and 16), 500 from
  // sample 18 (1.25M/s on 18, 500k/s on 19: at or below the clear level).
  const fed = await fedMonitor(1e9, (eventLog) => ({
    ...nicConfig(eventLog),
    depth: 4,
    rules: [{
      name: "rx burst",
      signal: "rate",
      column: 0,
      windowNs: 2_000_000,
      direction: "above",
      threshold: 1_500_000,
      clear: 1_000_000,
      forNs: 3_000_000,
      keepFiringForNs: 0,
      severity: "critical",
      summary: "rx above 1.5M/s",
      runbookUrl: "https://wiki.example.com/rb?rule=rx%20burst",
    }],
  }));
  let rx = 0n;
  let i = 0;
  const feedTo = (last: number) => {
    for (; i <= last; i++) {
      rx += i === 0
        ? 0n
        : i < 10
        ? 1000n
        : i === 15
        ? 3000n
        : i < 18
        ? 2000n
        : 500n;
      fed.feed(T0 + BigInt(i) * MS, rx, 100n);
    }
  };
  // Each scrape a second after the last: past the scrape cache.
  let nowMs = 1_700_000_000_000;
  await using app = serveRoutes(fed.metrics, { now: () => nowMs += 1000 });
  const scrape = async () => {
    const body = await (await app.request("/metrics")).text();
    const snap: AgentSnapshot = await (await app.request("/api/v1/snapshot"))
      .json();
    const rule = snap.monitors[0].rules[0];
    return {
      series: ["active", "pending", "last_event_peak", "activations_total"]
        .map((s) =>
          lineOf(body, `dpu_traceback_rule_${s}{monitor="nic",rule="rx burst"}`)
            .split(" ").at(-1)
        ),
      snapshot: [rule.active, rule.pending, rule.peak, rule.activations],
      body,
      rule,
    };
  };
  try {
    feedTo(13); // raised on 11, 12, 13: 2 ms of the 3 it needs
    const pending = await scrape();
    assert.deepEqual(pending.series, ["0", "1", "NaN", "0"]);
    assert.deepEqual(pending.snapshot, [false, true, null, 0]);

    feedTo(16); // 3 ms on sample 14: active; 2.5M/s on 15 and 16
    const active = await scrape();
    assert.deepEqual(active.series, ["1", "0", "2500000", "1"]);
    assert.deepEqual(active.snapshot, [true, false, 2_500_000, 1]);

    feedTo(20); // ends on sample 19; the peak stays the last event's
    const ended = await scrape();
    assert.deepEqual(ended.series, ["0", "0", "2500000", "1"]);
    assert.deepEqual(ended.snapshot, [false, false, 2_500_000, 1]);

    // The definition, from the configuration, in both.
    assert.equal(
      lineOf(
        ended.body,
        'dpu_traceback_rule_info{monitor="nic",rule="rx burst",column="rx",signal="rate",window_seconds="0.002",direction="above",threshold="1500000",clear="1000000",for_seconds="0.003",keep_firing_for_seconds="0",severity="critical",summary="rx above 1.5M/s",runbook_url="https://wiki.example.com/rb?rule=rx%20burst"}',
      ).split(" ").at(-1),
      "1",
    );
    assert.match(
      ended.body,
      /\n# HELP dpu_traceback_rule_pending 1 while the rule's raise condition holds/,
    );
    assert.match(
      ended.body,
      /\n# TYPE dpu_traceback_rule_last_event_peak gauge\n/,
    );
    const { active_seconds: _, last_transition, ...rest } = ended.rule;
    assert.ok(last_transition !== null);
    assert.deepEqual(rest, {
      name: "rx burst",
      column: "rx",
      severity: "critical",
      summary: "rx above 1.5M/s",
      runbook_url: "https://wiki.example.com/rb?rule=rx%20burst",
      signal: "rate",
      window_seconds: 0.002,
      denominator: null,
      direction: "above",
      threshold: "1500000",
      clear: "1000000",
      for_seconds: 0.003,
      m_of_n: null,
      keep_firing_for_seconds: 0,
      active: false,
      pending: false,
      activations: 1,
      peak: 2_500_000,
    });
  } finally {
    await fed.close();
  }
});

Deno.test("GET /api/v1/events serves the journal behind the same auth and limits as /metrics", async () => {
  const fed = await scenario();
  // The scenario's two events, as the agent's listener would journal them.
  const journal = EventJournal.create([2]);
  const at = (ns: bigint) =>
    new Uint32Array([Number(ns & 0xffff_ffffn), Number(ns >> 32n)]);
  journal.started(0, 0, at(T0 + 1201n * MS), 0, 1202, 1_700_000_001_201);
  journal.ended(0, 0, at(T0 + 1211n * MS), 0, 1212, 900, 1_700_000_001_211);
  journal.started(0, 1, at(T0 + 1998n * MS), 0, 1999, 1_700_000_001_998);
  const auth = new BasicAuthVerifier(
    new Map([["prom", bcrypt.hashSync("secret", 4)]]),
  );
  try {
    await using app = serveRoutes(fed.metrics, {
      auth,
      journal,
      now: () => 1_700_000_002_000,
    });
    const authorization = `Basic ${btoa("prom:secret")}`;
    const get = (path: string, init: RequestInit = {}) =>
      app.request(path, {
        ...init,
        headers: { authorization, ...init.headers as Record<string, string> },
      });
    assert.equal((await app.request("/api/v1/events")).status, 401);
    const first = "nic/lat%20%22high%22/2023-11-14T22:13:21.201000000Z";
    assert.equal((await app.request(`/api/v1/events/${first}`)).status, 401);
    // The event's page is behind the same auth.
    assert.equal((await app.request(`/events/${first}`)).status, 401);
    const page = await get(`/events/${first}`);
    assert.notEqual(page.status, 401);
    assert.match(
      page.headers.get("content-security-policy") ?? "",
      /^default-src 'none';/,
    );
    await page.body?.cancel();
    const res = await get("/api/v1/events?limit=5");
    assert.equal(res.status, 200);
    assert.equal(
      res.headers.get("content-type"),
      "application/json; charset=utf-8",
    );
    assert.equal(res.headers.get("cache-control"), "no-store");
    const { events, truncated } = await res.json();
    assert.equal(truncated, false);
    assert.deepEqual(
      events.map((e: Record<string, unknown>) => [
        e.id,
        e.rule,
        e.state,
        e.samples,
        e.peak,
        e.duration_s,
      ]),
      [
        // Open: the rule's live peak, samples up to the newest (2001).
        [
          "nic/rx%5Ctotal/2023-11-14T22:13:21.998000000Z",
          "rx\\total",
          "open",
          3,
          fed.agentMonitor.monitor.rules[1].peak,
          0.002,
        ],
        [first, 'lat "high"', "ended", 10, 900, 0.01],
      ],
    );
    const one = await get(`/api/v1/events/${first}`);
    assert.equal(one.status, 200);
    const detail = await one.json();
    assert.equal(detail.events_log, fed.agentMonitor.log.path);
    assert.match(
      detail.review,
      / --event 2023-11-14T22:13:21.201000000Z --rule='lat "high"'$/,
    );
    assert.equal(
      (await get(`/api/v1/events/${first.replace("201000000", "201000001")}`))
        .status,
      404,
    );
    assert.equal((await get("/api/v1/events/9")).status, 400);
    const bad = await get("/api/v1/events?limit=0");
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), {
      error: 'limit must be an integer from 1 to 1000, got "0"',
    });
    // The same request limits as /metrics.
    const post = await get("/api/v1/events", { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal((await get(`/api/v1/events?${"a".repeat(3000)}`)).status, 414);
    // Gzip like the rest.
    const gz = await get("/api/v1/events", {
      headers: { "accept-encoding": "gzip" },
    });
    assert.equal(gz.status, 200);
  } finally {
    auth[Symbol.dispose]();
    await fed.close();
  }
});

Deno.test("without a journal, /api/v1/events is not there", async () => {
  const fed = await fedMonitor(1e9);
  try {
    await using app = serveRoutes(fed.metrics);
    assert.equal((await app.request("/api/v1/events")).status, 404);
    assert.equal(
      (await app.request(
        "/api/v1/events/nic/x/2023-11-14T22:13:21.201000000Z",
      )).status,
      404,
    );
  } finally {
    await fed.close();
  }
});
