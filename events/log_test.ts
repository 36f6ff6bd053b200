import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ColumnConfig, RuleConfig } from "../config/types.ts";
import { EventsLog, type EventsLogOptions, formatLogPeak } from "./log.ts";
import { tempDir } from "../tests/temp_dir.ts";
import type { Plan, Report } from "../tests/fixtures/limited_events_log.ts";

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
  log.eventEnd(0, T0 + 2000, 7);
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
      '<<Peak>> Rule: "ecn ""burst""", Peak: 7\n' +
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

Deno.test("EventsLog writes a blind period on a line of its own: the gap marker's fields, then its span to the ms", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open(options(path));
  log.blindPeriod(5, T0 - 120_000.4, T0 + 3206.9, false);
  log.blindPeriod(1, NaN, T0, false); // no record before the loss
  log.blindPeriod(18446744, T0, T0 + 1_000_000, true); // still blind at stop
  await log.close();
  const text = await Deno.readTextFile(path);
  assert.ok(
    text.endsWith(
      "\n\n\n" +
        "<<Gap>> Time: 2026-11-21T14:50:03Z, Dropped samples: 5, From: 2026-11-21T14:48:00.249Z, To: 2026-11-21T14:50:03.456Z\n" +
        "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 1, From: unknown, To: 2026-11-21T14:50:00.250Z\n" +
        "<<Gap>> Time: 2026-11-21T15:06:40Z, Dropped samples: 18446744, From: 2026-11-21T14:50:00.250Z, Stopped: 2026-11-21T15:06:40.250Z\n",
    ),
    text,
  );
});

Deno.test("formatLogPeak: the shortest exact decimal, per second for a rate, unknown for NaN", () => {
  assert.equal(formatLogPeak(9007199254740753, false), "9007199254740753");
  assert.equal(formatLogPeak(68600.5, true), "68600.5/s");
  assert.equal(formatLogPeak(0.001234, false), "0.001234");
  assert.equal(Number(formatLogPeak(0.1 + 0.2, false)), 0.1 + 0.2);
  assert.equal(formatLogPeak(NaN, true), "unknown");
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

/**
 * Runs tests/fixtures/limited_events_log.ts on `plan` and, once its log's
 * header is on disk, limits its file size to that size plus `slackBytes`
 * (`prlimit --pid`): from then on the file refuses writes as a full disk
 * would, with EFBIG instead of ENOSPC (a regular file cannot be filled
 * any other way without root). With `plan.liftAfterFailure`, lifts the
 * limit once the child has seen a write fail, before it closes the log.
 */
async function runLimitedEventsLog(
  plan: Plan,
  slackBytes: number,
): Promise<{ status: Deno.CommandStatus; report?: Report; limit: number }> {
  const fixture = fileURLToPath(
    new URL("../tests/fixtures/limited_events_log.ts", import.meta.url),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fixture, JSON.stringify(plan)],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await lines.next();
    if (done) break;
    out += value;
  }
  const ready = /^ready (\d+)\n/.exec(out);
  if (ready === null) {
    // stderr is complete only once the child has ended, which it has here.
    throw new Error(`no ready line: ${out} ${await stderr}`);
  }
  const limit = Number(ready[1]) + slackBytes;
  // The soft limit only: without CAP_SYS_RESOURCE (a container's root
  // lacks it too) a hard limit cannot be raised again, and the tests lift
  // it below.
  const set = await new Deno.Command("prlimit", {
    args: [`--pid=${child.pid}`, `--fsize=${limit}:unlimited`],
  }).output();
  assert.equal(set.code, 0, new TextDecoder().decode(set.stderr));
  const stdin = child.stdin.getWriter();
  await stdin.write(new TextEncoder().encode("go\n"));
  if (plan.liftAfterFailure) {
    while (!/\nfailed\n$/.test(out)) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`no failed line: ${out} ${await stderr}`);
      out += value;
    }
    const lifted = await new Deno.Command("prlimit", {
      args: [`--pid=${child.pid}`, "--fsize=unlimited"],
    }).output();
    assert.equal(lifted.code, 0, new TextDecoder().decode(lifted.stderr));
    await stdin.write(new TextEncoder().encode("lifted\n"));
  }
  // Until the report, then the limit goes before the child exits: runs in
  // a fresh checkout died of SIGXFSZ at exit (153), signal handled or not,
  // from what Deno itself writes while shutting down (its caches).
  for await (const value of lines) {
    out += value;
    if (/\n\{.*\}\n$/.test(out)) break;
  }
  await new Deno.Command("prlimit", {
    args: [`--pid=${child.pid}`, "--fsize=unlimited"],
  }).output();
  await stdin.close().catch(() => {});
  for await (const value of lines) out += value;
  const status = await child.status;
  const last = out.trimEnd().split("\n").at(-1)!;
  const report = last.startsWith("{") ? JSON.parse(last) as Report : undefined;
  const errors = await stderr;
  assert.ok(report !== undefined || !status.success, `no report: ${errors}`);
  return { status, report, limit };
}

