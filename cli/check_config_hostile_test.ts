import assert from "node:assert/strict";
import { join } from "node:path";
import { MAX_MESSAGE_CHARS } from "../config/limits.ts";
import { errorLines, runMain } from "../tests/cli_util.ts";
import { tempDir } from "../tests/temp_dir.ts";

/** A reference JSON file with one column and `rules`. */
function reference(rules: unknown[], extra: Record<string, unknown> = {}) {
  return JSON.stringify(
    {
      ...extra,
      "data-ids": [{ name: "rx", data_id: "0x1020000100000000" }],
      rules,
    },
    null,
    2,
  );
}

const RULE = {
  name: "busy",
  data_id: "0x1020000100000000",
  comparison_type: "gt",
  comparison_value: 5,
};

Deno.test("check-config answers hostile files with exit 2 and one short line", async () => {
  await using dir = await tempDir();
  const file = (name: string) => join(dir.path, name);
  await Deno.writeTextFile(
    file("key.json"),
    `{"${"k".repeat(10 * 1024 * 1024)}": 1}`,
  );
  await Deno.writeTextFile(
    file("nearly-key.json"),
    `{"rules": [], "${"k".repeat(1000 * 1000)}": 1}`,
  );
  await Deno.writeTextFile(
    file("deep.json"),
    `{"rules": ${"[".repeat(100)}${"]".repeat(100)}}`,
  );
  await Deno.writeTextFile(
    file("deep.yaml"),
    Array.from({ length: 100 }, (_, i) => `${"  ".repeat(i)}a:\n`).join(""),
  );
  await Deno.writeTextFile(
    file("twice.json"),
    reference([RULE]).replace(/\n}$/, ',\n  "rules": []\n}'),
  );
  await Deno.writeTextFile(
    file("depth.json"),
    reference([RULE], { sample_history_depth: 2 ** 53 - 1 }),
  );
  await Deno.writeTextFile(
    file("bidi.json"),
    reference([RULE, RULE, RULE, { ...RULE, name: "rx \u202Eyb" }].map((
      r,
      i,
    ) => i < 3 ? { ...r, name: `r${i}` } : r)),
  );
  await Deno.writeTextFile(
    file("value.json"),
    reference([{ ...RULE, comparison_value: "9".repeat(500_000) }]),
  );
  await Deno.writeFile(file("latin1.yaml"), new Uint8Array([0x61, 0xe9, 10]));

  const cases: [string, RegExp][] = [
    [
      "/dev/zero",
      /^\/dev\/zero: is a character device, not a regular file$/,
    ],
    [
      "/dev/urandom",
      /^\/dev\/urandom: is a character device, not a regular file$/,
    ],
    [file("key.json"), /key\.json: is larger than 1 MiB/],
    [
      file("nearly-key.json"),
      /nearly-key\.json:1: top level has a key of 1000000 characters \("k+…"\); keys are at most 64$/,
    ],
    [
      file("deep.json"),
      /deep\.json:1: rules(\[0\]){31} is nested more than 32/,
    ],
    [file("deep.yaml"), /deep\.yaml:33: a(\.a){31} is nested more than 32/],
    [
      file("twice.json"),
      /twice\.json:16: invalid JSON at column 3: rules is given twice \(first at line 8\)/,
    ],
    [
      file("depth.json"),
      /depth\.json:2: sample_history_depth needs a 256 PiB ring .* so depth can be at most 33554432 here, got 9007199254740991$/,
    ],
    [
      file("bidi.json"),
      /bidi\.json:28: rules\[3\]\.name contains U\+202E \(a bidi override\) at index 3; names must be printable text, got "rx \\u202eyb"$/,
    ],
    [
      file("value.json"),
      /value\.json:13: rules\[0\] \("busy"\)\.comparison_value 9{29}… is not below 2\^64, got "9+…"$/,
    ],
    [
      file("latin1.yaml"),
      /latin1\.yaml: is not UTF-8 text: the character at byte 1 \(line 1, column 2\) is not valid UTF-8$/,
    ],
  ];
  for (const [path, pattern] of cases) {
    const result = await runMain(["check-config", path]);
    assert.equal(result.code, 2, `${path}: ${result.stderr}`);
    assert.equal(result.stdout, "", path);
    const lines = errorLines(result.stderr);
    assert.equal(lines.length, 1, `${path}: ${result.stderr}`);
    const prefix = "dpu-traceback: Cannot load config ";
    assert.ok(lines[0].startsWith(prefix), lines[0]);
    assert.match(lines[0].slice(prefix.length), pattern);
    assert.ok(
      lines[0].length <= "dpu-traceback: ".length + MAX_MESSAGE_CHARS,
      `${path}: ${lines[0].length} characters`,
    );
    assert.ok(!lines[0].includes("\u202E"));
  }
});

Deno.test("the same bounds stop run before anything starts", async () => {
  await using dir = await tempDir();
  const rules = join(dir.path, "rules.json");
  await Deno.writeTextFile(
    rules,
    reference([RULE], { sample_history_depth: 2 ** 40 }),
  );
  const log = join(dir.path, "events.log");
  const result = await runMain([
    "run",
    "--rules",
    rules,
    "--source",
    "sim",
    "--event-log",
    log,
    "--duration",
    "1",
  ]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    errorLines(result.stderr).join("\n"),
    /^dpu-traceback: Cannot load config \S+rules\.json:2: sample_history_depth needs a 32 TiB ring/,
  );
  // Refused before the log was opened.
  await assert.rejects(Deno.stat(log), Deno.errors.NotFound);
  const data = await runMain([
    "check-config",
    "deploy/example-rules-only.json",
    "--data-ids",
    "/dev/zero",
  ]);
  assert.equal(data.code, 2, data.stderr);
  assert.match(
    data.stderr,
    /^dpu-traceback: Cannot load config \/dev\/zero: is a character device, not a regular file\n$/,
  );
});

Deno.test("the deploy examples still check clean", async () => {
  for (
    const args of [
      ["check-config", "deploy/example-rules.json"],
      ["check-config", "deploy/example-config.yaml"],
      ["check-config", "deploy/demo.yaml"],
      [
        "check-config",
        "deploy/example-rules-only.json",
        "--data-ids",
        "deploy/example-data-ids.json",
      ],
    ]
  ) {
    const result = await runMain(args);
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
  }
});
