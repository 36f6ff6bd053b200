import assert from "node:assert/strict";
import type { JournalEvent } from "../events/event_journal.ts";
import {
  type AlertSettings,
  PEAK_WAIT_MS,
  RULE_ALERTNAME,
  RuleAlert,
  type RuleLook,
} from "./alert_state.ts";

const RULE = {
  monitor: "nic",
  device: "0000:03:00.0",
  rule: "pfc storm's",
  severity: "critical",
  summary: "PFC pause storm",
  eventLog: "/var/log/dpu-traceback/events.log",
};
const SETTINGS: AlertSettings = {
  instance: "dpu-7",
  labels: { rail: "3", rack: "r12" },
  endpointUrl: "http://dpu-7:9477/",
  resendIntervalMs: 30_000,
  holdMs: 300_000,
  // The wait for the peak has tests of its own; the others send at once.
  peakWaitMs: 0,
};
const T0 = Date.UTC(2026, 10, 24, 0, 0, 0); // Unix ms

/** An event starting at T0 + startMs (ms), ended at T0 + endMs if given. */
function event(
  id: number,
  startMs: number,
  endMs?: number,
  peak = NaN,
  value = NaN,
): JournalEvent {
  const ns = (ms: number) => BigInt(T0 + ms) * 1_000_000n + 123_456n;
  return {
    id,
    monitor: 0,
    rule: 0,
    startNs: ns(startMs),
    endNs: endMs === undefined ? undefined : ns(endMs),
    startSample: id * 100,
    endSample: endMs === undefined ? undefined : id * 100 + 5,
    peak,
    // The markers are written a little after the samples.
    startMs: T0 + startMs + 1,
    endMs: endMs === undefined ? NaN : T0 + endMs + 1,
    value,
    lostBefore: 0,
    lossBack: -1,
  };
}

/**
 * A look; a live peak given is published as of the open event's start
 * (fresh), unless told otherwise.
 */
function look(
  open?: JournalEvent,
  last?: JournalEvent,
  activations = NaN,
  livePeak = NaN,
): RuleLook {
  return { open, last, activations, livePeak };
}

const iso = (ms: number) => new Date(T0 + ms).toISOString();

Deno.test("a rule's start fires an alert with its labels, annotations and times", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.equal(alert.tick(look(), T0), undefined);
  const sent = alert.tick(look(event(4, 2_345), undefined, 1, 90), T0 + 2_400);
  assert.ok(sent);
  assert.deepEqual(sent.labels, {
    rail: "3",
    rack: "r12",
    alertname: "DpuTracebackRuleFired",
    rule: "pfc storm's",
    monitor: "nic",
    device: "0000:03:00.0",
    instance: "dpu-7",
    severity: "critical",
  });
  assert.equal(sent.startsAt, iso(2_345));
  assert.equal(sent.endsAt, iso(2_400 + 120_000));
  // The event's page by its stable ID, which a restart does not change.
  assert.equal(
    sent.generatorURL,
    "http://dpu-7:9477/events/nic/pfc%20storm%27s/2026-11-24T00:00:02.345123456Z",
  );
  assert.equal(sent.annotations.summary, "PFC pause storm");
  assert.equal(sent.annotations.events, "1");
  const d = sent.annotations.description;
  assert.match(
    d,
    /^Rule "pfc storm's" of monitor nic \(0000:03:00\.0\) on dpu-7 fired\. Its event, started 2026-11-24T00:00:02\.345Z, is active now\. Value at start unknown\. Peak so far 90\. /,
  );
  assert.ok(
    d.includes(
      `dpu-traceback review /var/log/dpu-traceback/events.log --event 2026-11-24T00:00:02.345123456Z --rule='pfc storm'\\''s'`,
    ),
    d,
  );
  assert.equal(alert.firing, true);
});

Deno.test("an alert for an event that began after lost samples says so; one without says nothing of it", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  const stalled = { ...event(4, 2_345), lostBefore: 11_067, lossBack: 3 };
  const sent = alert.tick(look(stalled, undefined, 1, 90), T0 + 2_400)!;
  assert.match(
    sent.annotations.description,
    /Peak so far 90\. It began 3 samples after the source lost 11067 samples \(a stall\): a rule of the reference's types compares across the loss, so check the traceback's <<Gap>> line before acting\. Traceback of this event /,
  );
  const right = { ...event(5, 2_345), lostBefore: 2, lossBack: 0 };
  const other = new RuleAlert(RULE, SETTINGS);
  assert.match(
    other.tick(look(right, undefined, 1, 90), T0 + 2_400)!.annotations
      .description,
    /It began right after the source lost 2 samples/,
  );
  const plain = new RuleAlert(RULE, SETTINGS);
  assert.doesNotMatch(
    plain.tick(look(event(6, 2_345), undefined, 1, 90), T0 + 2_400)!
      .annotations.description,
    /lost|stall/,
  );
});

