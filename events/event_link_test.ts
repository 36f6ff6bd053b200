import assert from "node:assert/strict";
import {
  eventId,
  eventPagePath,
  MAX_EVENT_ID_LENGTH,
  parseEventId,
} from "./event_link.ts";

Deno.test("an event ID reads back as its key, whatever the rule's name holds", () => {
  const names = [
    "ECN storm",
    "a/b",
    "100 %",
    'it\'s "hot"',
    "?#&=",
    "ünïcode ✓",
    "..",
  ];
  for (const rule of names) {
    const key = { monitor: "nic 0", rule, startNs: 1_795_272_600_300_000_001n };
    const id = eventId(key);
    assert.equal(id.split("/").length, 3, id);
    assert.doesNotMatch(id, /[ ?#"'()]/);
    assert.deepEqual(parseEventId(id), { ok: true, key });
  }
  assert.equal(
    eventPagePath({ monitor: "nic", rule: "a/b", startNs: 1n }),
    "/events/nic/a%2Fb/1970-01-01T00:00:00.000000001Z",
  );
});

Deno.test("an ID whose colons came percent-encoded is the same ID", () => {
  assert.deepEqual(
    parseEventId("nic/drops/2026-11-21T14%3A50%3A00.300000001Z"),
    parseEventId("nic/drops/2026-11-21T14:50:00.300000001Z"),
  );
});

Deno.test("a malformed ID is one line saying what is wrong", () => {
  const cases: [string, RegExp][] = [
    ["nic/drops", /; got 2 parts$/],
    ["nic/drops/2026-11-21T14:50:00.300000001Z/x", /; got 4 parts$/],
    ["nic//2026-11-21T14:50:00.300000001Z", /; a name is empty$/],
    [
      "nic/%E0%A4%A/2026-11-21T14:50:00.300000001Z",
      /not valid percent-encoded UTF-8$/,
    ],
    [
      "nic/drops/2026-11-21T14:50:00.3Z",
      /; got start "2026-11-21T14:50:00.3Z"$/,
    ],
    ["nic/drops/2026-13-21T14:50:00.300000001Z", /not a time$/],
    ["nic/drops/1795272600300000001", /got start "1795272600300000001"$/],
    [`nic/${"x".repeat(MAX_EVENT_ID_LENGTH)}/t`, /more than 1024$/],
  ];
  for (const [id, problem] of cases) {
    const parsed = parseEventId(id);
    assert.equal(parsed.ok, false, id);
    assert.match(!parsed.ok ? parsed.problem : "", problem, id);
    assert.doesNotMatch(!parsed.ok ? parsed.problem : "", /\n/);
  }
});
