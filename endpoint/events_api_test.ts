import assert from "node:assert/strict";
import { EventJournal } from "../events/event_journal.ts";
import type { RuleConfig } from "../config/types.ts";
import { type EventsMonitor, listEvents, oneEvent } from "./events_api.ts";
import { eventId } from "../events/event_link.ts";
import { traceCommand } from "../events/trace_command.ts";

// 2026-11-21T14:50:00Z in ns, then 123.456789 ms past it.
const T0 = 1_795_272_600_000_000_000n;

function record(ns: bigint): Uint32Array {
  return new Uint32Array([Number(ns & 0xffff_ffffn), Number(ns >> 32n), 0, 0]);
}

const RULES: RuleConfig[] = [
  { name: "drops", column: 0, comparisonType: "gt", comparisonValue: 0n },
  {
    name: "credit's low",
    column: 0,
    comparisonType: "dt_lt",
    comparisonValue: 5n,
    severity: "critical",
    summary: "credits fall",
  },
  {
    name: "rate low",
    signal: "rate",
    column: 0,
    windowNs: 1e6,
    direction: "below",
    threshold: 10,
    clear: 20,
    forNs: 0,
    keepFiringForNs: 0,
  },
];

/** One monitor `nic` with three rules; live peaks and samples settable. */
function setup(capacity = 1024) {
  const journal = EventJournal.create([RULES.length], capacity);
  const changedAtMs = RULES.map(() => NaN);
  const live = {
    samples: 0,
    rules: RULES.map(() => ({ active: false, peak: NaN })),
    changedAtMs,
    ruleChangedAtMs: (i: number) => changedAtMs[i],
  };
  const monitors: EventsMonitor[] = [{
    config: { name: "nic", rules: RULES },
    monitor: live,
    log: { path: "/var/log/dpu-traceback/nic events.log" },
  }];
  return { journal, live, monitors };
}

const ask = (query: string) => new URLSearchParams(query);

Deno.test("events are listed newest first with their summaries", () => {
  const { journal, live, monitors } = setup();
  const startMs = Date.UTC(2026, 10, 21, 14, 50, 0, 125);
  journal.started(0, 0, record(T0 + 123_456_789n), 0, 101, startMs, 9);
  journal.ended(0, 0, record(T0 + 2_623_456_789n), 0, 126, 17, startMs + 2500);
  journal.started(0, 1, record(T0 + 5_000_000_000n), 0, 151, startMs + 5000);
  live.samples = 160;
  // Published as of the open event's start: its peak so far.
  live.rules[1] = { active: true, peak: -3 };
  live.changedAtMs[1] = startMs + 5000;
  const now = Number(T0 / 1_000_000n) + 8000; // 3 s into the open event
  const answer = listEvents(journal, monitors, ask(""), now);
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, {
    events: [
      {
        id: "nic/credit%27s%20low/2026-11-21T14:50:05.000000000Z",
        page: "/events/nic/credit%27s%20low/2026-11-21T14:50:05.000000000Z",
        monitor: "nic",
        rule: "credit's low",
        severity: "critical",
        summary: "credits fall",
        start: "2026-11-21T14:50:05.000000Z",
        start_ns: String(T0 + 5_000_000_000n),
        end: null,
        end_ns: null,
        state: "open",
        duration_s: 3,
        samples: 10, // 151 .. 160
        peak: -3,
        peak_kind: "min",
        start_value: null, // not given: unknown
        lost_before_start: 0,
      },
      {
        id: "nic/drops/2026-11-21T14:50:00.123456789Z",
        page: "/events/nic/drops/2026-11-21T14:50:00.123456789Z",
        monitor: "nic",
        rule: "drops",
        severity: "warning",
        start: "2026-11-21T14:50:00.123456Z",
        start_ns: String(T0 + 123_456_789n),
        end: "2026-11-21T14:50:02.623456Z",
        end_ns: String(T0 + 2_623_456_789n),
        state: "ended",
        duration_s: 2.5,
        samples: 25, // 101 .. 125; 126 ended it
        peak: 17,
        peak_kind: "max",
        start_value: 9,
        lost_before_start: 0,
      },
    ],
    truncated: false,
  });
});

