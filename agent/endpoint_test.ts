import { eventId } from "../events/event_link.ts";
import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { Logger } from "../logging/logger.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { Agent } from "./agent.ts";
import { Endpoint, type EndpointOptions } from "./endpoint.ts";
import { type Publication, publishMonitors } from "./publication.ts";
import { alertMonitors } from "../alerts/sender.ts";
import {
  type FakeAlertmanager,
  fakeAlertmanager,
} from "../alerts/fake_alertmanager_test_util.ts";
import { until } from "../tests/until.ts";

/** An agent on the simulator: 1 kHz, one rule that fires on every sample. */
async function simAgent(dir: string): Promise<Agent> {
  const config = parseConfig(
    `{ "diag_sample_period_ns": 1000000, "sample_history_depth": 10,
       "data-ids": [{ "name": "port_0_rx_bytes", "data_id": "0x1020000100000000" }],
       "rules": [{ "name": "rx_moving", "data_id": "0x1020000100000000",
                   "comparison_type": "inc_gt", "comparison_value": 0 }] }`,
    `${dir}/rules.json`,
  );
  return await Agent.open({
    ...config,
    monitors: config.monitors.map((m) => ({
      ...m,
      source: "sim" as const,
      eventLog: `${dir}/events.log`,
    })),
  }, { version: "test 1.0" });
}

function quietLog(lines: string[]): Logger {
  return new Logger({ program: "test", write: (l) => lines.push(l) });
}

const info = { version: "0.0.0", startMs: Date.now(), windowNs: 1e9 };

async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(new URL("/metrics", url))).text();
  const line = text.split("\n").find((l) => l.startsWith(name));
  assert.ok(line, `${name} in /metrics`);
  return Number(line.split(" ").at(-1));
}

/** A misbehaving endpoint thread (tests/fixtures/endpoint), by its query. */
function misbehaving(query: string): URL {
  return new URL(
    `../tests/fixtures/endpoint/misbehaving_worker.ts?${query}`,
    import.meta.url,
  );
}

/**
 * The simulated agent sampling, with its endpoint on a free port (options
 * over that); its lines go to `lines`. `close()` stops sampling, shuts the
 * endpoint down and checks every log closed cleanly.
 */
async function sampling(
  dir: string,
  lines: string[],
  options: Partial<EndpointOptions> = {},
  sender?: (agent: Agent, published: Publication) => EndpointOptions["sender"],
) {
  const agent = await simAgent(dir);
  const log = quietLog(lines);
  const publication = publishMonitors(agent.monitors, {
    startMs: info.startMs,
    log,
  });
  const endpoint = await Endpoint.start(publication, {
    listen: "127.0.0.1:0",
    info,
    log,
    journal: agent.journal,
    sender: sender?.(agent, publication),
    ...options,
  });
  const stop = new AbortController();
  const running = agent.run(stop.signal);
  const stopSampling = async () => {
    stop.abort();
    await running;
  };
  return {
    agent,
    endpoint,
    stopSampling,
    async close() {
      await stopSampling();
      await endpoint.shutdown();
      publication.stop();
      assert.deepEqual(await agent.close(), []);
    },
  };
}

/** A thread that serves until `marker` appears, then crashes once. */
function crashingAt(marker: string): URL {
  return misbehaving(`mode=crash&marker=${encodeURIComponent(marker)}`);
}

/**
 * The samples the endpoint serves once it answers again (it may be
 * restarting): asked every 50 ms, for at most 10 s.
 */
async function samplesServed(url: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      return await metricValue(
        url,
        'dpu_traceback_samples_total{monitor="nic"}',
      );
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return NaN;
}

/** Waits (at most 10 s) until the endpoint has been restarted. */
async function restarted(endpoint: Endpoint): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (endpoint.restarts === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(endpoint.restarts, 1);
}

Deno.test("the endpoint serves, from its own thread, what the sampling thread published", async () => {
  await using dir = await tempDir("endpoint");
  const lines: string[] = [];
  const run = await sampling(dir.path, lines);
  const { endpoint } = run;
  try {
    await new Promise((r) => setTimeout(r, 500));
    const first = await metricValue(
      endpoint.url,
      'dpu_traceback_samples_total{monitor="nic"}',
    );
    await new Promise((r) => setTimeout(r, 300));
    const second = await metricValue(
      endpoint.url,
      'dpu_traceback_samples_total{monitor="nic"}',
    );
    assert.ok(first > 0, `samples served: ${first}`);
    assert.ok(second > first, `samples move: ${first} then ${second}`);
    assert.equal(
      await metricValue(
        endpoint.url,
        'dpu_traceback_rule_active{monitor="nic",rule="rx_moving"}',
      ),
      1,
    );
    const ready = await fetch(new URL("/readyz", endpoint.url));
    assert.equal(ready.status, 200, await ready.text());
  } finally {
    await run.close();
  }
  assert.deepEqual(lines, []);
});

