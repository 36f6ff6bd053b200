import assert from "node:assert/strict";
import { join } from "node:path";
import { formatTimePoint, parseTimePoint } from "../base/time_point.ts";
import type { EventKey } from "../events/event_link.ts";
import {
  type MonitorLogPlan,
  type PlannedEvent,
  writeMonitorLog,
} from "../tests/monitor_log.ts";
import { tempDir } from "../tests/temp_dir.ts";
import type { ReviewEvent } from "./event.ts";
import { eventStartedAt } from "./event_at.ts";
import {
  type EventLookup,
  findEvent,
  type FoundEvent,
  unknownMonitor,
} from "./event_lookup.ts";
import { eventRows } from "./event_rows.ts";
import { resolveInputs } from "./files.ts";
import { readReview } from "./read.ts";
import { gzip } from "./test_util.ts";
import { writeTraceback } from "./traceback.ts";
import { POINT_STRIDE } from "./window.ts";

const T0 = 1_795_272_600_000_000_000n;
const PERIOD = 100_000n; // 10 kHz
const SECOND = 1_000_000_000n;
const RULES = ["rx burst", "rx burst 2", "latency"];

function plan(
  path: string,
  events: PlannedEvent[],
  more: Partial<MonitorLogPlan> = {},
): MonitorLogPlan {
  return {
    path,
    monitor: "nic",
    depth: 64,
    periodNs: PERIOD,
    rules: RULES,
    events,
    ...more,
  };
}

function key(rule: string, startNs: bigint): EventKey {
  return { monitor: "nic", rule, startNs };
}

function found(lookup: EventLookup): FoundEvent {
  assert.equal(lookup.kind, "found", lookup.message);
  return lookup as FoundEvent;
}

/** What `review --event TIME --rule NAME` finds in `dir` (charts as its HTML report has them). */
async function reviewed(dir: string, k: EventKey): Promise<ReviewEvent> {
  const filter = { rules: [k.rule], monitors: [] };
  const log = await readReview(await resolveInputs([dir]), { charts: filter });
  const text = formatTimePoint(k.startNs);
  return eventStartedAt(
    log.events,
    { text, ...parseTimePoint("--event", text) },
    filter,
    dir,
  );
}

/** The chart with its times from the start sample, so two clocks' origins compare. */
function chartFromStart(e: ReviewEvent) {
  const c = e.chart!;
  const shift = (s: Float64Array) =>
    [...s].map((v, i) => i % POINT_STRIDE < 2 ? v - c.originMs : v);
  return { before: shift(c.before), during: shift(c.during) };
}

/** The event as the review has it, less what depends on how much of the file was read. */
function essence(e: ReviewEvent, chart = true) {
  const { id: _id, line: _line, chart: _chart, window, ...rest } = e;
  const { startLine: _s, endLine: _e, files, startFile, endFile, ...place } =
    window;
  return {
    ...rest,
    window: {
      ...place,
      startFile: files[startFile],
      endFile: endFile === null ? null : files[endFile],
    },
    chart: chart ? chartFromStart(e) : undefined,
  };
}

async function csvOf(e: ReviewEvent): Promise<string> {
  const out: string[] = [];
  await writeTraceback(e, 1, "csv", (t) => {
    out.push(t);
    return Promise.resolve();
  });
  return out.join("");
}

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let all = "";
  for await (const c of chunks) all += c;
  return all;
}

/** Finds `k` and checks it against the review of the same files. */
async function assertAsReview(
  dir: string,
  log: string,
  k: EventKey,
  chart = true,
): Promise<FoundEvent> {
  const f = found(await findEvent(log, k));
  const r = await reviewed(dir, k);
  assert.deepEqual(essence(f.event, chart), essence(r, chart));
  assert.equal(await collect(eventRows(f, "csv")), await csvOf(r));
  return f;
}

Deno.test("a 1 s event in the middle of a 50 MB log: found reading under 1 MB, as the review reads it", async () => {
  await using dir = await tempDir("lookup_");
  const path = join(dir.path, "nic-events.log");
  // 1 s events (10,000 rows at 10 kHz) a minute apart, 2 x 1024 rows of history each.
  const events: PlannedEvent[] = [];
  for (let k = 0; k < 95; k++) {
    events.push({
      rule: k % 2,
      startNs: T0 + BigInt(k) * 60n * SECOND,
      samples: 10_000,
    });
  }
  await writeMonitorLog(plan(path, events, { depth: 1024 }));
  const size = (await Deno.stat(path)).size;
  assert.ok(size > 50e6, `${size} bytes`);
  const middle = events[47];
  const k = key(RULES[middle.rule], middle.startNs);
  const f = await assertAsReview(dir.path, path, k);
  assert.equal(f.read, "seek");
  assert.equal(f.event.state, "ended");
  assert.equal(f.event.rows, 10_000);
  assert.equal(f.event.historyRows, 2048);
  assert.ok(f.bytesRead < 1e6, `read ${f.bytesRead} bytes of ${size}`);
  // In proportion to the event: its window (history and rows), its
  // history once more (the scan that finds it) and a few probes.
  // The next event's window starts where this one's ends.
  const next = found(
    await findEvent(path, key(RULES[events[48].rule], events[48].startNs)),
  );
  const windowBytes = next.event.window.startOffset -
    f.event.window.startOffset;
  assert.ok(
    f.bytesRead < 1.5 * windowBytes,
    `read ${f.bytesRead}, window ${windowBytes}`,
  );
  // Between two events, and a rule that did not start then: as cheap.
  const between = await findEvent(
    path,
    key(RULES[0], middle.startNs + 30n * SECOND),
  );
  assert.equal(between.kind, "not-found");
  assert.equal(
    between.message,
    `no event of rule "rx burst" of monitor "nic" started at ${
      formatTimePoint(middle.startNs + 30n * SECOND)
    } in ${path}`,
  );
  assert.ok(between.bytesRead < 1e6, `read ${between.bytesRead} bytes`);
  const otherRule = await findEvent(
    path,
    key(RULES[1 - middle.rule], middle.startNs),
  );
  assert.equal(otherRule.kind, "not-found");
  assert.ok(otherRule.bytesRead < 1e6);
  // Off by one ns is another time.
  assert.equal(
    (await findEvent(path, key(k.rule, k.startNs + 1n))).kind,
    "not-found",
  );
});

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