Deno.test("a firing alert is resent every interval with a lease of 4 intervals", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  const open = look(event(1, 0), undefined, 1, 5);
  assert.ok(alert.tick(open, T0 + 10));
  assert.equal(alert.tick(open, T0 + 60), undefined);
  assert.equal(alert.tick(open, T0 + 30_009), undefined);
  const again = alert.tick({ ...open, livePeak: 8 }, T0 + 30_010);
  assert.ok(again);
  assert.equal(again.endsAt, iso(30_010 + 120_000));
  assert.equal(again.startsAt, iso(0));
  assert.match(again.annotations.description, /Peak so far 8\./);
  assert.equal(alert.tick(open, T0 + 30_060), undefined);
  assert.ok(alert.tick(open, T0 + 60_010));
});

Deno.test("an ended rule stays firing for the hold, then resolves at the end sample's time", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.ok(alert.tick(look(event(1, 0), undefined, 1), T0 + 50));
  const ended = look(undefined, event(1, 0, 1_000, 42), 1);
  // Within the hold: firing, resent on the interval with the end's facts.
  assert.equal(alert.tick(ended, T0 + 1_050), undefined);
  const held = alert.tick(ended, T0 + 30_050);
  assert.ok(held);
  assert.equal(held.endsAt, iso(30_050 + 120_000));
  assert.match(
    held.annotations.description,
    /Its event, started 2026-11-24T00:00:00\.000Z, ended 2026-11-24T00:00:01\.000Z after 1\.000 s\. Value at start unknown\. Peak 42 over the event\. /,
  );
  // The hold counts from the end marker (T0 + 1_001): 1 ms before it is
  // over, still firing (and a resend is due).
  assert.equal(alert.tick(ended, T0 + 301_000)?.endsAt, iso(421_000));
  assert.equal(alert.firing, true);
  const resolved = alert.tick(ended, T0 + 301_001);
  assert.ok(resolved);
  assert.equal(resolved.endsAt, iso(1_000));
  assert.equal(resolved.startsAt, iso(0));
  assert.equal(alert.firing, false);
  // Resolved once only.
  assert.equal(alert.tick(ended, T0 + 400_000), undefined);
});

Deno.test("a rule flapping within the hold gives one alert counting its events", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.ok(alert.tick(look(event(1, 0), undefined, 1), T0 + 50));
  const ended1 = look(undefined, event(1, 0, 10), 1);
  assert.equal(alert.tick(ended1, T0 + 100), undefined);
  // Another event 20 s later: same alert, counted, and not sent at once
  // (one send per interval, not one per event).
  const open2 = look(event(2, 20_000), event(1, 0, 10), 2);
  assert.equal(alert.tick(open2, T0 + 20_050), undefined);
  const ended2 = look(undefined, event(2, 20_000, 20_020), 2);
  assert.equal(alert.tick(ended2, T0 + 20_100), undefined);
  const resent = alert.tick(ended2, T0 + 30_050);
  assert.ok(resent);
  assert.equal(resent.startsAt, iso(0));
  assert.equal(resent.annotations.events, "2");
  // Its text, link and review command all name the newest event; its
  // startsAt is the first's.
  assert.equal(
    resent.generatorURL,
    "http://dpu-7:9477/events/nic/pfc%20storm%27s/2026-11-24T00:00:20.000123456Z",
  );
  assert.match(
    resent.annotations.description,
    /fired\. The newest of the 2 events this agent has counted in this alert, started 2026-11-24T00:00:20\.000Z, ended 2026-11-24T00:00:20\.020Z after 20 ms\. .* --event 2026-11-24T00:00:20\.000123456Z --rule=/,
  );
  // The second end restarts the hold: past the first's, still firing.
  assert.equal(alert.tick(ended2, T0 + 300_050)?.endsAt, iso(420_050));
  assert.equal(alert.firing, true);
  const resolved = alert.tick(ended2, T0 + 320_021);
  assert.ok(resolved);
  assert.equal(resolved.endsAt, iso(20_020));
  assert.equal(resolved.annotations.events, "2");
});