Deno.test("an endpoint whose thread never comes back costs no sample", async () => {
  await using dir = await tempDir("endpoint");
  const run = await sampling(dir.path, [], {
    workerUrl: misbehaving("mode=stall"),
  });
  const startedAt = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  await run.stopSampling();
  const elapsedMs = performance.now() - startedAt;
  // The endpoint's thread spins for good: its requests time out...
  await assert.rejects(
    fetch(new URL("/metrics", run.endpoint.url), {
      signal: AbortSignal.timeout(300),
    }),
  );
  await run.close(); // ...and shutdown ends it after its grace.
  const [nic] = run.agent.monitors;
  // ...while the sampler went on: 1 kHz for about a second, nothing lost.
  assert.equal(nic.monitor.droppedSamples, 0);
  assert.ok(
    nic.monitor.samples >= 0.8 * elapsedMs,
    `${nic.monitor.samples} samples in ${elapsedMs.toFixed(0)} ms`,
  );
});

Deno.test("an endpoint that dies is restarted where it listened, and sampling goes on", async () => {
  await using dir = await tempDir("endpoint");
  const lines: string[] = [];
  const marker = `${dir.path}/crashed`;
  const run = await sampling(dir.path, lines, {
    restartMs: 50,
    workerUrl: crashingAt(marker),
  });
  const { endpoint } = run;
  try {
    await Deno.writeTextFile(marker, "crash now");
    await restarted(endpoint);
    const samples = await samplesServed(endpoint.url);
    assert.ok(samples > 0, `the restarted endpoint serves: ${samples}`);
  } finally {
    await run.close();
  }
  assert.equal(run.agent.monitors[0].monitor.droppedSamples, 0);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(
    lines[0],
    /metrics endpoint failed: .*crashing as asked; restarting it in 0\.05 s \(sampling goes on\)/,
  );
});

Deno.test("an endpoint that cannot listen fails the start with one line and leaves nothing running", async () => {
  await using dir = await tempDir("endpoint");
  const agent = await simAgent(dir.path);
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const publication = publishMonitors(agent.monitors, {
    startMs: info.startMs,
    log: quietLog([]),
  });
  try {
    await assert.rejects(
      Endpoint.start(publication, {
        listen: `127.0.0.1:${taken.addr.port}`,
        info,
        log: quietLog([]),
      }),
      (error: Error) => {
        assert.match(
          error.message,
          /^Cannot serve metrics on 127\.0\.0\.1:\d+: the address is in use/,
        );
        assert.ok(!error.message.includes("\n"));
        return true;
      },
    );
  } finally {
    publication.stop();
    assert.deepEqual(await agent.close(), []);
  }
});

Deno.test("an endpoint whose thread is stuck is restarted by the watchdog, and sampling goes on", async () => {
  await using dir = await tempDir("endpoint");
  const lines: string[] = [];
  const run = await sampling(dir.path, lines, {
    restartMs: 50,
    stallMs: 3000,
    workerUrl: misbehaving("mode=stall"),
  });
  try {
    await restarted(run.endpoint);
  } finally {
    await run.close();
  }
  assert.equal(run.agent.monitors[0].monitor.droppedSamples, 0);
  assert.match(
    lines[0],
    /^test: metrics endpoint failed: it has not answered for 3 s \(stuck\); restarting it in 0\.05 s \(sampling goes on\)$/,
  );
});

