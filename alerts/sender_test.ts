import assert from "node:assert/strict";
import { until } from "../tests/until.ts";
import type { AlertingConfig } from "../config/types.ts";
import { EventJournal } from "../events/event_journal.ts";
import { eventPagePath } from "../events/event_link.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import { fakeAlertmanager } from "./fake_alertmanager_test_util.ts";
import {
  alertmanagerHosts,
  type AlertMonitor,
  alertMonitors,
  type AlertSenderOptions,
  prepareSender,
  startAlertSender,
} from "./sender.ts";

const MONITORS: AlertMonitor[] = [{
  name: "nic",
  device: "mlx5_0",
  eventLog: "/tmp/events.log",
  rules: [
    { name: "drops", severity: "critical", summary: "Packets dropped" },
    { name: "pfc", severity: "warning" },
  ],
}];

/** A sample record holding `unixMs` as its ns timestamp. */
function sample(unixMs: number): Uint32Array {
  const ns = BigInt(unixMs) * 1_000_000n;
  return new Uint32Array([
    Number(ns & 0xffff_ffffn),
    Number(ns >> 32n),
    0,
    0,
  ]);
}

function alerting(
  urls: string[],
  resendIntervalMs = 200,
  holdMs = 300,
): AlertingConfig {
  return {
    alertmanagers: urls.map((url) => ({ url, timeoutMs: 500 })),
    resendIntervalMs,
    holdMs,
  };
}

function options(
  journal: EventJournal,
  config: AlertingConfig,
  more: Partial<AlertSenderOptions> = {},
): AlertSenderOptions {
  return {
    config,
    instance: "dpu-3",
    labels: { rail: "5", switch: "leaf-2" },
    monitors: MONITORS,
    journalBuffer: journal.buffer,
    endpointUrl: "http://dpu-3:9477/",
    version: "0.1.0",
    // Looks come from events and due times; the heartbeat's bound (a third
    // of the default 10 s stall) never decides a test's timing.
    drainMs: 100,
    // An open event's alert goes out at once here; the wait for its peak
    // has tests of its own (alert_state_test.ts, and at stop below).
    peakWaitMs: 0,
    ...more,
  };
}

Deno.test("the worker pushes a rule's event: firing, resent, then resolved after the hold", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(options(journal, alerting([am.url])));
  try {
    const startMs = Date.now();
    journal.started(0, 1, sample(startMs), 0, 7, startMs);
    await am.received(1);
    const [firing] = am.pushes[0].alerts;
    assert.deepEqual(firing.labels, {
      rail: "5",
      switch: "leaf-2",
      alertname: "DpuTracebackRuleFired",
      rule: "pfc",
      monitor: "nic",
      device: "mlx5_0",
      instance: "dpu-3",
      severity: "warning",
    });
    assert.equal(firing.startsAt, new Date(startMs).toISOString());
    assert.equal(
      firing.generatorURL,
      `http://dpu-3:9477${
        eventPagePath({
          monitor: "nic",
          rule: "pfc",
          startNs: BigInt(startMs) * 1_000_000n,
        })
      }`,
    );
    assert.ok(Date.parse(firing.endsAt) > Date.now());
    // Still open: resent on the interval.
    await am.received(2);
    assert.equal(am.pushes[1].alerts[0].startsAt, firing.startsAt);
    const endMs = Date.now();
    journal.ended(0, 1, sample(endMs), 0, 9, 12, endMs);
    await until(
      "the resolved alert",
      () =>
        am.pushes.some((p) =>
          p.alerts[0].endsAt === new Date(endMs).toISOString()
        ),
    );
    const resolvedAt = Date.now();
    assert.ok(
      resolvedAt - endMs >= 300,
      `resolved ${resolvedAt - endMs} ms after the end`,
    );
    const resolved = am.pushes.at(-1)!.alerts[0];
    assert.match(resolved.annotations.description, /Peak 12 over the event\./);
    const stats = new AlertStats(sender.stats);
    // Counted once the answer is in.
    await until("the count", () => stats.read(0).sent === am.pushes.length);
    assert.deepEqual(sender.alertmanagers, [am.url]);
  } finally {
    await sender.stop();
  }
});

