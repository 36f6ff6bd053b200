import assert from "node:assert/strict";
import { loadConfig, parseConfig } from "./load.ts";
import {
  DEFAULTS,
  isReferenceRule,
  type ReferenceRuleConfig,
  type RuleConfig,
} from "./types.ts";
import { tempDir } from "../tests/temp_dir.ts";

/** `rule`, which must be one of the five reference types. */
function reference(rule: RuleConfig): ReferenceRuleConfig {
  assert.ok(isReferenceRule(rule), `${rule.name} is a signal rule`);
  return rule;
}

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
  /** The line the message names. */
  readonly line: number;
  /** The field path, the rule or column named, or `invalid JSON at column M`. */
  readonly path: string;
  readonly words: readonly string[];
}

const BAD: readonly BadCase[] = [
  {
    name: "unknown comparison_type",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[2].comparison_type = "gte")),
    error: TypeError,
    line: 34,
    path: 'rules[2] ("cnp").comparison_type',
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
    line: 28,
    path: 'rules[1] ("tx").comparision_type',
    words: ["not a known key", '"comparison_type"', 'got "dt_lt"'],
  },
  {
    name: "u64 overflow as a string",
    file: "rules.json",
    text: referenceWith((
      d,
    ) => (d.rules[0].comparison_value = "18446744073709551616")),
    error: RangeError,
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
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
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
    words: ["negative", "got -1"],
  },
  {
    name: "negative comparison_value string",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = "-5")),
    error: RangeError,
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
    words: ["negative", 'got "-5"'],
  },
  {
    name: "fractional comparison_value",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = 1.5)),
    error: TypeError,
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
    words: ["whole number", "got 1.5"],
  },
  {
    name: "non-digit comparison_value string",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = "1e6")),
    error: TypeError,
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
    words: ["digits", 'got "1e6"'],
  },
  {
    name: "boolean comparison_value",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].comparison_value = true)),
    error: TypeError,
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
    words: ["unsigned integer", "got true"],
  },
  {
    name: "missing comparison_value",
    file: "rules.json",
    text: referenceWith((d) => delete d.rules[1].comparison_value),
    error: TypeError,
    line: 25,
    path: 'rules[1] ("tx").comparison_value',
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
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
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
    line: 23,
    path: 'rules[0] ("rx").comparison_value',
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
    line: 15,
    path: 'data-ids[2] ("port_0_cnp").data_id',
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
    line: 7,
    path: 'data-ids[0] ("port_0_rx_bytes").data_id',
    words: ["hex string", 'got "1020000100000000"'],
  },
  {
    name: "data_id with 17 hex digits",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[0].data_id = "0x10200001000000000")),
    error: RangeError,
    line: 21,
    path: 'rules[0] ("rx").data_id',
    words: ["17 hex digits", "at most 16"],
  },
  {
    name: "duplicate column name",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"][2].name = "port_0_rx_bytes")),
    error: TypeError,
    line: 14,
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
    line: 11,
    path: 'data-ids[1] ("port_0_tx_bytes").data_id',
    words: ["already the data ID of data-ids[0]", 'got "0X1020000100000000"'],
  },
  {
    name: "rule on an undeclared data ID",
    file: "rules.json",
    text: referenceWith((d) => (d.rules[1].data_id = "0x1020000400000000")),
    error: TypeError,
    line: 27,
    path: 'rules[1] ("tx").data_id',
    words: ["not one of the declared data IDs", "0x1020000100000000"],
  },
  {
    name: "zero depth",
    file: "rules.json",
    text: referenceWith((d) => (d.sample_history_depth = 0)),
    error: RangeError,
    line: 3,
    path: "sample_history_depth",
    words: ["at least 1", "got 0"],
  },
  {
    name: "fractional period",
    file: "rules.json",
    text: referenceWith((d) => (d.diag_sample_period_ns = 0.5)),
    error: TypeError,
    line: 2,
    path: "diag_sample_period_ns",
    words: ["whole number", "got 0.5"],
  },
  {
    name: "no data IDs at all",
    file: "rules.json",
    text: referenceWith((d) => delete d["data-ids"]),
    error: TypeError,
    line: 1,
    path: "data-ids",
    words: ["is required", "--data-ids"],
  },
  {
    name: "empty data-ids",
    file: "rules.json",
    text: referenceWith((d) => (d["data-ids"] = [])),
    error: RangeError,
    line: 4,
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
    line: 4,
    path: "data-ids",
    words: ["at most 1024"],
  },
  {
    name: "top-level typo points at monitors",
    file: "demo.yaml",
    text: agentYaml().replace("monitors:", "monitor:"),
    error: TypeError,
    line: 2,
    path: "monitor",
    words: ["not a known key", '"monitors"'],
  },
  {
    name: "quoted depth",
    file: "demo.yaml",
    text: agentYaml('\n    depth: "1000"'),
    error: TypeError,
    line: 5,
    path: "monitors[0].depth",
    words: ["without quotes", 'got "1000"'],
  },
  {
    name: "huge depth",
    file: "demo.yaml",
    text: agentYaml("\n    depth: 100000000000000000000"),
    error: RangeError,
    line: 5,
    path: "monitors[0].depth",
    words: ["at most 9007199254740991", "got 100000000000000000000"],
  },
  {
    name: "bad monitor name",
    file: "demo.yaml",
    text: agentYaml().replace("name: nic", "name: my nic"),
    error: TypeError,
    line: 3,
    path: "monitors[0].name",
    words: ["letters, digits", 'got "my nic"'],
  },
  {
    name: "unknown source",
    file: "demo.yaml",
    text: agentYaml().replace("source: sim", "source: dpdk"),
    error: TypeError,
    line: 4,
    path: "monitors[0].source",
    words: ["doca, sim, replay", 'got "dpdk"'],
  },
  {
    name: "misspelt monitor key",
    file: "demo.yaml",
    text: agentYaml("\n    sample_period: 5"),
    error: TypeError,
    line: 5,
    path: "monitors[0].sample_period",
    words: ["not a known key", '"sample_period_ns"', "got 5"],
  },
  {
    name: "duplicate monitor names",
    file: "demo.yaml",
    text: agentYaml() +
      `  - name: nic\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    line: 15,
    path: "monitors[1].name",
    words: ["already the name of monitors[0]", 'got "nic"'],
  },
  {
    name: "shared event log",
    file: "demo.yaml",
    text: agentYaml("\n    event_log: ./logs/events.log") +
      `  - name: gpu\n    event_log: logs/events.log\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    line: 17,
    path: "monitors[1].event_log",
    words: ["also the event log of monitors[0]", 'got "logs/events.log"'],
  },
  {
    name: "default event log taken",
    file: "demo.yaml",
    text: agentYaml("\n    event_log: gpu-events.log") +
      `  - name: gpu\n    columns: [{name: a, data_id: "0x1"}]\n`,
    error: TypeError,
    line: 16,
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
    line: 11,
    path: 'monitors[0].rules[0] ("both")',
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
    line: 11,
    path: 'monitors[0].rules[0] ("neither")',
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
    line: 12,
    path: 'monitors[0].rules[0] ("Rx Bytes/s > 1MeBs").column',
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
    line: 11,
    path: "monitors[0].rules[0].name",
    words: ["contains U+000A (a line break) at index 2", 'got "Rx\\nBytes"'],
  },
  {
    name: "port out of range",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'listen: "0.0.0.0:70000"'),
    error: RangeError,
    line: 1,
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
    line: 12,
    path: "monitors[0].rules[1].name",
    words: ["already the name of monitors[0].rules[0]", "unique"],
  },
  {
    name: "negative rotation size",
    file: "demo.yaml",
    text: agentYaml("", undefined, "event_log_max_bytes: -1"),
    error: RangeError,
    line: 1,
    path: "event_log_max_bytes",
    words: ["at least 0", "got -1"],
  },
  {
    name: "window of zero seconds",
    file: "demo.yaml",
    text: agentYaml("", undefined, "metrics_window_s: 0"),
    error: RangeError,
    line: 1,
    path: "metrics_window_s",
    words: ["greater than 0", "got 0"],
  },
  {
    name: "quoted window",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'metrics_window_s: "10"'),
    error: TypeError,
    line: 1,
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
    line: 10,
    path: 'monitors[0].columns[1] ("port_0_tx_bytes").kind',
    words: ["counter, gauge", 'got "histogram"'],
  },
  {
    name: "IPv6 without brackets",
    file: "demo.yaml",
    text: agentYaml("", undefined, 'listen: "::1:9477"'),
    error: TypeError,
    line: 1,
    path: "listen",
    words: ["brackets", "[::1]:9477"],
  },
  {
    name: "yes is not a boolean",
    file: "demo.yaml",
    text: agentYaml("", undefined, "force_ownership: yes"),
    error: TypeError,
    line: 1,
    path: "force_ownership",
    words: ["true or false", 'got "yes"'],
  },
  {
    name: "no monitors",
    file: "demo.yaml",
    text: "monitors: []\n",
    error: RangeError,
    line: 1,
    path: "monitors",
    words: ["at least 1 monitor", "got []"],
  },
  {
    name: "monitors not a list",
    file: "demo.yaml",
    text: "monitors:\n  nic: {}\n",
    error: TypeError,
    line: 2,
    path: "monitors",
    words: ["must be a list", 'got {"nic":{}}'],
  },
  {
    name: "columns and data-ids both",
    file: "demo.yaml",
    text: agentYaml('\n    data-ids: [{name: a, data_id: "0x1"}]'),
    error: TypeError,
    line: 5,
    path: "monitors[0].data-ids",
    words: ["keep one of the two"],
  },
  {
    name: "monitor without columns",
    file: "demo.yaml",
    text: "monitors:\n  - name: nic\n",
    error: TypeError,
    line: 2,
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
    line: 20,
    path: 'monitors[1].data-ids[3] ("c3").data_id',
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
    line: 9,
    path: 'monitors[0].columns[1] ("port_0_tx_bytes").data_id',
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
    line: 14,
    path: 'monitors[0].rules[0] ("Rx Bytes/s > 1MeBs").comparison_value',
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
    line: 14,
    path: 'monitors[0].rules[0] ("Rx Bytes/s > 1MeBs").comparison_value',
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
    line: 5,
    path: "monitors[0].seed",
    words: ["whole number", "got 1.5"],
  },
  {
    name: "null rules",
    file: "demo.yaml",
    text: agentYaml("", ""),
    error: TypeError,
    line: 10,
    path: "monitors[0].rules",
    words: ["must be a list", "got null"],
  },
  {
    name: "top level is a list",
    file: "rules.json",
    text: `[{"name": "a", "data_id": "0x1"}]`,
    error: TypeError,
    line: 1,
    path: "top level",
    words: ["must be an object", 'got [{"name":"a","data_id":"0x1"}]'],
  },
  {
    name: "empty file",
    file: "demo.yaml",
    text: "# nothing yet\n",
    error: TypeError,
    line: 1,
    path: "top level",
    words: ["is empty", "got null"],
  },
  {
    name: "JSON trailing comma",
    file: "rules.json",
    text: '{\n  "rules": [\n    1,\n  ]\n}\n',
    error: SyntaxError,
    line: 4,
    path: "invalid JSON at column 3",
    words: ["a comma before ] (JSON has no trailing commas)"],
  },
  {
    name: "JSON missing comma",
    file: "rules.json",
    text: '{\n  "rules": []\n  "data-ids": []\n}\n',
    error: SyntaxError,
    line: 3,
    path: "invalid JSON at column 3",
    words: ["missing , between"],
  },
  {
    name: "YAML bad indentation",
    file: "demo.yaml",
    text: "monitors:\n  - name: nic\n   source: sim\n",
    error: SyntaxError,
    line: 3,
    path: "invalid YAML at column 1",
    words: ["sequence item without - indicator"],
  },
  {
    name: "YAML duplicate key",
    file: "demo.yaml",
    text: "monitors: []\nmonitors: []\n",
    error: SyntaxError,
    line: 2,
    path: "invalid YAML at column 1",
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
        // The file and line, then the path (or, for syntax, the column).
        const prefix = new RegExp(
          `^Cannot load config ${RegExp.escape(c.file)}:${c.line}: ${
            RegExp.escape(c.path)
          }[ :,]`,
        );
        assert.match(error.message, prefix, c.name);
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
      message:
        /^Cannot load config rules\.json:23: rules\[0\] \("rx"\)\.comparison_value /,
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
        severity: "warning",
      }],
      eventLog: "events.log",
      seed: DEFAULTS.seed,
    }],
    // No topology in the reference form: no instance, labels file or
    // alerting, and no labels.
    labels: {},
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
    rules.map((r) => reference(r).comparisonType),
    spellings.map(([, short]) => short),
  );
  assert.deepEqual(
    rules.map((r) => reference(r).comparisonValue),
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
    reference(json.monitors[0].rules[0]).comparisonValue,
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
    reference(yaml.monitors[0].rules[0]).comparisonValue,
    18446744073709551615n,
  );
  const safe = parseConfig(
    referenceWith((
      d,
    ) => (d.rules[0].comparison_value = Number.MAX_SAFE_INTEGER)),
    "rules.json",
  );
  assert.equal(
    reference(safe.monitors[0].rules[0]).comparisonValue,
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
  assert.equal(
    reference(quoted.monitors[0].rules[0]).comparisonValue,
    9007199254740993n,
  );
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
      severity: "warning",
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
    severity: "warning",
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
  assert.equal(reference(config.monitors[0].rules[0]).comparisonValue, 5n);
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
      /^Cannot load config ids\.json:1: \[1\]\.name is already the name of \[0\], got "a"$/,
    ],
    [
      `{"data-ids": [{"name": "a", "data_id": 7}]}`,
      "ids.json",
      /^Cannot load config ids\.json:1: data-ids\[0\] \("a"\)\.data_id must be a quoted hex string; write it as "0x0000000000000007", got 7$/,
    ],
    [
      `{"data_ids": []}`,
      "ids.json",
      /^Cannot load config ids\.json:1: data_ids is not a known key; expected one of data-ids, got \[\]; did you mean "data-ids"\?$/,
    ],
    [
      `"x"`,
      "ids.json",
      /^Cannot load config ids\.json:1: top level must be a list/,
    ],
    [
      `[{"name": "a",`,
      "ids.json",
      /^Cannot load config ids\.json:1: invalid JSON at column/,
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
        /^Cannot load config rules\.json:4: data-ids is also given by the --data-ids file ids\.json; use one or the other, got \[/,
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
        /^Cannot load config rules\.json:1: rules\[0\] \("Rx Bytes\/s > 1MeBs"\)\.data_id 0x1020000100000000 is not one of the declared data IDs \(0x0000000000000001\), got "0x1020000100000000"$/,
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

/** An agent-form file whose one monitor has three counters and `rules`. */
function signalYaml(rules: string, monitor = "\n    depth: 64"): string {
  return `
monitors:
  - name: nic
    source: sim${monitor}
    columns:
      - {name: port_0_rx_ecn_packets, data_id: "0x1"}
      - {name: port_0_rx_packets, data_id: "0x2"}
      - {name: port_0_rx_discard_buf_packets, data_id: "0x3"}
    rules:
${rules}
`;
}

Deno.test("parseConfig() reads signal rules of every kind into their normalized form", () => {
  const config = parseConfig(
    signalYaml(`
      - name: ECN storm
        rate: port_0_rx_ecn_packets
        window: 1ms
        above: 1M/s
        clear: 200k/s
        for: 500us
        keep_firing_for: 10ms
        severity: critical
        summary: ECN marks above 1M/s on port 0
        runbook_url: https://wiki.example.com/runbooks/ecn-storm
      - name: Rx discards over 0.1 %
        ratio: port_0_rx_discard_buf_packets
        to: port_0_rx_packets
        window: 1ms
        above: 0.1%
      - name: idle
        value: port_0_rx_packets
        below: 1_000
        clear: "1.5k"
        for: 1.5ms
        keep_firing_for: 0
      - name: PFC bursts
        increase: port_0_rx_ecn_packets
        above: 5
        for: 3 of 5 samples
        keep_firing_for: 2 ms
        severity: info
      - name: plain numbers
        rate: port_0_rx_packets
        window: 12.7ms
        above: 1000000
        clear: 2e5
        for: 128 of 128
      - name: top of the range
        value: port_0_rx_packets
        below: "18446744073709551615"
      - name: reference with labels
        column: port_0_rx_packets
        comparison_type: gt
        comparison_value: 5
        severity: critical
        summary: rx above 5 for 64 samples
        runbook_url: http://runbooks.internal:8080/rx?port=0#busy
      - name: reference
        data_id: "0x3"
        comparison_type: incremental_greater_than
        comparison_value: "7"`),
    "signals.yaml",
  );
  assert.deepEqual(config.monitors[0].rules, [
    {
      name: "ECN storm",
      signal: "rate",
      column: 0,
      windowNs: 1_000_000,
      direction: "above",
      threshold: 1_000_000,
      clear: 200_000,
      forNs: 500_000,
      keepFiringForNs: 10_000_000,
      severity: "critical",
      summary: "ECN marks above 1M/s on port 0",
      runbookUrl: "https://wiki.example.com/runbooks/ecn-storm",
    },
    {
      name: "Rx discards over 0.1 %",
      signal: "ratio",
      column: 2,
      denominator: 1,
      windowNs: 1_000_000,
      direction: "above",
      threshold: 0.001,
      clear: 0.001,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      name: "idle",
      signal: "value",
      column: 1,
      windowNs: 0,
      direction: "below",
      threshold: 1000n,
      clear: 1500n,
      forNs: 1_500_000,
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      name: "PFC bursts",
      signal: "increase",
      column: 0,
      windowNs: 0,
      direction: "above",
      threshold: 5n,
      clear: 5n,
      forNs: 0,
      mOfN: { m: 3, n: 5 },
      keepFiringForNs: 2_000_000,
      severity: "info",
    },
    {
      // The window and N at the ring's limit: (2 x 64 - 1) x 100 µs, 2 x 64.
      name: "plain numbers",
      signal: "rate",
      column: 1,
      windowNs: 12_700_000,
      direction: "above",
      threshold: 1_000_000,
      clear: 200_000,
      forNs: 0,
      mOfN: { m: 128, n: 128 },
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      name: "top of the range",
      signal: "value",
      column: 1,
      windowNs: 0,
      direction: "below",
      threshold: 18446744073709551615n,
      clear: 18446744073709551615n,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "warning",
    },
    {
      name: "reference with labels",
      column: 1,
      comparisonType: "gt",
      comparisonValue: 5n,
      severity: "critical",
      summary: "rx above 5 for 64 samples",
      runbookUrl: "http://runbooks.internal:8080/rx?port=0#busy",
    },
    {
      name: "reference",
      column: 2,
      comparisonType: "inc_gt",
      comparisonValue: 7n,
      severity: "warning",
    },
  ]);
});

Deno.test("parseConfig() reads signal rules written as JSON", () => {
  const text = JSON.stringify({
    monitors: [{
      name: "nic",
      columns: [{ name: "a", data_id: "0x1" }, { name: "b", data_id: "0x2" }],
      rules: [{
        name: "r",
        ratio: "a",
        to: "b",
        window: "10 ms",
        below: 0.5,
        clear: "60%",
        for: "2 of 3",
        keep_firing_for: "1s",
      }],
    }],
  });
  assert.deepEqual(parseConfig(text, "agent.json").monitors[0].rules, [{
    name: "r",
    signal: "ratio",
    column: 0,
    denominator: 1,
    windowNs: 10_000_000,
    direction: "below",
    threshold: 0.5,
    clear: 0.6,
    forNs: 0,
    mOfN: { m: 2, n: 3 },
    keepFiringForNs: 1_000_000_000,
    severity: "warning",
  }]);
});

/** The message `parseConfig` throws for `text`, checking its class. */
function loadError(
  text: string,
  kind: typeof TypeError | typeof RangeError,
  file = "signals.yaml",
): string {
  try {
    parseConfig(text, file);
  } catch (error) {
    assert.ok(error instanceof Error && error.constructor === kind, `${error}`);
    return error.message;
  }
  assert.fail("parseConfig() accepted it");
}

Deno.test("parseConfig() refuses each malformed signal rule, naming the field and what would fit", () => {
  const at = 'Cannot load config signals.yaml:11: monitors[0].rules[0] ("r")';
  const cases: [string, typeof TypeError | typeof RangeError, string][] = [
    [
      "{name: r, column: port_0_rx_packets}",
      TypeError,
      `${at} needs comparison_type (a reference rule) or one of value, increase, rate, ratio (a signal rule), got {"name":"r","column":"port_0_rx_packets"}`,
    ],
    [
      "{name: r, comparison_type: gt, comparison_value: 1, rate: port_0_rx_packets}",
      TypeError,
      `${at}.rate is a signal rule key, but this is a reference rule (it has comparison_type or comparison_value); write it as one kind of rule or the other, got "port_0_rx_packets"`,
    ],
    [
      "{name: r, column: port_0_rx_packets, comparison_value: 1, above: 5}",
      TypeError,
      `${at}.above is a signal rule key, but this is a reference rule (it has comparison_type or comparison_value); write it as one kind of rule or the other, got 5`,
    ],
    [
      "{name: r, column: port_0_rx_packets, comparison_type: gt}",
      TypeError,
      `${at}.comparison_value is required, got nothing`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, ratio: port_0_rx_packets, window: 1ms, above: 1}",
      TypeError,
      `${at}.ratio cannot be given with rate: a signal rule watches one signal, got "port_0_rx_packets"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, column: port_0_rx_packets, above: 1}",
      TypeError,
      `${at}.column is for reference rules; a signal rule names its column in value (value: <column name>), got "port_0_rx_packets"`,
    ],
    [
      '{name: r, rate: port_0_rx_packets, data_id: "0x2", window: 1ms, above: 1}',
      TypeError,
      `${at}.data_id is for reference rules; a signal rule names its column in rate (rate: <column name>), got "0x2"`,
    ],
    [
      "{name: r, value: port_9, above: 1}",
      TypeError,
      `${at}.value must be one of this monitor's column names (port_0_rx_ecn_packets, port_0_rx_packets, port_0_rx_discard_buf_packets), got "port_9"`,
    ],
    [
      "{name: r, ratio: port_0_rx_packets, window: 1ms, above: 1%}",
      TypeError,
      `${at}.to is required for a ratio: the column whose increase divides, e.g. to: port_0_rx_packets, got nothing`,
    ],
    [
      "{name: r, ratio: port_0_rx_packets, to: packets, window: 1ms, above: 1%}",
      TypeError,
      `${at}.to must be one of this monitor's column names (port_0_rx_ecn_packets, port_0_rx_packets, port_0_rx_discard_buf_packets), got "packets"`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, to: port_0_rx_packets, window: 1ms, above: 1}",
      TypeError,
      `${at}.to is for ratio rules only (the column that divides), got "port_0_rx_packets"`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, above: 1M/s}",
      TypeError,
      `${at}.window is required for a rate: the time it is taken over, e.g. window: 1ms, got nothing`,
    ],
    [
      "{name: r, increase: port_0_rx_packets, window: 1ms, above: 1}",
      TypeError,
      `${at}.window is for rate and ratio rules; an increase rule looks at each sample (use rate: for a rate over a window), got "1ms"`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 0, above: 1}",
      RangeError,
      `${at}.window must be longer than 0, e.g. "500us" or "10ms", got 0`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 1000, above: 1}",
      TypeError,
      `${at}.window needs a unit, e.g. "500us" or "10ms" (ns, us, µs, ms, s, m (minutes) or h), got 1000`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 1, below: 0}",
      TypeError,
      `${at}.below cannot be given with above: a rule is raised in one direction, got 0`,
    ],
    [
      "{name: r, value: port_0_rx_packets, clear: 1}",
      TypeError,
      `${at} needs above or below: the threshold it watches for, got {"name":"r","value":"port_0_rx_packets","clear":1}`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 1ms, above: 1M/s, clear: 2M/s}",
      RangeError,
      `${at}.clear must not be above the threshold (above: "1M/s"): an above rule ends once its signal is at or below the clear level, got "2M/s"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, below: 10, clear: 9}",
      RangeError,
      `${at}.clear must not be below the threshold (below: 10): a below rule ends once its signal is at or above the clear level, got 9`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 1.5}",
      TypeError,
      `${at}.above must be a whole number: a value threshold is an exact unsigned 64-bit integer, got 1.5`,
    ],
    [
      "{name: r, increase: port_0_rx_packets, above: 1k/s}",
      TypeError,
      `${at}.above is per second, but an increase is per sample; use rate: (over a window) for a threshold per second, got "1k/s"`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 1ms, above: 10%}",
      TypeError,
      `${at}.above is a percentage, which only a ratio threshold can be, got "10%"`,
    ],
    [
      "{name: r, ratio: port_0_rx_packets, to: port_0_rx_ecn_packets, window: 1ms, below: 1M/s}",
      TypeError,
      `${at}.below is per second, but a ratio has no unit; write a fraction or a percentage, e.g. 0.001 or "0.1%", got "1M/s"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, clear: -1}",
      RangeError,
      `${at}.clear must not be negative, got -1`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, for: 5 of 3}",
      RangeError,
      `${at}.for needs M <= N: 5 of the last 3 samples can never hold, got "5 of 3"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, for: 0 of 3}",
      RangeError,
      `${at}.for needs M >= 1: 0 of N would hold on every sample, got "0 of 3"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, for: 3 of 0}",
      RangeError,
      `${at}.for needs N >= 1: the rule looks at the last N samples, got "3 of 0"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, for: 3 of 129}",
      RangeError,
      `${at}.for 3 of 129 needs depth >= 65 (N <= 2 x depth, the samples the ring holds), got depth 64`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 12.8ms, above: 5}",
      RangeError,
      `${at}.window 12.8ms needs depth >= 65 at a 100 µs period (W <= (2 x depth - 1) x period), got depth 64, which fits a window of at most 12.7 ms`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, keep_firing_for: 10}",
      TypeError,
      `${at}.keep_firing_for needs a unit, e.g. "500us" or "10ms" (ns, us, µs, ms, s, m (minutes) or h), got 10`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, for: 8d}",
      TypeError,
      `${at}.for has an unknown unit "d"; use ns, us, µs, ms, s, m (minutes) or h, got "8d"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, severity: Critical}",
      TypeError,
      `${at}.severity must be a lowercase word such as critical, warning or info (a-z, 0-9 and _, starting with a letter, at most 32 characters), got "Critical"`,
    ],
    [
      '{name: r, value: port_0_rx_packets, above: 5, summary: "a\\nb"}',
      TypeError,
      `${at}.summary contains U+000A (a line break) at index 1; a summary must be one line of printable text, got "a\\nb"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, runbook_url: wiki/ecn}",
      TypeError,
      `${at}.runbook_url must be an http:// or https:// URL of at most 1024 characters, e.g. https://wiki.example.com/runbooks/ecn-storm, got "wiki/ecn"`,
    ],
    [
      "{name: r, column: port_0_rx_packets, comparison_type: gt, comparison_value: 5, runbook_url: 'https://u:p@wiki.example.com/rb'}",
      TypeError,
      `${at}.runbook_url must not hold a user or password (it is shown on every alert of the rule and on /metrics); link a page that asks for them, got "https://u:p@wiki.example.com/rb"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, runbook: https://wiki.example.com/rb}",
      TypeError,
      `${at}.runbook is not a known key; expected one of name, value, above, below, clear, for, keep_firing_for, severity, summary, runbook_url, got "https://wiki.example.com/rb"; did you mean "runbook_url"?`,
    ],
    [
      "{name: r, value: port_0_rx_packets, above: 5, keep_firing_fro: 1ms}",
      TypeError,
      `${at}.keep_firing_fro is not a known key; expected one of name, value, above, below, clear, for, keep_firing_for, severity, summary, runbook_url, got "1ms"; did you mean "keep_firing_for"?`,
    ],
    [
      "{name: r, ratio: port_0_rx_packets, to: port_0_rx_packets, window: 1ms, above: 1%}",
      TypeError,
      `${at}.to names the same column as ratio: the ratio would always be 1, got "port_0_rx_packets"`,
    ],
    [
      "{name: r, rate: port_0_rx_packets, window: 1ms, below: 0/s}",
      RangeError,
      `${at}.below can never hold: a rate is never below 0, got "0/s"`,
    ],
    [
      "{name: r, value: port_0_rx_packets, below: 0}",
      RangeError,
      `${at}.below can never hold: a value is never below 0, got 0`,
    ],
    [
      '{name: r, value: port_0_rx_packets, above: "18446744073709551615"}',
      RangeError,
      `${at}.above can never hold: no 64-bit value is above it, got "18446744073709551615"`,
    ],
    [
      '{name: r, increase: port_0_rx_packets, above: "9223372036854775807"}',
      RangeError,
      `${at}.above can never hold: an increase of 2^63 or more is a counter reset, not an increase, got "9223372036854775807"`,
    ],
  ];
  for (const [rule, kind, message] of cases) {
    assert.equal(
      loadError(signalYaml(`      - ${rule}`), kind),
      message,
      rule,
    );
  }
  // The largest thresholds that can still be crossed load.
  for (
    const rule of [
      '{name: r, value: port_0_rx_packets, above: "18446744073709551614"}',
      '{name: r, increase: port_0_rx_packets, above: "9223372036854775806"}',
      "{name: r, value: port_0_rx_packets, below: 1}",
    ]
  ) {
    assert.equal(
      parseConfig(signalYaml(`      - ${rule}`), "s.yaml").monitors[0].rules
        .length,
      1,
    );
  }
});

Deno.test("parseConfig() refuses increase, rate and ratio on a gauge column", () => {
  const yaml = (rule: string) => `
monitors:
  - name: nic
    source: sim
    columns:
      - {name: rx, data_id: "0x1"}
      - {name: latency, data_id: "0x2", kind: gauge}
    rules:
      - ${rule}
`;
  const at = 'Cannot load config g.yaml:9: monitors[0].rules[0] ("r")';
  assert.equal(
    loadError(
      yaml("{name: r, rate: latency, window: 1ms, above: 5}"),
      TypeError,
      "g.yaml",
    ),
    `${at}.rate names a gauge (a level, not a running count); rate needs a counter: use value: latency, got "latency"`,
  );
  assert.equal(
    loadError(
      yaml("{name: r, increase: latency, above: 5}"),
      TypeError,
      "g.yaml",
    ),
    `${at}.increase names a gauge (a level, not a running count); increase needs a counter: use value: latency, got "latency"`,
  );
  assert.equal(
    loadError(
      yaml("{name: r, ratio: rx, to: latency, window: 1ms, above: 5}"),
      TypeError,
      "g.yaml",
    ),
    `${at}.to names a gauge (a level, not a running count); ratio needs a counter, got "latency"`,
  );
  // A level is what value rules are for.
  assert.equal(
    parseConfig(yaml("{name: r, value: latency, above: 5}"), "g.yaml")
      .monitors[0].rules.length,
    1,
  );
});

Deno.test("parseConfig() names the depth a window or M of N needs, as configured or defaulted", () => {
  // The example of issue 14: 10 ms at 100 µs needs 10 ms <= (2 x 51 - 1) x 100 µs.
  assert.equal(
    loadError(
      signalYaml(
        "      - {name: r, rate: port_0_rx_packets, window: 10ms, above: 5}",
        "\n    depth: 32",
      ),
      RangeError,
    ),
    'Cannot load config signals.yaml:11: monitors[0].rules[0] ("r").window 10ms needs depth >= 51 at a 100 µs period (W <= (2 x depth - 1) x period), got depth 32, which fits a window of at most 6.3 ms',
  );
  // One sample period less fits exactly.
  const fits = parseConfig(
    signalYaml(
      "      - {name: r, rate: port_0_rx_packets, window: 9.9ms, above: 5}",
      "\n    depth: 50",
    ),
    "signals.yaml",
  );
  assert.equal(fits.monitors[0].rules.length, 1);
  assert.equal(
    loadError(
      signalYaml(
        "      - {name: r, rate: port_0_rx_packets, window: 1 s, above: 5}",
        "\n    sample_period_ns: 10000",
      ),
      RangeError,
    ),
    'Cannot load config signals.yaml:11: monitors[0].rules[0] ("r").window 1 s needs depth >= 50001 at a 10 µs period (W <= (2 x depth - 1) x period), got depth 1024 (the default), which fits a window of at most 20.47 ms',
  );
  assert.equal(
    loadError(
      signalYaml(
        "      - {name: r, increase: port_0_rx_packets, above: 5, for: 1 of 2049}",
        "",
      ),
      RangeError,
    ),
    'Cannot load config signals.yaml:10: monitors[0].rules[0] ("r").for 1 of 2049 needs depth >= 1025 (N <= 2 x depth, the samples the ring holds), got depth 1024 (the default)',
  );
});

Deno.test("parseConfig() keeps the reference form verbatim: no signal keys, no labels", () => {
  for (
    const [key, value] of [
      ["rate", "port_0_rx_bytes"],
      ["window", "1ms"],
      ["above", 5],
      ["severity", "critical"],
      ["summary", "s"],
      ["runbook_url", "https://wiki.example.com/rb"],
    ]
  ) {
    const text = referenceWith((d) => (d.rules[0][key] = value));
    const message = loadError(text, TypeError, "rules.json");
    assert.ok(
      message.startsWith(
        `Cannot load config rules.json:24: rules[0] ("rx").${key} is not a known key`,
      ),
      message,
    );
    assert.ok(
      message.includes(
        "expected one of name, data_id, comparison_type, comparison_value",
      ),
      message,
    );
  }
  // A reference rule without a comparison_type says what it needs.
  assert.equal(
    loadError(
      referenceWith((d) => delete d.rules[0].comparison_type),
      TypeError,
      "rules.json",
    ),
    'Cannot load config rules.json:19: rules[0] ("rx").comparison_type is required, got nothing',
  );
});

/** Five counters and `rules` in a monitor of `source`, as an operator writes them. */
function operatorYaml(rules: string, monitor = "    source: sim\n"): string {
  return `monitors:
  - name: nic
${monitor}    columns:
      - { name: port_0_rx_bytes, data_id: "0x1" }
      - { name: port_0_tx_bytes, data_id: "0x2" }
      - { name: port_0_rx_ecn_packets, data_id: "0x3" }
      - { name: port_0_rx_discard_packets, data_id: "0x4" }
      - { name: port_0_tx_pause, data_id: "0x5" }
    rules:
${rules}`;
}

Deno.test("a misspelt key is named with its line, its rule and the key meant", () => {
  const text = operatorYaml(
    `      - { name: busy, column: port_0_rx_bytes, comparison_type: gt, comparison_value: 1 }
      - name: ecn_burst
        rate: port_0_rx_ecn_packets
        window: 1ms
        treshold: 250k/s
`,
  );
  assert.equal(
    loadError(text, TypeError, "rules.yaml"),
    'Cannot load config rules.yaml:15: monitors[0].rules[1] ("ecn_burst").treshold is not a known key; expected one of name, rate, window, above, below, clear, for, keep_firing_for, severity, summary, runbook_url, got "250k/s"; did you mean above or below (the threshold)?',
  );
  // Not "needs above or below": the key written is the problem, not the one missing.
  const misspelt = text.replace("treshold", "abvoe");
  assert.match(
    loadError(misspelt, TypeError, "rules.yaml"),
    /:15: monitors\[0\]\.rules\[1\] \("ecn_burst"\)\.abvoe is not a known key; .*; did you mean "above"\?$/,
  );
});

Deno.test("a column that does not exist lists every column and the nearest", () => {
  const text = operatorYaml(
    "      - { name: drops, column: port_0_rx_discard_pkts, comparison_type: gt, comparison_value: 1 }\n",
  );
  assert.equal(
    loadError(text, TypeError, "rules.yaml"),
    'Cannot load config rules.yaml:11: monitors[0].rules[0] ("drops").column must be one of this monitor\'s column names (port_0_rx_bytes, port_0_tx_bytes, port_0_rx_ecn_packets, port_0_rx_discard_packets, port_0_tx_pause), got "port_0_rx_discard_pkts"; did you mean "port_0_rx_discard_packets"?',
  );
  // Of many columns, the nearest are named, with how many there are.
  const many = `monitors:
  - name: nic
    source: sim
    columns:
${
    Array.from(
      { length: 40 },
      (_, i) => `      - { name: c${i}_bytes, data_id: "0x${i + 1}" }\n`,
    ).join("")
  }    rules:
      - { name: r, value: c7_byte, above: 1 }
`;
  assert.match(
    loadError(many, TypeError, "many.yaml"),
    /^Cannot load config many\.yaml:46: monitors\[0\]\.rules\[0\] \("r"\)\.value must be one of this monitor's column names \(40 in all; the nearest: c7_bytes, .*\), got "c7_byte"; did you mean "c7_bytes"/,
  );
});

Deno.test("comparison_value beside rate blames the key that does not belong", () => {
  const text = operatorYaml(`      - name: ecn
        rate: port_0_rx_ecn_packets
        window: 1ms
        above: 250k/s
        comparison_value: 3
`);
  assert.equal(
    loadError(text, TypeError, "rules.yaml"),
    'Cannot load config rules.yaml:15: monitors[0].rules[0] ("ecn").comparison_value is for reference rules, but this is a rate rule (it has rate:); write it as one kind of rule or the other, got 3',
  );
  // A reference rule that strays into a signal key: the signal key is blamed.
  const reference = operatorYaml(`      - name: drops
        column: port_0_rx_discard_packets
        comparison_type: gt
        comparison_value: 3
        rate: port_0_rx_discard_packets
`);
  assert.match(
    loadError(reference, TypeError, "rules.yaml"),
    /^Cannot load config rules\.yaml:15: monitors\[0\]\.rules\[0\] \("drops"\)\.rate is a signal rule key, but this is a reference rule/,
  );
});

Deno.test("a sample period the source cannot deliver is refused with its range", () => {
  const text = operatorYaml(
    "      - { name: busy, column: port_0_rx_bytes, comparison_type: gt, comparison_value: 1 }\n",
    "    source: doca\n    sample_period_ns: 100\n",
  );
  assert.equal(
    loadError(text, RangeError, "agent.yaml"),
    "Cannot load config agent.yaml:4: monitors[0].sample_period_ns must be between 10000 and 1000000000 for source doca (10 µs to 1 s), got 100",
  );
  // The reference form is the doca source.
  assert.equal(
    loadError(
      referenceWith((d) => (d.diag_sample_period_ns = 100)),
      RangeError,
      "rules.json",
    ),
    "Cannot load config rules.json:2: diag_sample_period_ns must be between 10000 and 1000000000 for source doca (10 µs to 1 s), got 100",
  );
  // A monitor without a source is a doca monitor.
  assert.match(
    loadError(
      text.replace("    source: doca\n", ""),
      RangeError,
      "agent.yaml",
    ),
    /:3: monitors\[0\]\.sample_period_ns must be between 10000 and 1000000000 for source doca/,
  );
});

Deno.test("messages name the line in YAML and in JSON, and the rule by name", () => {
  const yaml = `# comments count as lines
monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "0x1" }]
    rules:
      - name: busy
        column: rx
        comparison_type: gt
        comparison_value: 1
      - name: drops
        column: rx
        comparison_type: gte
        comparison_value: 1
