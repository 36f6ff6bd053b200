import assert from "node:assert/strict";
import {
  MAX_EVENT_LOG_KEEP,
  MAX_METRICS_WINDOW_S,
  MAX_MONITORS,
  MAX_RULES,
  MAX_SAMPLE_PERIOD_NS,
  MIN_EVENT_LOG_MAX_BYTES,
  MIN_METRICS_WINDOW_S,
  SAMPLE_PERIODS,
} from "./limits.ts";
import { parseConfig } from "./load.ts";

/** An agent-form file: `top` lines, then `count` sim monitors. */
function agent(top = "", monitor = "", count = 1, rules = 1): string {
  const ruleLines = Array.from(
    { length: rules },
    (_, j) =>
      `      - { name: r${j}, column: rx, comparison_type: gt, comparison_value: 1 }`,
  ).join("\n");
  const monitors = Array.from({ length: count }, (_, i) =>
    `  - name: m${i}
    source: sim
    event_log: m${i}.log${monitor}
    columns: [{ name: rx, data_id: "0x1" }]
    rules:
${ruleLines}
`).join("");
  return `${top}\nmonitors:\n${monitors}`;
}

Deno.test("the largest values of every bounded field load", () => {
  const config = parseConfig(
    agent(
      `metrics_window_s: ${MAX_METRICS_WINDOW_S}
event_log_max_bytes: ${Number.MAX_SAFE_INTEGER}
event_log_keep: ${MAX_EVENT_LOG_KEEP}`,
      `\n    sample_period_ns: ${SAMPLE_PERIODS.sim[1]}`,
    ),
    "a.yaml",
  );
  assert.equal(config.metricsWindowNs, MAX_METRICS_WINDOW_S * 1e9);
  assert.equal(config.monitors[0].samplePeriodNs, SAMPLE_PERIODS.sim[1]);
  // Each source's shortest and longest period; an hour is the longest of all.
  for (const [source, range] of Object.entries(SAMPLE_PERIODS)) {
    for (const period of range) {
      const id = source === "kernel" ? "netdev:rx_bytes" : "0x1";
      const monitor = source === "nvml"
        ? `{ name: g, source: nvml, sample_period_ns: ${period} }`
        : `{ name: n, source: ${source}, sample_period_ns: ${period}, columns: [{ name: rx, data_id: "${id}" }] }`;
      const loaded = parseConfig(`monitors: [${monitor}]`, "a.yaml");
      assert.equal(loaded.monitors[0].samplePeriodNs, period, source);
    }
  }
  assert.equal(SAMPLE_PERIODS.replay[1], MAX_SAMPLE_PERIOD_NS);
  const small = parseConfig(
    agent(
      `metrics_window_s: ${MIN_METRICS_WINDOW_S}
event_log_max_bytes: ${MIN_EVENT_LOG_MAX_BYTES}`,
    ),
    "a.yaml",
  );
  assert.equal(small.metricsWindowNs, 100_000_000);
  const monitors = parseConfig(agent("", "", MAX_MONITORS), "a.yaml");
  assert.equal(monitors.monitors.length, MAX_MONITORS);
  const rules = parseConfig(agent("", "", 1, MAX_RULES), "a.yaml");
  assert.equal(rules.monitors[0].rules.length, MAX_RULES);
});

Deno.test("each value that would not run is refused, naming the field", () => {
  const cases: [string, string, string][] = [
    [
      agent("", "\n    sample_period_ns: 9007199254740991"),
      "monitors[0].sample_period_ns must be between 10000 and 1000000000 for source sim (10 µs to 1 s)",
      "RangeError",
    ],
    [
      JSON.stringify({
        diag_sample_period_ns: 2 ** 40 * 1e3,
        "data-ids": [{ name: "rx", data_id: "0x1" }],
      }),
      "diag_sample_period_ns must be between 10000 and 1000000000 for source doca (10 µs to 1 s)",
      "RangeError",
    ],
    [
      agent("metrics_window_s: 1e300"),
      "metrics_window_s must be from 0.1 to 86400 seconds (a day), got 1e+300",
      "RangeError",
    ],
    [
      agent("metrics_window_s: 1e-12"),
      "metrics_window_s must be from 0.1 to 86400 seconds (a day), got 1e-12",
      "RangeError",
    ],
    [
      agent("metrics_window_s: .nan"),
      "metrics_window_s must be a number, got NaN",
      "TypeError",
    ],
    [
      agent("event_log_keep: 1000000000000000"),
      "event_log_keep must be at most 1000; each rotation renames every kept file, got 1000000000000000",
      "RangeError",
    ],
    [
      agent("event_log_max_bytes: 1"),
      "event_log_max_bytes must be 0 (never rotate) or at least 65536 (64 KiB)",
      "RangeError",
    ],
    [
      agent("", "", MAX_MONITORS + 1),
      "monitors must list at most 64 monitors",
      "RangeError",
    ],
    [
      agent("", "", 1, MAX_RULES + 1),
      "monitors[0].rules must list at most 1024 rules",
      "RangeError",
    ],
    [
      agent("", `\n    input: /tmp/${"d/".repeat(3000)}capture.csv`),
      "monitors[0].input must be at most 4096 characters long",
      "RangeError",
    ],
  ];
  for (const [text, message, name] of cases) {
    const file = text.startsWith("{") ? "r.json" : "a.yaml";
    assert.throws(() => parseConfig(text, file), (e) => {
      assert.ok(e instanceof Error);
      assert.equal(e.name, name, e.message);
      assert.ok(
        new RegExp(`^Cannot load config ${RegExp.escape(file)}:\\d+: `)
          .test(e.message),
        e.message,
      );
      assert.ok(
        e.message.replace(/^(Cannot load config [^:]+):\d+:/, "$1:")
          .startsWith(`Cannot load config ${file}: ${message}`),
        e.message,
      );
      return true;
    });
  }
});
