import assert from "node:assert/strict";
import { join } from "node:path";
import type { ColumnConfig, RuleConfig } from "../config/types.ts";
import { EventsLog, type EventsLogOptions } from "./log.ts";
import { tempDir } from "../tests/temp_dir.ts";

const columns: ColumnConfig[] = [
  { name: "rx_bytes", dataId: "0x1020000100000000" },
  { name: "ecn", dataId: "0x1080000400000000" },
];
const rules: RuleConfig[] = [
  {
    name: 'ecn "burst"',
    column: 1,
    comparisonType: "dt_gt",
    comparisonValue: 5n,
  },
];

function options(
  path: string,
  extra: Partial<EventsLogOptions> = {},
): EventsLogOptions {
  return {
    path,
    version: "dpu-traceback test",
    device: "sim",
    depth: 4,
    samplePeriodNs: 100000,
    columns,
    rules,
    ...extra,
  };
}

function record(ts: bigint, ...values: bigint[]): Uint32Array {
  const words = new Uint32Array(2 + 2 * values.length);
  [ts, ...values].forEach((v, i) => {
    words[2 * i] = Number(v & 0xffffffffn);
    words[2 * i + 1] = Number(v >> 32n);
  });
  return words;
}

const T0 = Date.UTC(2026, 10, 21, 14, 50, 0, 250);

Deno.test("EventsLog writes header, rows and markers in the reference layout", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "sub", "events.log");
  const log = await EventsLog.open(options(path));
  log.columnNames();
  log.row(record(1795272600000000000n, 18446744073709551615n, 0n), 0);
  log.eventStart(0, T0);
  log.row(record(1795272600000100000n, 9007199254740993n, 7n), 0);
  log.gap(12, T0 + 1000);
  log.eventEnd(0, T0 + 2000);
  await log.close();
  const text = await Deno.readTextFile(path);
  const body = text.slice(
    text.indexOf("\t]\n\n\n", text.indexOf("Rules:")) + 5,
  );
  assert.equal(
    body,
    "timestamp, rx_bytes, ecn\n" +
      "1795272600000000000, 18446744073709551615, 0\n" +
      '<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "ecn ""burst"""\n' +
      "1795272600000100000, 9007199254740993, 7\n" +
      "<<Gap>> Time: 2026-11-21T14:50:01Z, Dropped samples: 12\n" +
      '<<Event end>> Time: 2026-11-21T14:50:02Z, Rule: "ecn ""burst"""\n',
  );
  assert.ok(
    text.startsWith(
      "Telemetry monitor : dpu-traceback test\nConfiguration: \n",
    ),
  );
  assert.equal(log.stats.bytesWritten, new TextEncoder().encode(text).length);
  assert.equal(log.stats.pendingBytes, 0);
});

Deno.test("EventsLog appends a new header block instead of truncating", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  for (let run = 0; run < 2; run++) {
    const log = await EventsLog.open(options(path));
    log.columnNames();
    log.row(record(BigInt(run), 1n, 2n), 0);
    await log.close();
  }
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("Telemetry monitor : ").length - 1, 2);
  assert.match(text, /\n0, 1, 2\n[^]*\n1, 1, 2\n$/);
});

Deno.test("EventsLog hands rows to the disk within the flush interval, before close", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open(options(path, { flushIntervalMs: 20 }));
  log.row(record(5n, 6n, 7n), 0);
  let text = "";
  for (let i = 0; i < 100 && !text.endsWith("5, 6, 7\n"); i++) {
    await new Promise((r) => setTimeout(r, 20));
    text = await Deno.readTextFile(path);
  }
  assert.ok(
    text.endsWith("5, 6, 7\n"),
    "row reached the file without close()",
  );
  await log.close();
});

Deno.test("EventsLog keeps every row across many chunk hand-offs, in order", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  // Small chunks force hundreds of hand-offs while writes are in flight.
  const log = await EventsLog.open(
    options(path, { chunkBytes: 1, maxChunks: 1000 }),
  );
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 20000; i++) {
    words[0] = i;
    words[2] = i * 3;
    log.row(words, 0);
  }
  await log.close();
  const rows = (await Deno.readTextFile(path)).split("\n").filter((l) =>
    /^\d/.test(l)
  );
  assert.equal(rows.length, 20000);
  rows.forEach((line, i) => assert.equal(line, `${i}, ${i * 3}, 0`));
  assert.equal(log.stats.droppedRows, 0);
});

Deno.test({
  name:
    "EventsLog on a full disk counts errors, never throws while sampling, and close reports the loss",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const log = await EventsLog.open(
      options("/dev/full", { maxChunks: 2, chunkBytes: 1 }),
    );
    const words = record(1n, 2n, 3n);
    for (let i = 0; i < 5000; i++) log.row(words, 0);
    log.eventStart(0, T0);
    log.eventEnd(0, T0);
    await assert.rejects(
      () => log.close(),
      /Cannot finish events log \/dev\/full: \d+ bytes unwritten, \d+ rows dropped/,
    );
    assert.ok(log.stats.writeErrors >= 1);
    assert.ok(log.stats.droppedRows > 0);
    assert.equal(log.stats.bytesWritten, 0);
  },
});

