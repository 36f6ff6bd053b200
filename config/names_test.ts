import assert from "node:assert/strict";
import { terminalSafe } from "../base/terminal_text.ts";
import { EventsLog } from "../events/log.ts";
import { resolveInputs } from "../review/files.ts";
import { readReview } from "../review/read.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { MAX_NAME_CHARS } from "./limits.ts";
import { parseConfig } from "./load.ts";
import { nameProblem, printableName } from "./names.ts";
import { parseValue } from "./values.ts";

const parseName = (value: unknown) => parseValue(printableName, value);

Deno.test("nameProblem() names each refused character, its kind and index", () => {
  const cases: [string, string][] = [
    ["a\nb", "U+000A (a line break) at index 1"],
    ["a\rb", "U+000D (a line break) at index 1"],
    ["\tx", "U+0009 (a control character) at index 0"],
    ["x\x7f", "U+007F (a control character) at index 1"],
    ["x\x85", "U+0085 (a control character) at index 1"],
    ["x\x9b[2J", "U+009B (a control character) at index 1"],
    ["a\u2028b", "U+2028 (a line separator) at index 1"],
    ["a\u2029b", "U+2029 (a paragraph separator) at index 1"],
    ["abcd\u202Eq", "U+202E (a bidi override) at index 4"],
    ["\u202Dx", "U+202D (a bidi override) at index 0"],
    ["\u202Ax", "U+202A (a bidi embedding) at index 0"],
    ["x\u202C", "U+202C (a bidi embedding) at index 1"],
    ["x\u2066y\u2069", "U+2066 (a bidi isolate) at index 1"],
    ["x\u2069", "U+2069 (a bidi isolate) at index 1"],
    ["x\u200E", "U+200E (a bidi mark) at index 1"],
    ["x\u200F", "U+200F (a bidi mark) at index 1"],
    ["x\u061C", "U+061C (a bidi mark) at index 1"],
    ["x\uD800", "U+D800 (a lone surrogate) at index 1"],
    ["\uDC00x", "U+DC00 (a lone surrogate) at index 0"],
    // Indexes count characters: the emoji before is one.
    ["\u{1F600}\u202E", "U+202E (a bidi override) at index 1"],
  ];
  for (const [name, where] of cases) {
    assert.equal(
      nameProblem(name),
      `contains ${where}; names must be printable text`,
      JSON.stringify(name),
    );
  }
});

Deno.test("nameProblem() accepts printable text, quotes, commas and emoji", () => {
  for (
    const name of [
      "Rx Bytes/s > 1MeBs",
      'pcie, max "read" ns',
      " padded ",
      "\u00A0nbsp\u3000",
      "\uFEFFbom",
      "日本語 \u{1F600} \u200D zwj",
      "x".repeat(MAX_NAME_CHARS),
      "\u{1F600}".repeat(MAX_NAME_CHARS),
    ]
  ) {
    assert.equal(nameProblem(name), undefined, JSON.stringify(name));
  }
  assert.equal(
    nameProblem("x".repeat(MAX_NAME_CHARS + 1)),
    `is longer than ${MAX_NAME_CHARS} characters`,
  );
});

Deno.test("parseName() refuses everything the terminal escaper would escape", () => {
  // What review prints escaped would not read back as written.
  for (let code = 0; code < 0x10000; code++) {
    const name = `a${String.fromCharCode(code)}b`;
    if (terminalSafe(name) !== name) {
      assert.equal(parseName(name).ok, false, `U+${code.toString(16)}`);
    }
  }
});

