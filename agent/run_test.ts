import assert from "node:assert/strict";
import { stringify } from "yaml";
import { fakeAlertmanager } from "../alerts/fake_alertmanager_test_util.ts";
import { parseConfig } from "../config/load.ts";
import { Logger } from "../logging/logger.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { runAgent } from "./run.ts";

Deno.test("without the endpoint (listen: off) the agent's alerts still carry the rule's live peak", async () => {
  await using dir = await tempDir("run");
  await using am = fakeAlertmanager();
  const file = `${dir.path}/agent.yaml`;
  const config = parseConfig(
    stringify({
      listen: "off",
      instance: "dpu-test",
      alerting: {
        alertmanagers: [{ url: am.url }],
        resend_interval: "1s",
        hold: "1s",
      },
      monitors: [{
        name: "nic",
        source: "sim",
        sample_period_ns: 1_000_000,
        depth: 10,
        event_log: `${dir.path}/events.log`,
        columns: [{ name: "port_0_rx_bytes", data_id: "0x1020000100000000" }],
        // Active from the first sample to the last.
        rules: [{ name: "rx", value: "port_0_rx_bytes", above: 0 }],
      }],
    }),
    file,
  );
  const lines: string[] = [];
  // Runs until the second push has arrived, however slowly the sender's
  // thread loads under a busy `deno test`: no fixed duration to outlast.
  const stop = new AbortController();
  const twoPushes = am.received(2).then(() => stop.abort());
  const ok = await runAgent(config, {
    log: new Logger({ program: "test", write: (l) => lines.push(l) }),
    generator: "test 1.0",
    version: "1.0",
    signal: stop.signal,
    // A backstop only: the run ends at the second push, long before.
    durationS: 120,
    quiet: true,
  });
  assert.ok(ok, lines.join("\n"));
  await twoPushes;
  const descriptions = am.pushes.flatMap((p) =>
    p.alerts.map((a) => a.annotations.description)
  );
  assert.ok(descriptions.length >= 2, `pushes: ${descriptions.length}`);
  // The first look may come before the first publication; a resend a
  // second later must know the peak (the published state's), as with the
  // endpoint on.
  assert.match(descriptions.at(-1)!, /Peak so far [0-9]/, descriptions.at(-1));
});

/** A one-monitor simulated agent logging to `eventLog`, endpoint on `listen`. */
function simConfig(dir: string, eventLog: string, listen: string) {
  return parseConfig(
    stringify({
      listen,
      monitors: [{
        name: "nic",
        source: "sim",
        sample_period_ns: 1_000_000,
        depth: 10,
        event_log: eventLog,
        columns: [{ name: "port_0_rx_bytes", data_id: "0x1020000100000000" }],
        rules: [{ name: "rx", value: "port_0_rx_bytes", above: 0 }],
      }],
    }),
    `${dir}/agent.yaml`,
  );
}

Deno.test("a start that fails on a busy port writes nothing to the events log", async () => {
  await using dir = await tempDir("run");
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const address = `127.0.0.1:${busy.addr.port}`;
  const fresh = `${dir.path}/fresh/events.log`;
  const kept = `${dir.path}/events.log`;
  const before = "an earlier run's rows\n";
  await Deno.writeTextFile(kept, before);
  for (const eventLog of [fresh, kept]) {
    const lines: string[] = [];
    const ok = await runAgent(simConfig(dir.path, eventLog, address), {
      log: new Logger({ program: "test", write: (l) => lines.push(l) }),
      generator: "test 1.0",
      version: "1.0",
      // Never reached: the start fails.
      durationS: 120,
      quiet: true,
    });
    assert.equal(ok, false);
    assert.deepEqual(lines, [
      `test: Cannot serve metrics on ${address}: the address is in use (another dpu-traceback or exporter? choose one with --listen HOST:PORT, or --listen off)`,
    ]);
  }
  // Not even created: the endpoint is bound before any log is opened.
  await assert.rejects(() => Deno.lstat(fresh), Deno.errors.NotFound);
  assert.equal(await Deno.readTextFile(kept), before);
});

Deno.test("a log that cannot open after the endpoint listens stops the endpoint", async () => {
  await using dir = await tempDir("run");
  // A directory where the log belongs: refused as it opens.
  const eventLog = `${dir.path}/events.log`;
  await Deno.mkdir(eventLog);
  const lines: string[] = [];
  const ok = await runAgent(simConfig(dir.path, eventLog, "127.0.0.1:0"), {
    log: new Logger({ program: "test", write: (l) => lines.push(l) }),
    generator: "test 1.0",
    version: "1.0",
    durationS: 120,
    quiet: true,
  });
  assert.equal(ok, false);
  assert.equal(lines.length, 2, lines.join("\n"));
  const port = /^test: metrics on http:\/\/127\.0\.0\.1:(\d+)\/$/.exec(
    lines[0],
  )?.[1];
  assert.ok(port, lines[0]);
  assert.equal(
    lines[1],
    `test: Cannot open events log ${eventLog}: it is a directory, not a regular file`,
  );
  // The endpoint's port is free again: it was shut down.
  Deno.listen({ hostname: "127.0.0.1", port: Number(port) }).close();
});