Deno.test({
  name:
    "EventsLog on a full disk counts errors, never throws while sampling, and close reports the loss",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    // No byte past the header fits.
    const { status, report, limit } = await runLimitedEventsLog({
      path,
      ignoreSignal: true,
      rows: 5000,
      pauseMs: 0,
      maxChunks: 2,
      chunkBytes: 1,
    }, 0);
    assert.equal(status.code, 0);
    assert.match(
      report!.closeError!,
      /^Cannot finish events log .*events\.log: \d+ bytes unwritten, \d+ rows dropped \(File too large/,
    );
    assert.ok(report!.stats.writeErrors >= 1);
    assert.equal(report!.stats.bytesWritten, limit); // the header only
    assert.equal((await Deno.stat(path)).size, limit);
    // No row is in the file: each was dropped when no chunk was free, or
    // counted by close, which could not write it.
    assert.equal(report!.stats.droppedRows, 5000);
    assert.match(report!.closeError!, / 5000 rows dropped /);
  },
});

Deno.test({
  name:
    "a write past the file size limit is a counted write error, not the end of the process (ignoreFileSizeSignal)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const plan = { path, ignoreSignal: true, rows: 500, pauseMs: 0 };
    // Some rows fit; the write that passes the limit raises SIGXFSZ.
    const { status, report, limit } = await runLimitedEventsLog(plan, 1000);
    assert.equal(status.code, 0, `ended by ${status.signal}`);
    assert.ok(report!.stats.writeErrors >= 1);
    assert.ok(report!.stats.pendingBytes > 0);
    assert.match(
      report!.warnings[0],
      /^events log .*: cannot write \(File too large \(os error 27\)\)/,
    );
    // The rows `0, 9` .. that fit whole in the 1000 bytes past the header;
    // the limit falls inside the next one (row 158, 4 bytes of 7).
    let fit = 0;
    let fitBytes = 0;
    while (fitBytes + `${fit}, 9\n`.length <= 1000) {
      fitBytes += `${fit}, 9\n`.length;
      fit++;
    }
    assert.ok(fitBytes < 1000, "the limit cuts a row");
    // That row's head, written up to the limit, was taken out again: the
    // file ends with a whole line, and holds what bytesWritten says.
    const text = await Deno.readTextFile(path);
    assert.ok(text.endsWith("\n"), JSON.stringify(text.slice(-20)));
    assert.equal((await Deno.stat(path)).size, limit - 1000 + fitBytes);
    assert.equal(report!.stats.bytesWritten, limit - 1000 + fitBytes);
    const rows = text.split("\n").filter((line) => /^\d/.test(line));
    assert.deepEqual(rows, Array.from({ length: fit }, (_, i) => `${i}, 9`));
    // Every row not in the file is counted as dropped, by close.
    assert.equal(report!.stats.droppedRows, 500 - rows.length);
    assert.match(
      report!.closeError!,
      new RegExp(` bytes unwritten, ${500 - rows.length} rows dropped `),
    );
    // What ignoreFileSizeSignal() spares the process: the signal's default
    // action ends it, with every buffered row.
    const killed = await runLimitedEventsLog(
      { ...plan, path: join(dir.path, "killed.log"), ignoreSignal: false },
      1000,
    );
    assert.equal(killed.status.signal, "SIGXFSZ");
    assert.equal(killed.report, undefined);
  },
});

