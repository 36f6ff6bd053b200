import assert from "node:assert/strict";
import {
  MAX_EVENT_LOG_KEEP,
  MAX_METRICS_WINDOW_S,
  MAX_SAMPLE_PERIOD_NS,
  MAX_TEXT_CHARS,
  MIN_EVENT_LOG_MAX_BYTES,
  MIN_METRICS_WINDOW_S,
} from "./limits.ts";
import { z } from "zod";
import { monitorSchema, samplePeriod } from "./schema.ts";
import { SAMPLE_PERIODS } from "./limits.ts";
import {
  comparisonType,
  dataId,
  eventLogKeep,
  eventLogMaxBytes,
  integer,
  listen,
  metricsWindow,
  monitorName,
  type Parsed,
  parseValue,
  text,
  u64,
} from "./values.ts";

const parseU64 = (v: unknown) => parseValue(u64, v);
const parseDataId = (v: unknown) => parseValue(dataId, v);
const parseComparisonType = (v: unknown) => parseValue(comparisonType, v);
const parsePositiveInteger = (v: unknown) => parseValue(integer(1), v);
const parseInteger = (v: unknown) => parseValue(integer(), v);
const parseText = (v: unknown) => parseValue(text, v);
const parseMonitorName = (v: unknown) => parseValue(monitorName, v);
const parseBoolean = (v: unknown) => parseValue(z.boolean(), v);
const parseListen = (v: unknown) => parseValue(listen, v);
const parseEventLogMaxBytes = (v: unknown) => parseValue(eventLogMaxBytes, v);
const parseEventLogKeep = (v: unknown) => parseValue(eventLogKeep, v);
const parseMetricsWindow = (v: unknown) => parseValue(metricsWindow, v);
/** Whether a monitor of `source` (with a column) is accepted. */
const parseSource = (source: unknown) =>
  parseValue(monitorSchema, {
    name: "m",
    source,
    columns: [{ name: "rx", data_id: "0x1" }],
  });

Deno.test("parseU64() accepts exact numbers and decimal strings", () => {
  assert.deepEqual(parseU64(0), { ok: true, value: 0n });
  assert.deepEqual(parseU64(-0), { ok: true, value: 0n });
  assert.deepEqual(parseU64(1048576), { ok: true, value: 1048576n });
  assert.deepEqual(parseU64(Number.MAX_SAFE_INTEGER), {
    ok: true,
    value: 9007199254740991n,
  });
  assert.deepEqual(parseU64("18446744073709551615"), {
    ok: true,
    value: 18446744073709551615n,
  });
  assert.deepEqual(parseU64("007"), { ok: true, value: 7n });
});

Deno.test("parseU64() refuses what it cannot hold exactly", () => {
  const cases: [unknown, "type" | "range", RegExp][] = [
    [undefined, "type", /^is required$/],
    [9007199254740992n, "range", /quote it as a string: "9007199254740992"/],
    [2 ** 60, "range", /quote it as a string of decimal digits/],
    [
      18446744073709551616n,
      "range",
      /^18446744073709551616 is not below 2\^64$/,
    ],
    ["18446744073709551616", "range", /not below 2\^64/],
    [-1, "range", /negative/],
    [-9007199254740993n, "range", /negative/],
    ["-1", "range", /negative/],
    [0.5, "type", /whole number/],
    [Infinity, "type", /whole number/],
    [NaN, "type", /whole number/],
    ["", "type", /digits/],
    [" 1", "type", /digits/],
    ["0x10", "type", /digits/],
    ["1.0", "type", /digits/],
    [null, "type", /unsigned integer/],
    [[1], "type", /unsigned integer/],
  ];
  for (const [value, kind, problem] of cases) {
    const parsed = parseU64(value);
    assert.equal(parsed.ok, false, String(value));
    if (!parsed.ok) {
      assert.equal(parsed.kind, kind, String(value));
      assert.match(parsed.problem, problem);
    }
  }
});

Deno.test("parseDataId() normalizes to 0x and 16 lowercase digits", () => {
  assert.deepEqual(parseDataId("0x1020000100000000"), {
    ok: true,
    value: "0x1020000100000000",
  });
  assert.deepEqual(parseDataId("0xABCdef"), {
    ok: true,
    value: "0x0000000000abcdef",
  });
  assert.deepEqual(parseDataId("0X1"), {
    ok: true,
    value: "0x0000000000000001",
  });
  assert.deepEqual(parseDataId("0xffffffffffffffff"), {
    ok: true,
    value: "0xffffffffffffffff",
  });
});