Deno.test("parseName() is the check on rule and column names in both forms", () => {
  const reference = (rule: string, column: string) =>
    JSON.stringify({
      "data-ids": [{ name: column, data_id: "0x1" }],
      rules: [
        {
          name: "a",
          data_id: "0x1",
          comparison_type: "gt",
          comparison_value: 1,
        },
        {
          name: "b",
          data_id: "0x1",
          comparison_type: "gt",
          comparison_value: 1,
        },
        {
          name: "c",
          data_id: "0x1",
          comparison_type: "gt",
          comparison_value: 1,
        },
        {
          name: rule,
          data_id: "0x1",
          comparison_type: "gt",
          comparison_value: 1,
        },
      ],
    });
  assert.throws(
    () => parseConfig(reference("abcd\u202Eq", "rx"), "rules.json"),
    {
      name: "TypeError",
      message:
        'Cannot load config rules.json:1: rules[3].name contains U+202E (a bidi override) at index 4; names must be printable text, got "abcd\\u202eq"',
    },
  );
  assert.throws(() => parseConfig(reference("d", "rx\u2028"), "rules.json"), {
    message:
      /^Cannot load config rules\.json:1: data-ids\[0\]\.name contains U\+2028 \(a line separator\) at index 2;/,
  });
  const agent = (rule: string, column: string) =>
    `monitors:
  - name: nic
    source: sim
    columns: [{ name: ${JSON.stringify(column)}, data_id: "0x1" }]
    rules: [{ name: ${JSON.stringify(rule)}, column: ${
      JSON.stringify(column)
    }, comparison_type: gt, comparison_value: 1 }]
`;
  assert.throws(() => parseConfig(agent("r\u2066", "rx"), "a.yaml"), {
    message:
      /^Cannot load config a\.yaml:5: monitors\[0\]\.rules\[0\]\.name contains U\+2066 \(a bidi isolate\)/,
  });
  assert.throws(() => parseConfig(agent("r", "rx\x85"), "a.yaml"), {
    message:
      /^Cannot load config a\.yaml:4: monitors\[0\]\.columns\[0\]\.name contains U\+0085 \(a control character\)/,
  });
  assert.throws(() => parseConfig(agent("y".repeat(200), "rx"), "a.yaml"), {
    name: "RangeError",
    message:
      /monitors\[0\]\.rules\[0\]\.name is longer than 128 characters, got "y+…"$/,
  });
  // The escape reaches the message, not the character.
  assert.throws(() => parseConfig(agent("r\u202E", "rx"), "a.yaml"), (e) => {
    assert.ok(e instanceof Error && !e.message.includes("\u202E"));
    return true;
  });
});

/**
 * Writes an events log whose columns and rules carry `names`, one event
 * per rule, and reads it back with review.
 */
async function roundTrip(names: readonly string[]) {
  await using dir = await tempDir();
  const path = `${dir.path}/events.log`;
  const columns = names.map((name, i) => ({
    name,
    dataId: `0x${i.toString(16).padStart(16, "0")}`,
  }));
  const log = await EventsLog.open({
    path,
    version: "test",
    device: "sim",
    depth: 1,
    samplePeriodNs: 100_000,
    columns,
    rules: names.map((name, i) => ({
      name,
      column: i,
      comparisonType: "gt",
      comparisonValue: 0n,
    })),
  });
  const record = new Uint32Array(2 * (names.length + 1));
  record[0] = 1_000;
  log.columnNames();
  log.row(record, 0);
  for (let i = 0; i < names.length; i++) {
    log.eventStart(i, Date.UTC(2026, 10, 21, 14, 50));
    log.eventEnd(i, Date.UTC(2026, 10, 21, 14, 50, 1), NaN);
  }
  await log.close();
  const review = await readReview(await resolveInputs([path]));
  return [...review.events].map((e) => ({ rule: e.rule, column: e.column }));
}

Deno.test("every name parseName() accepts reads back from events.log exactly", async () => {
  // Every BMP character the check lets through, 100 to a name (so each
  // lands at a name's start, middle or end somewhere), and a few astral.
  const accepted: string[] = [];
  for (let code = 0; code < 0x10000; code++) {
    const c = String.fromCharCode(code);
    if (parseName(`a${c}b`).ok) accepted.push(c);
  }
  const names = [
    "\u{1F600}\u{10FFFF}x",
    " edge ",
    "\u00A0",
    "\uFEFF",
    '"',
    ",",
  ];
  for (let i = 0; i < accepted.length; i += 100) {
    names.push(accepted.slice(i, i + 100).join(""));
  }
  // Names must be unique; a chunk could only repeat one of the extras.
  assert.equal(new Set(names).size, names.length);
  for (const name of names) assert.ok(parseName(name).ok, JSON.stringify(name));
  const read = await roundTrip(names);
  assert.equal(read.length, names.length);
  for (const [i, name] of names.entries()) {
    assert.deepEqual(read[i], { rule: name, column: name }, `name ${i}`);
  }
});

Deno.test("the characters parseName() refuses do not all read back", async () => {
  // Why line and paragraph separators and lone surrogates are refused.
  for (const bad of ["a\u2028b", "a\u2029b", "a\uD800b"]) {
    const read = await roundTrip([bad]);
    assert.notDeepEqual(
      read,
      [{ rule: bad, column: bad }],
      JSON.stringify(bad),
    );
  }
});