Deno.test("EventsLog flushes at every event boundary without using up its chunks", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  // Four 1 KiB chunks and 30 boundaries with about 2.3 KiB of lines, all
  // without yielding, so no write can complete meanwhile: the bytes fit in
  // three chunks, but a flush that gave up a whole chunk each time would
  // run out after three boundaries and drop rows.
  const log = await EventsLog.open(
    options(path, { maxChunks: 4, chunkBytes: 1 }),
  );
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 30; i++) {
    words[0] = i;
    log.row(words, 0);
    if (i % 2 === 0) log.eventStart(0, T0);
    else log.eventEnd(0, T0);
  }
  assert.equal(log.stats.droppedRows, 0);
  await log.close();
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("<<Event end>>").length - 1, 15);
  assert.ok(
    text.endsWith(
      '29, 0, 0\n<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "ecn ""burst"""\n',
    ),
  );
});

Deno.test("EventsLog.open names the log it cannot open", async () => {
  await using dir = await tempDir();
  await assert.rejects(
    () => EventsLog.open(options(dir.path)),
    /^Error: Cannot open events log .*: Is a directory/,
  );
});

Deno.test("EventsLog.reopen: a logrotate-style rename loses no row and the new file has its own header", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open(
    options(path, { chunkBytes: 1, maxChunks: 1000 }),
  );
  const words = record(0n, 0n, 0n);
  let next = 0;
  const rows = (n: number) => {
    for (const end = next + n; next < end; next++) {
      words[0] = next;
      log.row(words, 0);
    }
  };
  // Rows in flight while the file is renamed and reopened, several times.
  for (let rotation = 1; rotation <= 3; rotation++) {
    rows(3000);
    log.flush();
    await Deno.rename(path, `${path}.${rotation}`);
    rows(1000); // formatted after the rename, before the reopen
    log.reopen();
    rows(1000);
    // logrotate's next rename comes long after the new file exists.
    while (log.reopens < rotation) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  rows(500);
  await log.close();
  assert.equal(log.reopens, 3);
  const files = [`${path}.1`, `${path}.2`, `${path}.3`, path];
  const seen: number[] = [];
  for (const [k, file] of files.entries()) {
    const text = await Deno.readTextFile(file);
    // Every file starts with a header block.
    assert.match(text, /^Telemetry monitor : dpu-traceback test\n/, file);
    for (const line of text.split("\n")) {
      if (/^\d/.test(line)) seen.push(Number(line.split(",")[0]));
    }
    if (k > 0) assert.ok(text.split("\n").length > 3, `${file} is empty`);
  }
  // Whole rows, in order, none lost or repeated across the four files.
  assert.deepEqual(seen, Array.from({ length: next }, (_, i) => i));
});

Deno.test({
  name:
    "EventsLog on a full disk warns once (not once a write) and keeps retrying",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const warnings: string[] = [];
    const log = await EventsLog.open(
      options("/dev/full", {
        flushIntervalMs: 5,
        warn: (m) => warnings.push(m),
      }),
    );
    const words = record(1n, 2n, 3n);
    for (let i = 0; i < 50; i++) {
      log.row(words, 0);
      await new Promise((r) => setTimeout(r, 10)); // retried each flush
    }
    assert.ok(log.stats.writeErrors >= 10, `${log.stats.writeErrors} errors`);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /^events log \/dev\/full: cannot write \(.*\); \d+ write errors, \d+ bytes waiting, 0 rows dropped so far; sampling goes on and writes are retried every second$/,
    );
    await assert.rejects(() => log.close());
  },
});

Deno.test("EventsLog rotates by size, keeps `keep` old files, and splits no row", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open(
    options(path, {
      chunkBytes: 1,
      maxChunks: 1000,
      maxBytes: 4000,
      keep: 2,
    }),
  );
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 3000; i++) {
    words[0] = i;
    log.row(words, 0);
    if (i % 100 === 99) {
      log.flush();
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  await log.close();
  assert.ok(log.rotations >= 3, `${log.rotations} rotations`);
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.deepEqual(names, ["events.log", "events.log.1", "events.log.2"]);
  // Oldest kept first: rows continue from file to file, every file has a
  // header, and the newest row is the last one written.
  const seen: number[] = [];
  for (const name of ["events.log.2", "events.log.1", "events.log"]) {
    const text = await Deno.readTextFile(join(dir.path, name));
    assert.match(text, /^Telemetry monitor : /, name);
    assert.ok(text.endsWith("\n"), `${name} ends mid-line`);
    for (const line of text.split("\n")) {
      if (/^\d/.test(line)) {
        assert.match(line, /^\d+, 0, 0$/);
        seen.push(Number(line.split(",")[0]));
      }
    }
  }
  assert.equal(seen.at(-1), 2999);
  seen.forEach((n, i) => i > 0 && assert.equal(n, seen[i - 1] + 1));
});
