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
  assert.match(descriptions.at(-1)!, /peak so far [0-9]/, descriptions.at(-1));
});
