import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { Logger } from "../logging/logger.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { Agent } from "./agent.ts";
import { Endpoint, type EndpointOptions } from "./endpoint.ts";
import { publishMonitors } from "./publication.ts";

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
    workerUrl: misbehaving(
      `mode=crash&marker=${encodeURIComponent(marker)}`,
    ),
  });
  const { endpoint } = run;
  try {
    await Deno.writeTextFile(marker, "crash now");
    await restarted(endpoint);
    const deadline = Date.now() + 10_000;
    let samples = NaN;
    while (Date.now() < deadline) {
      try {
        samples = await metricValue(
          endpoint.url,
          'dpu_traceback_samples_total{monitor="nic"}',
        );
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
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
    assert.equal(event.id, 1);
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
    const one = await get("/api/v1/events/1");
    assert.equal(one.status, 200);
    const detail = await one.json();
    assert.equal(detail.events_log, `${dir.path}/events.log`);
    assert.match(
      detail.review,
      /^dpu-traceback review \S+events\.log --event \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z --rule 'rx_moving'$/,
    );
    const missing = await get("/api/v1/events/2");
    assert.equal(missing.status, 404);
    assert.match((await missing.json()).error, /event 2/);
    const bad = await get("/api/v1/events?since=yesterday");
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /^since "yesterday": not a time/);
    assert.equal((await get("/api/v1/events?page=2")).status, 400);
    assert.equal((await get("/api/v1/events/abc")).status, 400);
  } finally {
    await run.close();
  }
});