Deno.test("a peak the rule never measured is null, and a signal rule that fires low peaks at its min", () => {
  const { journal, monitors } = setup();
  journal.started(0, 2, record(T0), 0, 1, 0);
  journal.ended(0, 2, record(T0 + 1000n), 0, 2, NaN, 0);
  const { events } = listEvents(journal, monitors, ask(""), 0).body as {
    events: { peak: number | null; peak_kind: string }[];
  };
  assert.deepEqual(events.map((e) => [e.peak, e.peak_kind]), [[null, "min"]]);
});

Deno.test("since keeps events open or ended at or after it, in either form", () => {
  const { journal, monitors } = setup();
  // Event k starts k ns and ends k s after T0; event 4 stays open.
  for (let k = 1; k <= 3; k++) {
    journal.started(0, 0, record(T0 + BigInt(k)), 0, k, 0);
    journal.ended(
      0,
      0,
      record(T0 + BigInt(k) * 1_000_000_000n),
      0,
      k + 1,
      1,
      0,
    );
  }
  journal.started(0, 1, record(T0 + 4n), 0, 9, 0);
  // Each event by k, from its start.
  const ids = (query: string) =>
    (listEvents(journal, monitors, ask(query), 0).body as {
      events: { start_ns: string }[];
    }).events.map((e) => Number(BigInt(e.start_ns) - T0));
  assert.deepEqual(ids(""), [4, 3, 2, 1]);
  assert.deepEqual(ids("since=2026-11-21T14:50:02Z"), [4, 3, 2]);
  assert.deepEqual(ids("since=2026-11-21T14:50:02.000000001Z"), [4, 3]);
  assert.deepEqual(ids("since=2026-11-21T14:50:02.5"), [4, 3]); // UTC
  assert.deepEqual(ids("since=2026-11-21T15:50:02%2B01:00"), [4, 3, 2]);
  assert.deepEqual(ids("since=1795272602"), [4, 3, 2]);
  // Unix seconds to the ns: one past event 2's end.
  assert.deepEqual(ids("since=1795272602.000000001"), [4, 3]);
  assert.deepEqual(ids("since=2027-01-01"), [4]); // only the open one
});

Deno.test("limit bounds the answer and says when it cut", () => {
  const { journal, monitors } = setup(8);
  for (let k = 1; k <= 20; k++) {
    journal.started(0, 0, record(T0 + BigInt(k)), 0, k, 0);
    journal.ended(0, 0, record(T0 + BigInt(k) + 1n), 0, k + 1, 1, 0);
  }
  const page = (query: string) => {
    const body = listEvents(journal, monitors, ask(query), 0).body as {
      events: { start_ns: string }[];
      truncated: boolean;
    };
    // Each event by k, from its start.
    return {
      events: body.events.map((e) => ({ id: Number(BigInt(e.start_ns) - T0) })),
      truncated: body.truncated,
    };
  };
  // The ring keeps 8: that is all there is to list.
  assert.deepEqual(page("").events.map((e) => e.id), [
    20,
    19,
    18,
    17,
    16,
    15,
    14,
    13,
  ]);
  assert.equal(page("").truncated, false);
  const three = page("limit=3");
  assert.deepEqual(three.events.map((e) => e.id), [20, 19, 18]);
  assert.equal(three.truncated, true);
  assert.equal(page("limit=8").truncated, false);
  assert.equal(page("limit=1000").events.length, 8);
});