`;
  assert.equal(
    loadError(yaml, TypeError, "agent.yaml"),
    'Cannot load config agent.yaml:13: monitors[0].rules[1] ("drops").comparison_type must be one of gt, lt, dt_gt, dt_lt, inc_gt (or their long forms), got "gte"; did you mean "gt"?',
  );
  const json = `{
  "data-ids": [{ "name": "rx", "data_id": "0x1" }],
  "rules": [
    { "name": "busy", "data_id": "0x1", "comparison_type": "gt", "comparison_value": 1 },
    {
      "name": "drops",
      "data_id": "0x1",
      "comparison_type": "gte",
      "comparison_value": 1
    }
  ]
}`;
  assert.equal(
    loadError(json, TypeError, "rules.json"),
    'Cannot load config rules.json:8: rules[1] ("drops").comparison_type must be one of gt, lt, dt_gt, dt_lt, inc_gt (or their long forms), got "gte"; did you mean "gt"?',
  );
  // A missing key is named at the line its rule starts on.
  assert.match(
    loadError(
      json.replace(',\n      "comparison_value": 1', "").replace("gte", "gt"),
      TypeError,
      "rules.json",
    ),
    /^Cannot load config rules\.json:5: rules\[1\] \("drops"\)\.comparison_value is required, got nothing$/,
  );
  // A column is named too.
  assert.match(
    loadError(
      yaml.replace('data_id: "0x1"', 'data_id: "0xq"'),
      TypeError,
      "agent.yaml",
    ),
    /^Cannot load config agent\.yaml:5: monitors\[0\]\.columns\[0\] \("rx"\)\.data_id must be a hex string/,
  );
});
