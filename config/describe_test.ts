import assert from "node:assert/strict";
import { describeConfig, describeRule } from "./describe.ts";
import { parseConfig } from "./load.ts";
import type { SignalRuleConfig } from "./types.ts";

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
      "  sample period 100 µs (10 kHz), depth 1024 samples, ring 2048 samples (32 KiB)",
      "  event log events.log",
      "  columns (1):",
      "    [0] port_0_rx_bytes 0x1020000100000000 (rx_bytes{port=0})",
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
    sample_period_ns: 10000
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
      "  sample period 10 µs (100 kHz), depth 10000 samples, ring 20000 samples (625 KiB)",
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

const COUNTERS = {
  depth: 64,
  columns: ["port_0_rx_ecn_packets", "port_0_rx_packets", "discards"].map((
    name,
    i,
  ) => ({
    name,
    dataId: `0x000000000000000${i + 1}`,
    kind: "counter" as const,
  })),
};

/** A signal rule on column 0 with `change` applied. */
function signal(change: Partial<SignalRuleConfig>): SignalRuleConfig {
  return {
    name: "r",
    signal: "value",
    column: 0,
    windowNs: 0,
    direction: "above",
    threshold: 5n,
    clear: 5n,
    forNs: 0,
    keepFiringForNs: 0,
    ...change,
  };
}

Deno.test("describeRule() spells out the ECN storm of issue 14", () => {
  assert.equal(
    describeRule(
      signal({
        name: "ECN storm",
        signal: "rate",
        windowNs: 1_000_000,
        threshold: 1_000_000,
        clear: 200_000,
        forNs: 500_000,
        keepFiringForNs: 10_000_000,
        severity: "critical",
      }),
      COUNTERS,
    ),
    '"ECN storm" (critical): starts when the rate of port_0_rx_ecn_packets over 1 ms stays above 1000000/s for 500 µs; ends when it stays at or below 200000/s for 10 ms',
  );
});

Deno.test("describeRule() names each signal, threshold form and condition", () => {
  const cases: [Partial<SignalRuleConfig>, string][] = [
    // value, no for, keep_firing_for 0, clear equal to the threshold.
    [
      { threshold: 18446744073709551615n, clear: 18446744073709551615n },
      "starts when the value of port_0_rx_ecn_packets goes above 18446744073709551615; ends when it is at or below 18446744073709551615",
    ],
    [
      {
        signal: "increase",
        direction: "below",
        threshold: 10n,
        clear: 1000n,
        forNs: 1_500_000,
      },
      "starts when the increase of port_0_rx_ecn_packets per sample stays below 10 for 1.5 ms; ends when it is at or above 1000",
    ],
    [
      {
        signal: "rate",
        column: 1,
        windowNs: 10_000_000,
        threshold: 0.5,
        clear: 0.25,
        keepFiringForNs: 2_000_000_000,
      },
      "starts when the rate of port_0_rx_packets over 10 ms goes above 0.5/s; ends when it stays at or below 0.25/s for 2 s",
    ],
    [
      {
        signal: "ratio",
        column: 2,
        denominator: 1,
        windowNs: 1_000_000,
        threshold: 0.001,
        clear: 0.001,
      },
      "starts when the ratio of discards to port_0_rx_packets over 1 ms goes above 0.1 %; ends when it is at or below 0.1 %",
    ],
    [
      {
        signal: "ratio",
        column: 2,
        denominator: 1,
        windowNs: 100_000,
        direction: "below",
        threshold: 15,
        clear: 0.0007,
      },
      "starts when the ratio of discards to port_0_rx_packets over 100 µs goes below 1500 %; ends when it is at or above 0.07 %",
    ],
    // M of N, with and without keep_firing_for.
    [
      { mOfN: { m: 3, n: 5 }, clear: 2n },
      "starts when the value of port_0_rx_ecn_packets is above 5 on at least 3 of the last 5 samples; ends when it is at or below 2 and above 5 on fewer than 3 of the last 5 samples",
    ],
    [
      {
        signal: "rate",
        windowNs: 1_000_000,
        direction: "below",
        threshold: 1e6,
        clear: 2e6,
        mOfN: { m: 1, n: 128 },
        keepFiringForNs: 500_000,
      },
      "starts when the rate of port_0_rx_ecn_packets over 1 ms is below 1000000/s on at least 1 of the last 128 samples; ends when it stays at or above 2000000/s and below 1000000/s on fewer than 1 of the last 128 samples for 500 µs",
    ],
  ];
  for (const [change, words] of cases) {
    assert.equal(
      describeRule(signal(change), COUNTERS),
      `"r" (warning): ${words}`,
    );
  }
});

