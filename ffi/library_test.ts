import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../tests/temp_dir.ts";
import { openFirst } from "./library.ts";

Deno.test("openFirst refuses a FIFO or a directory where a library belongs, never waiting on it", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, "libdoca_common.so.3");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  // dlopen blocks the thread that calls it, so the look is made in a
  // child: if it ever opened the FIFO, the child is ended and the test
  // fails instead of hanging.
  const library = new URL("./library.ts", import.meta.url).href;
  const code = `
    import { openFirst } from ${JSON.stringify(library)};
    try {
      openFirst([${JSON.stringify(fifo)}], {});
      console.log("opened");
    } catch (error) {
      console.log(error.message);
    }`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "inherit",
    signal: AbortSignal.timeout(60_000),
  }).output();
  assert.equal(out.code, 0);
  assert.equal(
    new TextDecoder().decode(out.stdout),
    `Cannot load ${fifo}: is a FIFO, not a regular file\n`,
  );
  assert.throws(() => openFirst([dir.path], {}), {
    message: `Cannot load ${dir.path}: is a directory, not a regular file`,
  });
  // What does not exist is skipped.
  assert.equal(openFirst([join(dir.path, "none.so")], {}), null);
});
