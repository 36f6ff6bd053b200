// The event lookup at size: a 1 s event in the middle of a 50 MB log is found
// reading in proportion to the event, not to the file, and as
// `review --event` finds it. Size-scale, so in the slow tier.

import assert from "node:assert/strict";
import { join } from "node:path";
import { formatTimePoint } from "../../base/time_point.ts";
import { findEvent } from "../../review/event_lookup.ts";
import {
  assertAsReview,
  found,
  key,
  plan,
  RULES,
  SECOND,
  T0,
} from "../../review/event_lookup_test_util.ts";
import { type PlannedEvent, writeMonitorLog } from "../monitor_log.ts";
import { tempDir } from "../temp_dir.ts";

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
