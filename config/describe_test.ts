import assert from "node:assert/strict";
import { describeConfig, describeRule } from "./describe.ts";
import { parseConfig } from "./load.ts";

Deno.test("describeConfig() summarizes a reference config", () => {
  const config = parseConfig(
    `{"diag_sample_period_ns": 100000, "sample_history_depth": 1024,
      "data-ids": [{"name": "port_0_rx_bytes", "data_id": "0x1020000100000000"}],
      "rules": [{"name": "Rx Bytes/s > 1MeBs", "data_id": "0x1020000100000000",
                 "comparison_type": "differential_greater_than", "comparison_value": 1048576}]}`,
    "rules.json",
  );
  assert.equal(
    describeConfig(config),
    [
      "rules.json: reference form, 1 monitor, metrics on 0.0.0.0:9477 (10 s windows)",
      "monitor nic: source doca",
      "  sample period 100000 ns (10 kHz), depth 1024 samples, ring 2048 samples (32 KiB)",
      "  event log events.log",
      "  columns (1):",
      "    [0] port_0_rx_bytes 0x1020000100000000",
      "  rules (1):",
      '    "Rx Bytes/s > 1MeBs": dt_gt port_0_rx_bytes rises by > 1048576 over 1024 samples',
    ].join("\n"),
  );
});

Deno.test("describeConfig() lists every monitor with its settings", () => {
  const config = parseConfig(
    `
listen: "127.0.0.1:9500"
metrics_window_s: 2.5
web_config_file: /etc/dpu-traceback/web.yml
force_ownership: true
monitors:
  - name: nic
    source: sim
    seed: 7
    sample_period_ns: 1000
    depth: 10000
    event_log: demo-out/events.log
    columns:
      - {name: rx, data_id: "0x1"}
      - {name: cnp, data_id: "0x2"}
      - {name: latency, data_id: "0x3", kind: gauge}
    rules:
      - {name: "quiet", column: rx, comparison_type: differential_less_than, comparison_value: 10}
      - {name: "cnp storm", data_id: "0x2", comparison_type: inc_gt, comparison_value: "18446744073709551615"}
  - name: old
    source: replay
    input: capture.csv
    columns: [{name: x, data_id: "0x4"}]
`,
    "demo.yaml",
  );
  const text = describeConfig(config);
  const lines = text.split("\n");
  assert.equal(
    lines[0],
    "demo.yaml: agent form, 2 monitors, metrics on 127.0.0.1:9500 (2.5 s windows, web config /etc/dpu-traceback/web.yml), force ownership",
  );
  assert.ok(lines.includes("    [2] latency 0x0000000000000003 (gauge)"));
  assert.ok(lines.includes("monitor nic: source sim, seed 7"));
  assert.ok(
    lines.includes(
      "  sample period 1000 ns (1 MHz), depth 10000 samples, ring 20000 samples (625 KiB)",
    ),
  );
  assert.ok(lines.includes("  event log demo-out/events.log"));
  assert.ok(lines.includes("    [1] cnp 0x0000000000000002"));
  assert.ok(
    lines.includes('    "quiet": dt_lt rx rises by < 10 over 10000 samples'),
  );
  assert.ok(
    lines.includes(
      '    "cnp storm": inc_gt cnp rises by >= 18446744073709551615 from one sample to the next',
    ),
  );
  assert.ok(lines.includes("monitor old: source replay, input capture.csv"));
  assert.ok(lines.includes("  event log old-events.log"));
  assert.ok(lines.includes("  rules (0): none"));
});

Deno.test("describeRule() spells out each rule type", () => {
  const monitor = {
    depth: 3,
    columns: [{
      name: "rx",
      dataId: "0x0000000000000001",
      kind: "counter" as const,
    }],
  };
  const expected = {
    gt: "rx > 5 for 3 samples in a row",
    lt: "rx < 5 for 3 samples in a row",
    dt_gt: "rx rises by > 5 over 3 samples",
    dt_lt: "rx rises by < 5 over 3 samples",
    inc_gt: "rx rises by >= 5 from one sample to the next",
  };
  for (const [type, condition] of Object.entries(expected)) {
    assert.equal(
      describeRule(
        {
          name: "r",
          column: 0,
          comparisonType: type as keyof typeof expected,
          comparisonValue: 5n,
        },
        monitor,
      ),
      `"r": ${type} ${condition}`,
    );
  }
});