Deno.test("a burst between two looks reaches both Alertmanagers, one of them down", async () => {
  await using up = fakeAlertmanager();
  await using down = fakeAlertmanager();
  down.answer = { status: 503 };
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(
    options(journal, alerting([down.url, up.url], 60_000, 60_000)),
  );
  try {
    const t = Date.now();
    journal.started(0, 0, sample(t), 0, 1, t);
    journal.ended(0, 0, sample(t + 2), 0, 21, 99, t + 2);
    await up.received(1);
    assert.equal(up.pushes[0].alerts[0].labels.rule, "drops");
    assert.equal(up.pushes[0].alerts[0].annotations.summary, "Packets dropped");
    assert.match(up.pushes[0].alerts[0].annotations.description, /Peak 99 /);
    await down.received(2); // retried meanwhile
    const stats = new AlertStats(sender.stats);
    await until(
      "the counts",
      () => stats.read(1).sent === 1 && stats.read(0).failed >= 2,
    );
    assert.equal(stats.read(0).sent, 0);
  } finally {
    await sender.stop();
  }
});

/**
 * A sender whose looks by the clock, resends and holds are a minute apart:
 * within a test, only the journal (or stop) makes it look.
 */
function minuteApartSender(
  journal: EventJournal,
  url: string,
  more: Partial<AlertSenderOptions> = {},
) {
  return startAlertSender(
    options(journal, alerting([url], 60_000, 60_000), {
      maxLookMs: 60_000,
      stallMs: 180_000,
      ...more,
    }),
  );
}

Deno.test("at stop, what is due goes out first, an alert still waiting for its peak too", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([2], 16);
  const sender = await minuteApartSender(journal, am.url, {
    drainMs: 2000,
    peakWaitMs: 60_000,
  });
  const t = Date.now();
  journal.started(0, 0, sample(t), 0, 1, t);
  await sender.stop();
  assert.equal(am.pushes.length, 1);
  assert.equal(am.pushes[0].alerts[0].labels.rule, "drops");
  assert.match(
    am.pushes[0].alerts[0].annotations.description,
    /is active now\. Value at start unknown\. Peak so far unknown\./,
  );
});

Deno.test("an event wakes the sender's thread at once, though its looks by the clock are a minute apart", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([2], 16);
  const sender = await minuteApartSender(journal, am.url);
  try {
    const t = Date.now();
    // The first push may come from the thread's look at start (it may
    // still be loading): once it is in, the thread is past that look.
    journal.started(0, 0, sample(t), 0, 1, t);
    await am.received(1);
    // Nothing is due for a minute: only the journal can wake it now.
    journal.started(0, 1, sample(t + 1), 0, 2, t + 1);
    await am.received(2);
    assert.deepEqual(
      am.pushes.map((p) => p.alerts.map((a) => a.labels.rule)),
      [["drops"], ["pfc"]],
    );
  } finally {
    await sender.stop();
  }
});

Deno.test("the sender's thread may reach its Alertmanagers and nothing else", async () => {
  await using am = fakeAlertmanager();
  await using other = fakeAlertmanager();
  const source = `
    self.onmessage = async () => {
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
      await attempt("read", () => Deno.readTextFile("/etc/hostname"));
      await attempt("write", () => Deno.writeTextFile("/tmp/sender-probe", "x"));
      await attempt("env", async () => Deno.env.get("HOME"));
      await attempt("run", () => new Deno.Command("true").output());
      self.postMessage({ type: "error", line: JSON.stringify(tries) });
    };`;
  const lines: string[] = [];
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(options(journal, alerting([am.url]), {
    workerUrl: new URL(
      `data:application/javascript,${encodeURIComponent(source)}`,
    ),
    onError: (line) => lines.push(line),
  }));
  try {
    await until("the probe", () => lines.length > 0);
    assert.deepEqual(JSON.parse(lines[0]), {
      am: "ok",
      other: "NotCapable",
      read: "NotCapable",
      write: "NotCapable",
      env: "NotCapable",
      run: "NotCapable",
    });
  } finally {
    await sender.stop();
  }
});

Deno.test("a sender's thread that crashes is restarted with backoff", async () => {
  const source =
    `self.onmessage = () => { throw new Error("boom\\nsecond line"); };`;
  const lines: string[] = [];
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(
    options(journal, alerting(["http://127.0.0.1:9"]), {
      workerUrl: new URL(
        `data:application/javascript,${encodeURIComponent(source)}`,
      ),
      onError: (line) => lines.push(line),
      restartMs: 20,
    }),
  );
  try {
    await until("two restarts", () => sender.restarts >= 2);
    assert.match(
      lines[0],
      /^Alertmanager sender failed: .*boom; restarting it in 0\.02 s \(sampling goes on\)$/,
    );
    assert.match(lines[1], /restarting it in 0\.04 s/);
  } finally {
    await sender.stop();
  }
  const after = sender.restarts;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(sender.restarts, after);
});

