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
