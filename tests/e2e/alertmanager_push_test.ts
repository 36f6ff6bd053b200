/**
 * End to end with a real Alertmanager: the sender's thread pushes an
 * event's alert to Debian's `prometheus-alertmanager` on loopback, and the
 * test reads it back through Alertmanager's own API v2
 * (`GET /api/v2/alerts`): firing with its labels, its first push already
 * carrying the event's peak, its link to the event's page, then resolved at
 * the end sample's time once the hold has passed. And the naming both
 * paths share: one silence covers the pushed alert and the scrape path's
 * copy, and docs/fleet.md's inhibit rule keeps the copy quiet while the
 * push is firing.
 *
 * Needs `prometheus-alertmanager` (or `alertmanager`) on PATH (Debian:
 * `apt-get install prometheus-alertmanager`); `.ci/run` installs it. Run
 * with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { RULE_ALERTNAME } from "../../alerts/alert_state.ts";
import { startAlertSender } from "../../alerts/sender.ts";
import { EventJournal } from "../../events/event_journal.ts";
import { eventPagePath } from "../../events/event_link.ts";
import { AlertStats } from "../../metrics/alert_stats.ts";
import { tempDir } from "../temp_dir.ts";
import { Alertmanager, freePorts, type GettableAlert } from "./fleet_util.ts";

async function until<T>(
  what: string,
  get: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const value = await get().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > end) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A sample record holding `unixMs` as its ns timestamp. */
function sample(unixMs: number): Uint32Array {
  const ns = BigInt(unixMs) * 1_000_000n;
  return new Uint32Array([Number(ns & 0xffff_ffffn), Number(ns >> 32n), 0, 0]);
}

/** The agent's rules as the sender is given them (alertMonitors' form). */
function monitors(dir: string) {
  return [{
    name: "nic",
    device: "mlx5_0",
    eventLog: join(dir, "events.log"),
    rules: [{
      name: "drops",
      severity: "critical",
      summary: "Packets dropped",
      runbookUrl: "https://wiki.example.com/runbooks/drops",
      peakKind: "max" as const,
      peakUnit: "" as const,
      threshold:
        "the increase of rx_discards per sample above 5, clear at or below 5",
    }, {
      // Started first, to know the sender's thread is up: an event that
      // ended more than the hold before the thread's first look is old
      // news to it (as after a restart), and `deno test` type-checks a
      // worker's modules as it starts it, which can take that long.
      name: "warm-up",
      severity: "info",
    }],
  }];
}

const isDrops = (a: GettableAlert) =>
  a.labels.alertname === RULE_ALERTNAME && a.labels.rule === "drops";

Deno.test("an event's alert reaches a real Alertmanager with its peak and its page, then resolves after the hold", async () => {
  await using dir = await tempDir("dpu-traceback-alertmanager-push-");
  const [port] = freePorts(1);
  const am = await Alertmanager.start(dir.path, port);
  const journal = EventJournal.create([2], 16);
  let sender: Awaited<ReturnType<typeof startAlertSender>> | undefined;
  try {
    sender = await startAlertSender({
      config: {
        alertmanagers: [{ url: am.url, timeoutMs: 2000 }],
        resendIntervalMs: 500,
        holdMs: 1500,
      },
      instance: "dpu-e2e",
      labels: { rail: "7", plane: "a" },
      monitors: monitors(dir.path),
      journalBuffer: journal.buffer,
      endpointUrl: "http://dpu-e2e:9477/",
      version: "0.1.0",
    });
    const upMs = Date.now();
    journal.started(0, 1, sample(upMs), 0, 1, upMs);
    await until("the thread up", async () => {
      const alerts = await am.alerts();
      return alerts.find((a) => a.labels.rule === "warm-up");
    }, 120_000);
    // A 100 ms burst: it ends within the wait for the peak (250 ms), so the
    // first push, the one that pages, has its exact peak.
    const startMs = Date.now();
    journal.started(0, 0, sample(startMs), 0, 2, startMs, 12);
    await new Promise((r) => setTimeout(r, 100));
    const endMs = Date.now();
    journal.ended(0, 0, sample(endMs), 0, 9, 77, endMs);
    const firing = await until("the firing alert", async () => {
      const alerts = await am.alerts();
      return alerts.find(isDrops);
    });
    assert.deepEqual(firing.labels, {
      alertname: RULE_ALERTNAME,
      rule: "drops",
      monitor: "nic",
      device: "mlx5_0",
      instance: "dpu-e2e",
      severity: "critical",
      rail: "7",
      plane: "a",
    });
    assert.equal(firing.status.state, "active");
    assert.equal(firing.annotations.summary, "Packets dropped");
    assert.equal(firing.annotations.events, "1");
    assert.equal(
      firing.annotations.runbook_url,
      "https://wiki.example.com/runbooks/drops",
    );
    assert.match(
      firing.annotations.description,
      /Value at start 12; threshold: the increase of rx_discards per sample above 5, clear at or below 5\. Peak 77 over the event\. /,
    );
    const key = {
      monitor: "nic",
      rule: "drops",
      startNs: BigInt(startMs) * 1_000_000n,
    };
    assert.equal(
      firing.generatorURL,
      `http://dpu-e2e:9477${eventPagePath(key)}`,
    );
    assert.equal(Date.parse(firing.startsAt), startMs);

    // Held, then resolved: Alertmanager drops a resolved alert from its
    // list (or shows its past endsAt).
    const resolved = await until("the alert to resolve", async () => {
      const alert = (await am.alerts()).find(isDrops);
      if (alert === undefined) return "gone";
      return Date.parse(alert.endsAt) <= Date.now() ? "ended" : undefined;
    });
    assert.ok(resolved === "gone" || resolved === "ended");
    assert.ok(Date.now() - endMs >= 1500, "resolved only after the hold");
    const stats = new AlertStats(sender.stats).read(0);
    assert.ok(stats.sent >= 2, `sent ${stats.sent}`);
    assert.equal(stats.failed, 0);
  } finally {
    await sender?.stop();
    await am.stop();
  }
});