/** A worker module from its source, as a data: URL. */
function workerSource(source: string): URL {
  return new URL(`data:application/javascript,${encodeURIComponent(source)}`);
}

Deno.test("a sender's thread that is stuck is restarted by the watchdog, and stop still ends", async () => {
  // Blocks its event loop on start: it never looks, never beats, never
  // answers the stop.
  const source =
    `self.onmessage = (e) => { if (e.data.type === "start") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); };`;
  const lines: string[] = [];
  const journal = EventJournal.create([2], 16);
  const startedAt = performance.now();
  const sender = await startAlertSender(
    options(journal, alerting(["http://127.0.0.1:9"]), {
      workerUrl: workerSource(source),
      onError: (line) => lines.push(line),
      restartMs: 20,
      stallMs: 3000,
    }),
  );
  let stoppedIn = NaN;
  try {
    await until("the restart", () => sender.restarts >= 1, 6000);
    const restartedIn = performance.now() - startedAt;
    assert.ok(
      restartedIn >= 3000 && restartedIn < 3000 + 2000,
      `restarted ${restartedIn.toFixed(0)} ms after the start`,
    );
    assert.deepEqual(lines, [
      "Alertmanager sender failed: it has not answered for 3 s (stuck); restarting it in 0.02 s (sampling goes on)",
    ]);
  } finally {
    const stopping = performance.now();
    await sender.stop();
    stoppedIn = performance.now() - stopping;
  }
  // The stuck thread never says closed: it is ended after drainMs + 1 s.
  assert.ok(stoppedIn < 100 + 1000 + 500, `stopped in ${stoppedIn} ms`);
  assert.equal(sender.restarts, 1);
});

Deno.test("after a stuck sender's restart the queue gauge is true again, its lost alerts count as dropped, and the active alert goes out", async () => {
  await using am = fakeAlertmanager();
  am.answer = { status: 503 };
  const senderUrl = new URL("./sender_worker.ts", import.meta.url).href;
  const statsUrl = new URL("../metrics/alert_stats.ts", import.meta.url).href;
  // The real sender; its first thread gets stuck once a push has failed
  // (its alert still queued). A later thread (it starts with a failure
  // counted) runs on.
  const source = `
    import { runSender } from ${JSON.stringify(senderUrl)};
    import { AlertStats } from ${JSON.stringify(statsUrl)};
    let running;
    self.onmessage = async (e) => {
      if (e.data.type === "stop") {
        await running?.stop();
        self.postMessage({ type: "closed" });
        return;
      }
      const stats = new AlertStats(e.data.stats);
      const first = stats.read(0).failed === 0;
      running = runSender(e.data, (reply) => self.postMessage(reply));
      if (first) {
        setInterval(() => { if (stats.read(0).failed > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); }, 2);
      }
    };`;
  // Loaded once beforehand: under `deno test` a worker's modules are
  // type-checked as they load, which on a busy machine can take longer
  // than the stall the watchdog allows.
  const loader = new Worker(workerSource(source), { type: "module" });
  try {
    await new Promise((resolve, reject) => {
      loader.onmessage = resolve;
      loader.onerror = reject;
      loader.postMessage({ type: "stop" });
    });
  } finally {
    loader.terminate();
  }
  const lines: string[] = [];
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(
    options(journal, alerting([am.url], 60_000, 60_000), {
      workerUrl: workerSource(source),
      onError: (line) => lines.push(line),
      restartMs: 20,
      stallMs: 3000,
    }),
  );
  const stats = new AlertStats(sender.stats);
  try {
    const t = Date.now();
    journal.started(0, 0, sample(t), 0, 1, t);
    await until("a failed push", () => stats.read(0).failed > 0);
    const failed = stats.read(0).failed;
    assert.equal(stats.read(0).queueLength, 1);
    am.answer = { status: 200 };
    await until("the restart", () => sender.restarts >= 1, 6000);
    await until("the alert accepted", () => am.alerts.size === 1);
    await until("the count", () => stats.read(0).sent === 1);
    assert.deepEqual(stats.read(0), {
      sent: 1,
      failed,
      dropped: 1,
      queueLength: 0,
      lastSuccessMs: stats.read(0).lastSuccessMs,
    });
    assert.equal(
      [...am.alerts.values()][0].labels.rule,
      "drops",
    );
    assert.equal(sender.restarts, 1);
    assert.deepEqual(lines.filter((l) => !/retrying with backoff/.test(l)), [
      "Alertmanager sender failed: it has not answered for 3 s (stuck); restarting it in 0.02 s (sampling goes on)",
      `Alertmanager ${am.url}: 1 alert queued by the sender's failed thread lost (counted as dropped)`,
    ]);
  } finally {
    await sender.stop();
  }
});