Deno.test("the endpoint's thread serves the agent's events from the shared journal", async () => {
  await using dir = await tempDir("endpoint");
  const lines: string[] = [];
  const run = await sampling(dir.path, lines);
  const { agent, endpoint } = run;
  try {
    // rx_moving starts on the simulator's first rises and stays active.
    const deadline = Date.now() + 10_000;
    while (agent.journal.newestId === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300)); // a publication or two
    const get = (path: string) => fetch(new URL(path, endpoint.url));
    const list = await get("/api/v1/events?limit=10");
    assert.equal(list.status, 200);
    assert.match(list.headers.get("content-type") ?? "", /application\/json/);
    const { events, truncated } = await list.json();
    assert.equal(truncated, false);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event.monitor, agent.monitors[0].config.name);
    assert.equal(event.rule, "rx_moving");
    assert.equal(event.state, "open");
    assert.equal(event.end, null);
    assert.equal(event.peak_kind, "max");
    assert.ok(event.samples >= 1, `samples ${event.samples}`);
    // An open event's peak is the rule's live one, as the snapshot shows it.
    const snapshot = await (await get("/api/v1/snapshot")).json();
    const live = snapshot.monitors[0].rules[0].peak;
    assert.ok(live === null || event.peak <= live, `${event.peak} vs ${live}`);
    assert.equal(event.peak === null, live === null);
    const opened = agent.journal.open(0, 0)!;
    assert.equal(event.start_ns, String(opened.startNs));
    assert.equal(
      event.id,
      eventId({
        monitor: event.monitor,
        rule: "rx_moving",
        startNs: opened.startNs,
      }),
    );
    assert.equal(event.page, `/events/${event.id}`);
    const one = await get(`/api/v1/events/${event.id}`);
    assert.equal(one.status, 200);
    const detail = await one.json();
    assert.equal(detail.events_log, `${dir.path}/events.log`);
    assert.match(
      detail.review,
      /^dpu-traceback review \S+events\.log --event \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z --rule='rx_moving'$/,
    );
    const other = eventId({
      monitor: event.monitor,
      rule: "rx_moving",
      startNs: opened.startNs - 1n,
    });
    const missing = await get(`/api/v1/events/${other}`);
    assert.equal(missing.status, 404);
    assert.match(
      (await missing.json()).error,
      /^event \S+ is not in the agent's recent events/,
    );
    const bad = await get("/api/v1/events?since=yesterday");
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /^since "yesterday": not a time/);
    assert.equal((await get("/api/v1/events?page=2")).status, 400);
    assert.equal((await get("/api/v1/events/abc")).status, 400);
  } finally {
    await run.close();
  }
});

/** The sender's part for `am`: alerts on the agent's journal, pushed to `am`. */
function alertsTo(am: FakeAlertmanager) {
  return (agent: Agent, published: Publication): EndpointOptions["sender"] => ({
    config: {
      alertmanagers: [{ url: am.url, timeoutMs: 500 }],
      resendIntervalMs: 200,
      holdMs: 300,
    },
    instance: "dpu-3",
    labels: {},
    monitors: alertMonitors(agent.monitors.map((m) => m.config)),
    journalBuffer: agent.journal.buffer,
    state: published,
    version: "0.1.0",
    drainMs: 100,
  });
}

