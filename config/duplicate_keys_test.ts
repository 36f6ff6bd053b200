import assert from "node:assert/strict";
import { parseDocument } from "yaml";
import { findDuplicateKey } from "./duplicate_keys.ts";
import { parseConfig } from "./load.ts";

/** The duplicate in JSON text, parsed as the loader parses it. */
function findDuplicateJsonKey(text: string) {
  const doc = parseDocument(text, { uniqueKeys: false, schema: "json" });
  assert.deepEqual(doc.errors, [], text);
  return findDuplicateKey(doc);
}

/** Where the second copy is, as `[line, column]`, and its path. */
function jsonDuplicate(text: string) {
  const found = findDuplicateJsonKey(text);
  if (found === undefined) return undefined;
  const before = text.slice(0, found.offset).split("\n");
  return {
    path: found.path,
    at: [before.length, before.at(-1)!.length + 1],
    first: text.slice(found.firstOffset).startsWith('"'),
  };
}

Deno.test("findDuplicateKey() in JSON: finds a key given twice, with its path", () => {
  assert.deepEqual(jsonDuplicate('{"a": 1, "a": 2}'), {
    path: ["a"],
    at: [1, 10],
    first: true,
  });
  assert.deepEqual(
    jsonDuplicate(
      '{\n\t"monitors" : [\r\n  {"name": "a"},\r\n  {"rules": [], "name": "x", "name": "y"}\n]}',
    ),
    { path: ["monitors", 1, "name"], at: [4, 30], first: true },
  );
  // Keys compare decoded.
  assert.deepEqual(jsonDuplicate('{"ab": 1, "a\\u0062": 2}')?.path, ["ab"]);
  assert.deepEqual(jsonDuplicate('{"x": [1, [2, {"": 1, "": 2}]]}')?.path, [
    "x",
    1,
    1,
    "",
  ]);
});

Deno.test("findDuplicateKey() in JSON: lets the same key be in different objects", () => {
  for (
    const text of [
      '{"a": {"a": {"a": 1}}, "b": [{"a": 1}, {"a": 2}]}',
      '{"a": "\\"a\\": 1, \\"a\\""}',
      '["a", "a", {"a": "a"}]',
      '{"a": 1, "A": 2, "a ": 3}',
      "{}",
      "7",
    ]
  ) {
    assert.equal(findDuplicateJsonKey(text), undefined, text);
  }
});

Deno.test("findDuplicateKey() compares YAML keys as the object will hold them", () => {
  const find = (text: string) =>
    findDuplicateKey(parseDocument(text, { uniqueKeys: false }))?.path;
  assert.deepEqual(find("a: 1\nb:\n  - x: 1\n    x: 2\n"), ["b", 0, "x"]);
  assert.deepEqual(find("1: a\n'1': b\n"), ["1"]);
  assert.deepEqual(find("{a: 1, a: 2}"), ["a"]);
  assert.equal(find("a: {a: 1}\nb: [{a: 1}, {a: 1}]\n"), undefined);
});

Deno.test("a second rules key in the reference JSON is refused, not obeyed", () => {
  const text = `{
  "data-ids": [{ "name": "rx", "data_id": "0x1020000100000000" }],
  "rules": [
    { "name": "busy", "data_id": "0x1020000100000000",
      "comparison_type": "gt", "comparison_value": 5 }
  ],
  "rules": []
}
`;
  assert.throws(() => parseConfig(text, "rules.json"), {
    name: "SyntaxError",
    message:
      "Cannot load config rules.json:7: invalid JSON at column 3: rules is given twice (first at line 3); keys must be unique, or the second copy would silently replace the first",
  });
  // Without the second copy the rule is there.
  const single = text.replace(',\n  "rules": []', "");
  assert.equal(parseConfig(single, "rules.json").monitors[0].rules.length, 1);
});

Deno.test("a key given twice in YAML names its path and both lines", () => {
  const text = `monitors:
  - name: nic
    source: sim
    columns: [{ name: rx, data_id: "0x1" }]
    source: replay
`;
  assert.throws(() => parseConfig(text, "a.yaml"), {
    name: "SyntaxError",
    message:
      "Cannot load config a.yaml:5: invalid YAML at column 5: monitors[0].source is given twice (first at line 3); keys must be unique, or the second copy would silently replace the first",
  });
});
