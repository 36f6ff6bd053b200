import assert from "node:assert/strict";
import { eventStartedAt } from "./event_at.ts";
import type { ReviewEvent } from "./event.ts";

const AT = 1795272600; // 2026-11-21T14:50:00Z

function event(
  id: number,
  monitor: string,
  rule: string,
  startMarker: string | null,
): ReviewEvent {
  return { id, monitor, rule, startMarker } as ReviewEvent;
}

Deno.test("an event is found by its start marker's second, monitor and rule", () => {
  const events = [
    event(1, "nic", "drops", null), // started before the log
    event(2, "gpu", "drops", "2026-11-21T14:50:00Z"),
    event(3, "nic", "DROPS total", "2026-11-21T14:50:00Z"),
    event(4, "nic", "drops", "2026-11-21T14:50:00Z"),
  ];
  const find = (rules: string[], monitors: string[] = []) =>
    eventStartedAt(events, AT, { rules, monitors })?.id;
  assert.equal(find([]), 2);
  assert.equal(find([], ["nic"]), 3);
  assert.equal(find(["drops"], ["NIC"]), 4); // exact name first
  assert.equal(find(["drops t"]), 3); // contained, any case
  assert.equal(find(["ecn"]), undefined);
  assert.equal(
    eventStartedAt(events, AT - 1, { rules: [], monitors: [] }),
    undefined,
  );
  // A marker that is not a time never matches.
  assert.equal(
    eventStartedAt([event(5, "nic", "x", "garbage")], AT, {
      rules: [],
      monitors: [],
    }),
    undefined,
  );
});
