import assert from "node:assert/strict";
import { join } from "node:path";
import { type PlannedEvent, writeMonitorLog } from "../tests/monitor_log.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { findEvent, unknownMonitor } from "./event_lookup.ts";
import { eventRows } from "./event_rows.ts";
import { resolveInputs } from "./files.ts";
import { readReview } from "./read.ts";
import { gzip } from "./test_util.ts";

import {
  assertAsReview,
  collect,
  essence,
  found,
  key,
  PERIOD,
  plan,
  SECOND,
  T0,
} from "./event_lookup_test_util.ts";

Deno.test("rotation: an event in a rotated file, one going on across the rotation, and one rotated away", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  const events: PlannedEvent[] = [];
  for (let k = 0; k < 12; k++) {
    events.push({
      rule: 0,
      startNs: T0 + BigInt(k) * 10n * SECOND,
      samples: 3000,
    });
  }
  // ~150 KB per event: the writer rotates every ~3 events, keeping 2.
  await writeMonitorLog(plan(path, events, { maxBytes: 400_000, keep: 2 }));
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.deepEqual(names, [
    "nic-events.log",
    "nic-events.log.1",
    "nic-events.log.2",
  ]);
  const review = await readReview(await resolveInputs([dir.path]));
  const all = [...review.events];
  const inRotated = all.find((e) =>
    e.file.endsWith(".log.1") && e.state === "ended"
  )!;
  const k1 = key(
    inRotated.rule,
    BigInt(inRotated.start!.sec) * SECOND + BigInt(inRotated.start!.ns),
  );
  const f = await assertAsReview(dir.path, path, k1);
  assert.ok(f.file.endsWith("nic-events.log.1"));
  // An event whose rows go on in the next file after the writer rotated.
  const across = all.find((e) =>
    e.window.endFile !== null && e.window.endFile !== e.window.startFile
  );
  assert.ok(across !== undefined, "an event across a rotation");
  const k2 = key(
    across.rule,
    BigInt(across.start!.sec) * SECOND + BigInt(across.start!.ns),
  );
  const g = await assertAsReview(dir.path, path, k2);
  assert.notEqual(g.event.window.endFile, g.event.window.startFile);
  // The first events' files were deleted by the rotation.
  const gone = await findEvent(path, key("rx burst", events[0].startNs));
  assert.equal(gone.kind, "rotated-away");
  assert.match(
    gone.message,
    new RegExp(
      `^its rows were rotated away: the oldest log, ${
        RegExp.escape(join(dir.path, "nic-events.log.2"))
      }, begins at 2026-11-21T14:5`,
    ),
  );
});

Deno.test("a compressed rotated file is streamed, and says so", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  const events: PlannedEvent[] = [0, 1, 2, 3, 4, 5].map((k) => ({
    rule: 0,
    startNs: T0 + BigInt(k) * 10n * SECOND,
    samples: 3000,
  }));
  await writeMonitorLog(plan(path, events, { maxBytes: 400_000, keep: 3 }));
  // logrotate's compress: .2 becomes .2.gz
  const rotated = join(dir.path, "nic-events.log.2");
  await Deno.writeFile(
    `${rotated}.gz`,
    await gzip(await Deno.readFile(rotated)),
  );
  await Deno.remove(rotated);
  const k = key("rx burst", events[0].startNs);
  const f = await assertAsReview(dir.path, path, k);
  assert.equal(f.read, "stream");
  assert.equal(f.lines, "file");
  assert.ok(f.file.endsWith(".2.gz"));
  assert.match(f.message, /a compressed file, read from its start/);
});

Deno.test("a deleted log, a missing directory and an unconfigured monitor say so plainly", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  const k = key("rx burst", T0);
  const gone = await findEvent(path, k);
  assert.deepEqual([gone.kind, gone.message], [
    "no-log",
    `the events log ${path} is missing: its rows were deleted or never written`,
  ]);
  const nowhere = await findEvent(join(dir.path, "nope", "nic-events.log"), k);
  assert.equal(nowhere.kind, "no-log");
  assert.equal(
    nowhere.message,
    `the events log ${
      join(dir.path, "nope", "nic-events.log")
    } cannot be read: its directory: no such file or directory`,
  );
  assert.equal(
    unknownMonitor(k, []).message,
    'no monitor "nic" is configured here (none is)',
  );
});

