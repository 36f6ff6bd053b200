import assert from "node:assert/strict";
import { parseDocumentText, plainDocument } from "./document.ts";
import { MAX_KEY_CHARS, MAX_NESTING } from "./limits.ts";
import { checkShape } from "./shape.ts";

const check = (value: unknown, file: string) =>
  checkShape(plainDocument(file, value));

/** `levels` lists inside each other around `inner`. */
function nested(levels: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

Deno.test("checkShape() allows MAX_NESTING levels and refuses one more", () => {
  check(nested(MAX_NESTING), "a.json");
  assert.throws(() => check(nested(MAX_NESTING + 1), "a.json"), {
    name: "RangeError",
    message: new RegExp(
      `^Cannot load config a\\.json: (\\[0\\]){${MAX_NESTING}} is nested more than ${MAX_NESTING} lists and objects deep`,
    ),
  });
  // The place named is inside the field where the nesting starts.
  assert.throws(
    () => check({ monitors: [{ rules: nested(100) }] }, "a.yaml"),
    { message: /^Cannot load config a\.yaml: monitors\[0\]\.rules\[0\]/ },
  );
});

Deno.test("checkShape() refuses long keys, naming where and cutting the key", () => {
  check({ ["k".repeat(MAX_KEY_CHARS)]: 1 }, "a.json");
  const key = "k".repeat(10_000_000);
  assert.throws(() => check({ rules: [{ [key]: 1 }] }, "a.json"), (e) => {
    assert.ok(e instanceof RangeError);
    assert.equal(
      e.message,
      `Cannot load config a.json: rules[0] has a key of 10000000 characters ("kkkkkkkkkkkkkkkkkkk…"); keys are at most ${MAX_KEY_CHARS}`,
    );
    return true;
  });
});

Deno.test("checkShape() refuses a YAML alias inside its own anchor", () => {
  assert.throws(() => parseDocumentText("a: &x [1, *x]\n", "a.yaml"), {
    name: "RangeError",
    message:
      "Cannot load config a.yaml:1: a[1] contains itself (a YAML alias inside its own anchor)",
  });
  // Shared (not cyclic) anchors are fine.
  assert.deepEqual(parseDocumentText("a: &x [1]\nb: *x\n", "a.yaml").value, {
    a: [1],
    b: [1],
  });
});

Deno.test("a deeply nested file is answered at once with the file and field", () => {
  const deep = 500_000;
  const cases: [string, string, RegExp][] = [
    [
      `{"rules": ${"[".repeat(100)}${"]".repeat(100)}}`,
      "a.json",
      /^Cannot load config a\.json:1: rules(\[0\]){31} is nested more than 32/,
    ],
    [
      `rules: ${"[".repeat(100)}${"]".repeat(100)}\n`,
      "a.yaml",
      /^Cannot load config a\.yaml:1: rules(\[0\]){31} is nested more than 32/,
    ],
    [
      Array.from({ length: 100 }, (_, i) => `${"  ".repeat(i)}a:\n`).join(""),
      "a.yaml",
      /^Cannot load config a\.yaml:33: a(\.a){31} is nested more than 32/,
    ],
    ["[".repeat(deep) + "]".repeat(deep), "a.json", /is nested more than 32/],
    [
      "[".repeat(deep) + "]".repeat(deep),
      "a.yaml",
      /^Cannot load config a\.yaml:1: is nested more than 32 lists and objects deep \(at column 257\)$/,
    ],
  ];
  for (const [text, file, message] of cases) {
    const start = performance.now();
    assert.throws(() => parseDocumentText(text, file), (e) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match(e.message, message);
      return true;
    });
    const ms = performance.now() - start;
    assert.ok(ms < 1000, `${file}, ${text.length} chars: ${ms} ms`);
  }
});

Deno.test("flow nesting counts only brackets that open collections", () => {
  // Brackets inside quoted and plain scalars and comments are text.
  parseDocumentText(
    `a: "${"[".repeat(1000)}"\nb: '${"{".repeat(1000)}'\n# ${
      "[".repeat(1000)
    }\nc: x${"[".repeat(1000)}\n`,
    "a.yaml",
  );
  assert.throws(
    () => parseDocumentText(`a: 1\nb:\n  ${"{x: ".repeat(300)}`, "a.yaml"),
    { message: /^Cannot load config a\.yaml:3: .*\(at column 1027\)$/ },
  );
});
