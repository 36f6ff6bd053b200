import assert from "node:assert/strict";
import { MAX_RUNBOOK_URL_CHARS, MAX_SUMMARY_CHARS } from "./limits.ts";
import { runbookUrl, severity, summary } from "./rule_labels.ts";
import { parseValue } from "./values.ts";

const parseSeverity = (value: unknown) => parseValue(severity, value);
const parseSummary = (value: unknown) => parseValue(summary, value);

const SEVERITY =
  "must be a lowercase word such as critical, warning or info (a-z, 0-9 and _, starting with a letter, at most 32 characters)";

Deno.test("parseSeverity() takes lowercase tokens up to 32 characters", () => {
  for (const ok of ["critical", "warning", "info", "p1", "page_now", "x"]) {
    assert.deepEqual(parseSeverity(ok), { ok: true, value: ok });
  }
  assert.equal(parseSeverity("a".repeat(32)).ok, true);
  for (
    const bad of [
      "Critical",
      "CRITICAL",
      "1critical",
      "_x",
      "page-now",
      "page now",
      "",
      "a".repeat(33),
      "crit\u0131cal", // dotless i
      "warning\n",
      3,
      null,
    ]
  ) {
    assert.deepEqual(
      parseSeverity(bad),
      { ok: false, problem: SEVERITY, kind: "type" },
      String(bad),
    );
  }
  assert.deepEqual(parseSeverity(undefined), {
    ok: false,
    problem: "is required",
    kind: "type",
  });
});

Deno.test("parseSummary() takes one printable line up to 256 characters", () => {
  const longest = "\u{1F525}".repeat(MAX_SUMMARY_CHARS); // 512 UTF-16 units
  assert.deepEqual(parseSummary(longest), { ok: true, value: longest });
  assert.deepEqual(parseSummary('ECN marks > 1M/s, "port 0"'), {
    ok: true,
    value: 'ECN marks > 1M/s, "port 0"',
  });
  const cases: [unknown, string, "type" | "range"][] = [
    [
      "x".repeat(MAX_SUMMARY_CHARS + 1),
      "is longer than 256 characters; a summary is one line",
      "range",
    ],
    [
      "two\nlines",
      "contains U+000A (a line break) at index 3; a summary must be one line of printable text",
      "type",
    ],
    [
      "rx \u202Eyb",
      "contains U+202E (a bidi override) at index 3; a summary must be one line of printable text",
      "type",
    ],
    [
      "half \uD800",
      "contains U+D800 (a lone surrogate) at index 5; a summary must be one line of printable text",
      "type",
    ],
    ["", "must not be empty", "type"],
    [5, "must be a string", "type"],
    [undefined, "is required", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseSummary(value),
      { ok: false, problem, kind },
      String(value),
    );
  }
});

Deno.test("runbookUrl takes an http(s) URL with a host, as written, up to 1024 characters", () => {
  const parse = (value: unknown) => parseValue(runbookUrl, value);
  const longest = `https://wiki.example.com/${
    "r".repeat(
      MAX_RUNBOOK_URL_CHARS - "https://wiki.example.com/".length,
    )
  }`;
  for (
    const ok of [
      "https://wiki.example.com/runbooks/ecn-storm",
      "http://runbooks.internal:8080/rx?port=0&rule=ECN%20storm#busy",
      "HTTPS://Wiki.Example.com/A", // kept as written, not lowercased
      "https://[fd00::1]/rb",
      longest,
    ]
  ) {
    assert.deepEqual(parse(ok), { ok: true, value: ok }, ok);
  }
  const PROBLEM =
    "must be an http:// or https:// URL of at most 1024 characters, e.g. https://wiki.example.com/runbooks/ecn-storm";
  const cases: [unknown, string, "type" | "range"][] = [
    [`${longest}x`, PROBLEM, "range"],
    ["wiki.example.com/rb", PROBLEM, "type"],
    ["ftp://wiki.example.com/rb", PROBLEM, "type"],
    ["javascript:alert(1)", PROBLEM, "type"],
    ["https://", PROBLEM, "type"],
    ["http:///path", PROBLEM, "type"],
    ["https://wiki.example.com/run book", PROBLEM, "type"],
    ["https://wiki.example.com/rb\n", PROBLEM, "type"],
    ["https://wiki.example.com/r\u00e9sum\u00e9", PROBLEM, "type"],
    [
      "https://alice:s3cret@wiki.example.com/rb",
      "must not hold a user or password (it is shown on every alert of the rule and on /metrics); link a page that asks for them",
      "type",
    ],
    ["", PROBLEM, "type"],
    [5, "must be a string", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(parse(value), { ok: false, problem, kind }, String(value));
  }
});