Deno.test({
  name:
    "a row cut by the file size limit is written whole once the limit is lifted",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const { status, report } = await runLimitedEventsLog({
      path,
      ignoreSignal: true,
      rows: 500,
      pauseMs: 0,
      liftAfterFailure: true,
    }, 1000);
    assert.equal(status.code, 0, `ended by ${status.signal}`);
    assert.ok(report!.stats.writeErrors >= 1);
    assert.equal(report!.closeError, null);
    // The row the limit cut (its head taken out again) was retried from
    // its first byte: each row once, whole, in order.
    const text = await Deno.readTextFile(path);
    const rows = text.split("\n").filter((line) => /^\d/.test(line));
    assert.deepEqual(rows, Array.from({ length: 500 }, (_, i) => `${i}, 9`));
    assert.ok(text.endsWith('Rule: "rx > 5"\n'));
    assert.equal(report!.stats.droppedRows, 0);
    assert.equal(report!.stats.pendingBytes, 0);
    assert.equal(report!.stats.bytesWritten, (await Deno.stat(path)).size);
  },
});

Deno.test("EventsLog flushes at every event boundary without using up its chunks", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  // Four 1 KiB chunks and 30 boundaries with about 2.9 KiB of lines, all
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
    else log.eventEnd(0, T0, NaN);
  }
  assert.equal(log.stats.droppedRows, 0);
  await log.close();
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("<<Event end>>").length - 1, 15);
  assert.ok(
    text.endsWith(
      '29, 0, 0\n<<Peak>> Rule: "ecn ""burst""", Peak: unknown\n' +
        '<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "ecn ""burst"""\n',
    ),
  );
});

Deno.test("EventsLog.open names the log it cannot open", async () => {
  await using dir = await tempDir();
  const blocked = join(dir.path, "file");
  await Deno.writeTextFile(blocked, "");
  await assert.rejects(
    () => EventsLog.open(options(join(blocked, "events.log"))),
    /^Error: Cannot open events log .*\/file\/events\.log: File exists \(os error 17\): mkdir /,
  );
});

Deno.test("EventsLog.open refuses a path that is not a regular file, with one line, touching nothing", async () => {
  await using dir = await tempDir();
  const target = join(dir.path, "target");
  const link = join(dir.path, "link.log");
  await Deno.symlink(target, link); // dangling: an open would create target
  const fifo = join(dir.path, "fifo.log");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const socket = join(dir.path, "socket.log");
  using _listener = Deno.listen({ transport: "unix", path: socket });
  const cases: [string, string][] = [
    [link, "a symbolic link"],
    [dir.path, "a directory"],
    // Opening a FIFO to write waits for a reader: this would hang.
    [fifo, "a FIFO"],
    [socket, "a socket"],
    ["/dev/null", "a character device"],
  ];
  for (const [path, kind] of cases) {
    const opened = Promise.race([
      EventsLog.open(options(path)).then(async (log) => {
        await log.close();
        return "opened";
      }, (error: Error) => error.message),
      new Promise<string>((r) => setTimeout(() => r("still opening"), 3000)),
    ]);
    assert.equal(
      await opened,
      `Cannot open events log ${path}: it is ${kind}, not a regular file`,
    );
  }
  await assert.rejects(() => Deno.lstat(target), Deno.errors.NotFound);
  // A link to an existing log is refused as well, and the log left as it was.
  await Deno.writeTextFile(target, "kept\n");
  await assert.rejects(
    () => EventsLog.open(options(link)),
    /: it is a symbolic link, not a regular file$/,
  );
  assert.equal(await Deno.readTextFile(target), "kept\n");
});