Deno.test("with alerting on, the endpoint's thread also pushes the alerts, linked to itself, and serves their counters", async () => {
  await using dir = await tempDir("endpoint");
  await using am = fakeAlertmanager();
  const lines: string[] = [];
  const run = await sampling(dir.path, lines, {}, alertsTo(am));
  const { endpoint } = run;
  try {
    await until("the alert", () => am.alerts.size === 1);
    const [alert] = am.alerts.values();
    assert.equal(alert.labels.alertname, "DpuTracebackRuleFired");
    assert.equal(alert.labels.rule, "rx_moving");
    assert.equal(alert.labels.instance, "dpu-3");
    // The event's page on this endpoint, by its stable ID.
    assert.match(
      alert.generatorURL!,
      new RegExp(
        `^${endpoint.url}events/nic/rx_moving/\\d{4}-\\d\\d-\\d\\dT[\\d:]{8}\\.\\d{9}Z$`,
      ),
    );
    // Rendered from the counters the sender writes on the same thread.
    let sent = 0;
    for (let tries = 0; sent < 1 && tries < 300; tries++) {
      sent = await metricValue(
        endpoint.url,
        `dpu_traceback_alerts_sent_total{alertmanager="${am.url}"}`,
      );
      if (sent < 1) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(sent >= 1, `alerts sent: ${sent}`);
  } finally {
    await run.close();
  }
  assert.deepEqual(lines, []);
});

Deno.test("the endpoint's thread may reach its Alertmanagers and nothing else, nor listen again", async () => {
  await using dir = await tempDir("endpoint");
  await using am = fakeAlertmanager();
  await using other = fakeAlertmanager();
  const worker = new URL("../endpoint/worker.ts", import.meta.url).href;
  // The real endpoint and sender, then a probe of what the thread may do.
  const source = `
    import { serveEndpoint } from ${JSON.stringify(worker)};
    self.onmessage = async (e) => {
      if (e.data.type !== "start") return;
      await serveEndpoint(e.data, (reply) => self.postMessage(reply));
      const tries = {};
      const attempt = async (name, f) => {
        try { await f(); tries[name] = "ok"; } catch (e) { tries[name] = e.name; }
      };
      await attempt("am", () => fetch(${
    JSON.stringify(am.url)
  }).then((r) => r.body?.cancel()));
      await attempt("other", () => fetch(${
    JSON.stringify(other.url)
  }).then((r) => r.body?.cancel()));
      await attempt("listen", () => Deno.listen({ hostname: "127.0.0.1", port: 0 }).close());
      await attempt("write", () => Deno.writeTextFile("/tmp/endpoint-probe", "x"));
      await attempt("env", async () => Deno.env.get("HOME"));
      await attempt("run", () => new Deno.Command("true").output());
      self.postMessage({ type: "error", line: "probe " + JSON.stringify(tries) });
    };`;
  const lines: string[] = [];
  const run = await sampling(dir.path, lines, {
    workerUrl: new URL(
      `data:application/javascript,${encodeURIComponent(source)}`,
    ),
  }, alertsTo(am));
  try {
    await until("the probe", () => lines.some((l) => l.includes("probe ")));
  } finally {
    await run.close();
  }
  const probe = lines.find((l) => l.includes("probe "))!;
  assert.deepEqual(JSON.parse(probe.slice(probe.indexOf("probe ") + 6)), {
    am: "ok",
    other: "NotCapable",
    listen: "NotCapable",
    write: "NotCapable",
    env: "NotCapable",
    run: "NotCapable",
  });
});

Deno.test("an endpoint-and-sender thread that dies is restarted, and the active alert goes out again from the new one", async () => {
  await using dir = await tempDir("endpoint");
  await using am = fakeAlertmanager();
  const lines: string[] = [];
  const marker = `${dir.path}/crashed`;
  const run = await sampling(dir.path, lines, {
    restartMs: 50,
    workerUrl: crashingAt(marker),
  }, alertsTo(am));
  try {
    await until("the first push", () => am.pushes.length >= 1);
    await Deno.writeTextFile(marker, "crash now");
    await restarted(run.endpoint);
    const before = am.pushes.length;
    // The new thread's first look sends what is active at once.
    await until("a push from the new thread", () => am.pushes.length > before);
    assert.equal(am.alerts.size, 1);
  } finally {
    await run.close();
  }
  assert.equal(run.agent.monitors[0].monitor.droppedSamples, 0);
  assert.match(
    lines[0],
    /metrics endpoint and Alertmanager sender failed: .*crashing as asked; restarting it in 0\.05 s \(sampling goes on\)/,
  );
});

Deno.test("an Alertmanager credential that cannot be read fails the endpoint's start with one line, nothing running", async () => {
  await using dir = await tempDir("endpoint");
  const agent = await simAgent(dir.path);
  const publication = publishMonitors(agent.monitors, {
    startMs: info.startMs,
    log: quietLog([]),
  });
  try {
    await assert.rejects(
      Endpoint.start(publication, {
        listen: "127.0.0.1:0",
        info,
        log: quietLog([]),
        sender: {
          config: {
            alertmanagers: [{
              url: "http://127.0.0.1:9",
              timeoutMs: 100,
              basicAuth: { username: "u", passwordFile: "/nonexistent/pw" },
            }],
            resendIntervalMs: 200,
            holdMs: 300,
          },
          instance: "dpu-3",
          labels: {},
          monitors: alertMonitors(agent.monitors.map((m) => m.config)),
          journalBuffer: agent.journal.buffer,
          version: "0.1.0",
        },
      }),
      /^NotFound: Cannot read the password of Alertmanager http:\/\/127\.0\.0\.1:9 from \/nonexistent\/pw: [^\n]*$/,
    );
  } finally {
    publication.stop();
    assert.deepEqual(await agent.close(), []);
  }
});

Deno.test("a restarted endpoint-and-sender thread whose address was taken keeps the alerts going and listens again once it is free", async () => {
  await using dir = await tempDir("endpoint");
  await using am = fakeAlertmanager();
  const lines: string[] = [];
  const marker = `${dir.path}/crashed`;
  const run = await sampling(dir.path, lines, {
    restartMs: 300,
    workerUrl: crashingAt(marker),
  }, alertsTo(am));
  const { endpoint } = run;
  let squatter: Deno.Listener | undefined;
  try {
    await until("the first push", () => am.pushes.length >= 1);
    await Deno.writeTextFile(marker, "crash now");
    // Between the crash and the restart, something else takes the port.
    while (squatter === undefined) {
      try {
        squatter = Deno.listen({ hostname: "127.0.0.1", port: endpoint.port });
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    await restarted(endpoint);
    const before = am.pushes.length;
    // The alert is active and resent every 200 ms: the new thread sends
    // without its address.
    await until(
      "pushes from the thread without its address",
      () => am.pushes.length >= before + 2,
    );
    assert.ok(
      am.pushes.at(-1)!.alerts[0].generatorURL?.startsWith(endpoint.url),
      "alerts still link to the endpoint",
    );
    squatter.close();
    squatter = undefined;
    // It tries again after 1 s, then 2 s ...: serving again within them.
    const samples = await samplesServed(endpoint.url);
    assert.ok(samples > 0, `serving again: ${samples}`);
    assert.equal(endpoint.restarts, 1);
  } finally {
    squatter?.close();
    await run.close();
  }
  assert.equal(run.agent.monitors[0].monitor.droppedSamples, 0);
});