Deno.test("a burst that starts and ends between two looks still fires", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.equal(alert.tick(look(undefined, undefined, 0), T0), undefined);
  const sent = alert.tick(look(undefined, event(1, 10, 12, 3), 1), T0 + 50);
  assert.ok(sent);
  assert.equal(sent.startsAt, iso(10));
  assert.equal(sent.endsAt, iso(50 + 120_000)); // firing: the hold
  assert.equal(sent.annotations.events, "1");
});

Deno.test("bursts the journal cannot show one by one are counted from activations", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.equal(alert.tick(look(undefined, undefined, 7), T0), undefined);
  // Three bursts between two looks: only the last is in the journal.
  assert.ok(alert.tick(look(undefined, event(9, 30, 31), 10), T0 + 50));
  assert.equal(alert.events, 3);
  // The published state lags: a later count still raises it.
  alert.tick(look(undefined, event(9, 30, 31), 12), T0 + 100);
  assert.equal(alert.events, 5);
});

Deno.test("a new event after the alert resolved fires a new alert", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.ok(alert.tick(look(undefined, event(1, 0, 5), 1), T0 + 50));
  assert.ok(alert.tick(look(undefined, event(1, 0, 5), 1), T0 + 300_006));
  assert.equal(alert.firing, false);
  const again = alert.tick(
    look(event(2, 400_000), event(1, 0, 5), 2),
    T0 + 400_010,
  );
  assert.ok(again);
  assert.equal(again.startsAt, iso(400_000));
  assert.equal(again.annotations.events, "1");
  assert.equal(
    again.generatorURL,
    "http://dpu-7:9477/events/nic/pfc%20storm%27s/2026-11-24T00:06:40.000123456Z",
  );
});

Deno.test("on its first look an alert fires for an event within the hold, not an older one", () => {
  // The sender restarted: what the journal holds decides.
  const recent = new RuleAlert(RULE, SETTINGS);
  assert.ok(recent.tick(look(undefined, event(3, 0, 1_000), 3), T0 + 200_000));
  const old = new RuleAlert(RULE, SETTINGS);
  assert.equal(
    old.tick(look(undefined, event(3, 0, 1_000), 3), T0 + 302_000),
    undefined,
  );
  assert.equal(old.firing, false);
  const open = new RuleAlert(RULE, SETTINGS);
  assert.ok(open.tick(look(event(4, 0), undefined, 4), T0 + 900_000));
});

Deno.test("without an endpoint there is no generatorURL; without a summary one is made", () => {
  const alert = new RuleAlert(
    { ...RULE, summary: undefined },
    { ...SETTINGS, endpointUrl: undefined },
  );
  const sent = alert.tick(look(event(1, 0)), T0 + 1);
  assert.ok(sent);
  assert.equal("generatorURL" in sent, false);
  assert.equal(
    sent.annotations.summary,
    "pfc storm's on nic (0000:03:00.0) of dpu-7",
  );
  assert.match(
    sent.annotations.description,
    /Peak so far unknown\. Traceback of this event: dpu-traceback review /,
  );
});

Deno.test("a topology label cannot override the alert's own labels", () => {
  const alert = new RuleAlert(RULE, {
    ...SETTINGS,
    labels: { alertname: "x", instance: "y", rail: "1" },
  });
  const sent = alert.tick(look(event(1, 0)), T0 + 1)!;
  assert.equal(sent.labels.alertname, RULE_ALERTNAME);
  assert.equal(sent.labels.instance, "dpu-7");
  assert.equal(sent.labels.rail, "1");
});

Deno.test("an event read as open and then as ended in one look counts once", () => {
  // It ended between the sender's reads of the open and the last record.
  const alert = new RuleAlert(RULE, SETTINGS);
  const sent = alert.tick(look(event(1, 0), event(1, 0, 5, 9), 1), T0 + 10);
  assert.ok(sent);
  assert.equal(sent.annotations.events, "1");
  assert.match(sent.annotations.description, /, ended .*\. Peak 9 over/);
  const firing = new RuleAlert(RULE, SETTINGS);
  assert.ok(firing.tick(look(event(1, 0), undefined, 1), T0 + 10));
  assert.equal(
    firing.tick(look(event(2, 20), event(2, 20, 25), 2), T0 + 30),
    undefined,
  );
  assert.equal(firing.events, 2);
});

