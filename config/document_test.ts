import assert from "node:assert/strict";
import { parseDocumentText, syntaxOf } from "./document.ts";

Deno.test("syntaxOf() goes by the .json extension", () => {
  assert.equal(syntaxOf("rules.json"), "json");
  assert.equal(syntaxOf("RULES.JSON"), "json");
  assert.equal(syntaxOf("config.yaml"), "yaml");
  assert.equal(syntaxOf("config"), "yaml");
});

Deno.test("parseDocumentText() keeps large JSON integers exact", () => {
  const doc = parseDocumentText(
    '\uFEFF{"a": 9007199254740993, "b": 9007199254740991, "c": -18446744073709551617, "d": 1e30, "e": 1.5}',
    "x.json",
  ).value;
  assert.deepEqual(doc, {
    a: 9007199254740993n,
    b: 9007199254740991,
    c: -18446744073709551617n,
    d: 1e30,
    e: 1.5,
  });
});

Deno.test("parseDocumentText() keeps large YAML integers exact, small ones numbers", () => {
  const doc = parseDocumentText(
    "a: 9007199254740993\nb: 5\nc: 0x10\nd: '7'\ne: 1.5\nf: [1, 18446744073709551616]\n",
    "x.yaml",
  ).value;
  assert.deepEqual(doc, {
    a: 9007199254740993n,
    b: 5,
    c: 16,
    d: "7",
    e: 1.5,
    f: [1, 18446744073709551616n],
  });
});

Deno.test("parseDocumentText() resolves YAML aliases", () => {
  const doc = parseDocumentText(
    "ids: &ids [{name: a, data_id: '0x1'}]\nagain: *ids\n",
    "x.yaml",
  ).value as Record<string, unknown>;
  assert.deepEqual(doc.again, [{ name: "a", data_id: "0x1" }]);
});

Deno.test("parseDocumentText() gives line and column for syntax errors", () => {
  const cases: [string, string, RegExp][] = [
    [
      '{\n  "a": 1,\n}',
      "x.json",
      /^Cannot load config x\.json:3: invalid JSON at column 1: a comma before \} \(JSON has no trailing commas\)$/,
    ],
    [
      '{"a": [1,]}',
      "x.json",
      /^Cannot load config x\.json:1: invalid JSON at column 10: a comma before \]/,
    ],
    [
      '{\n"a": tx}',
      "x.json",
      /^Cannot load config x\.json:2: invalid JSON at column 6: "tx" is not a JSON value \(strings are written in double quotes\)$/,
    ],
    [
      '{"a": 1',
      "x.json",
      /:1: invalid JSON at column 8: flow map must end with a \}/,
    ],
    [
      "",
      "x.json",
      /:1: invalid JSON at column 1: the text holds no JSON value/,
    ],
    [
      "a: [1\nb: 2",
      "x.yaml",
      /^Cannot load config x\.yaml:2: invalid YAML at column 1: /,
    ],
    [
      "a: 1\n---\nb: 2\n",
      "x.yaml",
      /:2: invalid YAML at column 1: holds more than one document/,
    ],
    [
      "a: *nowhere\n",
      "x.yaml",
      /:1: invalid YAML at column 4: unresolved alias/,
    ],
    // What YAML allows and JSON does not.
    [
      '{"a": 1} # c',
      "x.json",
      /:1: invalid JSON at column 10: "# c" is not JSON$/,
    ],
    ["{'a': 1}", "x.json", /:1: invalid JSON at column 2: "'a'" is not JSON$/],
    [
      '"a": 1',
      "x.json",
      /:1: invalid JSON at column 4: a key outside \{ \} is not JSON$/,
    ],
    [
      "a: 1",
      "x.json",
      /:1: invalid JSON at column 2: a key outside \{ \} is not JSON$/,
    ],
  ];
  for (const [text, file, message] of cases) {
    assert.throws(() => parseDocumentText(text, file), (error: unknown) => {
      assert.ok(error instanceof SyntaxError, String(error));
      assert.match(error.message, message);
      assert.ok(!error.message.includes("\n"));
      return true;
    });
  }
});

Deno.test("place() counts lines from 1, in JSON as in YAML", () => {
  const yaml = parseDocumentText("a: 1\nb:\n\n  - c\n", "x.yaml");
  assert.equal(yaml.place(["a"]).line, 1);
  assert.equal(yaml.place(["b", 0]).line, 4);
  const json = parseDocumentText('{"a": 1,\n\n "b": [2]}', "x.json");
  assert.equal(json.place(["a"]).line, 1);
  assert.equal(json.place(["b", 0]).line, 3);
  // A missing key is placed at what would hold it.
  assert.equal(json.place(["b", 5, "c"]).line, 3);
});
