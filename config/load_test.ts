import assert from "node:assert/strict";
import { loadConfig, parseConfig } from "./load.ts";
import { DEFAULTS } from "./types.ts";
import { tempDir } from "../tests/temp_dir.ts";

/** The reference app's documented example, verbatim. */
const REFERENCE_EXAMPLE = `{
  "diag_sample_period_ns": 100000,
  "sample_history_depth": 1024,
  "data-ids": [ { "name": "port_0_rx_bytes", "data_id": "0x1020000100000000" } ],
  "rules": [
    { "name": "Rx Bytes/s > 1MeBs", "data_id": "0x1020000100000000",
      "comparison_type": "differential_greater_than", "comparison_value": 1048576 }
  ]
}
`;

/** A valid reference document to break one field at a time. */
function referenceDoc(): Record<string, unknown> {
  return {
    diag_sample_period_ns: 100000,
    sample_history_depth: 1024,
    "data-ids": [
      { name: "port_0_rx_bytes", data_id: "0x1020000100000000" },
      { name: "port_0_tx_bytes", data_id: "0x1020000200000000" },
      { name: "port_0_cnp", data_id: "0x1020000300000000" },
    ],
    rules: [
      {
        name: "rx",
        data_id: "0x1020000100000000",
        comparison_type: "dt_gt",
        comparison_value: 1,
      },
      {
        name: "tx",
        data_id: "0x1020000200000000",
        comparison_type: "dt_lt",
        comparison_value: 2,
      },
      {
        name: "cnp",
        data_id: "0x1020000300000000",
        comparison_type: "inc_gt",
        comparison_value: 3,
      },
    ],
  };
}

/** `referenceDoc()` with one change, as JSON text. */
// Tests poke arbitrary fields into plain JSON; typing each shape adds nothing.
// deno-lint-ignore no-explicit-any
function referenceWith(change: (doc: Record<string, any>) => void): string {
  const doc = referenceDoc();
  change(doc);
  return JSON.stringify(doc, null, 2);
}

/** A valid agent-form YAML document; `extra` lines go into the first monitor. */
function agentYaml(
  monitorExtra = "",
  rules = `
      - name: "Rx Bytes/s > 1MeBs"
        column: port_0_rx_bytes
        comparison_type: dt_gt
        comparison_value: 1048576`,
  top = "",
): string {
  return `${top}
monitors:
  - name: nic
    source: sim${monitorExtra}
    columns:
      - name: port_0_rx_bytes
        data_id: "0x1020000100000000"
      - name: port_0_tx_bytes
        data_id: "0x1020000200000000"
    rules:${rules}
`;
}

interface BadCase {
  readonly name: string;
  readonly file: string;
  readonly text: string;
  readonly error: typeof TypeError | typeof RangeError | typeof SyntaxError;
  /** The field path, or `line N, column M` for syntax errors. */
  readonly path: string;
  readonly words: readonly string[];
}

