import assert from "node:assert/strict";
import { join } from "node:path";
import {
  isEventsLogName,
  monitorFromName,
  oldestFirst,
  parseLogName,
  resolveInputs,
} from "./files.ts";
import { tempDir } from "../tests/temp_dir.ts";

Deno.test("parseLogName splits the agent's and logrotate's rotation suffixes", () => {
  assert.deepEqual(parseLogName("events.log"), {
    base: "events.log",
    generation: 0,
    dated: "",
  });
  assert.deepEqual(parseLogName("nic-events.log.3"), {
    base: "nic-events.log",
    generation: 3,
    dated: "",
  });
  assert.deepEqual(parseLogName("events.log-20261121"), {
    base: "events.log",
    generation: 0,
    dated: "20261121-",
  });
  assert.deepEqual(parseLogName("gpu-events.log-20261121-1795272600.gz"), {
    base: "gpu-events.log",
    generation: 0,
    dated: "20261121-1795272600",
  });
  assert.equal(parseLogName("events.txt"), undefined);
});

Deno.test("names: <monitor>-events.log names its monitor; events.log does not", () => {
  assert.equal(monitorFromName("nic-events.log"), "nic");
  assert.equal(monitorFromName("gpu-events.log"), "gpu");
  assert.equal(monitorFromName("events.log"), undefined);
  assert.ok(isEventsLogName("events.log.1"));
  assert.ok(isEventsLogName("nic-events.log-20261121.gz"));
  assert.ok(!isEventsLogName("agent.log"));
  assert.ok(!isEventsLogName("events.log.bak"));
});

const line = (sec: number) => `timestamp, a\n${sec}000000000, 1\n`;

Deno.test("resolveInputs groups a directory by monitor, each oldest first by content", async () => {
  await using dir = await tempDir();
  // Times chosen so that content order differs from the files' ages on
  // disk (written in another order) and agrees with the names.
  const files: [string, number][] = [
    ["events.log", 1795272900],
    ["events.log.1", 1795272800],
    ["events.log.2", 1795272700],
    ["events.log-20261120-1795200000", 1795200000],
    ["nic-events.log", 1795272600],
    ["notes.txt", 0],
  ];
  for (const [name, sec] of files) {
    await Deno.writeTextFile(join(dir.path, name), line(sec));
  }
  await Deno.mkdir(join(dir.path, "sub-events.log")); // a directory: skipped
  const families = await resolveInputs([dir.path]);
  assert.deepEqual(
    families.map((
      f,
    ) => [
      f.base,
      f.monitor,
      f.stem,
      f.files.map((p) => p.slice(dir.path.length + 1)),
    ]),
    [
      ["events.log", undefined, "events", [
        "events.log-20261120-1795200000",
        "events.log.2",
        "events.log.1",
        "events.log",
      ]],
      ["nic-events.log", "nic", "nic-events", ["nic-events.log"]],
    ],
  );
});

Deno.test("resolveInputs takes a file alone, and refuses what it cannot use", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "nic-events.log.2"), line(1));
  await Deno.writeTextFile(join(dir.path, "nic-events.log"), line(2));
  const [one] = await resolveInputs([join(dir.path, "nic-events.log.2")]);
  assert.deepEqual([one.monitor, one.files.length], ["nic", 1]);
  const empty = join(dir.path, "empty");
  await Deno.mkdir(empty);
  await assert.rejects(
    resolveInputs([empty]),
    /^Error: Cannot review \S+empty: no events logs in it/,
  );
  await assert.rejects(
    resolveInputs([join(dir.path, "missing.log")]),
    /Cannot review \S+missing\.log: no such file or directory$/,
  );
});

Deno.test("oldestFirst sorts by one kind of key: first rows if all have one, else modification times", async () => {
  await using dir = await tempDir();
  // Rotated in the order .2, .1, live, each written then; copied later,
  // so their contents are from 2026 and their times from 2025. The
  // middle one has no rows (a header, or a file that cannot be read).
  const header = "Telemetry monitor : x\nConfiguration: \n";
  const files: [string, string, number][] = [
    ["events.log", line(1795272900), 3],
    ["events.log.1", header, 2],
    ["events.log.2", line(1795272700), 1],
  ];
  for (const [name, text, k] of files) {
    const path = join(dir.path, name);
    await Deno.writeTextFile(path, text);
    const t = new Date(Date.UTC(2025, 0, 1, 0, 0, k));
    await Deno.utime(path, t, t);
  }
  const names = (paths: string[]) =>
    paths.map((p) => p.slice(dir.path.length + 1));
  // A first-row time for some and a modification time for the other
  // would put the 2025 one first; modification times for all do not.
  assert.deepEqual(
    names(await oldestFirst(files.map(([n]) => join(dir.path, n)))),
    ["events.log.2", "events.log.1", "events.log"],
  );
  // With rows in all, their times decide, whatever the files' times.
  await Deno.writeTextFile(join(dir.path, "events.log.1"), line(1795272800));
  const t = new Date(Date.UTC(2025, 0, 1, 0, 0, 9));
  await Deno.utime(join(dir.path, "events.log.1"), t, t);
  assert.deepEqual(
    names(await oldestFirst(files.map(([n]) => join(dir.path, n)))),
    ["events.log.2", "events.log.1", "events.log"],
  );
});

Deno.test("resolveInputs reads a file once however it is named; with onSkip, bad paths are named and skipped", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "nic-events.log"), line(1));
  const families = await resolveInputs([
    dir.path,
    join(dir.path, "nic-events.log"),
    join(dir.path, ".", "nic-events.log"),
  ]);
  assert.deepEqual(families.map((f) => f.files.length), [1]);
  const skipped: string[] = [];
  const some = await resolveInputs(
    [join(dir.path, "missing.log"), dir.path],
    (path, reason) => skipped.push(`${path}: ${reason}`),
  );
  assert.equal(some.length, 1);
  assert.deepEqual(skipped, [
    `${join(dir.path, "missing.log")}: no such file or directory`,
  ]);
});
