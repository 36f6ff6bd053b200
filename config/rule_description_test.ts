import assert from "node:assert/strict";
import {
  ruleDescription,
  ruleFactsOf,
  ruleThreshold,
  type SignalRuleFacts,
} from "./rule_description.ts";

const ECN: SignalRuleFacts = {
  name: "ECN storm",
  severity: "critical",
  column: "ecn",
  signal: "rate",
  windowNs: 1_000_000,
  direction: "above",
  threshold: 1_000_000,
  clear: 200_000,
  forNs: 500_000,
  keepFiringForNs: 10_000_000,
};

Deno.test("ruleDescription of a reference rule: its type and condition, H when the depth is not known", () => {
  const gt = {
    name: "busy",
    column: "rx",
    comparisonType: "dt_gt" as const,
    comparisonValue: "18446744073709551615",
  };
  assert.equal(
    ruleDescription({ ...gt, depth: 1024 }),
    '"busy": dt_gt rx rises by > 18446744073709551615 over 1024 samples',
  );
  assert.equal(
    ruleDescription(gt),
    '"busy": dt_gt rx rises by > 18446744073709551615 over H samples',
  );
  assert.equal(
    ruleDescription({ ...gt, severity: "critical", comparisonType: "inc_gt" }),
    '"busy" (critical): inc_gt rx rises by >= 18446744073709551615 from one sample to the next',
  );
});

Deno.test("ruleDescription of a signal rule: figures and durations in the units measureText and formatDuration write", () => {
  assert.equal(
    ruleDescription(ECN),
    '"ECN storm" (critical): starts when the rate of ecn over 1 ms stays above 1000000/s for 500 µs; ends when it stays at or below 200000/s for 10 ms',
  );
  assert.equal(
    ruleDescription({
      ...ECN,
      severity: undefined,
      signal: "ratio",
      denominator: "packets",
      threshold: 0.001,
      clear: 0.0005,
      mOfN: { m: 3, n: 5 },
      keepFiringForNs: 90_000_000_000,
    }),
    '"ECN storm": starts when the ratio of ecn to packets over 1 ms is above 0.1 % on at least 3 of the last 5 samples; ends when it stays at or below 0.05 % and above 0.1 % on fewer than 3 of the last 5 samples for 1.5 min',
  );
});

Deno.test("ruleFactsOf names the columns and leaves a reference rule's default severity out", () => {
  const monitor = {
    depth: 4,
    columns: [
      { name: "rx", dataId: "0x1", kind: "counter" as const },
      { name: "tx", dataId: "0x2", kind: "counter" as const },
    ],
  };
  assert.deepEqual(
    ruleFactsOf(
      { name: "r", column: 1, comparisonType: "lt", comparisonValue: 9n },
      monitor,
    ),
    {
      name: "r",
      column: "tx",
      comparisonType: "lt",
      comparisonValue: 9n,
      depth: 4,
    },
  );
  assert.equal(
    ruleFactsOf({
      name: "r",
      column: 0,
      comparisonType: "lt",
      comparisonValue: 9n,
      severity: "info",
    }, monitor).severity,
    "info",
  );
  const ratio = ruleFactsOf({
    name: "d",
    signal: "ratio",
    column: 0,
    denominator: 7,
    windowNs: 1_000_000,
    direction: "above",
    threshold: 0.5,
    clear: 0.5,
    forNs: 0,
    keepFiringForNs: 0,
  }, monitor) as SignalRuleFacts;
  assert.equal(ratio.severity, "warning");
  assert.equal(ratio.denominator, "column 7");
});

Deno.test("ruleThreshold() gives what an event crossed: the measure, its window, the threshold and the clear level", () => {
  const signal = {
    name: "s",
    column: "rx",
    windowNs: 0,
    direction: "above" as const,
    threshold: 5n,
    clear: 5n,
    forNs: 0,
    keepFiringForNs: 0,
  };
  assert.equal(
    ruleThreshold({
      ...signal,
      signal: "value",
      direction: "below",
      threshold: 1000n,
      clear: 1500n,
    }),
    "the value of rx below 1000, clear at or above 1500",
  );
  assert.equal(
    ruleThreshold({ ...signal, signal: "increase", mOfN: { m: 3, n: 5 } }),
    "the increase of rx per sample above 5, clear at or below 5",
  );
  assert.equal(
    ruleThreshold({
      ...signal,
      signal: "ratio",
      denominator: "all",
      windowNs: 2_500_000,
      threshold: 0.001,
      clear: 0.0005,
    }),
    "the ratio of rx to all over 2.5 ms above 0.1 %, clear at or below 0.05 %",
  );
  assert.equal(
    ruleThreshold({
      name: "r",
      column: "rx",
      comparisonType: "inc_gt",
      comparisonValue: 7n,
    }),
    "rx rises by >= 7 from one sample to the next",
  );
  assert.equal(
    ruleThreshold({
      name: "r",
      column: "rx",
      comparisonType: "gt",
      comparisonValue: 7n,
    }),
    "rx > 7 for H samples in a row",
  );
});
