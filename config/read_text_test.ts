import assert from "node:assert/strict";
import { join } from "node:path";
import { constants, openSync } from "node:fs";
import { tempDir } from "../tests/temp_dir.ts";
import { settles } from "../tests/until.ts";
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

Deno.test("a device is refused unopened: /dev/zero is never read", async () => {
  for (const path of ["/dev/zero", "/dev/urandom"]) {
    await assert.rejects(settles(path, loadConfig(path)), {
      name: "TypeError",
      message:
        `Cannot load config ${path}: is a character device, not a regular file`,
    });
  }
  // The same holds for a --data-ids file.
  await assert.rejects(
    loadConfig("deploy/example-rules-only.json", { dataIdsFile: "/dev/zero" }),
    {
      message:
        "Cannot load config /dev/zero: is a character device, not a regular file",
    },
  );
});

Deno.test("a FIFO, a socket or a directory is refused at once, and a FIFO is left unopened", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, "rules.json");
  await mkfifo(fifo);
  const socket = join(dir.path, "rules.sock");
  using _listener = Deno.listen({ transport: "unix", path: socket });
  const cases: [string, string][] = [
    // Opened for reading, a FIFO waits for a writer: start-up would hang.
    [fifo, "a FIFO"],
    [socket, "a socket"],
    [dir.path, "a directory"],
  ];
  for (const [path, kind] of cases) {
    await assert.rejects(settles(path, readConfigText(path)), {
      name: "TypeError",
      message: `Cannot load config ${path}: is ${kind}, not a regular file`,
    });
  }
  // No reader holds the FIFO: a writer that will not wait is turned away.
  assert.throws(
    () => openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK),
    { code: "ENXIO" },
  );
});

Deno.test("a path swapped between a FIFO and a file while it is read never hangs the reader", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "file.yaml");
  await Deno.writeTextFile(file, "listen: off\n");
  const fifo = join(dir.path, "fifo");
  await mkfifo(fifo);
  const path = join(dir.path, "config.yaml");
  await Deno.symlink(file, path);
  // Each swap is atomic (a new link renamed over the old), so every read
  // sees one or the other; one that looks at the file and then opens the
  // FIFO must not wait for a writer.
  let swapping = true;
  const swapper = (async () => {
    for (let i = 0; swapping; i++) {
      const next = join(dir.path, "next");
      await Deno.symlink(i % 2 === 0 ? fifo : file, next);
      await Deno.rename(next, path);
    }
  })();
  const seen = new Set<string>();
  try {
    for (let i = 0; i < 300; i++) {
      // A refusal is an outcome; only a read that never ends fails here.
      const read = readConfigText(path).catch((error: Error) =>
        error.message.replace(path, "PATH")
      );
      seen.add(await settles(`read ${i}`, read, 10_000));
    }
  } finally {
    swapping = false;
    await swapper;
  }
  const allowed = new Set([
    "listen: off\n",
    "Cannot load config PATH: is a FIFO, not a regular file",
    "Cannot load config PATH: is a FIFO now, not a regular file: it was replaced while being opened; nothing was read",
    "Cannot load config PATH: was replaced by another file while being opened; nothing was read",
  ]);
  for (const outcome of seen) assert.ok(allowed.has(outcome), outcome);
});

Deno.test("readConfigText() words its messages for the file it reads", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "token");
  await Deno.writeTextFile(path, "x".repeat(10));
  const options = {
    prefix: `Cannot read the token from ${path}`,
    kind: "a token file",
  };
  await assert.rejects(readConfigText(path, { ...options, maxBytes: 9 }), {
    name: "RangeError",
    message:
      `Cannot read the token from ${path}: is larger than 9 bytes (9 bytes), the most a token file may be`,
  });
  await assert.rejects(readConfigText("/dev/null", options), {
    name: "TypeError",
    message:
      `Cannot read the token from ${path}: is a character device, not a regular file`,
  });
  await assert.rejects(readConfigText(join(dir.path, "none"), options), {
    name: "NotFound",
    message: `Cannot read the token from ${path}: file not found`,
  });
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
    message:
      `Cannot load config ${dir.path}: is a directory, not a regular file`,
  });
});

/** Makes a FIFO at `path`, as an operator's `mkfifo` would. */
async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
}
