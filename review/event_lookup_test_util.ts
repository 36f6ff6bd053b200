// Helpers of the event lookup's tests (review/event_lookup_test.ts and the
// slow tier's size test): a planned log, an event's key, and the check that
// the lookup finds what `review --event` finds.

import assert from "node:assert/strict";
import { formatTimePoint, parseTimePoint } from "../base/time_point.ts";
import type { EventKey } from "../events/event_link.ts";
import type { MonitorLogPlan, PlannedEvent } from "../tests/monitor_log.ts";
import type { ReviewEvent } from "./event.ts";
import { eventStartedAt } from "./event_at.ts";
import {
  type EventLookup,
  findEvent,
  type FoundEvent,
} from "./event_lookup.ts";
import { eventRows } from "./event_rows.ts";
import { resolveInputs } from "./files.ts";
import { readReview } from "./read.ts";
import { writeTraceback } from "./traceback.ts";
import { POINT_STRIDE } from "./window.ts";

export const T0 = 1_795_272_600_000_000_000n;
export const PERIOD = 100_000n; // 10 kHz
export const SECOND = 1_000_000_000n;
export const RULES = ["rx burst", "rx burst 2", "latency"];

export function plan(
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

export function key(rule: string, startNs: bigint): EventKey {
  return { monitor: "nic", rule, startNs };
}

export function found(lookup: EventLookup): FoundEvent {
  assert.equal(lookup.kind, "found", lookup.message);
  return lookup as FoundEvent;
}

/** What `review --event TIME --rule NAME` finds in `dir` (charts as its HTML report has them). */
export async function reviewed(dir: string, k: EventKey): Promise<ReviewEvent> {
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
export function chartFromStart(e: ReviewEvent) {
  const c = e.chart!;
  const shift = (s: Float64Array) =>
    [...s].map((v, i) => i % POINT_STRIDE < 2 ? v - c.originMs : v);
  return { before: shift(c.before), during: shift(c.during) };
}

/** The event as the review has it, less what depends on how much of the file was read. */
export function essence(e: ReviewEvent, chart = true) {
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

export async function csvOf(e: ReviewEvent): Promise<string> {
  const out: string[] = [];
  await writeTraceback(e, 1, "csv", (t) => {
    out.push(t);
    return Promise.resolve();
  });
  return out.join("");
}

export async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let all = "";
  for await (const c of chunks) all += c;
  return all;
}

/** Finds `k` and checks it against the review of the same files. */
export async function assertAsReview(
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