Deno.test("bad, unknown or repeated parameters are a 400 with a one-line reason", () => {
  const { journal, monitors } = setup();
  const cases: [string, string][] = [
    ["limit=0", 'limit must be an integer from 1 to 1000, got "0"'],
    ["limit=1001", 'limit must be an integer from 1 to 1000, got "1001"'],
    ["limit=05", 'limit must be an integer from 1 to 1000, got "05"'],
    ["limit=1e2", 'limit must be an integer from 1 to 1000, got "1e2"'],
    ["limit=", 'limit must be an integer from 1 to 1000, got ""'],
    [
      "since=yesterday",
      'since "yesterday": not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds',
    ],
    [
      "since=2026-13-45",
      'since "2026-13-45": there is no month 13',
    ],
    [
      "since=2026-02-31",
      'since "2026-02-31": 2026-02 has no day 31',
    ],
    ["limit=1&limit=2", '"limit" is given twice'],
    ["page=2", 'unknown parameter "page" (known: since, limit)'],
    [
      `${"x".repeat(100)}=1`,
      `unknown parameter "${"x".repeat(64)}..." (known: since, limit)`,
    ],
    ["a%0Ab=1", 'unknown parameter "a\\nb" (known: since, limit)'],
  ];
  for (const [query, error] of cases) {
    const answer = listEvents(journal, monitors, ask(query), 0);
    assert.equal(answer.status, 400, query);
    assert.deepEqual(answer.body, { error }, query);
    assert.ok(!JSON.stringify(answer.body).includes("\n"));
  }
});

Deno.test("a long open event the ring dropped is still listed, and served by id", () => {
  const { journal, live, monitors } = setup(4);
  journal.started(0, 1, record(T0), 0, 1, 0);
  const long = eventId({ monitor: "nic", rule: "credit's low", startNs: T0 });
  for (let k = 2; k <= 10; k++) {
    journal.started(0, 0, record(T0 + BigInt(k)), 0, k, 0);
    journal.ended(0, 0, record(T0 + BigInt(k) + 1n), 0, k + 1, 1, 0);
  }
  live.samples = 50;
  const { events } = listEvents(journal, monitors, ask("since=2030-01-01"), 0)
    .body as { events: { id: string; state: string; samples: number }[] };
  assert.deepEqual(events, [
    { ...events[0], id: long, state: "open", samples: 50 },
  ]);
  assert.equal(oneEvent(journal, monitors, long, 0).status, 200);
  // Ended and gone from the ring: still its rule's last event.
  journal.ended(0, 1, record(T0 + 50n), 0, 51, 2, 0);
  const answer = oneEvent(journal, monitors, long, 0);
  assert.equal(answer.status, 200);
  assert.equal((answer.body as { state: string }).state, "ended");
  // Neither in the ring nor any rule's open or last: gone.
  const third = eventId({ monitor: "nic", rule: "drops", startNs: T0 + 3n });
  const evicted = oneEvent(journal, monitors, third, 0);
  assert.equal(evicted.status, 404);
  assert.deepEqual(evicted.body, {
    error:
      `event ${third} is not in the agent's recent events (the 4 newest, and each rule's open and last one); its page, /events/${third}, looks for it in events.log`,
  });
});

Deno.test("one event carries the review command and its events.log", () => {
  const { journal, monitors } = setup();
  // The marker's wall clock is a little after the sample, in the next
  // second: the command names the sample's time, exact, as its row has it.
  const startMs = Date.UTC(2026, 10, 21, 14, 50, 8, 2);
  journal.started(0, 1, record(T0 + 7_999_000_123n), 0, 3, startMs);
  const id = "nic/credit%27s%20low/2026-11-21T14:50:07.999000123Z";
  const answer = oneEvent(journal, monitors, id, 0);
  assert.equal(answer.status, 200);
  const body = answer.body as Record<string, unknown>;
  assert.equal(body.id, id);
  assert.equal(body.rule, "credit's low");
  assert.equal(body.events_log, "/var/log/dpu-traceback/nic events.log");
  assert.equal(
    body.review,
    "dpu-traceback review '/var/log/dpu-traceback/nic events.log' --event 2026-11-21T14:50:07.999000123Z --rule='credit'\\''s low'",
  );
  for (const bad of ["1", "nic/drops", "nic/drops/2026-11-21", "a/b/c/d", ""]) {
    const refused = oneEvent(journal, monitors, bad, 0);
    assert.equal(refused.status, 400, bad);
    assert.match(
      (refused.body as { error: string }).error,
      /^the event ID must be MONITOR\/RULE\/START, START as /,
    );
  }
  // One ns off, another rule, another monitor: no such event.
  for (
    const other of [
      "nic/credit%27s%20low/2026-11-21T14:50:07.999000124Z",
      "nic/drops/2026-11-21T14:50:07.999000123Z",
      "gpu/credit%27s%20low/2026-11-21T14:50:07.999000123Z",
    ]
  ) {
    assert.equal(oneEvent(journal, monitors, other, 0).status, 404, other);
  }
});