Deno.test("the description gives the start's value and the peak so far in the rule's units", () => {
  const rate = new RuleAlert({ ...RULE, peakUnit: "/s" }, SETTINGS);
  const sent = rate.tick(
    look(event(1, 0, undefined, NaN, 312_004), undefined, 1, 1_020_330),
    T0 + 10,
  )!;
  assert.match(
    sent.annotations.description,
    /is active now\. Value at start 312004\/s\. Peak so far 1020330\/s\. /,
  );
  // Ended: the journal's peak, and the start's value still.
  const ended = rate.tick(
    look(undefined, event(1, 0, 500, 1_500_000.25, 312_004), 1),
    T0 + 30_010,
  )!;
  assert.match(
    ended.annotations.description,
    /ended 2026-11-24T00:00:00\.500Z after 500 ms\. Value at start 312004\/s\. Peak 1500000\/s over the event\. /,
  );
  // A ratio reads as a percentage; a rule that fires low says its peak is a minimum.
  const ratio = new RuleAlert({ ...RULE, peakUnit: "%" }, SETTINGS);
  assert.match(
    ratio.tick(
      look(event(1, 0, undefined, NaN, 0.0415), undefined, 1, 0.05),
      T0,
    )!
      .annotations.description,
    /Value at start 4\.15 %\. Peak so far 5 %\./,
  );
  const low = new RuleAlert({ ...RULE, peakKind: "min" }, SETTINGS);
  assert.match(
    low.tick(look(event(1, 0, undefined, NaN, 80), undefined, 1, 30), T0)!
      .annotations.description,
    /Value at start 80\. Peak so far min 30\./,
  );
  // Unknown: said so.
  const unknown = new RuleAlert(RULE, SETTINGS);
  assert.match(
    unknown.tick(look(event(1, 0)), T0)!.annotations.description,
    /is active now\. Value at start unknown\. Peak so far unknown\./,
  );
});

Deno.test("an alert never ends before it starts, which Alertmanager refuses with a 400", () => {
  // The source's clock is 10 minutes ahead of the host's: the lease ends
  // before the start sample's time.
  const ahead = new RuleAlert(RULE, SETTINGS);
  const firing = ahead.tick(look(event(1, 600_000)), T0 + 10)!;
  assert.equal(firing.endsAt, iso(10 + 120_000));
  assert.equal(firing.startsAt, firing.endsAt);
  // The source's clock stepped back within an event: it ends before it starts.
  const back = new RuleAlert(RULE, SETTINGS);
  const stepped = look(undefined, event(1, 1_000, 400), 1);
  assert.ok(back.tick(stepped, T0 + 1_000));
  const resolved = back.tick(stepped, T0 + 400_000)!;
  assert.equal(resolved.endsAt, iso(400));
  assert.equal(resolved.startsAt, iso(400));
  // As usual, the start sample's time.
  const usual = new RuleAlert(RULE, SETTINGS).tick(look(event(1, 5)), T0 + 10)!;
  assert.equal(usual.startsAt, iso(5));
});

Deno.test("nextDueMs: nothing while idle, the resend while firing, the hold's end once ended, nothing once resolved", () => {
  const alert = new RuleAlert(RULE, {
    ...SETTINGS,
    resendIntervalMs: 30_000,
    holdMs: 25_000,
  });
  // Idle: only an event can give it something to send.
  assert.equal(alert.nextDueMs(T0), Infinity);
  assert.equal(alert.tick(look(), T0), undefined);
  assert.equal(alert.nextDueMs(T0), Infinity);
  // Firing on an open event: the resend, and nothing before it.
  const open = event(1, 0);
  assert.ok(alert.tick(look(open), T0 + 10) !== undefined);
  assert.equal(alert.nextDueMs(T0 + 10), T0 + 30_010);
  assert.equal(alert.tick(look(open), T0 + 30_009), undefined);
  assert.ok(alert.tick(look(open), T0 + 30_010) !== undefined);
  assert.equal(alert.nextDueMs(T0 + 30_010), T0 + 60_010);
  // Ended: the resend while the hold lasts longer, then the hold's end
  // (the end marker's time plus the hold).
  const ended = event(1, 0, 50_000);
  assert.equal(alert.tick(look(undefined, ended), T0 + 50_100), undefined);
  assert.equal(alert.nextDueMs(T0 + 50_100), T0 + 60_010);
  assert.ok(alert.tick(look(undefined, ended), T0 + 60_010) !== undefined);
  const holdEnd = ended.endMs + 25_000;
  assert.equal(alert.nextDueMs(T0 + 60_010), holdEnd);
  assert.equal(alert.tick(look(undefined, ended), holdEnd - 1), undefined);
  const resolved = alert.tick(look(undefined, ended), holdEnd)!;
  assert.equal(resolved.endsAt, iso(50_000));
  // Resolved: idle again.
  assert.equal(alert.firing, false);
  assert.equal(alert.nextDueMs(holdEnd), Infinity);
  // Overdue (a look came late): due now, never in the past.
  const again = event(2, 200_000);
  alert.tick(look(again, ended), T0 + 200_000);
  assert.equal(alert.nextDueMs(T0 + 900_000), T0 + 900_000);
});

