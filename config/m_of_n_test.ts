import assert from "node:assert/strict";
import { parseFor, parseMOfN } from "./m_of_n.ts";

const SYNTAX = 'must be "M of N" with whole numbers, e.g. "3 of 5"';

Deno.test("parseMOfN() reads M of N, with or without samples", () => {
  const cases: [string, number, number][] = [
    ["3 of 5", 3, 5],
    ["3 of 5 samples", 3, 5],
    ["1 of 1 sample", 1, 1],
    ["5 of 5", 5, 5],
    ["3  of  5", 3, 5],
    ["0003 of 0005", 3, 5],
    ["1 of 9007199254740991", 1, 9007199254740991],
  ];
  for (const [text, m, n] of cases) {
    assert.deepEqual(parseMOfN(text), { ok: true, value: { m, n } }, text);
  }
});

Deno.test("parseMOfN() refuses M or N out of range, saying which", () => {
  const cases: [unknown, string, "type" | "range"][] = [
    ["3 of 0", "needs N >= 1: the rule looks at the last N samples", "range"],
    ["0 of 0", "needs N >= 1: the rule looks at the last N samples", "range"],
    ["0 of 3", "needs M >= 1: 0 of N would hold on every sample", "range"],
    [
      "5 of 3",
      "needs M <= N: 5 of the last 3 samples can never hold",
      "range",
    ],
    [
      "1 of 99999999999999999999",
      "is too large: N can be at most 2 x depth",
      "range",
    ],
    ["-1 of 3", SYNTAX, "type"],
    ["1.5 of 3", SYNTAX, "type"],
    ["3 of 5 ms", SYNTAX, "type"],
    ["3 out of 5", SYNTAX, "type"],
    ["3of5", SYNTAX, "type"],
    ["of", SYNTAX, "type"],
    [35, SYNTAX, "type"],
    [undefined, "is required", "type"],
  ];
  for (const [value, problem, kind] of cases) {
    assert.deepEqual(
      parseMOfN(value),
      { ok: false, problem, kind },
      String(value),
    );
  }
});

Deno.test("parseFor() reads a duration or M of N", () => {
  assert.deepEqual(parseFor("500us"), { ok: true, value: 500_000 });
  assert.deepEqual(parseFor(0), { ok: true, value: 0 });
  assert.deepEqual(parseFor("3 of 5"), { ok: true, value: { m: 3, n: 5 } });
  // Text with "of" is M of N, and its problems are M of N's.
  assert.equal(parseFor("5 of 3").ok, false);
  assert.deepEqual(parseFor("3 out of 5"), {
    ok: false,
    problem: SYNTAX,
    kind: "type",
  });
  // A fraction may be meant as M of N.
  assert.deepEqual(parseFor("3/5"), {
    ok: false,
    problem: 'must be a duration or "M of N", e.g. "3 of 5" or "500us"',
    kind: "type",
  });
  // Anything else is a duration with a duration's problems.
  assert.deepEqual(parseFor(500), {
    ok: false,
    problem:
      'needs a unit, e.g. "500us" or "10ms" (ns, us, µs, ms, s, m (minutes) or h)',
    kind: "type",
  });
  assert.equal(parseFor("offset").ok, false);
});
