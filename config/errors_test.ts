import assert from "node:assert/strict";
import {
  configError,
  cutText,
  fileError,
  formatPath,
  formatValue,
  lookup,
  quoteText,
} from "./errors.ts";
import { parseDocumentText, plainDocument } from "./document.ts";
import { MAX_MESSAGE_CHARS } from "./limits.ts";
import { unknownKeyProblem } from "./suggest.ts";

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
  assert.ok(long.endsWith('…"'), long);
});

Deno.test("configError() builds one-line messages of the right class", () => {
  const source = plainDocument("rules.json", {
    rules: [{}, {}, { comparison_type: "gte" }],
  });
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

Deno.test("place() follows the file's order: keys as written, a missing key after its siblings", () => {
  const doc = parseDocumentText("b: 1\na: [0, { y: 1, x: 2 }]\n", "a.yaml");
  const paths = [["a", 1, "x"], ["missing"], ["b"], ["a", 0]];
  const sorted = paths
    .map((p) => ({ p, o: doc.place(p).order }))
    .sort((l, r) => l.o - r.o)
    .map(({ p }) => p);
  assert.deepEqual(sorted, [["b"], ["a", 0], ["a", 1, "x"], ["missing"]]);
  // A list or object is judged once read whole: after its own entries.
  assert.ok(doc.place(["a"]).order > doc.place(["a", 1, "x"]).order);
  assert.deepEqual(doc.place(["a", 1, "x"]).line, 2);
  // A key can be placed itself, before its value.
  assert.ok(doc.place(["b"], true).order < doc.place(["b"]).order);
});

Deno.test("cutText() and quoteText() cut without splitting a character", () => {
  assert.equal(cutText("abc", 3), "abc");
  assert.equal(cutText("abcd", 3), "ab…");
  assert.equal(cutText("a\u{1F600}b", 3), "a…");
  assert.equal(quoteText("k".repeat(10_000_000), 5), '"kkkk…"');
  assert.equal(quoteText('say "hi"\n'), '"say \\"hi\\"\\n"');
});

Deno.test("messages escape what a terminal would act on", () => {
  const nasty = "x\u202Ey\u2028z\x1b[2J\x9b";
  assert.equal(formatValue(nasty), '"x\\u202ey\\u2028z\\u001b[2J\\u009b"');
  assert.equal(
    formatPath(["a", nasty]),
    'a["x\\u202ey\\u2028z\\u001b[2J\\u009b"]',
  );
  assert.equal(formatValue({ [nasty]: [nasty] }).includes("\u202e"), false);
  const error = configError(
    plainDocument("a\u202e.yaml", { k: 1 }),
    ["k"],
    "is wrong\u2028here",
    "type",
  );
  assert.equal(
    error.message,
    "Cannot load config a\\u202e.yaml: k is wrong here, got 1",
  );
});

Deno.test("error lines stay short whatever the file holds", () => {
  const huge = "v".repeat(10_000_000);
  const doc = { [huge]: { name: huge }, list: Array(1_000_000).fill(huge) };
  const json = plainDocument("a.json", doc);
  const messages = [
    configError(json, [huge, "name"], "is bad", "type"),
    configError(json, ["list"], "is bad", "type"),
    configError(json, [], huge, "range"),
    configError(plainDocument(huge, doc), ["list"], "is bad", "type"),
    fileError(SyntaxError, "a.yaml", 1, `invalid YAML at column 1: ${huge}`),
    fileError(Error, "a.yaml", 0, huge),
    configError(
      plainDocument("a.yaml", doc),
      Array(1000).fill(0),
      "is nested too deep",
      "range",
      { got: false },
    ),
    fileError(RangeError, "a.yaml", 1, huge),
  ].map((e) => e.message);
  for (const message of messages) {
    assert.ok(message.length <= MAX_MESSAGE_CHARS, message);
    assert.ok(message.startsWith("Cannot load config "), message);
  }
  // The place and the value are kept; the key and value are cut.
  assert.equal(
    messages[0],
    `Cannot load config a.json: ${"v".repeat(39)}….name is bad, got "${
      "v".repeat(117)
    }…"`,
  );
  assert.match(
    messages[1],
    /^Cannot load config a\.json: list is bad, got \["v+…$/,
  );
  assert.match(messages[3], /^Cannot load config …v{99}: list is bad, got/);
  assert.match(
    messages[6],
    /^Cannot load config a\.yaml: (\[0\]){33}… is nested too deep$/,
  );
});

Deno.test("formatPath() names a rule or column by its name, unless the name is the field", () => {
  const doc = {
    monitors: [{
      columns: [{ name: "rx" }],
      rules: [{ name: "ECN storm" }, { name: 5 }, { name: "x".repeat(100) }],
    }],
  };
  assert.equal(
    formatPath(["monitors", 0, "rules", 0, "above"], doc),
    'monitors[0].rules[0] ("ECN storm").above',
  );
  assert.equal(
    formatPath(["monitors", 0, "columns", 0], doc),
    'monitors[0].columns[0] ("rx")',
  );
  // The name itself is the value shown; a name that is no string is not one.
  assert.equal(
    formatPath(["monitors", 0, "rules", 0, "name"], doc),
    "monitors[0].rules[0].name",
  );
  assert.equal(
    formatPath(["monitors", 0, "rules", 1, "above"], doc),
    "monitors[0].rules[1].above",
  );
  // A long name is cut; the field after it is kept.
  assert.match(
    formatPath(["monitors", 0, "rules", 2, "above"], doc),
    /^monitors\[0\]\.rules\[2\] \("x{39}…"\)\.above$/,
  );
});

Deno.test("a hint follows the value it is about", () => {
  const doc = plainDocument("a.yaml", { gpu: "of" });
  assert.equal(
    configError(
      doc,
      ["gpu"],
      'must be one of auto, off\u001edid you mean "off"?',
      "type",
    )
      .message,
    'Cannot load config a.yaml: gpu must be one of auto, off, got "of"; did you mean "off"?',
  );
});
