import assert from "node:assert/strict";
import { join } from "node:path";
import { fileKind, sameFile } from "./file_kind.ts";

Deno.test("fileKind names each kind of file a path can name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "file");
    await Deno.writeTextFile(file, "x");
    const fifo = join(dir, "fifo");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    const socket = join(dir, "socket");
    using _listener = Deno.listen({ transport: "unix", path: socket });
    const link = join(dir, "link");
    await Deno.symlink(file, link);
    const cases: [Deno.FileInfo, string][] = [
      [await Deno.stat(file), "a regular file"],
      [await Deno.stat(dir), "a directory"],
      [await Deno.lstat(link), "a symbolic link"],
      [await Deno.stat(link), "a regular file"],
      [await Deno.stat(fifo), "a FIFO"],
      [await Deno.stat(socket), "a socket"],
      [await Deno.stat("/dev/zero"), "a character device"],
    ];
    for (const [info, kind] of cases) assert.equal(fileKind(info), kind);
    const none = {
      isFile: false,
      isDirectory: false,
      isSymlink: false,
      isFifo: null,
      isSocket: null,
      isCharDevice: null,
      isBlockDevice: null,
    };
    assert.equal(fileKind(none), "something else");
    assert.equal(fileKind({ ...none, isBlockDevice: true }), "a block device");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sameFile compares device and inode, not the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = join(dir, "a");
    await Deno.writeTextFile(a, "x");
    const before = await Deno.stat(a);
    await Deno.link(a, join(dir, "b"));
    assert.ok(sameFile(before, await Deno.stat(join(dir, "b"))));
    // Replaced under the same name: another file.
    await Deno.remove(a);
    await Deno.writeTextFile(a, "x");
    assert.ok(!sameFile(before, await Deno.stat(a)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