const BAD: readonly BadCase[] = [
  {
    name: "unknown comparison_type",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[2].comparison_type = "gte")),
    error: TypeError,
    path: "rules[2].comparison_type",
    words: ["must be one of gt, lt, dt_gt, dt_lt, inc_gt", 'got "gte"'],
  },
  {
    name: "misspelt key",
    file: "rules.json",
    text: referenceWith((d) => {
      d.rules[1] = {
        name: "tx",
        data_id: "0x1020000200000000",
        comparision_type: "dt_lt",
        comparison_value: 2,
      };
    }),
    error: TypeError,
    path: "rules[1].comparision_type",
    words: ["not a known key", '"comparison_type"', 'got "dt_lt"'],
  },
  {
    name: "u64 overflow as a string",
    file: "rules.json",
    text: referenceWith((
      d,
    ) => (d.rules[0].comparison_value = "18446744073709551616")),
    error: RangeError,
    path: "rules[0].comparison_value",
    words: [
      "18446744073709551616 is not below 2^64",
      'got "18446744073709551616"',
    ],
  },
  {
    name: "negative comparison_value",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = -1)),
    error: RangeError,
    path: "rules[0].comparison_value",
    words: ["negative", "got -1"],
  },
  {
    name: "negative comparison_value string",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = "-5")),
    error: RangeError,
    path: "rules[0].comparison_value",
    words: ["negative", 'got "-5"'],
  },
  {
    name: "fractional comparison_value",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = 1.5)),
    error: TypeError,
    path: "rules[0].comparison_value",
    words: ["whole number", "got 1.5"],
  },
  {
    name: "non-digit comparison_value string",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = "1e6")),
    error: TypeError,
    path: "rules[0].comparison_value",
    words: ["digits", 'got "1e6"'],
  },
  {
    name: "boolean comparison_value",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = true)),
    error: TypeError,
    path: "rules[0].comparison_value",
    words: ["unsigned integer", "got true"],
  },
  {
    name: "missing comparison_value",
    file: "rules.json",
    text: referenceWith((d) => delete d.rules[1].comparison_value),
    error: TypeError,
    path: "rules[1].comparison_value",
    words: ["is required", "got nothing"],
  },
  {
    name: "inexact JSON number",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = 0)).replace(
      '"comparison_value": 0',
      '"comparison_value": 9007199254740993',
    ),
    error: RangeError,
    path: "rules[0].comparison_value",
    words: [
      "quote it as a string",
      '"9007199254740993"',
      "got 9007199254740993",
    ],
  },
  {
    name: "inexact JSON number in exponent form",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = 1e30)),
    error: RangeError,
    path: "rules[0].comparison_value",
    words: ["2^53", "quote it"],
  },
  {
    name: "data_id as a JSON number",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"][2].data_id = 0)).replace(
      '"data_id": 0',
      '"data_id": 1161928708156555264',
    ),
    error: TypeError,
    path: "data-ids[2].data_id",
    words: [
      "quoted hex string",
      '"0x1020000100000000"',
      "got 1161928708156555264",
    ],
  },
  {
    name: "data_id without 0x",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"][0].data_id = "1020000100000000")),
    error: TypeError,
    path: "data-ids[0].data_id",
    words: ["hex string", 'got "1020000100000000"'],
  },
  {
    name: "data_id with 17 hex digits",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].data_id = "0x10200001000000000")),
    error: RangeError,
    path: "rules[0].data_id",
    words: ["17 hex digits", "at most 16"],
  },
  {
    name: "duplicate column name",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"][2].name = "port_0_rx_bytes")),
    error: TypeError,
    path: "data-ids[2].name",
    words: ["already the name of data-ids[0]", 'got "port_0_rx_bytes"'],
  },
  {
    name: "duplicate data ID in another spelling",
    file: "rules.json",
    text: referenceWith((
      d,
    ) => (d["data-ids"][1].data_id = "0X1020000100000000")),
    error: TypeError,
    path: "data-ids[1].data_id",
    words: ["already the data ID of data-ids[0]", 'got "0X1020000100000000"'],
  },
  {
    name: "rule on an undeclared data ID",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[1].data_id = "0x1020000400000000")),
    error: TypeError,
    path: "rules[1].data_id",
    words: ["not one of the declared data IDs", "0x1020000100000000"],
  },
  {
    name: "zero depth",
    file: "rules.json",
    text: referenceWith((d) => (d.sample_history_depth = 0)),
    error: RangeError,
    path: "sample_history_depth",
    words: ["at least 1", "got 0"],
  },
  {
    name: "fractional period",
    file: "rules.json",
    text: referenceWith((d) => (d.diag_sample_period_ns = 0.5)),
    error: TypeError,
    path: "diag_sample_period_ns",
    words: ["whole number", "got 0.5"],
  },
  {
    name: "no data IDs at all",
    file: "rules.json",
    text: referenceWith((d) => delete d["data-ids"]),
    error: TypeError,
    path: "data-ids",
    words: ["is required", "--data-ids"],
  },
  {
    name: "empty data-ids",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"] = [])),
    error: RangeError,
    path: "data-ids",
    words: ["at least 1", "got []"],
  },
  {
    name: "too many data IDs",
    file: "rules.json",
    text: referenceWith((d) => {
      d["data-ids"] = Array.from({ length: 1025 }, (_, i) => ({
        name: `c${i}`,
        data_id: `0x${i.toString(16)}`,
      }));
      d.rules = [];
    }),
    error: RangeError,
    path: "data-ids",
    words: ["at most 1024"],
  },
  {
    name: "top-level typo points at monitors",
    file: "demo.yaml",
    text: agentYaml().replace("monitors:", "monitor:"),
    error: TypeError,
    path: "monitor",
    words: ["not a known key", '"monitors"'],
  },
  {
    name: "quoted depth",
    file: "demo.yaml",
    text: agentYaml('\n    depth: "1000"'),
    error: TypeError,
    path: "monitors[0].depth",
    words: ["without quotes", 'got "1000"'],
  },
  {
    name: "huge depth",
    file: "demo.yaml",
    text: agentYaml("\n    depth: 100000000000000000000"),
    error: RangeError,
    path: "monitors[0].depth",
    words: ["at most 9007199254740991", "got 100000000000000000000"],
  },
  {
    name: "bad monitor name",
    file: "demo.yaml",
    text: agentYaml().replace("name: nic", "name: my nic"),
    error: TypeError,
    path: "monitors[0].name",
    words: ["letters, digits", 'got "my nic"'],
  },
  {
    name: "unknown source",
    file: "demo.yaml",
    text: agentYaml().replace("source: sim", "source: dpdk"),
    error: TypeError,
    path: "monitors[0].source",
    words: ["doca, sim, replay", 'got "dpdk"'],
  },
  {
    name: "misspelt monitor key",
    file: "demo.yaml",
    text: agentYaml("\n    sample_period: 5"),
    error: TypeError,
    path: "monitors[0].sample_period",
    words: ["not a known key", '"sample_period_ns"', "got 5"],
  },
  {
    name: "duplicate monitor names",
    file: "demo.yaml",
    text: agentYaml() +
      `  - name: nic\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    path: "monitors[1].name",
    words: ["already the name of monitors[0]", 'got "nic"'],
  },
  {
    name: "shared event log",
    file: "demo.yaml",
    text: agentYaml("\n    event_log: ./logs/events.log") +
      `  - name: gpu\n    event_log: logs/events.log\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    path: "monitors[1].event_log",
    words: ["also the event log of monitors[0]", 'got "logs/events.log"'],
  },
  {
    name: "default event log taken",
    file: "demo.yaml",
    text: agentYaml("\n    event_log: gpu-events.log") +
      `  - name: gpu\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    path: "monitors[1].event_log",
    words: ['defaults to "gpu-events.log"', "monitors[0]", "got nothing"],
  },
  {
    name: "rule with column and data_id",
    file: "demo.yaml",
    text: agentYaml(
      "",
      `
      - name: both
        column: port_0_rx_bytes
        data_id: "0x1020000100000000"
        comparison_type: gt
        comparison_value: 1`,
    ),
    error: TypeError,
    path: "monitors[0].rules[0]",
    words: ["exactly one of column or data_id", '"name":"both"'],
  },
  {
    name: "rule with neither column nor data_id",
    file: "demo.yaml",
    text: agentYaml(
      "",
      `
      - name: neither
        comparison_type: gt
        comparison_value: 1`,
    ),
    error: TypeError,
    path: "monitors[0].rules[0]",
    words: ["exactly one of column or data_id"],
  },
  {
    name: "rule on an unknown column",
    file: "demo.yaml",
    text: agentYaml().replace(
      "column: port_0_rx_bytes",
      "column: port_1_rx_bytes",
    ),
    error: TypeError,
    path: "monitors[0].rules[0].column",
    words: ["port_0_rx_bytes, port_0_tx_bytes", 'got "port_1_rx_bytes"'],
  },
  {
    name: "rule name with a line break",
    file: "demo.yaml",
    text: agentYaml().replace(
      'name: "Rx Bytes/s > 1MeBs"',
      'name: "Rx\\nBytes"',
    ),
    error: TypeError,
    path: "monitors[0].rules[0].name",
    words: ["contains U+000A (a line break) at index 2", 'got "Rx\\nBytes"'],
  },
  {
    name: "port out of range",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'listen: "0.0.0.0:70000"'),
    error: RangeError,
    path: "listen",
    words: ["port 70000", "65535", 'got "0.0.0.0:70000"'],
  },
  {
    name: "two rules with one name",
    file: "demo.yaml",
    text: agentYaml(
      "",
      `
      - {name: busy, column: port_0_rx_bytes, comparison_type: gt, comparison_value: 1}
      - {name: busy, column: port_0_tx_bytes, comparison_type: gt, comparison_value: 1}`,
    ),
    error: TypeError,
    path: "monitors[0].rules[1].name",
    words: ["already the name of monitors[0].rules[0]", "unique"],
  },
  {
    name: "negative rotation size",
    file: "demo.yaml",
    text: agentYaml("", undefined, "event_log_max_bytes: -1"),
    error: RangeError,
    path: "event_log_max_bytes",
    words: ["at least 0", "got -1"],
  },
  {
    name: "window of zero seconds",
    file: "demo.yaml",
    text: agentYaml("", undefined, "metrics_window_s: 0"),
    error: RangeError,
    path: "metrics_window_s",
    words: ["greater than 0", "got 0"],
  },
  {
    name: "quoted window",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'metrics_window_s: "10"'),
    error: TypeError,
    path: "metrics_window_s",
    words: ["without quotes", 'got "10"'],
  },
  {
    name: "unknown column kind",
    file: "demo.yaml",
    text: agentYaml().replace(
      'data_id: "0x1020000200000000"',
      'data_id: "0x1020000200000000"\n        kind: histogram',
    ),
    error: TypeError,
    path: "monitors[0].columns[1].kind",
    words: ["counter, gauge", 'got "histogram"'],
  },
  {
    name: "IPv6 without brackets",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'listen: "::1:9477"'),
    error: TypeError,
    path: "listen",
    words: ["brackets", "[::1]:9477"],
  },
  {
    name: "yes is not a boolean",
    file: "demo.yaml",
    text: agentYaml("", undefined, "force_ownership: yes"),
    error: TypeError,
    path: "force_ownership",
    words: ["true or false", 'got "yes"'],
  },
  {
    name: "no monitors",
    file: "demo.yaml",
    text: "monitors: []\n",
    error: RangeError,
    path: "monitors",
    words: ["at least 1 monitor", "got []"],
  },
  {
    name: "monitors not a list",
    file: "demo.yaml",
    text: "monitors:\n  nic: {}\n",
    error: TypeError,
    path: "monitors",
    words: ["must be a list", 'got {"nic":{}}'],
  },
  {
    name: "columns and data-ids both",
    file: "demo.yaml",
    text: agentYaml('\n    data-ids: [{name: a, data_id: "0x1"}]'),
    error: TypeError,
    path: "monitors[0].data-ids",
    words: ["keep one of the two"],
  },
  {
    name: "monitor without columns",
    file: "demo.yaml",
    text: "monitors:\n  - name: nic\n",
    error: TypeError,
    path: "monitors[0].columns",
    words: ["is required", "data-ids", "got nothing"],
  },
  {
    name: "path through data-ids as written",
    file: "demo.yaml",
    text: agentYaml() +
      `  - name: gpu\n    data-ids:\n${
        [0, 1, 2].map((i) => `      - {name: c${i}, data_id: "0x${i + 1}"}\n`)
          .join("")
      }      - {name: c3, data_id: "0xq"}\n`,
    error: TypeError,
    path: "monitors[1].data-ids[3].data_id",
    words: ["hex string", 'got "0xq"'],
  },
  {
    name: "unquoted YAML hex data_id",
    file: "demo.yaml",
    text: agentYaml().replace(
      'data_id: "0x1020000200000000"',
      "data_id: 0x1020000200000000",
    ),
    error: TypeError,
    path: "monitors[0].columns[1].data_id",
    words: ["quoted hex string", '"0x1020000200000000"'],
  },
  {
    name: "inexact YAML number",
    file: "demo.yaml",
    text: agentYaml().replace(
      "comparison_value: 1048576",
      "comparison_value: 9007199254740993",
    ),
    error: RangeError,
    path: "monitors[0].rules[0].comparison_value",
    words: [
      "quote it as a string",
      '"9007199254740993"',
      "got 9007199254740993",
    ],
  },
  {
    name: "u64 overflow in YAML",
    file: "demo.yaml",
    text: agentYaml().replace(
      "comparison_value: 1048576",
      'comparison_value: "18446744073709551616"',
    ),
    error: RangeError,
    path: "monitors[0].rules[0].comparison_value",
    words: [
      "18446744073709551616 is not below 2^64",
      'got "18446744073709551616"',
    ],
  },
  {
    name: "fractional seed",
    file: "demo.yaml",
    text: agentYaml("\n    seed: 1.5"),
    error: TypeError,
    path: "monitors[0].seed",
    words: ["whole number", "got 1.5"],
  },
  {
    name: "null rules",
    file: "demo.yaml",
    text: agentYaml("", ""),
    error: TypeError,
    path: "monitors[0].rules",
    words: ["must be a list", "got null"],
  },
  {
    name: "top level is a list",
    file: "rules.json",
    text: `[{"name": "a", "data_id": "0x1"}]`,
    error: TypeError,
    path: "top level",
    words: ["must be an object", 'got [{"name":"a","data_id":"0x1"}]'],
  },
  {
    name: "empty file",
    file: "demo.yaml",
    text: "# nothing yet\n",
    error: TypeError,
    path: "top level",
    words: ["is empty", "got null"],
  },
  {
    name: "JSON trailing comma",
    file: "rules.json",
    text: '{\n  "rules": [\n    1,\n  ]\n}\n',
    error: SyntaxError,
    path: "invalid JSON at line 4, column 3",
    words: ["unexpected token ']'"],
  },
  {
    name: "JSON missing comma",
    file: "rules.json",
    text: '{\n  "rules": []\n  "data-ids": []\n}\n',
    error: SyntaxError,
    path: "invalid JSON at line 3, column 3",
    words: ["expected ',' or '}'"],
  },
  {
    name: "YAML bad indentation",
    file: "demo.yaml",
    text: "monitors:\n  - name: nic\n   source: sim\n",
    error: SyntaxError,
    path: "invalid YAML at line 3",
    words: ["column"],
  },
  {
    name: "YAML duplicate key",
    file: "demo.yaml",
    text: "monitors: []\nmonitors: []\n",
    error: SyntaxError,
    path: "invalid YAML at line 2, column 1",
    words: ["unique"],
  },
];

Deno.test("parseConfig() rejects each bad config with its path and reason", () => {
  assert.ok(BAD.length >= 20);
  for (const c of BAD) {
    assert.throws(
      () => parseConfig(c.text, c.file),
      (error: unknown) => {
        assert.ok(
          error instanceof Error && error.constructor === c.error,
          `${c.name}: expected ${c.error.name}, got ${error}`,
        );
        const prefix = `Cannot load config ${c.file}: ${c.path}`;
        assert.ok(
          error.message.startsWith(prefix + " ") ||
            error.message.startsWith(prefix + ":") ||
            error.message.startsWith(prefix + ","),
          `${c.name}: ${error.message}`,
        );
        assert.ok(!error.message.includes("\n"), `${c.name}: one line`);
        for (const word of c.words) {
          assert.ok(
            error.message.includes(word),
            `${c.name}: "${word}" not in: ${error.message}`,
          );
        }
        return true;
      },
    );
  }
});

Deno.test("parseConfig() reports the first problem in document order", () => {
  const text = referenceWith((d) => {
    d.rules[2].comparison_type = "gte";
    d.rules[0].comparison_value = -1;
    d.rules[1].bogus = 1;
  });
  assert.throws(
    () => parseConfig(text, "rules.json"),
    {
      message: /^Cannot load config rules\.json: rules\[0\]\.comparison_value /,
    },
  );
});

Deno.test("parseConfig() accepts the reference example verbatim", () => {
  const config = parseConfig(REFERENCE_EXAMPLE, "rules.json");
  assert.deepEqual(config, {
    file: "rules.json",
    form: "reference",
    listen: DEFAULTS.listen,
    metricsWindowNs: DEFAULTS.metricsWindowNs,
    eventLogMaxBytes: DEFAULTS.eventLogMaxBytes,
    eventLogKeep: DEFAULTS.eventLogKeep,
    forceOwnership: false,
    gpu: "auto",
    monitors: [{
      name: "nic",
      source: "doca",
      samplePeriodNs: 100000,
      depth: 1024,
      columns: [{
        name: "port_0_rx_bytes",
        dataId: "0x1020000100000000",
        kind: "counter",
      }],
      rules: [{
        name: "Rx Bytes/s > 1MeBs",
        column: 0,
        comparisonType: "dt_gt",
        comparisonValue: 1048576n,
      }],
      eventLog: "events.log",
      seed: DEFAULTS.seed,
    }],
  });
});

Deno.test("parseConfig() normalizes all ten comparison_type spellings", () => {
  const spellings = [
    ["inc_gt", "inc_gt"],
    ["incremental_greater_than", "inc_gt"],
    ["dt_gt", "dt_gt"],
    ["differential_greater_than", "dt_gt"],
    ["dt_lt", "dt_lt"],
    ["differential_less_than", "dt_lt"],
    ["gt", "gt"],
    ["greater_than", "gt"],
    ["lt", "lt"],
    ["less_than", "lt"],
  ];
  const text = JSON.stringify({
    "data-ids": [{ name: "port_0_rx_bytes", data_id: "0x1020000100000000" }],
    rules: spellings.map(([type], i) => ({
      name: `rule ${i}`,
      data_id: "0x1020000100000000",
      comparison_type: type,
      comparison_value: i,
    })),
  });
  const rules = parseConfig(text, "rules.json").monitors[0].rules;
  assert.deepEqual(
    rules.map((r) => r.comparisonType),
    spellings.map(([, short]) => short),
  );
  assert.deepEqual(
    rules.map((r) => r.comparisonValue),
    spellings.map((_, i) => BigInt(i)),
  );
});

Deno.test("parseConfig() fills reference-form defaults", () => {
  const config = parseConfig(
    `{"data-ids": [{"name": "a", "data_id": "0xABC"}]}`,
    "rules.json",
  );
  const m = config.monitors[0];
  assert.equal(m.samplePeriodNs, DEFAULTS.samplePeriodNs);
  assert.equal(m.depth, DEFAULTS.depth);
  assert.deepEqual(m.rules, []);
  assert.equal(m.columns[0].dataId, "0x0000000000000abc");
});

Deno.test("parseConfig() accepts a depth that is not a power of two", () => {
  const config = parseConfig(
    referenceWith((d) => (d.sample_history_depth = 10000)),
    "rules.json",
  );
  assert.equal(config.monitors[0].depth, 10000);
  const agent = parseConfig(agentYaml("\n    depth: 10000"), "demo.yaml");
  assert.equal(agent.monitors[0].depth, 10000);
});

Deno.test("parseConfig() keeps comparison values exact up to 2^64 - 1", () => {
  const json = parseConfig(
    referenceWith((
      d,
    ) => (d.rules[0].comparison_value = "18446744073709551615")),
    "rules.json",
  );
  assert.equal(
    json.monitors[0].rules[0].comparisonValue,
    18446744073709551615n,
  );
  const yaml = parseConfig(
    agentYaml().replace(
      "comparison_value: 1048576",
      'comparison_value: "18446744073709551615"',
    ),
    "demo.yaml",
  );
  assert.equal(
    yaml.monitors[0].rules[0].comparisonValue,
    18446744073709551615n,
  );
  const safe = parseConfig(
    referenceWith((
      d,
    ) => (d.rules[0].comparison_value = Number.MAX_SAFE_INTEGER)),
    "rules.json",
  );
  assert.equal(
    safe.monitors[0].rules[0].comparisonValue,
    BigInt(Number.MAX_SAFE_INTEGER),
  );
});

Deno.test("parseConfig() rejects 9007199254740993 as a number, asking for quotes", () => {
  const json = referenceWith((d) => (d.rules[0].comparison_value = 0)).replace(
    '"comparison_value": 0',
    '"comparison_value": 9007199254740993',
  );
  const yaml = agentYaml().replace(
    "comparison_value: 1048576",
    "comparison_value: 9007199254740993",
  );
  for (const [text, file] of [[json, "rules.json"], [yaml, "demo.yaml"]]) {
    assert.throws(() => parseConfig(text, file), (error: unknown) => {
      assert.ok(error instanceof RangeError);
      assert.match(error.message, /quote it as a string: "9007199254740993"/);
      assert.match(error.message, /got 9007199254740993$/);
      return true;
    });
  }
  // The same digits quoted are fine.
  const quoted = parseConfig(
    json.replace("9007199254740993", '"9007199254740993"'),
    "rules.json",
  );
  assert.equal(quoted.monitors[0].rules[0].comparisonValue, 9007199254740993n);
});

Deno.test("parseConfig() reads the agent form with defaults", () => {
  const config = parseConfig(agentYaml(), "demo.yaml");
  assert.equal(config.form, "agent");
  assert.equal(config.listen, DEFAULTS.listen);
  assert.equal(config.forceOwnership, false);
  assert.deepEqual(config.monitors, [{
    name: "nic",
    source: "sim",
    samplePeriodNs: DEFAULTS.samplePeriodNs,
    depth: DEFAULTS.depth,
    columns: [
      {
        name: "port_0_rx_bytes",
        dataId: "0x1020000100000000",
        kind: "counter",
      },
      {
        name: "port_0_tx_bytes",
        dataId: "0x1020000200000000",
        kind: "counter",
      },
    ],
    rules: [{
      name: "Rx Bytes/s > 1MeBs",
      column: 0,
      comparisonType: "dt_gt",
      comparisonValue: 1048576n,
    }],
    eventLog: "events.log",
    seed: DEFAULTS.seed,
  }]);
});

Deno.test("parseConfig() reads every agent-form setting", () => {
  const text = `
listen: "[::1]:9477"
metrics_window_s: 0.5
web_config_file: web.yml
event_log_max_bytes: 0
event_log_keep: 9
force_ownership: true
device: "03:00.0"
monitors:
  - name: nic
    sample_period_ns: 50000
    depth: 1000
    event_log: demo-out/nic.log
    columns:
      - {name: port_0_rx_bytes, data_id: "0x1020000100000000"}
      - {name: port_0_tx_bytes, data_id: "0x1020000200000000"}
    rules:
      - {name: by id, data_id: "0x1020000200000000", comparison_type: less_than, comparison_value: 0}
  - name: replayed
    source: replay
    device: "04:00.0"
    input: capture.csv
    seed: 7
    data-ids:
      - {name: x, data_id: "0x1", kind: gauge}
`;
  const config = parseConfig(text, "demo.yaml");
  assert.equal(config.listen, "[::1]:9477");
  assert.equal(config.metricsWindowNs, 500_000_000);
  assert.equal(config.webConfigFile, "web.yml");
  assert.equal(config.eventLogMaxBytes, 0);
  assert.equal(config.eventLogKeep, 9);
  assert.equal(config.forceOwnership, true);
  const [nic, replayed] = config.monitors;
  assert.equal(nic.source, "doca");
  assert.equal(nic.device, "03:00.0");
  assert.equal(nic.samplePeriodNs, 50000);
  assert.equal(nic.depth, 1000);
  assert.equal(nic.eventLog, "demo-out/nic.log");
  assert.deepEqual(nic.rules, [{
    name: "by id",
    column: 1,
    comparisonType: "lt",
    comparisonValue: 0n,
  }]);
  assert.equal(replayed.source, "replay");
  assert.equal(replayed.device, "04:00.0");
  assert.equal(replayed.input, "capture.csv");
  assert.equal(replayed.seed, 7);
  assert.equal(replayed.eventLog, "replayed-events.log");
  assert.deepEqual(replayed.columns, [{
    name: "x",
    dataId: "0x0000000000000001",
    kind: "gauge",
  }]);
  assert.equal("input" in nic, false);
});

Deno.test("parseConfig() reads the agent form written as JSON", () => {
  const text = JSON.stringify({
    monitors: [{
      name: "nic",
      columns: [{ name: "a", data_id: "0x1" }],
      rules: [{
        name: "r",
        column: "a",
        comparison_type: "gt",
        comparison_value: "5",
      }],
    }],
  });
  const config = parseConfig(text, "agent.json");
  assert.equal(config.form, "agent");
  assert.equal(config.monitors[0].rules[0].comparisonValue, 5n);
});

const RULES_ONLY = JSON.stringify({
  diag_sample_period_ns: 100000,
  rules: [{
    name: "Rx Bytes/s > 1MeBs",
    data_id: "0x1020000100000000",
    comparison_type: "differential_greater_than",
    comparison_value: 1048576,
  }],
});

Deno.test("parseConfig() takes data IDs from a --data-ids list", () => {
  const ids = `[{"name": "port_0_rx_bytes", "data_id": "0x1020000100000000"},
               {"name": "port_0_tx_bytes", "data_id": "0x1020000200000000"}]`;
  const config = parseConfig(RULES_ONLY, "rules.json", {
    dataIdsText: ids,
    dataIdsFile: "ids.json",
  });
  assert.deepEqual(config.monitors[0].columns.map((c) => c.name), [
    "port_0_rx_bytes",
    "port_0_tx_bytes",
  ]);
  assert.equal(config.monitors[0].rules[0].column, 0);
});

Deno.test("parseConfig() takes data IDs from a --data-ids object, in YAML", () => {
  const ids =
    `data-ids:\n  - name: port_0_rx_bytes\n    data_id: "0x1020000100000000"\n`;
  const config = parseConfig(RULES_ONLY, "rules.json", {
    dataIdsText: ids,
    dataIdsFile: "ids.yaml",
  });
  assert.equal(config.monitors[0].columns[0].dataId, "0x1020000100000000");
});

Deno.test("parseConfig() names the --data-ids file in its errors", () => {
  const cases: [string, string, RegExp][] = [
    [
      `[{"name": "a", "data_id": "0x1"}, {"name": "a", "data_id": "0x2"}]`,
      "ids.json",
      /^Cannot load config ids\.json: \[1\]\.name is already the name of \[0\], got "a"$/,
    ],
    [
      `{"data-ids": [{"name": "a", "data_id": 7}]}`,
      "ids.json",
      /^Cannot load config ids\.json: data-ids\[0\]\.data_id must be a quoted hex string; write it as "0x0000000000000007", got 7$/,
    ],
    [
      `{"data_ids": []}`,
      "ids.json",
      /^Cannot load config ids\.json: data_ids is not a known key \(did you mean "data-ids"\?\)/,
    ],
    [
      `"x"`,
      "ids.json",
      /^Cannot load config ids\.json: top level must be a list/,
    ],
    [
      `[{"name": "a",`,
      "ids.json",
      /^Cannot load config ids\.json: invalid JSON at line 1/,
    ],
  ];
  for (const [ids, file, message] of cases) {
    assert.throws(
      () =>
        parseConfig(RULES_ONLY, "rules.json", {
          dataIdsText: ids,
          dataIdsFile: file,
        }),
      { message },
    );
  }
});

Deno.test("parseConfig() refuses data IDs from both the rules file and --data-ids", () => {
  assert.throws(
    () =>
      parseConfig(REFERENCE_EXAMPLE, "rules.json", {
        dataIdsText: `[{"name": "a", "data_id": "0x1"}]`,
        dataIdsFile: "ids.json",
      }),
    (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(
        error.message,
        /^Cannot load config rules\.json: data-ids is also given by the --data-ids file ids\.json; use one or the other, got \[/,
      );
      return true;
    },
  );
});

Deno.test("parseConfig() checks rules against --data-ids entries", () => {
  assert.throws(
    () =>
      parseConfig(RULES_ONLY, "rules.json", {
        dataIdsText: `[{"name": "a", "data_id": "0x1"}]`,
        dataIdsFile: "ids.json",
      }),
    {
      message:
        /^Cannot load config rules\.json: rules\[0\]\.data_id 0x1020000100000000 is not one of the declared data IDs \(0x0000000000000001\), got "0x1020000100000000"$/,
    },
  );
});

Deno.test("parseConfig() refuses --data-ids with the agent form", () => {
  assert.throws(
    () =>
      parseConfig(agentYaml(), "demo.yaml", {
        dataIdsText: "[]",
        dataIdsFile: "ids.json",
      }),
    (error: unknown) =>
      error instanceof TypeError && /reference form/.test(error.message),
  );
});

Deno.test("loadConfig() reads files and says when one is missing", async () => {
  await using dir = await tempDir("dpu-traceback-config-");
  const rules = `${dir.path}/rules.json`;
  const ids = `${dir.path}/ids.yaml`;
  await Deno.writeTextFile(rules, RULES_ONLY);
  await Deno.writeTextFile(
    ids,
    `- {name: port_0_rx_bytes, data_id: "0x1020000100000000"}\n`,
  );
  const config = await loadConfig(rules, { dataIdsFile: ids });
  assert.equal(config.file, rules);
  assert.equal(config.monitors[0].rules[0].column, 0);

  await assert.rejects(
    () => loadConfig(`${dir.path}/missing.yaml`),
    (error: unknown) => {
      assert.ok(error instanceof Deno.errors.NotFound);
      assert.equal(
        error.message,
        `Cannot load config ${dir.path}/missing.yaml: file not found`,
      );
      return true;
    },
  );
  await assert.rejects(
    () => loadConfig(rules, { dataIdsFile: `${dir.path}/none.json` }),
    { message: `Cannot load config ${dir.path}/none.json: file not found` },
  );
});
