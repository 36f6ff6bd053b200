import assert from "node:assert/strict";
import {
  compareOrder,
  configError,
  documentOrder,
  formatPath,
  formatValue,
  lookup,
  unknownKeyProblem,
} from "./errors.ts";

Deno.test("formatPath() writes keys as they appear in the file", () => {
  assert.equal(formatPath([]), "top level");
  assert.equal(formatPath(["data-ids", 3, "data_id"]), "data-ids[3].data_id");
  assert.equal(
    formatPath(["monitors", 1, "depth"]),
    "monitors[1].depth",
  );
  assert.equal(formatPath([2, "name"]), "[2].name");
  assert.equal(formatPath(["odd key", "a.b"]), '["odd key"]["a.b"]');
});

Deno.test("lookup() finds values and misses cleanly", () => {
  const doc = { rules: [{ name: "a", v: null }] };
  assert.equal(lookup(doc, ["rules", 0, "name"]), "a");
  assert.equal(lookup(doc, ["rules", 0, "v"]), null);
  assert.equal(lookup(doc, ["rules", 1, "name"]), undefined);
  assert.equal(lookup(doc, ["rules", "0"]), undefined);
  assert.equal(lookup(doc, ["toString"]), undefined);
  assert.equal(lookup("x", ["a"]), undefined);
});

Deno.test("formatValue() prints JSON on one line, bigints exactly", () => {
  assert.equal(formatValue(undefined), "nothing");
  assert.equal(formatValue("a\nb"), '"a\\nb"');
  assert.equal(formatValue(18446744073709551616n), "18446744073709551616");
  assert.equal(formatValue({ v: 1n, w: [Infinity] }), '{"v":1,"w":[Infinity]}');
  const cycle: unknown[] = [];
  cycle.push(cycle);
  assert.equal(formatValue(cycle), "[[Circular]]");
  const long = formatValue("x".repeat(500));
  assert.equal(long.length, 120);
  assert.ok(long.endsWith("…"));
});

Deno.test("configError() builds one-line messages of the right class", () => {
  const source = {
    file: "rules.json",
    doc: { rules: [{}, {}, { comparison_type: "gte" }] },
  };
  const type = configError(
    source,
    ["rules", 2, "comparison_type"],
    "must be one of gt, lt",
    "type",
  );
  assert.ok(type instanceof TypeError);
  assert.equal(
    type.message,
    'Cannot load config rules.json: rules[2].comparison_type must be one of gt, lt, got "gte"',
  );
  const range = configError(source, ["rules", 9], "is\nout", "range");
  assert.ok(range instanceof RangeError);
  assert.equal(
    range.message,
    "Cannot load config rules.json: rules[9] is out, got nothing",
  );
});

Deno.test("unknownKeyProblem() suggests a near spelling", () => {
  assert.match(
    unknownKeyProblem("comparision_type", ["name", "comparison_type"]),
    /did you mean "comparison_type"\?/,
  );
  assert.match(unknownKeyProblem("data_ids", ["data-ids"]), /"data-ids"/);
  assert.match(unknownKeyProblem("Name", ["name"]), /"name"/);
  assert.doesNotMatch(
    unknownKeyProblem("colour", ["name", "depth"]),
    /did you mean/,
  );
});

Deno.test("documentOrder() follows the file's key order", () => {
  const doc = { b: 1, a: [0, { y: 1, x: 2 }] };
  assert.deepEqual(documentOrder(doc, ["a", 1, "x"]), [1, 1, 1]);
  assert.deepEqual(documentOrder(doc, ["missing"]), [2]);
  const paths = [["a", 1, "x"], ["missing"], ["b"], ["a"]];
  const sorted = paths
    .map((p) => ({ p, o: documentOrder(doc, p) }))
    .sort((l, r) => compareOrder(l.o, r.o))
    .map(({ p }) => p);
  assert.deepEqual(sorted, [["b"], ["a"], ["a", 1, "x"], ["missing"]]);
});