Deno.test("describeConfig() shows signal rules, severities and summaries", () => {
  const config = parseConfig(
    `
monitors:
  - name: nic
    source: sim
    depth: 64
    columns:
      - {name: ecn, data_id: "0x1"}
      - {name: rx, data_id: "0x2"}
    rules:
      - name: ECN storm
        rate: ecn
        window: 1ms
        above: 1M/s
        clear: 200k/s
        for: 500us
        keep_firing_for: 10ms
        severity: critical
        summary: ECN marks above 1M/s on port 0
        runbook_url: https://wiki.example.com/runbooks/ecn-storm
      - {name: busy, column: rx, comparison_type: gt, comparison_value: 5, severity: info}
      - {name: quiet, column: rx, comparison_type: lt, comparison_value: 1, summary: "no \\"rx\\""}
`,
    "signals.yaml",
  );
  const lines = describeConfig(config).split("\n");
  assert.deepEqual(lines.slice(lines.indexOf("  rules (3):") + 1), [
    '    "ECN storm" (critical): starts when the rate of ecn over 1 ms stays above 1000000/s for 500 µs; ends when it stays at or below 200000/s for 10 ms',
    '      summary: "ECN marks above 1M/s on port 0"',
    "      runbook: https://wiki.example.com/runbooks/ecn-storm",
    // A reference rule shows its severity when it is not the default.
    '    "busy" (info): gt rx > 5 for 64 samples in a row',
    '    "quiet": lt rx < 1 for 64 samples in a row',
    '      summary: "no \\"rx\\""',
  ]);
});

Deno.test("describeConfig() shows the instance, topology labels and alerting where configured", () => {
  const config = parseConfig(
    `
instance: dpu-r12-07
labels: { rack: r12, rail: "3" }
labels_file: /etc/dpu-traceback/level_labels.ini
alerting:
  alertmanagers:
    - url: https://am-1.example:9093/
      tls: { ca_file: /etc/dpu-traceback/am-ca.pem, cert_file: /c.pem, key_file: /k.pem }
      basic_auth: { username: agent, password_file: /etc/dpu-traceback/am-password }
    - url: http://am-2.example:9093
      timeout: 2s
      bearer_token_file: /etc/dpu-traceback/am-token
  resend_interval: 15s
  hold: 90s
monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "0x1" }]
`,
    "a.yaml",
  );
  const head = (options?: Parameters<typeof describeConfig>[1]) =>
    describeConfig(config, options).split("\n").slice(1, 7);
  assert.deepEqual(head(), [
    'instance "dpu-r12-07" on alerts',
    'topology labels (2): rack="r12", rail="3"',
    "labels file /etc/dpu-traceback/level_labels.ini (read at start; labels: win)",
    "alerting: 2 Alertmanagers, resent every 15 s while firing (ends 1 min ahead), held 1.5 min after an event ends",
    '  https://am-1.example:9093: timeout 10 s, TLS (CA /etc/dpu-traceback/am-ca.pem, client certificate /c.pem), basic auth as "agent", password from /etc/dpu-traceback/am-password',
    "  http://am-2.example:9093: timeout 2 s, bearer token from /etc/dpu-traceback/am-token",
  ]);
  assert.equal(
    head({ fileLabels: { plane: "a", switch: "leaf 12" } })[2],
    'labels file /etc/dpu-traceback/level_labels.ini: plane="a", switch="leaf 12" (read at start; labels: win)',
  );
  assert.equal(
    head({ fileLabels: {} })[2],
    "labels file /etc/dpu-traceback/level_labels.ini: no labels (read at start; labels: win)",
  );
  // Alerting without an instance goes out as the host name.
  const plain = parseConfig(
    `alerting: { alertmanagers: [{ url: "http://am:9093" }] }
monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]`,
    "b.yaml",
  );
  assert.deepEqual(describeConfig(plain).split("\n").slice(1, 4), [
    "instance on alerts: the host name",
    "alerting: 1 Alertmanager, resent every 30 s while firing (ends 2 min ahead), held 5 min after an event ends",
    "  http://am:9093: timeout 10 s",
  ]);
  // None of these lines when nothing of it is configured.
  const none = parseConfig(
    'monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]',
    "c.yaml",
  );
  assert.match(describeConfig(none).split("\n")[1], /^monitor nic:/);
});

Deno.test("describeConfig() says a GPU monitor runs only if NVML is there at start, and what the caller found", () => {
  const gpuOnly = parseConfig(
    "monitors: [{ name: gpu, source: nvml, event_log: g.log }]\n",
    "gpu.yaml",
  );
  const line = (text: string) =>
    text.split("\n").find((l) => l.startsWith("  on if NVML"));
  // Without a probe (the agent's own debug lines): only the rule.
  assert.equal(
    line(describeConfig(gpuOnly)),
    "  on if NVML is found and lists a GPU at start, else off and the run fails (no other monitor)",
  );
  const withNic = parseConfig(
    `monitors:
  - { name: nic, device: "03:00.0", columns: [{ name: rx, data_id: "0x1" }] }
  - { name: gpu, source: nvml, event_log: g.log }
`,
    "both.yaml",
  );
  const text = describeConfig(withNic, {
    nvmlHere: "not found in /opt/nv, /usr/lib64",
    addedByGpuAuto: "gpu",
  });
  assert.equal(
    line(text),
    "  on if NVML is found and lists a GPU at start, else off and the other monitors run; NVML here: not found in /opt/nv, /usr/lib64",
  );
  assert.match(
    text,
    /^monitor gpu: source nvml, every GPU NVML finds, added by gpu: auto$/m,
  );
  assert.match(text, /^monitor nic: source doca, device 03:00\.0$/m);
});
