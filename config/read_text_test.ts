import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../tests/temp_dir.ts";
import { MAX_CONFIG_BYTES } from "./limits.ts";
import { loadConfig } from "./load.ts";
import { readConfigText } from "./read_text.ts";

Deno.test("readConfigText() reads UTF-8 text and drops a byte order mark", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "a.yaml");
  await Deno.writeTextFile(path, "\uFEFFname: caf\u00e9 \u{1F600}\n");
  assert.equal(await readConfigText(path), "name: caf\u00e9 \u{1F600}\n");
  await Deno.writeTextFile(path, "x".repeat(MAX_CONFIG_BYTES));
  assert.equal((await readConfigText(path)).length, MAX_CONFIG_BYTES);
});

Deno.test("readConfigText() refuses a file past the bound, by its size", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "big.json");
  // Sparse: 10 GB on disk in name only. Read whole, it would fill memory.
  const file = await Deno.open(path, { write: true, create: true });
  await file.truncate(10 * 1024 ** 3);
  file.close();
  await assert.rejects(readConfigText(path), {
    name: "RangeError",
    message:
      `Cannot load config ${path}: is larger than 1 MiB (1048576 bytes), the most a configuration file may be`,
  });
  await Deno.writeTextFile(path, "x".repeat(MAX_CONFIG_BYTES + 1));
  await assert.rejects(readConfigText(path), RangeError);
});

Deno.test("device files are answered in well under a second, in bounded memory", async () => {
  for (const path of ["/dev/zero", "/dev/urandom"]) {
    const start = performance.now();
    await assert.rejects(loadConfig(path), {
      name: "RangeError",
      message:
        `Cannot load config ${path}: is larger than 1 MiB (1048576 bytes), the most a configuration file may be`,
    });
    const ms = performance.now() - start;
    assert.ok(ms < 1000, `${path}: ${ms} ms`);
  }
  // The same bound holds for a --data-ids file.
  await assert.rejects(
    loadConfig("deploy/example-rules-only.json", { dataIdsFile: "/dev/zero" }),
    { message: /^Cannot load config \/dev\/zero: is larger than 1 MiB/ },
  );
});

Deno.test("readConfigText() names where a file stops being UTF-8", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "latin1.yaml");
  await Deno.writeFile(
    path,
    new Uint8Array([...new TextEncoder().encode("a: 1\nname: caf"), 0xe9, 10]),
  );
  await assert.rejects(readConfigText(path), {
    name: "TypeError",
    message:
      `Cannot load config ${path}: is not UTF-8 text: the character at byte 14 (line 2, column 10) is not valid UTF-8`,
  });
  await Deno.writeFile(path, new Uint8Array([0x61, 0xe2, 0x82]));
  await assert.rejects(readConfigText(path), {
    message:
      /is not UTF-8 text: it ends inside the character at byte 1 \(line 1, column 2\)$/,
  });
});

Deno.test("readConfigText() keeps NotFound and says what else went wrong", async () => {
  await using dir = await tempDir();
  await assert.rejects(readConfigText(join(dir.path, "none.yaml")), {
    name: "NotFound",
    message: `Cannot load config ${
      join(dir.path, "none.yaml")
    }: file not found`,
  });
  await assert.rejects(readConfigText(dir.path), {
    message: `Cannot load config ${dir.path}: is a directory, not a file`,
  });
});
