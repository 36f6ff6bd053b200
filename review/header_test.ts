import assert from "node:assert/strict";
import { formatHeader } from "../events/header.ts";
import { HeaderParser, unquoteName } from "./header.ts";

function parse(text: string): { parser: HeaderParser; rest: string[] } {
  const lines = text.split("\n");
  const parser = new HeaderParser(lines[0]);
  let i = 1;
  while (i < lines.length && parser.accept(lines[i])) i++;
  return { parser, rest: lines.slice(i) };
}

Deno.test("HeaderParser reads back what the writer's formatHeader prints", () => {
  const text = formatHeader({
    version: "dpu-traceback 0.1.0",
    device: 'odd "dev", 1',
    depth: 1024,
    samplePeriodNs: 100000,
    columns: [
      { name: "port_0_rx_bytes", dataId: "0x1020000100000000" },
      { name: 'pcie, max "read" ns', dataId: "0x1160000d00000000" },
    ],
    rules: [
      {
        name: "Rx jumps",
        column: 0,
        comparisonType: "inc_gt",
        comparisonValue: 18446744073709551615n,
      },
      {
        name: 'Lat "low"',
        column: 1,
        comparisonType: "dt_lt",
        comparisonValue: 7n,
      },
    ],
  }) + "timestamp, port_0_rx_bytes";
  const { parser, rest } = parse(text);
  assert.deepEqual(rest, ["timestamp, port_0_rx_bytes"]);
  const h = parser.header();
  assert.equal(h.version, "dpu-traceback 0.1.0");
  assert.equal(h.device, 'odd "dev", 1');
  assert.equal(h.depth, 1024);
  assert.equal(h.samplePeriodNs, 100000);
  assert.deepEqual(h.columns, [
    { name: "port_0_rx_bytes", dataId: "0x1020000100000000" },
    { name: 'pcie, max "read" ns', dataId: "0x1160000d00000000" },
  ]);
  assert.deepEqual(
    h.rules.map((r) => [r.name, r.dataId, r.kind, r.typeName, r.value]),
    [
      [
        "Rx jumps",
        "0x1020000100000000",
        "inc_gt",
        "incremental",
        "18446744073709551615",
      ],
      [
        'Lat "low"',
        "0x1160000d00000000",
        "dt_lt",
        "differential_less_than",
        "7",
      ],
    ],
  );
});

Deno.test("HeaderParser takes text data IDs (the GPU monitor) and skips fields it does not know", () => {
  const { parser } = parse([
    "Telemetry monitor : dpu-traceback 0.2.0",
    "Configuration: ",
    '\tDevice: "GPU 0"',
    "\tSample period: 100000000ns",
    "\tSomething new: 3",
    "\tData IDs: [",
    "\t\t{",
    '\t\t\tName: "gpu0_temperature_c",',
    "\t\t\tData ID: nvml gpu0.temperature",
    "\t\t\tUnit: C",
    "\t\t},",
    "\t]",
    "\tRules: [",
    "\t]",
  ].join("\n"));
  const h = parser.header();
  assert.equal(h.samplePeriodNs, 100000000);
  assert.deepEqual(h.columns, [{
    name: "gpu0_temperature_c",
    dataId: "nvml gpu0.temperature",
  }]);
  assert.deepEqual(h.rules, []);
});

Deno.test("HeaderParser ends at the first line that is not indented", () => {
  const p = new HeaderParser("Telemetry monitor : x");
  assert.equal(p.accept(""), true);
  assert.equal(p.accept('\tDevice: "d"'), true);
  assert.equal(
    p.accept('<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "r"'),
    false,
  );
  assert.equal(p.accept("1795272600000000000, 1"), false);
});

Deno.test("unquoteName undoes the writer's quoting", () => {
  assert.equal(unquoteName('"a ""b"", c",'), 'a "b", c');
  assert.equal(unquoteName(" plain "), "plain");
});
