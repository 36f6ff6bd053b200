// Blind periods end to end: a Monitor writes its losses to a real
// events.log, and review lists each once and flags the events whose
// windows hold one. No clock waits: sample times are written by hand.

import assert from "node:assert/strict";
import { join } from "node:path";
import { EventsLog } from "../events/log.ts";
import { Monitor } from "../rules/monitor.ts";
import { resolveInputs } from "../review/files.ts";
import { readReview } from "../review/read.ts";
import { runReview } from "../cli/review.ts";
import { tempDir } from "./temp_dir.ts";

const T0_MS = Date.UTC(2026, 10, 21, 14, 2, 0, 120);
const rule = {
  name: "a>5",
  column: 0,
  comparisonType: "gt" as const,
  comparisonValue: 5n,
};

/** A monitor of depth 2 (ring of 4) writing to `path`, fed by `step`. */
async function open(path: string) {
  const log = await EventsLog.open({
    path,
    version: "dpu-traceback test",
    device: "sim",
    name: "nic",
    depth: 2,
    samplePeriodNs: 100_000_000,
    columns: [{ name: "a", dataId: "0x1020000100000000" }],
    rules: [rule],
  });
  const monitor = new Monitor(
    { name: "nic", depth: 2, columns: ["a"], rules: [rule] },
    log,
  );
  /** Commits value `a` at T0 + `ms`. */
  const step = (ms: number, a: number) => {
    const at = monitor.claim();
    const ns = BigInt(T0_MS + ms) * 1_000_000n;
    monitor.words[at] = Number(ns & 0xffffffffn);
    monitor.words[at + 1] = Number(ns >> 32n);
    monitor.words[at + 2] = a;
    monitor.words[at + 3] = 0;
    monitor.commit();
  };
  return { log, monitor, step };
}

function gapLines(text: string): string[] {
  return text.split("\n").filter((l) => l.startsWith("<<Gap>>"));
}

Deno.test("a loss with no event after it leaves its own gap line; one inside an event is marked before its row", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const { log, monitor, step } = await open(path);
  step(0, 0);
  monitor.gap(40); // blind from T0 to T0 + 4.1 s, no event
  step(4100, 0);
  step(4200, 9);
  step(4300, 9); // a>5 starts (2 in a row)
  monitor.gap(2); // inside the event
  step(4600, 9);
  step(4700, 0);
  step(4800, 0); // ends
  monitor.gap(7); // still blind as the agent stops
  monitor.writeOpenBlindPeriod(T0_MS + 9000);
  await log.close();
  assert.deepEqual(gapLines(await Deno.readTextFile(path)), [
    "<<Gap>> Time: 2026-11-21T14:02:04Z, Dropped samples: 40, From: 2026-11-21T14:02:00.120Z, To: 2026-11-21T14:02:04.220Z",
    // Marked again in the event's history dump, without the span.
    "<<Gap>> Time: 2026-11-21T14:02:04Z, Dropped samples: 40",
    // Before the row after it, as the event is active.
    "<<Gap>> Time: 2026-11-21T14:02:04Z, Dropped samples: 2",
    "<<Gap>> Time: 2026-11-21T14:02:09Z, Dropped samples: 7, From: 2026-11-21T14:02:04.920Z, Stopped: 2026-11-21T14:02:09.120Z",
  ]);
  assert.equal(monitor.blindPeriods, 3);
  assert.equal(monitor.droppedSamples, 49);
});

Deno.test("review lists a loss once when a history dump marks it again, and flags the events whose windows hold it", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  const { log, monitor, step } = await open(path);
  step(0, 0);
  monitor.gap(5); // no event: its own line...
  step(1000, 0);
  step(1100, 9);
  step(1200, 9); // ...and marked again in this event's dump
  step(1300, 0);
  step(1400, 0); // ends
  step(1500, 9);
  step(1600, 9); // starts
  monitor.gap(3); // during the second event only
  step(1900, 9);
  step(2000, 0);
  step(2100, 0);
  step(60_000, 0); // long after, outside every window
  await log.close();
  const text = await Deno.readTextFile(path);
  // The first loss is in the file twice: its own line, then the dump's mark.
  assert.equal(gapLines(text).length, 3);

  const review = await readReview(await resolveInputs([path]));
  assert.deepEqual(
    review.blindPeriods.map((p) => [p.monitor, p.dropped, p.from, p.to]),
    [
      ["nic", 5, { sec: 1795269720, ns: 120e6 }, {
        sec: 1795269721,
        ns: 120e6,
      }],
      ["nic", 3, { sec: 1795269721, ns: 720e6 }, {
        sec: 1795269722,
        ns: 20e6,
      }],
    ],
  );
  const events = [...review.events];
  assert.deepEqual(
    events.map((e) => [e.blindPeriods, e.blindSamples, e.droppedSamples]),
    [[1, 5, 0], [1, 3, 3]], // the first in its history, the second during
  );

  const out: string[] = [];
  const io = {
    out: (t: string) => Promise.resolve(void out.push(t)),
    error: (m: string) => assert.fail(m),
    warn: (m: string) => assert.fail(m),
    info: () => {},
  };
  assert.equal(await runReview([path], io), 0);
  const table = out.join("");
  assert.match(table, /BLIND\s+ROWS\n/);
  assert.match(table, / 1 \(5 lost\) /);
  assert.ok(
    table.endsWith(
      "Blind periods: the source lost samples, and no rule saw them.\n" +
        "MONITOR  FROM (UTC)               TO            DURATION  LOST\n" +
        "nic      2026-11-21 14:02:00.120  14:02:01.120   1.000 s     5\n" +
        "nic      2026-11-21 14:02:01.720  14:02:02.020    300 ms     3\n",
    ),
    table,
  );

  out.length = 0;
  assert.equal(await runReview([path, "--json"], io), 0);
  const json = JSON.parse(out.join(""));
  assert.deepEqual(
    json.events.map((
      e: { blind_periods: number; blind_samples: number },
    ) => [e.blind_periods, e.blind_samples]),
    [[1, 5], [1, 3]],
  );
  assert.deepEqual(json.blind_periods[0], {
    monitor: "nic",
    from: "2026-11-21T14:02:00.120000Z",
    to: "2026-11-21T14:02:01.120000Z",
    stopped: false,
    duration_s: 1,
    dropped_samples: 5,
    file: path,
    line: json.blind_periods[0].line,
  });
  assert.equal(json.blind_periods.length, 2);
});
