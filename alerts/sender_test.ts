import assert from "node:assert/strict";
import type { AlertingConfig } from "../config/types.ts";
import { EventJournal } from "../events/event_journal.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import { fakeAlertmanager } from "./fake_alertmanager_test_util.ts";
import {
  alertmanagerHosts,
  type AlertMonitor,
  type AlertSenderOptions,
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
    tickMs: 10,
    drainMs: 100,
    ...more,
  };
}

async function until(
  what: string,
  ok: () => boolean,
  ms = 5000,
): Promise<void> {
  const end = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > end) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("the worker pushes a rule's event: firing, resent, then resolved after the hold", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(options(journal, alerting([am.url])));
  try {
    const startMs = Date.now();
    const id = journal.started(0, 1, sample(startMs), 0, 7, startMs);
    await am.received(1);
    const [firing] = am.pushes[0].alerts;
    assert.deepEqual(firing.labels, {
      rail: "5",
      switch: "leaf-2",
      alertname: "pfc",
      monitor: "nic",
      device: "mlx5_0",
      instance: "dpu-3",
      severity: "warning",
    });
    assert.equal(firing.startsAt, new Date(startMs).toISOString());
    assert.equal(firing.generatorURL, `http://dpu-3:9477/api/v1/events/${id}`);
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
    assert.match(resolved.annotations.description, /peak 12\./);
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
    assert.equal(up.pushes[0].alerts[0].labels.alertname, "drops");
    assert.equal(up.pushes[0].alerts[0].annotations.summary, "Packets dropped");
    assert.match(up.pushes[0].alerts[0].annotations.description, /peak 99/);
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

Deno.test("at stop, what is due goes out first", async () => {
  await using am = fakeAlertmanager();
  const journal = EventJournal.create([2], 16);
  const sender = await startAlertSender(
    options(journal, alerting([am.url], 60_000, 60_000), {
      tickMs: 60_000,
      drainMs: 2000,
    }),
  );
  const t = Date.now();
  journal.started(0, 0, sample(t), 0, 1, t);
  await sender.stop();
  assert.equal(am.pushes.length, 1);
  assert.equal(am.pushes[0].alerts[0].labels.alertname, "drops");
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
    /^Error: Cannot read the password of Alertmanager http:\/\/127\.0\.0\.1:9 from \/nonexistent\/pw: [^\n]*$/,
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