Deno.test("nextDueMs: an event whose end time is unknown never resolves by the hold, as tick", () => {
  const alert = new RuleAlert(RULE, SETTINGS);
  assert.ok(alert.tick(look(event(1, 0)), T0) !== undefined);
  const ended = { ...event(1, 0, 1000), endMs: NaN };
  assert.equal(alert.tick(look(undefined, ended), T0 + 1000), undefined);
  assert.equal(alert.nextDueMs(T0 + 1000), T0 + 30_000);
  assert.equal(alert.tick(look(undefined, ended), T0 + 29_999), undefined);
});

Deno.test("the rule's description, when given, is the alert's rule annotation", () => {
  const description =
    '"pfc storm\'s" (critical): starts when the rate of pause over 1 ms goes above 1000/s; ends when it is at or below 1000/s';
  const sent = new RuleAlert({ ...RULE, description }, SETTINGS)
    .tick(look(event(1, 0), undefined, 1, 5), T0 + 10);
  assert.equal(sent?.annotations.rule, description);
  const plain = new RuleAlert(RULE, SETTINGS)
    .tick(look(event(1, 0), undefined, 1, 5), T0 + 10);
  assert.equal(plain?.annotations.rule, undefined);
});

Deno.test("an open event's first send waits for its peak, PEAK_WAIT_MS from the start, and says how long the peak covers", () => {
  const alert = new RuleAlert(
    { ...RULE, peakUnit: "/s" },
    { ...SETTINGS, peakWaitMs: undefined },
  );
  const open = event(1, 0, undefined, NaN, 1_200_000);
  // The start marker is at T0 + 1; the state published 150 ms after it.
  const at = (livePeak: number, livePeakAtMs: number) => ({
    ...look(open, undefined, 1, livePeak),
    livePeakAtMs,
  });
  assert.equal(alert.tick(at(NaN, T0 - 50), T0 + 20), undefined);
  assert.equal(alert.firing, true);
  assert.equal(alert.nextDueMs(T0 + 20), T0 + 1 + PEAK_WAIT_MS);
  assert.equal(
    alert.tick(at(3_200_000, T0 + 151), T0 + PEAK_WAIT_MS),
    undefined,
  );
  const sent = alert.tick(at(3_400_000, T0 + 201), T0 + 1 + PEAK_WAIT_MS)!;
  assert.ok(sent);
  assert.match(
    sent.annotations.description,
    /is active now\. Value at start 1200000\/s\. Peak so far 3400000\/s in its first 200 ms\. /,
  );
  // The page goes out once; the next send is the resend.
  assert.equal(
    alert.nextDueMs(T0 + 1 + PEAK_WAIT_MS),
    T0 + 30_001 + PEAK_WAIT_MS,
  );
  assert.equal(alert.tick(at(3_400_000, T0 + 301), T0 + 400), undefined);
});

Deno.test("the wait for the peak ends at once when the event ends, another starts, or the sender stops", () => {
  const settings = { ...SETTINGS, peakWaitMs: 250 };
  // Ended within the wait: sent at once with the exact peak.
  const short = new RuleAlert(RULE, settings);
  assert.equal(short.tick(look(event(1, 0), undefined, 1), T0 + 10), undefined);
  const ended = short.tick(look(undefined, event(1, 0, 2, 77), 1), T0 + 30)!;
  assert.match(
    ended.annotations.description,
    /after 2 ms\. .* Peak 77 over the event\./,
  );
  // A rule flapping faster than the wait: the first event ended when the
  // second started, so the page is not put off for ever.
  const flapping = new RuleAlert(RULE, settings);
  assert.equal(
    flapping.tick(look(event(1, 0), undefined, 1), T0 + 10),
    undefined,
  );
  const next = flapping.tick(
    look(event(2, 100), event(1, 0, 90, 5), 2),
    T0 + 110,
  )!;
  assert.ok(next);
  assert.equal(next.annotations.events, "2");
  assert.equal(next.startsAt, iso(0));
  // Stopping: what is known goes out.
  const stopping = new RuleAlert(RULE, settings);
  assert.equal(
    stopping.tick(look(event(1, 0), undefined, 1), T0 + 10),
    undefined,
  );
  assert.ok(stopping.tick(look(event(1, 0), undefined, 1), T0 + 20, true));
  // A start marker ahead of this clock still waits no longer than the wait.
  const ahead = new RuleAlert(RULE, settings);
  assert.equal(
    ahead.tick(look(event(1, 60_000), undefined, 1), T0 + 10),
    undefined,
  );
  assert.equal(ahead.nextDueMs(T0 + 10), T0 + 260);
  assert.ok(ahead.tick(look(event(1, 60_000), undefined, 1), T0 + 260));
});

