import assert from "node:assert/strict";
import { openEventPeak } from "./open_event_peak.ts";

function view(active: boolean, changedAtMs: number, peak: number) {
  return {
    rules: [{ active, peak }],
    ruleChangedAtMs: (i: number) => i === 0 ? changedAtMs : NaN,
  };
}

Deno.test("a publication older than the open event does not give its peak", () => {
  const startMs = 400_000;
  // The previous event, still active in the state published 100 ms ago.
  assert.ok(Number.isNaN(openEventPeak(view(true, 1_000, 9_999), 0, startMs)));
  // Published after the previous event ended: idle, not this event either.
  assert.ok(
    Number.isNaN(openEventPeak(view(false, 399_990, 9_999), 0, startMs)),
  );
  // Published as of this start, or later (a rule that ended and started
  // again in between has the newer change time): this event's peak.
  assert.equal(openEventPeak(view(true, startMs, 1_020), 0, startMs), 1_020);
  assert.equal(
    openEventPeak(view(true, startMs + 5, 1_020), 0, startMs),
    1_020,
  );
  // Never published (NaN change time), or no such rule: unknown.
  assert.ok(Number.isNaN(openEventPeak(view(true, NaN, 7), 0, startMs)));
  assert.ok(Number.isNaN(openEventPeak(view(true, startMs, 7), 1, startMs)));
});