Deno.test("parseDataId() refuses numbers and malformed strings", () => {
  const cases: [unknown, "type" | "range", RegExp][] = [
    [undefined, "type", /^is required$/],
    [16, "type", /write it as "0x0000000000000010"/],
    [0x1020000100000000n, "type", /write it as "0x1020000100000000"/],
    [-1, "type", /such as/],
    ["0x", "type", /hex string/],
    ["1020000100000000", "type", /hex string/],
    ["0x10200001 00000000", "type", /hex string/],
    ["0xg", "type", /hex string/],
    ["0x10000000000000000", "range", /17 hex digits/],
    ["rx_bytes", "type", /^must give rx_bytes's port/],
    ["rx_bytes{port=300}", "range", /^must give rx_bytes a port from 0 to 255/],
    ["port 0", "type", /or a DOCA counter name such as "rx_bytes\{port=0\}"$/],
    [null, "type", /hex string/],
  ];
  for (const [value, kind, problem] of cases) {
    const parsed = parseDataId(value);
    assert.equal(parsed.ok, false, String(value));
    if (!parsed.ok) {
      assert.equal(parsed.kind, kind, String(value));
      assert.match(parsed.problem, problem);
    }
  }
});

Deno.test("parseComparisonType() maps long forms to short ones", () => {
  assert.deepEqual(parseComparisonType("incremental_greater_than"), {
    ok: true,
    value: "inc_gt",
  });
  assert.deepEqual(parseComparisonType("lt"), { ok: true, value: "lt" });
  for (const bad of ["gte", "GT", "constructor", "toString", 1, undefined]) {
    assert.equal(parseComparisonType(bad).ok, false, String(bad));
  }
});

Deno.test("parsePositiveInteger() and parseInteger() keep to safe integers", () => {
  assert.deepEqual(parsePositiveInteger(10000), { ok: true, value: 10000 });
  assert.deepEqual(parseInteger(-3), { ok: true, value: -3 });
  assert.deepEqual(parseInteger(0), { ok: true, value: 0 });
  const zero = parsePositiveInteger(0);
  assert.ok(!zero.ok && zero.kind === "range");
  const big = parsePositiveInteger(2n ** 60n);
  assert.ok(!big.ok && big.kind === "range");
  const unsafe = parseInteger(2 ** 60);
  assert.ok(!unsafe.ok && unsafe.kind === "range");
  const quoted = parsePositiveInteger("5");
  assert.ok(!quoted.ok && /without quotes/.test(quoted.problem));
  assert.equal(parseInteger(1.5).ok, false);
});

Deno.test("parseText() and parseMonitorName() refuse empty and odd names", () => {
  assert.deepEqual(parseText("Rx Bytes/s > 1MeBs"), {
    ok: true,
    value: "Rx Bytes/s > 1MeBs",
  });
  for (const bad of ["", "a\nb", "a\rb", "tab\there", 5, null]) {
    assert.equal(parseText(bad).ok, false, JSON.stringify(bad));
  }
  assert.deepEqual(parseMonitorName("nic-0.a_b"), {
    ok: true,
    value: "nic-0.a_b",
  });
  for (const bad of ["", "a b", "x".repeat(65), "a/b", 1]) {
    assert.equal(parseMonitorName(bad).ok, false, String(bad));
  }
  assert.equal(parseMonitorName("x".repeat(64)).ok, true);
});

Deno.test("parseSource() and parseBoolean() take exact values only", () => {
  assert.deepEqual(
    parseSource("replay"),
    {
      ok: true,
      value: {
        name: "m",
        source: "replay",
        columns: [{ name: "rx", data_id: "0x0000000000000001" }],
      },
    },
  );
  assert.equal(parseSource("Sim").ok, false);
  assert.deepEqual(parseBoolean(false), { ok: true, value: false });
  assert.equal(parseBoolean("true").ok, false);
  assert.equal(parseBoolean(1).ok, false);
});

Deno.test("parseListen() checks HOST:PORT", () => {
  for (
    const good of [
      "0.0.0.0:9477",
      "localhost:1",
      "[::1]:65535",
      "[fe80::1%eth0]:9477",
      "[::ffff:127.0.0.1]:9477",
      "127.0.0.1:0",
      "255.255.255.255:9477",
      "host-1.example:9477",
      "off",
    ]
  ) {
    assert.deepEqual(parseListen(good), { ok: true, value: good });
  }
  const cases: [unknown, "type" | "range", RegExp][] = [
    ["0.0.0.0:65536", "range", /port 65536 is not between 0 and 65535/],
    ["Off", "type", /HOST:PORT/],
    ["0.0.0.0:65536", "range", /65536/],
    ["0.0.0.0:123456", "range", /123456/],
    ["::1:9477", "type", /brackets/],
    ["0.0.0.0", "type", /HOST:PORT/],
    [":9477", "type", /HOST:PORT/],
    ["[127.0.0.1]:9477", "type", /IPv6/],
    ["host:port", "type", /HOST:PORT/],
    [9477, "type", /string/],
    [
      "300.1.1.1:9477",
      "range",
      /^host 300\.1\.1\.1 is not an IPv4 address: four numbers from 0 to 255 \(no leading zeros\), as in 127\.0\.0\.1$/,
    ],
    ["1.2.3:9477", "range", /^host 1\.2\.3 is not an IPv4 address: /],
    ["1.2.3.4.5:9477", "range", /^host 1\.2\.3\.4\.5 is not an IPv4 /],
    ["010.0.0.1:9477", "range", /^host 010\.0\.0\.1 is not an IPv4 /],
    ["1..2.3:9477", "range", /^host 1\.\.2\.3 is not an IPv4 /],
    ["[::1::2]:9477", "type", /^host \[::1::2\] is not an IPv6 address$/],
    ["[12345::]:9477", "type", /^host \[12345::\] is not an IPv6 address$/],
  ];
  for (const [value, kind, problem] of cases) {
    const parsed = parseListen(value);
    assert.equal(parsed.ok, false, String(value));
    if (!parsed.ok) {
      assert.equal(parsed.kind, kind, String(value));
      assert.match(parsed.problem, problem);
    }
  }
});

/** Asserts each of `good` parses to itself and each of `bad` is a range problem. */
function bounds(
  parse: (value: unknown) => Parsed<number>,
  good: readonly number[],
  bad: readonly number[],
  problem: RegExp,
) {
  for (const value of good) {
    assert.deepEqual(parse(value), { ok: true, value }, String(value));
  }
  for (const value of bad) {
    const parsed = parse(value);
    assert.equal(parsed.ok, false, String(value));
    if (!parsed.ok) {
      assert.equal(parsed.kind, "range", String(value));
      assert.match(parsed.problem, problem, String(value));
    }
  }
}

Deno.test("samplePeriod() takes what each source can deliver, an hour at most", () => {
  for (const [source, [min, max]] of Object.entries(SAMPLE_PERIODS)) {
    const parse = (v: unknown) =>
      parseValue(samplePeriod(source as keyof typeof SAMPLE_PERIODS), v);
    bounds(
      parse,
      [min, 100_000_000, max],
      [min - 1, max + 1, 2 ** 31 * 1e6, Number.MAX_SAFE_INTEGER],
      new RegExp(
        `^must be between ${min} and ${max} for source ${source} \\(`,
      ),
    );
    assert.ok(max <= MAX_SAMPLE_PERIOD_NS);
    assert.equal(parse(0).ok, false);
  }
  assert.equal(
    Math.max(...Object.values(SAMPLE_PERIODS).map(([, max]) => max)),
    MAX_SAMPLE_PERIOD_NS,
  );
});

Deno.test("parseEventLogMaxBytes() is 0 or large enough to hold a header", () => {
  bounds(
    parseEventLogMaxBytes,
    [0, MIN_EVENT_LOG_MAX_BYTES, 256 * 1024 * 1024, Number.MAX_SAFE_INTEGER],
    [1, MIN_EVENT_LOG_MAX_BYTES - 1],
    /^must be 0 \(never rotate\) or at least 65536 \(64 KiB\)/,
  );
  assert.equal(parseEventLogMaxBytes(-1).ok, false);
});

Deno.test("parseEventLogKeep() keeps rotation to a bounded number of renames", () => {
  bounds(
    parseEventLogKeep,
    [1, 4, MAX_EVENT_LOG_KEEP],
    [MAX_EVENT_LOG_KEEP + 1, 1e15],
    /^must be at most 1000; each rotation renames every kept file$/,
  );
});

Deno.test("parseMetricsWindow() takes 0.1 s to a day", () => {
  bounds(
    parseMetricsWindow,
    [MIN_METRICS_WINDOW_S, 0.5, 10, MAX_METRICS_WINDOW_S],
    // Below 0.5 ns the window rounds to 0 ns; past 1.8e299 s it is Infinity.
    [0.09, 1e-10, MAX_METRICS_WINDOW_S + 1, 1e300],
    /^must be from 0\.1 to 86400 seconds \(a day\)$/,
  );
  for (const value of [0, -1, NaN, Infinity, "10"]) {
    assert.equal(parseMetricsWindow(value).ok, false, String(value));
  }
});

Deno.test("parseText() bounds length and refuses lone surrogates", () => {
  const longest = "p".repeat(MAX_TEXT_CHARS);
  assert.deepEqual(parseText(longest), { ok: true, value: longest });
  assert.deepEqual(parseText(longest + "p"), {
    ok: false,
    kind: "range",
    problem: "must be at most 4096 characters long",
  });
  assert.equal(parseText("/var/log/\uD800.log").ok, false);
  assert.equal(parseText("/var/log/\u{1F600}.log").ok, true);
});

Deno.test("parseU64() cuts a long number in its problem", () => {
  const parsed = parseU64("9".repeat(1_000_000));
  assert.ok(!parsed.ok);
  assert.equal(
    parsed.problem,
    `${"9".repeat(29)}… is not below 2^64`,
  );
});