Deno.test("the first lines give the threshold the value crossed, and the runbook is an annotation", () => {
  const alert = new RuleAlert({
    ...RULE,
    peakUnit: "/s",
    threshold:
      "the rate of pause over 1 ms above 1000000/s, clear at or below 200000/s",
    runbookUrl: "https://wiki.example.com/runbooks/pfc",
  }, SETTINGS);
  const sent = alert.tick(
    look(event(1, 0, undefined, NaN, 1_250_000), undefined, 1, 2_000_000),
    T0 + 10,
  )!;
  assert.match(
    sent.annotations.description,
    /Value at start 1250000\/s; threshold: the rate of pause over 1 ms above 1000000\/s, clear at or below 200000\/s\. Peak so far 2000000\/s\. /,
  );
  assert.equal(
    sent.annotations.runbook_url,
    "https://wiki.example.com/runbooks/pfc",
  );
  const plain = new RuleAlert(RULE, SETTINGS).tick(look(event(1, 0)), T0 + 1)!;
  assert.equal("runbook_url" in plain.annotations, false);
});

Deno.test("the link, the text and the review command name one event, by a key a restart does not change", () => {
  // Run 1 of the agent sent an alert for an event at 06:03:25; Alertmanager
  // keeps that startsAt while the same labels keep firing. Run 2 starts its
  // ids at 1 again and sees an event at 06:09:19: its text speaks of that
  // event and its own start, never "since" a time the alert does not carry.
  const at = (h: number, m: number, s: number) =>
    ((h * 60 + m) * 60 + s) * 1000;
  const run1 = new RuleAlert(RULE, SETTINGS);
  const first = run1.tick(
    look(event(1, at(6, 3, 25)), undefined, 1),
    T0 + at(6, 3, 25) + 5,
  )!;
  const run2 = new RuleAlert(RULE, SETTINGS);
  const later = run2.tick(
    look(event(1, at(6, 9, 19)), undefined, 1),
    T0 + at(6, 9, 19) + 5,
  )!;
  // Same id 1 in both runs; different events, different links.
  assert.notEqual(first.generatorURL, later.generatorURL);
  assert.deepEqual(first.labels, later.labels);
  const d = later.annotations.description;
  assert.doesNotMatch(d, /since|fired once|times/);
  assert.match(
    d,
    /Its event, started 2026-11-24T06:09:19\.000Z, is active now\./,
  );
  const id = later.generatorURL!.split("/events/")[1];
  assert.equal(id, "nic/pfc%20storm%27s/2026-11-24T06:09:19.000123456Z");
  assert.ok(
    d.endsWith(
      `--event 2026-11-24T06:09:19.000123456Z --rule='pfc storm'\\''s'`,
    ),
    d,
  );
});

Deno.test("a NIC rule's alert names the GPUs behind the NIC, in an annotation and in its text", () => {
  const gpus =
    "GPUs behind 0000:1a:00.0: GPU 0 (GPU-aaaa, 0000:18:00.0) PIX, GPU 1 (GPU-bbbb, 0000:28:00.0) PIX";
  const alert = new RuleAlert({ ...RULE, gpus }, SETTINGS);
  const sent = alert.tick(look(event(1, 2_345), undefined, 1, 90), T0 + 2_400)!;
  assert.equal(sent.annotations.gpus, gpus);
  assert.match(
    sent.annotations.description,
    new RegExp(`${RegExp.escape(gpus)}\\. Traceback of this event `),
  );
  const plain = new RuleAlert(RULE, SETTINGS).tick(
    look(event(2, 2_345), undefined, 1, 90),
    T0 + 2_400,
  )!;
  assert.equal("gpus" in plain.annotations, false);
});
