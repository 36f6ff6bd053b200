import assert from "node:assert/strict";
import { Monitor } from "../rules/monitor.ts";
import { RecordingSink, writeRecord } from "../rules/rules_test_util.ts";
import {
  type EventRecord,
  EventTally,
  formatEventTable,
  MAX_TALLIED_EVENTS,
} from "./tally.ts";
import { HOSTILE, TERMINAL_CONTROL } from "../review/test_util.ts";
import { formatCount } from "../base/units.ts";

/** 2026-11-21T14:50:00Z, in ns. */
const T0 = 1_795_272_600_000_000_000n;

Deno.test("formatEventTable shows terminal controls in names as escapes, never as they are", () => {
  const events: EventRecord[] = [{
    monitor: HOSTILE.monitor,
    rule: HOSTILE.rule,
    severity: "warning",
    startNs: T0,
    startSample: 100,
    endNs: T0 + 25_000_000n,
    endSample: 350,
    peak: 86,
    peakKind: "max",
    peakUnit: "",
  }, {
    monitor: "nic",
    rule: "rx\u2028\u2066\u200f\x85",
    severity: "critical",
    startNs: T0 + 60_000_000_000n,
    startSample: 400,
    endNs: null,
    endSample: null,
    peak: 3,
    peakKind: "min",
    peakUnit: "",
  }];
  const table = formatEventTable(events);
  assert.doesNotMatch(table, TERMINAL_CONTROL);
  const [, first, second] = table.trimEnd().split("\n");
  assert.match(
    first,
    /^=1\+1\\u001b\[2J {2}GPU \\u202ehot\\u001b\[2J\\u001b\]52;c;ZXZpbA==\\u0007 \\u009b31m {2}2026-11-21 14:50:00\.000 {2}25 ms +250 {5}86 {2}warning$/,
  );
  // Still aligned: the escapes are counted in the column widths.
  assert.equal(second.indexOf("rx"), first.indexOf("GPU"));
  assert.ok(second.includes("rx\\u2028\\u2066\\u200f\\u0085"));
});

Deno.test("a rule that flaps all run long keeps the tally bounded and the table printable", () => {
  const nic = {
    name: "nic",
    rules: [{ name: "flap", severity: "info", peak: 1 }],
    samples: 0,
    ring: { offsetBack: () => 0 },
    words: new Uint32Array(2),
  };
  const tally = new EventTally([{
    name: "nic",
    rules: [{
      name: "flap",
      column: 0,
      comparisonType: "gt",
      comparisonValue: 0n,
    }],
  }]);
  const events = 200_000;
  for (let i = 0; i < events; i++) {
    nic.samples = 2 * i;
    tally.listener(nic as unknown as Monitor, 0, true, i);
    nic.samples = 2 * i + 1;
    tally.listener(nic as unknown as Monitor, 0, false, i + 0.5);
  }
  assert.equal(tally.events.length, MAX_TALLIED_EVENTS);
  assert.equal(tally.earlier, events - MAX_TALLIED_EVENTS);
  assert.equal(tally.events.at(-1)?.endSample, 2 * events - 1);
  const lines = formatEventTable(tally.events, tally.earlier).split("\n");
  assert.equal(
    lines[0],
    // A count as review writes one (formatCount: "199,000").
    `${
      formatCount(events - MAX_TALLIED_EVENTS)
    } earlier events not shown (all are in the events logs: dpu-traceback review)`,
  );
  assert.equal(lines.length, 1 + 1 + MAX_TALLIED_EVENTS + 1);
});

Deno.test("the closing table of more rows than a call takes arguments", () => {
  const records: EventRecord[] = Array.from({ length: 300_000 }, (_, i) => ({
    monitor: "nic",
    rule: "r",
    severity: "warning",
    startNs: BigInt(i),
    startSample: i,
    endNs: BigInt(i + 1),
    endSample: i + 1,
    peak: i,
    peakKind: "max",
    peakUnit: "",
  }));
  assert.equal(formatEventTable(records).split("\n").length, 300_002);
});

Deno.test("the tally keeps each event's severity and peak: at its end, or so far while open", () => {
  const rules = [
    // ecn rises 1000 a sample (1 ms apart), 2000 on samples 10..14 but
    // 4000 on 12, 500 after: the rate over the last 2 increases is 2M/s
    // on 11 (start), 3M/s on 12 and 13, 2M/s on 14, 1.25M/s on 15 and
    // 500k/s on 16 (at or below 1M/s: the end).
    {
      name: "ECN storm",
      signal: "rate" as const,
      column: 0,
      windowNs: 2_000_000,
      direction: "above" as const,
      threshold: 1_500_000,
      clear: 1_000_000,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "critical",
    },
    // rx is 500, 80 from sample 20, 30 from 25: below 100 from 20 on.
    {
      name: "rx low",
      signal: "value" as const,
      column: 1,
      windowNs: 0,
      direction: "below" as const,
      threshold: 100n,
      clear: 100n,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "info",
    },
    // 8 samples in a row below 50: 25..32.
    {
      name: "rx < 50",
      column: 1,
      comparisonType: "lt" as const,
      comparisonValue: 50n,
    },
  ];
  const tally = new EventTally([{ name: "nic", rules }]);
  const monitor = new Monitor(
    { name: "nic", depth: 8, columns: ["ecn", "rx"], rules },
    new RecordingSink(rules.map((r) => r.name)),
    { onTransition: tally.listener },
  );
  let ecn = 0n;
  const feed = (i: number, rx: bigint) => {
    ecn += i === 0
      ? 0n
      : i < 10
      ? 1000n
      : i === 12
      ? 4000n
      : i < 15
      ? 2000n
      : 500n;
    writeRecord(monitor.words, monitor.claim(), BigInt(i) * 1_000_000n, [
      ecn,
      rx,
    ]);
    monitor.commit();
  };
  for (let i = 0; i < 40; i++) feed(i, i < 20 ? 500n : i < 25 ? 80n : 30n);

  const facts = () =>
    tally.events.map((e) => [
      e.rule,
      e.severity,
      e.startSample,
      e.endSample,
      e.peak,
      e.peakKind,
      e.peakUnit,
    ]);
  assert.deepEqual(facts(), [
    ["ECN storm", "critical", 12, 17, 3_000_000, "max", "/s"],
    ["rx low", "info", 21, null, 30, "min", ""],
    ["rx < 50", "warning", 33, null, 30, "min", ""],
  ]);
  const lines = formatEventTable(tally.events).split("\n");
  assert.match(
    lines[0],
    /^MONITOR +RULE +START \(UTC\) +DURATION +SAMPLES +PEAK +SEVERITY$/,
  );
  assert.match(
    lines[1],
    /^nic +ECN storm +1970-01-01 00:00:00\.011 +5 ms +5 +3000000\/s +critical$/,
  );
  assert.match(lines[2], /^nic +rx low +\S+ \S+ +active +- +min 30 +info$/);
  assert.match(lines[3], /^nic +rx < 50 +\S+ \S+ +active +- +min 30 +warning$/);
  assert.equal(lines[1].length, lines[0].length);

  // Still open: a lower value is the peak so far; the ended event keeps its own.
  feed(40, 20n);
  assert.deepEqual(tally.events.map((e) => e.peak), [3_000_000, 20, 20]);
});
