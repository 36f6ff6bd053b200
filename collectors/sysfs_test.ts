// collectors/sysfs.ts reads through libc what Deno refuses under /sys; on
// a fixture tree it must answer as Deno's own calls would, errors included.

import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../tests/temp_dir.ts";
import {
  isSysfsDirectory,
  readSysfsDir,
  readSysfsText,
  SYSFS_TEXT_MAX_BYTES,
  type SysfsEntry,
  sysfsReadLink,
  sysfsRealPath,
} from "./sysfs.ts";

Deno.test("a directory lists as Deno.readDirSync lists it, kinds and all", async () => {
  await using tmp = await tempDir("sysfs_test_");
  const dir = join(tmp.path, "eth0");
  await Deno.mkdir(join(dir, "statistics"), { recursive: true });
  await Deno.writeTextFile(join(dir, "ifindex"), "7\n");
  await Deno.symlink("statistics", join(dir, "stats"));
  const sorted = (entries: SysfsEntry[]) =>
    entries.map(({ name, isFile, isDirectory, isSymlink }) => ({
      name,
      isFile,
      isDirectory,
      isSymlink,
    })).sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(
    sorted(readSysfsDir(dir)),
    sorted([...Deno.readDirSync(dir)]),
  );
  assert.equal(readSysfsDir(dir).length, 3);
  assert.deepEqual(readSysfsDir(join(dir, "statistics")), []);
});

Deno.test("links resolve, and a missing path, a file listed or a FIFO read fail with Deno's error classes", async () => {
  await using tmp = await tempDir("sysfs_test_");
  const target = join(tmp.path, "devices", "0000:03:00.0");
  await Deno.mkdir(target, { recursive: true });
  const link = join(tmp.path, "device");
  await Deno.symlink("devices/0000:03:00.0", link);
  assert.equal(sysfsRealPath(link), Deno.realPathSync(target));
  assert.equal(sysfsReadLink(link), "devices/0000:03:00.0");
  assert.equal(isSysfsDirectory(link), true);
  assert.equal(isSysfsDirectory(join(tmp.path, "none")), false);

  const missing = join(tmp.path, "none");
  assert.throws(() => readSysfsDir(missing), Deno.errors.NotFound);
  assert.throws(() => sysfsRealPath(missing), {
    name: "NotFound",
    message: `Cannot resolve ${missing}: ENOENT`,
  });
  assert.throws(() => sysfsReadLink(target), /Cannot read the link .*EINVAL/);
  const file = join(tmp.path, "numa_node");
  await Deno.writeTextFile(file, "1\n");
  assert.throws(() => readSysfsDir(file), Deno.errors.NotADirectory);
  assert.equal(readSysfsText(file), "1\n");
  assert.throws(() => readSysfsText(missing), Deno.errors.NotFound);
  assert.throws(() => readSysfsText(target), {
    message: `Cannot read ${target}: is a directory, not a regular file`,
  });

  // A FIFO where an attribute should be: refused at once, not waited on.
  const fifo = join(tmp.path, "fifo");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success);
  assert.throws(() => readSysfsText(fifo), {
    message: `Cannot read ${fifo}: is a FIFO, not a regular file`,
  });
});

Deno.test("an attribute file over the limit is refused, one at the limit read whole", async () => {
  await using tmp = await tempDir("sysfs_test_");
  const path = join(tmp.path, "big");
  await Deno.writeTextFile(path, "x".repeat(SYSFS_TEXT_MAX_BYTES));
  assert.equal(readSysfsText(path).length, SYSFS_TEXT_MAX_BYTES);
  await Deno.writeTextFile(path, "x".repeat(SYSFS_TEXT_MAX_BYTES + 1));
  assert.throws(
    () => readSysfsText(path),
    { message: `Cannot read ${path}: longer than 65536 bytes` },
  );
});
