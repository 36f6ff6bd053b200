import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";
import { MAX_TOPOLOGY_LABELS } from "./limits.ts";
import {
  instance,
  labelNameProblem,
  labelValue,
  RESERVED_LABELS,
  topologyLabels,
} from "./topology_labels.ts";
import { describeIssue, parseValue } from "./values.ts";

const parseLabelValue = (v: unknown) => parseValue(labelValue, v);
const parseInstance = (v: unknown) => parseValue(instance, v);
/** The labels, or the first problem: its label (none for the count), words and kind. */
function checkTopologyLabels(labels: Record<string, unknown>) {
  const result = topologyLabels.safeParse(labels, { error: describeIssue });
  if (result.success) return { ok: true as const, value: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false as const,
    problem: {
      name: issue.path[0] as string | undefined,
      problem: issue.message,
      kind: issue.code === "custom" && issue.params?.kind === "range"
        ? "range"
        : "type",
    },
  };
}

const MONITORS = `monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "0x1" }]
`;

Deno.test("parseConfig() reads instance, labels and labels_file", () => {
  const config = parseConfig(
    `instance: dpu-r12-07
labels:
  rack: r12
  rail: "3"
  plane: a
  switch: leaf-12
  switch_port: Ethernet12
labels_file: /etc/dpu-traceback/level_labels.ini
${MONITORS}`,
    "a.yaml",
  );
  assert.equal(config.instance, "dpu-r12-07");
  assert.deepEqual(config.labels, {
    rack: "r12",
    rail: "3",
    plane: "a",
    switch: "leaf-12",
    switch_port: "Ethernet12",
  });
  assert.equal(config.labelsFile, "/etc/dpu-traceback/level_labels.ini");
});

Deno.test("parseConfig() leaves instance and labels_file out and labels empty when not configured, in both forms", () => {
  const agent = parseConfig(MONITORS, "a.yaml");
  assert.deepEqual(agent.labels, {});
  assert.equal("instance" in agent, false);
  assert.equal("labelsFile" in agent, false);
  const reference = parseConfig(
    '{"data-ids": [{"name": "rx", "data_id": "0x1"}]}',
    "rules.json",
  );
  assert.deepEqual(reference.labels, {});
  assert.equal("instance" in reference, false);
});