Deno.test("the review command survives a shell whatever the rule's name", async () => {
  const names = [
    "plain",
    "it's",
    '$(touch x) `y` "z" \\ ;|&',
    "a\nb",
    "''",
    "-x",
    "--json",
    "-5",
    "a=b",
  ];
  for (const name of names) {
    const command = traceCommand("/tmp/e.log", 0n, name);
    // What a POSIX shell hands the program, printed one argument a line.
    const shell = command.replace(/^dpu-traceback /, "printf '%s\\0' ");
    const output = await new Deno.Command("sh", {
      args: ["-c", shell],
      stdout: "piped",
    }).output();
    assert.equal(output.code, 0);
    const args = new TextDecoder().decode(output.stdout).split("\0");
    assert.deepEqual(args, [
      "review",
      "/tmp/e.log",
      "--event",
      "1970-01-01T00:00:00.000000000Z",
      `--rule=${name}`,
      "",
    ]);
  }
});

Deno.test("an open event's peak is unknown until a publication as of its start", () => {
  const { journal, live, monitors } = setup();
  const startMs = Date.UTC(2026, 10, 21, 14, 50, 0, 125);
  journal.started(0, 1, record(T0), 0, 10, startMs, -1);
  // The state published before the start still shows the previous event.
  live.rules[1] = { active: true, peak: -40 };
  live.changedAtMs[1] = startMs - 3_000;
  const peakNow = () =>
    (listEvents(journal, monitors, ask(""), startMs + 50).body as {
      events: { peak: number | null }[];
    }).events[0].peak;
  assert.equal(peakNow(), null);
  live.rules[1] = { active: true, peak: -7 };
  live.changedAtMs[1] = startMs;
  assert.equal(peakNow(), -7);
});

Deno.test("a NIC monitor's events name the GPUs closest to it; other monitors' name none", () => {
  const { journal, monitors } = setup();
  const nic: EventsMonitor = {
    ...monitors[0],
    nicGpus: {
      nic: "0000:1a:00.0",
      gpus: [
        { index: 0, uuid: "GPU-aaaa", busId: "0000:18:00.0", link: "PIX" },
        { index: 1, uuid: "GPU-bbbb", busId: "0000:28:00.0", link: "PIX" },
      ],
    },
  };
  journal.started(0, 0, record(T0), 0, 1, 0);
  const [event] = (listEvents(journal, [nic], ask(""), 0).body as {
    events: { gpus?: unknown }[];
  }).events;
  assert.deepEqual(event.gpus, {
    nic: "0000:1a:00.0",
    closest: [
      { index: 0, uuid: "GPU-aaaa", bus_id: "0000:18:00.0", link: "PIX" },
      { index: 1, uuid: "GPU-bbbb", bus_id: "0000:28:00.0", link: "PIX" },
    ],
  });
  const far: EventsMonitor = {
    ...monitors[0],
    nicGpus: {
      nic: "0000:8a:00.0",
      gpus: [],
      none: "no GPU shares its NUMA node",
    },
  };
  const [lone] = (listEvents(journal, [far], ask(""), 0).body as {
    events: { gpus?: unknown }[];
  }).events;
  assert.deepEqual(lone.gpus, {
    nic: "0000:8a:00.0",
    closest: [],
    none: "no GPU shares its NUMA node",
  });
  const [plain] = (listEvents(journal, monitors, ask(""), 0).body as {
    events: Record<string, unknown>[];
  }).events;
  assert.equal("gpus" in plain, false);
});
