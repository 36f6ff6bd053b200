/**
 * End to end with a real Alertmanager: the sender's thread pushes an
 * event's alert to Debian's `prometheus-alertmanager` on loopback, and the
 * test reads it back through Alertmanager's own API v2
 * (`GET /api/v2/alerts`): firing with its labels, then resolved at the end
 * sample's time once the hold has passed.
 *
 * Needs `prometheus-alertmanager` (or `alertmanager`) on PATH (Debian:
 * `apt-get install prometheus-alertmanager`); `.ci/run` installs it. Run
 * with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startAlertSender } from "../../alerts/sender.ts";
import { EventJournal } from "../../events/event_journal.ts";
import { AlertStats } from "../../metrics/alert_stats.ts";
import { tempDir } from "../temp_dir.ts";
import { Alertmanager, freePorts } from "./fleet_util.ts";

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

Deno.test("an event's alert reaches a real Alertmanager, then resolves after the hold", async () => {
  await using dir = await tempDir("dpu-traceback-alertmanager-push-");
  const [port] = freePorts(1);
  const am = await Alertmanager.start(dir.path, port);
  const journal = EventJournal.create([1], 16);
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
      monitors: [{
        name: "nic",
        device: "mlx5_0",
        eventLog: join(dir.path, "events.log"),
        rules: [{
          name: "drops",
          severity: "critical",
          summary: "Packets dropped",
        }],
      }],
      journalBuffer: journal.buffer,
      endpointUrl: "http://dpu-e2e:9477/",
      version: "0.1.0",
    });
    const startMs = Date.now();
    const id = journal.started(0, 0, sample(startMs), 0, 1, startMs);
    const firing = await until("the firing alert", async () => {
      const alerts = await am.alerts();
      return alerts.find((a) => a.labels.alertname === "drops");
    });
    assert.deepEqual(firing.labels, {
      alertname: "drops",
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
      firing.generatorURL,
      `http://dpu-e2e:9477/api/v1/events/${id}`,
    );
    assert.equal(Date.parse(firing.startsAt), startMs);

    const endMs = Date.now();
    journal.ended(0, 0, sample(endMs), 0, 9, 77, endMs);
    // Held, then resolved: Alertmanager drops a resolved alert from its
    // list (or shows its past endsAt).
    const resolved = await until("the alert to resolve", async () => {
      const alert = (await am.alerts()).find((a) =>
        a.labels.alertname === "drops"
      );
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