Deno.test("a second EventsLog on the same file is refused and writes nothing; the first loses nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const first = await EventsLog.open(options(path, { flushIntervalMs: 5 }));
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 100; i++) {
    words[0] = i;
    first.row(words, 0);
    if (i === 50) {
      await assert.rejects(
        () => EventsLog.open(options(path)),
        (error: Error) => {
          assert.equal(
            error.message,
            `Cannot open events log ${path}: another dpu-traceback is writing it`,
          );
          return true;
        },
      );
    }
  }
  await first.close();
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("Telemetry monitor : ").length - 1, 1);
  const rows = text.split("\n").filter((l) => /^\d/.test(l));
  assert.deepEqual(rows, Array.from({ length: 100 }, (_, i) => `${i}, 0, 0`));
  // Closed, the lock is free again.
  const next = await EventsLog.open(options(path));
  await next.close();
});

Deno.test("EventsLog holds the lock of the file at its path across rotations and reopens", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const log = await EventsLog.open(
    options(path, { chunkBytes: 1, maxChunks: 1000, maxBytes: 2000, keep: 2 }),
  );
  const refused = /another dpu-traceback is writing it$/;
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 5000 && log.rotations < 2; i++) {
    words[0] = i;
    log.row(words, 0);
    log.flush();
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.equal(log.rotations, 2);
  await assert.rejects(() => EventsLog.open(options(path)), refused);
  // The rotated files are no longer held.
  const old = await EventsLog.open(options(`${path}.1`));
  await old.close();
  // logrotate's rename, then SIGHUP: the new file is held, the old one not.
  await Deno.rename(path, `${path}.moved`);
  log.reopen();
  while (log.reopens < 1) await new Promise((r) => setTimeout(r, 1));
  await assert.rejects(() => EventsLog.open(options(path)), refused);
  const moved = await EventsLog.open(options(`${path}.moved`));
  await moved.close();
  await log.close();
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.deepEqual(names, [
    "events.log",
    "events.log.1",
    "events.log.2",
    "events.log.moved",
  ]);
});

Deno.test("EventsLog.reopen: a new file another writer holds is not taken; rows go on to the old one", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const warnings: string[] = [];
  const log = await EventsLog.open(
    options(path, { warn: (m) => warnings.push(m) }),
  );
  await Deno.rename(path, `${path}.1`);
  const other = await EventsLog.open(options(path)); // got in first
  const words = record(0n, 0n, 0n);
  for (let i = 0; i < 10; i++) {
    words[0] = i;
    log.row(words, 0);
    if (i === 4) log.reopen();
  }
  await log.close();
  await other.close();
  assert.equal(log.reopens, 0);
  assert.deepEqual(warnings, [
    `Cannot open events log ${path}: another dpu-traceback is writing it; still writing to the file open before`,
  ]);
  const rows = (await Deno.readTextFile(`${path}.1`)).split("\n")
    .filter((l) => /^\d/.test(l));
  assert.equal(rows.length, 10);
  assert.doesNotMatch(await Deno.readTextFile(path), /^\d/m);
});

Deno.test("EventsLog.reopen of a log nobody moved keeps writing it, with no second header", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const warnings: string[] = [];
  const log = await EventsLog.open(
    options(path, { warn: (m) => warnings.push(m) }),
  );
  log.row(record(1n, 2n, 3n), 0);
  log.reopen();
  log.row(record(4n, 5n, 6n), 0);
  await log.close();
  assert.deepEqual(warnings, []);
  assert.equal(log.reopens, 0);
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("Telemetry monitor : ").length - 1, 1);
  assert.match(text, /\n1, 2, 3\n4, 5, 6\n$/);
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
    await using dir = await tempDir();
    const { status, report } = await runLimitedEventsLog({
      path: join(dir.path, "events.log"),
      ignoreSignal: true,
      rows: 50,
      pauseMs: 10, // retried each flush
      flushIntervalMs: 5,
    }, 0);
    assert.equal(status.code, 0);
    const { stats, warnings } = report!;
    assert.ok(stats.writeErrors >= 10, `${stats.writeErrors} errors`);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /^events log .*events\.log: cannot write \(.*\); \d+ write errors, \d+ bytes waiting, 0 rows dropped so far; sampling goes on and writes are retried every second$/,
    );
    assert.notEqual(report!.closeError, null);
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