Deno.test("parseConfig() refuses each bad label, instance or labels_file with its path and reason", () => {
  const long = "v".repeat(129);
  const cases: [string, string, string][] = [
    [
      "labels: { rail: 3 }",
      "TypeError",
      'labels.rail must be a string; quote it ("3") so YAML keeps it as written, got 3',
    ],
    [
      "labels: { up: true }",
      "TypeError",
      'labels.up must be a string; quote it ("true") so YAML keeps it as written, got true',
    ],
    [
      "labels: { rack: }",
      "TypeError",
      "labels.rack must be a string, got null",
    ],
    [
      'labels: { rack: "" }',
      "TypeError",
      'labels.rack must not be empty: Prometheus and Alertmanager treat an empty label as no label (leave it out instead), got ""',
    ],
    [
      'labels: { rack: "r1\\nr2" }',
      "TypeError",
      'labels.rack contains U+000A (a line break) at index 2; a label value must be one line of printable text, got "r1\\nr2"',
    ],
    [
      'labels: { rack: "r1\\u202Eevil" }',
      "TypeError",
      'labels.rack contains U+202E (a bidi override) at index 2; a label value must be one line of printable text, got "r1\\u202eevil"',
    ],
    [
      `labels: { rack: ${long} }`,
      "RangeError",
      `labels.rack is longer than 128 characters, got "${"v".repeat(117)}…"`,
    ],
    [
      "labels: { rack-id: r12 }",
      "TypeError",
      'labels.rack-id is not a label name: letters, digits and _, not starting with a digit, got "r12"',
    ],
    [
      "labels: { 1rack: r12 }",
      "TypeError",
      'labels.1rack is not a label name: letters, digits and _, not starting with a digit, got "r12"',
    ],
    [
      'labels: { "rack id": r12 }',
      "TypeError",
      'labels["rack id"] is not a label name: letters, digits and _, not starting with a digit, got "r12"',
    ],
    [
      "labels: { __name__: x }",
      "TypeError",
      'labels.__name__ starts with __, which Prometheus keeps for its own labels; choose another name, got "x"',
    ],
    [
      "labels: { instance: x }",
      "TypeError",
      "labels.instance is a label the agent sets itself (the agent's instance on alerts (set it with instance:), and Prometheus's scrape target on metrics); choose another name, got \"x\"",
    ],
    [
      "labels: [rack]",
      "TypeError",
      'labels must be an object of label names and values, e.g. { rack: r12, rail: "3" }, got ["rack"]',
    ],
    [
      `labels: { ${
        Array.from({ length: 11 }, (_, i) => `l${i}: x`).join(", ")
      } }`,
      "RangeError",
      "labels has 11 topology labels; at most 10, so that alerts (which add alertname, rule, monitor, device, instance and severity) stay under 20 labels, got ",
    ],
    [
      'instance: ""',
      "TypeError",
      "instance must not be empty",
    ],
    [
      "instance: 7",
      "TypeError",
      'instance must be a string; quote it ("7") so YAML keeps it as written, got 7',
    ],
    [
      `instance: ${"h".repeat(254)}`,
      "RangeError",
      "instance is longer than 253 characters, got ",
    ],
    [
      "labels_file: 5",
      "TypeError",
      "labels_file must be a string, got 5",
    ],
    [
      "label: { rack: r12 }",
      "TypeError",
      'label is not a known key; expected one of instance, labels, labels_file, alerting, listen, metrics_window_s, event_log_max_bytes, event_log_keep, web_config_file, force_ownership, doca_lib_dir, nvml_lib_dir, gpu, device, monitors, got {"rack":"r12"}; did you mean "labels"?',
    ],
  ];
  for (const [top, name, message] of cases) {
    assert.throws(
      () => parseConfig(`${top}\n${MONITORS}`, "a.yaml"),
      (error: Error) => {
        assert.equal(error.name, name, top);
        assert.ok(
          /^Cannot load config a\.yaml:\d+: /.test(error.message) &&
            error.message.replace(/^(Cannot load config a\.yaml):\d+:/, "$1:")
              .startsWith(`Cannot load config a.yaml: ${message}`),
          `${top}\n${error.message}`,
        );
        return true;
      },
    );
  }
});

Deno.test("every label the agent sets itself is refused, saying why", () => {
  for (
    const name of [
      "alertname",
      "monitor",
      "device",
      "instance",
      "severity",
      "rule",
      "job",
    ]
  ) {
    assert.ok(Object.hasOwn(RESERVED_LABELS, name), name);
    assert.equal(
      labelNameProblem(name),
      `is a label the agent sets itself (${
        RESERVED_LABELS[name]
      }); choose another name`,
    );
  }
  for (const name of ["rack", "rail", "plane", "switch", "switch_port", "_x"]) {
    assert.equal(labelNameProblem(name), undefined, name);
  }
  // A prototype key is a name like any other, not an inherited property.
  assert.equal(labelNameProblem("constructor"), undefined);
  assert.equal(labelNameProblem("__proto__"), labelNameProblem("__x"));
});

Deno.test("label values and instances take their bounds exactly", () => {
  assert.equal(parseLabelValue("v".repeat(128)).ok, true);
  assert.equal(parseLabelValue("v".repeat(129)).ok, false);
  // Characters, not UTF-16 units: 128 emoji are 128 characters.
  assert.equal(parseLabelValue("\u{1F600}".repeat(128)).ok, true);
  assert.equal(parseLabelValue("a\uD800").ok, false);
  assert.equal(parseLabelValue("a\u0085b").ok, false);
  assert.equal(parseInstance("h".repeat(253)).ok, true);
  assert.equal(parseInstance("h".repeat(254)).ok, false);
  assert.equal(parseLabelValue(undefined).ok, false);
  assert.equal(parseLabelValue({}).ok, false);
});

Deno.test("checkTopologyLabels() reports the first bad label, then the count", () => {
  const ten = Object.fromEntries(
    Array.from({ length: MAX_TOPOLOGY_LABELS }, (_, i) => [`l${i}`, "x"]),
  );
  assert.equal(checkTopologyLabels(ten).ok, true);
  const eleven = { ...ten, bad: 1 };
  const result = checkTopologyLabels(eleven);
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.problem.name, "bad");
  const tooMany = checkTopologyLabels({ ...ten, l10: "x" });
  assert.equal(!tooMany.ok && tooMany.problem.kind, "range");
});