Deno.test("a sender that would look less often than a third of its stall time is refused", async () => {
  const journal = EventJournal.create([2], 16);
  await assert.rejects(
    startAlertSender(
      options(journal, alerting(["http://127.0.0.1:9"]), {
        maxLookMs: 1500,
        stallMs: 1000, // raised to the 3 s floor
      }),
    ),
    {
      name: "RangeError",
      message:
        "Cannot start the Alertmanager sender: maxLookMs must be above 0 and at most a third of stallMs (3000 ms), got 1500",
    },
  );
});

Deno.test("a credential file that cannot be read stops the start with one line naming it", async () => {
  const journal = EventJournal.create([2], 16);
  await assert.rejects(
    startAlertSender(options(journal, {
      ...alerting(["http://127.0.0.1:9"]),
      alertmanagers: [{
        url: "http://127.0.0.1:9",
        timeoutMs: 100,
        basicAuth: { username: "u", passwordFile: "/nonexistent/pw" },
      }],
    })),
    {
      name: "NotFound",
      message:
        "Cannot read the password of Alertmanager http://127.0.0.1:9 from /nonexistent/pw: file not found",
    },
  );
});

Deno.test("credentials read before the start are taken as given, one per Alertmanager", async () => {
  const journal = EventJournal.create([2], 16);
  // The CLI reads them before the agent starts (cli/start_files.ts): the
  // password file is not read again, so its absence here is no error.
  const config = {
    ...alerting(["http://127.0.0.1:9"]),
    alertmanagers: [{
      url: "http://127.0.0.1:9",
      timeoutMs: 100,
      basicAuth: { username: "u", passwordFile: "/nonexistent/pw" },
    }],
  };
  const prepared = await prepareSender(
    options(journal, config, {
      credentials: [{ authorization: "Basic dTpw" }],
    }),
    new SharedArrayBuffer(4),
  );
  assert.deepEqual(prepared.start.credentials, [{
    authorization: "Basic dTpw",
  }]);
  await assert.rejects(
    prepareSender(
      options(journal, config, { credentials: [] }),
      new SharedArrayBuffer(4),
    ),
    {
      name: "RangeError",
      message:
        "Cannot start the Alertmanager sender: it has credentials for 0 Alertmanagers, the configuration has 1",
    },
  );
});

Deno.test("the network allowed is each Alertmanager's host and port, once", () => {
  assert.deepEqual(
    alertmanagerHosts(alerting([
      "http://[::1]:9093",
      "http://127.0.0.1:9093/am",
      "http://127.0.0.1:9093",
      "http://am.example",
    ])),
    ["[::1]:9093", "127.0.0.1:9093", "am.example:80"],
  );
});

Deno.test("alertMonitors carries each NIC monitor's GPUs, in the words check-config prints", () => {
  const config = {
    name: "nic",
    source: "kernel" as const,
    device: "03:00.0",
    samplePeriodNs: 10_000_000,
    depth: 100,
    columns: [{
      name: "rx",
      dataId: "netdev:rx_bytes",
      kind: "counter" as const,
    }],
    rules: [],
    eventLog: "events.log",
    seed: 1,
  };
  const [near, far, none] = alertMonitors([config, config, config], [
    {
      nic: "0000:03:00.0",
      gpus: [{
        index: 0,
        uuid: "GPU-aaaa",
        busId: "0000:04:00.0",
        link: "PIX",
      }],
    },
    { nic: "0000:8a:00.0", gpus: [], none: "no GPU shares its NUMA node" },
  ]);
  assert.equal(
    near.gpus,
    "GPUs behind 0000:03:00.0: GPU 0 (GPU-aaaa, 0000:04:00.0) PIX",
  );
  assert.equal(
    far.gpus,
    "no GPU behind 0000:8a:00.0: no GPU shares its NUMA node",
  );
  assert.equal(none.gpus, undefined);
});
