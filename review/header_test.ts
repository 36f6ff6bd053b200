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

Deno.test("HeaderParser reads signal rules back: every figure of their definition, beside reference rules", () => {
  const text = formatHeader({
    version: "dpu-traceback 0.2.0",
    device: "sim",
    depth: 64,
    samplePeriodNs: 100000,
    columns: [
      { name: "ecn", dataId: "0x1080000400000000" },
      { name: "rx", dataId: "0x1020000200000000" },
    ],
    rules: [
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
        summary: 'ECN "marks", port 0',
      },
      { name: "ecn > 5", column: 0, comparisonType: "gt", comparisonValue: 5n },
      {
        name: "rx stalls",
        signal: "value",
        column: 1,
        windowNs: 0,
        direction: "below",
        threshold: 18446744073709551615n,
        clear: 18446744073709551615n,
        forNs: 0,
        mOfN: { m: 2, n: 128 },
        keepFiringForNs: 0,
      },
      {
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
      },
    ],
  }) + "timestamp, ecn, rx";
  const { parser, rest } = parse(text);
  assert.deepEqual(rest, ["timestamp, ecn, rx"]);
  const rules = parser.header().rules;
  assert.deepEqual(rules[0], {
    name: "ECN storm",
    dataId: "0x1080000400000000",
    kind: "rate",
    typeName: "rate over 1000000ns",
    value: "1000000",
    signal: {
      signal: "rate",
      windowNs: 1_000_000,
      direction: "above",
      threshold: "1000000",
      clear: "200000",
      forNs: 500_000,
      keepFiringForNs: 10_000_000,
      severity: "critical",
      summary: 'ECN "marks", port 0',
    },
  });
  assert.deepEqual(
    [rules[1].kind, rules[1].value, rules[1].signal],
    ["gt", "5", undefined],
  );
  assert.deepEqual(rules[2].signal, {
    signal: "value",
    windowNs: 0,
    direction: "below",
    threshold: "18446744073709551615",
    clear: "18446744073709551615",
    forNs: 0,
    mOfN: { m: 2, n: 128 },
    keepFiringForNs: 0,
    severity: "warning",
  });
  assert.deepEqual(rules[3].signal, {
    signal: "ratio",
    windowNs: 2_000_000,
    direction: "above",
    threshold: "1e-7",
    clear: "0",
    forNs: 0,
    keepFiringForNs: 0,
    severity: "info",
    denominatorDataId: "0x1020000200000000",
    denominator: "rx",
  });
  // Floats come back as the numbers the configuration held.
  assert.equal(Number(rules[3].signal?.threshold), 1e-7);
});

Deno.test("HeaderParser keeps a signal rule whose condition it cannot read, without guessing its definition", () => {
  const { parser } = parse([
    "Telemetry monitor : dpu-traceback 9.0.0",
    "Configuration: ",
    "\tRules: [",
    "\t\t{",
    '\t\t\tName: "future",',
    "\t\t\tData ID: 0x1",
    "\t\t\tSignal: rate over 1000ns",
    "\t\t\tCondition: crosses 5 twice",
    "\t\t},",
    "\t\t{",
    '\t\t\tName: "later",',
    "\t\t\tData ID: 0x1",
    "\t\t\tSignal: increase",
    "\t\t\tCondition: below 7, hold 3, for 2 of 4",
    "\t\t},",
    "\t\t{",
    '\t\t\tName: "odd",',
    "\t\t\tData ID: 0x1",
    "\t\t\tSignal: entropy over 5ns",
    "\t\t\tCondition: above 1",
    "\t\t},",
    "\t]",
  ].join("\n"));
  const [future, later, odd] = parser.header().rules;
  assert.deepEqual(future, {
    name: "future",
    dataId: "0x1",
    kind: "rate",
    typeName: "rate over 1000ns",
    value: "",
  });
  // Parts it does not know are skipped; the rest is read.
  assert.deepEqual(later.signal, {
    signal: "increase",
    windowNs: 0,
    direction: "below",
    threshold: "7",
    clear: "7",
    forNs: 0,
    mOfN: { m: 2, n: 4 },
    keepFiringForNs: 0,
  });
  assert.deepEqual([odd.kind, odd.typeName, odd.signal], [
    undefined,
    "entropy over 5ns",
    undefined,
  ]);
});

Deno.test("a header's Monitor line (ours) reads back as the configured name; a header without one has none", () => {
  const options = {
    version: "dpu-traceback 0.2.0",
    device: "replay capture.csv",
    depth: 2,
    samplePeriodNs: 100_000,
    columns: [{ name: "rx", dataId: "0x1020000100000000" }],
    rules: [],
  };
  const read = (text: string) => {
    const lines = text.split("\n");
    const p = new HeaderParser(lines[0]);
    for (const line of lines.slice(1)) if (!p.accept(line)) break;
    return p.header();
  };
  const named = formatHeader({ ...options, name: 'roce "0"' });
  assert.match(
    named,
    /\n\tDevice: "replay capture\.csv"\n\tMonitor: "roce ""0"""\n\tSample history depth: 2\n/,
  );
  assert.equal(read(named).monitor, 'roce "0"');
  assert.equal(read(named).device, "replay capture.csv");
  assert.equal(read(formatHeader(options)).monitor, undefined);
});
