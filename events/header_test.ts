import assert from "node:assert/strict";
import { formatColumnNames, formatHeader } from "./header.ts";

const columns = [
  { name: "port_0_rx_bytes", dataId: "0x1020000100000000" },
  { name: 'odd, "name"', dataId: "0x1080000400000000" },
];

Deno.test("formatHeader reproduces the reference layout byte for byte", () => {
  const text = formatHeader({
    version: "dpu-traceback 0.1.0",
    device: "03:00.0",
    depth: 1024,
    samplePeriodNs: 100000,
    columns: columns.slice(0, 1),
    rules: [{
      name: "Rx Bytes/s > 1MeBs",
      column: 0,
      comparisonType: "dt_gt",
      comparisonValue: 1048576n,
    }, {
      name: "inc",
      column: 0,
      comparisonType: "inc_gt",
      comparisonValue: 18446744073709551615n,
    }],
  });
  assert.equal(
    text,
    'Telemetry monitor : dpu-traceback 0.1.0\nConfiguration: \n\tDevice: "03:00.0"\n' +
      "\tSample history depth: 1024\n\tDiag sample period: 100000ns\n\tData IDs: [\n" +
      '\t\t{\n\t\t\tName: "port_0_rx_bytes",\n\t\t\tData ID: 0x1020000100000000\n\t\t},\n\t]\n' +
      '\tRules: [\n\t\t{\n\t\t\tName: "Rx Bytes/s > 1MeBs",\n\t\t\tData ID: 0x1020000100000000\n' +
      "\t\t\tComparison type: differential_greater_than\n\t\t\tComparison value: 1048576\n\t\t},\n" +
      '\t\t{\n\t\t\tName: "inc",\n\t\t\tData ID: 0x1020000100000000\n' +
      "\t\t\tComparison type: incremental\n\t\t\tComparison value: 18446744073709551615\n\t\t},\n" +
      "\t]\n\n\n",
  );
});

Deno.test("formatHeader doubles quotes inside names", () => {
  const text = formatHeader({
    version: "v",
    device: "sim",
    depth: 1,
    samplePeriodNs: 1,
    columns,
    rules: [],
  });
  assert.match(text, /\t\t\tName: "odd, ""name""",\n/);
});

Deno.test("formatColumnNames quotes only names that need it", () => {
  assert.equal(
    formatColumnNames([...columns, { name: " padded", dataId: "0x1" }]),
    'timestamp, port_0_rx_bytes, "odd, ""name""", " padded"\n',
  );
});

Deno.test("formatHeader prints signal rules with their whole definition and no comparison type", () => {
  const text = formatHeader({
    version: "v",
    device: "sim",
    depth: 64,
    samplePeriodNs: 100000,
    columns: [
      { name: "ecn", dataId: "0x1080000400000000" },
      { name: "rx", dataId: "0x1020000200000000" },
    ],
    rules: [{
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
      summary: 'ECN "marks" above 1M/s',
    }, {
      name: "ecn > 5",
      column: 0,
      comparisonType: "gt",
      comparisonValue: 5n,
      severity: "critical",
      summary: "not printed for a reference rule",
    }, {
      name: "rx stalls",
      signal: "value",
      column: 1,
      windowNs: 0,
      direction: "below",
      threshold: 18446744073709551615n,
      clear: 18446744073709551615n,
      forNs: 0,
      mOfN: { m: 2, n: 128 },
      keepFiringForNs: 1500,
    }, {
      name: "ecn per rx",
      signal: "ratio",
      column: 0,
      denominator: 1,
      windowNs: 2_000_000,
      direction: "above",
      threshold: 1e-7,
      clear: 0,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "info",
    }],
  });
  const rules = text.slice(text.indexOf("\tRules: [\n"));
  assert.equal(
    rules,
    [
      "\tRules: [",
      "\t\t{",
      '\t\t\tName: "ECN storm",',
      "\t\t\tData ID: 0x1080000400000000",
      "\t\t\tSignal: rate over 1000000ns",
      "\t\t\tCondition: above 1000000, clear 200000, for 500000ns, keep_firing_for 10000000ns",
      "\t\t\tSeverity: critical",
      '\t\t\tSummary: "ECN ""marks"" above 1M/s"',
      "\t\t},",
      "\t\t{",
      '\t\t\tName: "ecn > 5",',
      "\t\t\tData ID: 0x1080000400000000",
      "\t\t\tComparison type: greater_than",
      "\t\t\tComparison value: 5",
      "\t\t},",
      "\t\t{",
      '\t\t\tName: "rx stalls",',
      "\t\t\tData ID: 0x1020000200000000",
      "\t\t\tSignal: value",
      "\t\t\tCondition: below 18446744073709551615, clear 18446744073709551615, for 2 of 128 samples, keep_firing_for 1500ns",
      "\t\t\tSeverity: warning",
      "\t\t},",
      "\t\t{",
      '\t\t\tName: "ecn per rx",',
      "\t\t\tData ID: 0x1080000400000000",
      "\t\t\tSignal: ratio over 2000000ns",
      "\t\t\tDenominator data ID: 0x1020000200000000",
      "\t\t\tCondition: above 1e-7, clear 0, for 0ns, keep_firing_for 0ns",
      "\t\t\tSeverity: info",
      "\t\t},",
      "\t]",
      "",
      "",
      "",
    ].join("\n"),
  );
});