/** docs/fleet.md's inhibit rule: the push silences the scrape path's copy. */
const INHIBIT = `inhibit_rules:
  - source_matchers: [alertname="DpuTracebackRuleFired", job=""]
    target_matchers: [alertname="DpuTracebackRuleFired", job="dpu-traceback"]
    equal: [instance, monitor, rule]
`;

Deno.test("pushed and scraped alerts of a rule share their naming: one silence covers both, and the push inhibits the copy", async () => {
  await using dir = await tempDir("dpu-traceback-alertmanager-naming-");
  const [port] = freePorts(1);
  const am = await Alertmanager.start(dir.path, port, INHIBIT);
  const journal = EventJournal.create([2], 16);
  let sender: Awaited<ReturnType<typeof startAlertSender>> | undefined;
  try {
    sender = await startAlertSender({
      config: {
        alertmanagers: [{ url: am.url, timeoutMs: 2000 }],
        resendIntervalMs: 60_000,
        holdMs: 60_000,
      },
      instance: "dpu-e2e",
      labels: {},
      monitors: monitors(dir.path),
      journalBuffer: journal.buffer,
      version: "0.1.0",
      peakWaitMs: 0,
    });
    const startMs = Date.now();
    journal.started(0, 0, sample(startMs), 0, 1, startMs, 12);
    // The scrape path's copy of the same event, as Prometheus would send
    // DpuTracebackRuleFired with instance relabelled to the host name.
    const scraped = {
      alertname: RULE_ALERTNAME,
      rule: "drops",
      monitor: "nic",
      instance: "dpu-e2e",
      job: "dpu-traceback",
      severity: "critical",
    };
    const posted = await fetch(`${am.url}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{
        labels: scraped,
        annotations: { summary: "Packets dropped" },
        startsAt: new Date(startMs).toISOString(),
        endsAt: new Date(startMs + 600_000).toISOString(),
      }]),
    });
    assert.equal(posted.status, 200, await posted.text());
    const both = await until("both alerts, the copy inhibited", async () => {
      const alerts = (await am.alerts()).filter(isDrops);
      const copy = alerts.find((a) => a.labels.job !== undefined);
      return alerts.length === 2 && copy?.status.state === "suppressed"
        ? alerts
        : undefined;
    });
    const pushed = both.find((a) => a.labels.job === undefined)!;
    const copy = both.find((a) => a.labels.job !== undefined)!;
    assert.equal(pushed.status.state, "active");
    assert.deepEqual(copy.status.inhibitedBy, [pushed.fingerprint]);

    // One silence on alertname and rule silences both.
    const silence = await fetch(`${am.url}/api/v2/silences`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        matchers: [
          { name: "alertname", value: RULE_ALERTNAME, isRegex: false },
          { name: "rule", value: "drops", isRegex: false },
        ],
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 600_000).toISOString(),
        createdBy: "e2e",
        comment: "one silence for both paths",
      }),
    });
    assert.equal(silence.status, 200, await silence.text());
    await until("both silenced", async () => {
      const alerts = (await am.alerts()).filter(isDrops);
      return alerts.length === 2 &&
          alerts.every((a) => (a.status.silencedBy ?? []).length === 1)
        ? true
        : undefined;
    });
  } finally {
    await sender?.stop();
    await am.stop();
  }
});
