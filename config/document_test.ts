import assert from "node:assert/strict";
import { lineAndColumn, parseDocumentText, syntaxOf } from "./document.ts";

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
  );
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
  );
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
  ) as Record<string, unknown>;
  assert.deepEqual(doc.again, [{ name: "a", data_id: "0x1" }]);
});

Deno.test("parseDocumentText() gives line and column for syntax errors", () => {
  const cases: [string, string, RegExp][] = [
    [
      '{\n  "a": 1,\n}',
      "x.json",
      /^Cannot load config x\.json: invalid JSON at line 3, column 1: expected double-quoted property name$/,
    ],
    [
      '{"a": [1,]}',
      "x.json",
      /^Cannot load config x\.json: invalid JSON at line 1, column 10: unexpected token '\]'$/,
    ],
    [
      '{\n"a": tx}',
      "x.json",
      /^Cannot load config x\.json: invalid JSON at line 2, column 7: unexpected token 'x'$/,
    ],
    [
      '{"a": 1',
      "x.json",
      /invalid JSON at line 1, column 8: expected ',' or '}'/,
    ],
    [
      "",
      "x.json",
      /invalid JSON at line 1, column 1: unexpected end of JSON input/,
    ],
    [
      "a: [1\nb: 2",
      "x.yaml",
      /^Cannot load config x\.yaml: invalid YAML at line 2, column 1: /,
    ],
    [
      "a: 1\n---\nb: 2\n",
      "x.yaml",
      /invalid YAML at line 2, column 1: source contains multiple documents/,
    ],
    [
      "a: *nowhere\n",
      "x.yaml",
      /invalid YAML at line 1, column 4: unresolved alias/,
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

Deno.test("lineAndColumn() counts from 1", () => {
  assert.deepEqual(lineAndColumn("ab", 0), { line: 1, column: 1 });
  assert.deepEqual(lineAndColumn("a\nbc", 3), { line: 2, column: 2 });
  assert.deepEqual(lineAndColumn("a\n\n", 3), { line: 3, column: 1 });
});
