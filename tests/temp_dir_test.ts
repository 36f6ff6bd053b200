import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { tempDir } from "./temp_dir.ts";

Deno.test("tempDir: `await using` removes the directory and what is in it", async () => {
  let path = "";
  {
    await using dir = await tempDir("temp_dir_test_");
    path = dir.path;
    assert.ok(basename(path).startsWith("temp_dir_test_"));
    await Deno.mkdir(join(path, "sub"));
    await Deno.writeTextFile(join(path, "sub", "file"), "x");
    assert.ok((await Deno.stat(path)).isDirectory);
  }
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
});

Deno.test("tempDir: removed when the scope throws too", async () => {
  let path = "";
  await assert.rejects(async () => {
    await using dir = await tempDir();
    path = dir.path;
    throw new Error("boom");
  }, /^Error: boom$/);
  assert.notEqual(path, "");
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
});