Deno.test("restarts: an event cut by one, one after it, and one still open at the end of the log", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  const events: PlannedEvent[] = [
    { rule: 0, startNs: T0, samples: 500 },
    { rule: 0, startNs: T0 + 10n * SECOND, samples: 500, cut: "restart" },
    { rule: 0, startNs: T0 + 20n * SECOND, samples: 500 },
    { rule: 2, startNs: T0 + 30n * SECOND, samples: 500, restartBefore: true },
    { rule: 0, startNs: T0 + 40n * SECOND, samples: 700, cut: "open" },
  ];
  await writeMonitorLog(plan(path, events));
  const cut = await assertAsReview(
    dir.path,
    path,
    key("rx burst", events[1].startNs),
  );
  assert.equal(cut.event.state, "interrupted");
  const after = await assertAsReview(
    dir.path,
    path,
    key("rx burst", events[2].startNs),
  );
  assert.equal(after.event.state, "ended");
  // Its header block is the restart's, not the file's first.
  const restarted = await assertAsReview(
    dir.path,
    path,
    key("latency", events[3].startNs),
  );
  assert.ok(restarted.headerOffset > 0);
  const open = await assertAsReview(
    dir.path,
    path,
    key("rx burst", events[4].startNs),
  );
  assert.equal(open.event.state, "open");
  assert.equal(open.event.rows, 700);
  assert.equal(open.event.rulePeak, null);
});

Deno.test("two rules starting on the same sample, and one starting while another is active", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  const events: PlannedEvent[] = [
    { rule: 0, startNs: T0, samples: 400 },
    { rule: 1, startNs: T0, samples: 200 },
    // 300 samples into the next run: past its 128 rows of history.
    { rule: 0, startNs: T0 + 10n * SECOND, samples: 1000 },
    { rule: 2, startNs: T0 + 10n * SECOND + 300n * PERIOD, samples: 100 },
  ];
  await writeMonitorLog(plan(path, events));
  const a = await assertAsReview(dir.path, path, key("rx burst", T0));
  const b = await assertAsReview(dir.path, path, key("rx burst 2", T0));
  assert.deepEqual([a.event.rows, b.event.rows], [400, 200]);
  // Its window starts inside the other event's rows; the chart's points
  // may be bucketed from another row there, so only the event is compared.
  const inside = await assertAsReview(
    dir.path,
    path,
    key("latency", events[3].startNs),
    false,
  );
  assert.equal(inside.event.historyRows, 128);
});

Deno.test("rows: CSV and JSON streamed from the log, bounded, with a note when the limit cuts them", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  await writeMonitorLog(plan(path, [{ rule: 0, startNs: T0, samples: 300 }]));
  const f = found(await findEvent(path, key("rx burst", T0)));
  const csv = (await collect(eventRows(f, "csv"))).trimEnd().split("\n");
  assert.equal(csv.length, 1 + 128 + 300);
  assert.equal(csv[0], "time,offset_s,c0 value,c0 rate/sample (/s),c0,c1,c2");
  assert.equal(csv[128].split(",")[1], "0.000000"); // the start sample
  const cut = (await collect(eventRows(f, "csv", { maxRows: 10 }))).trimEnd()
    .split("\n");
  assert.equal(cut.length, 1 + 10 + 1);
  assert.equal(
    cut[11],
    "# the first 10 rows of the window (of 428) are shown; the rest is left out (at most 10 rows)",
  );
  const json = JSON.parse(
    await collect(eventRows(f, "json", { maxRows: 200 })),
  );
  assert.equal(json.rows.length, 200);
  assert.deepEqual(json.columns.slice(-3), ["c0", "c1", "c2"]);
  assert.equal(json.event.start_ns, String(T0));
  assert.deepEqual(
    json.markers.map((m: { text: string }) => m.text.slice(0, 15)),
    ["<<Event start>>"],
  );
  assert.equal(json.row_limit.reached, true);
  const whole = JSON.parse(await collect(eventRows(f, "json")));
  assert.deepEqual(
    whole.markers.map((m: { text: string }) => m.text.slice(0, 9)),
    ["<<Event s", "<<Peak>> ", "<<Event e"],
  );
  assert.equal(whole.row_limit.reached, false);
  // A consumer that stops early stops the reading.
  for await (const _ of eventRows(f, "csv")) break;
});

Deno.test("without the chart the lookup finds the same event and window, and leaves the chart out", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  await writeMonitorLog(plan(path, [{ rule: 0, startNs: T0, samples: 300 }]));
  const charted = found(await findEvent(path, key("rx burst", T0)));
  const bare = found(
    await findEvent(path, key("rx burst", T0), { chart: false }),
  );
  assert.ok(charted.event.chart !== undefined);
  assert.equal(bare.event.chart, undefined);
  assert.deepEqual(essence(bare.event, false), essence(charted.event, false));
  assert.equal(
    await collect(eventRows(bare, "csv")),
    await collect(eventRows(charted, "csv")),
  );
});
