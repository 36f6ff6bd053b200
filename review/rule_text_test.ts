import assert from "node:assert/strict";
import type { HeaderSignal } from "./header.ts";
import { ruleText } from "./rule_text.ts";
import { describeRule } from "../config/describe.ts";

const ratio: HeaderSignal = {
  signal: "ratio",
  windowNs: 1_500_000,
  direction: "above",
  threshold: "0.001",
  clear: "0.001",
  forNs: 0,
  mOfN: { m: 3, n: 5 },
  keepFiringForNs: 0,
  denominatorDataId: "0x1020000300000000",
};

Deno.test("ruleText says a ratio's denominator by name, else by data ID, and M of N", () => {
  assert.equal(
    ruleText({
      rule: "discards",
      typeName: "ratio over 1500000ns",
      column: "rx_discards",
      signal: { ...ratio, denominator: "rx_packets", severity: "warning" },
    }),
    '"discards" (warning): starts when the ratio of rx_discards to rx_packets over 1.5 ms ' +
      "is above 0.1 % on at least 3 of the last 5 samples; ends when it is at or below 0.1 % " +
      "and above 0.1 % on fewer than 3 of the last 5 samples",
  );
  assert.equal(
    ruleText({
      rule: "discards",
      typeName: "ratio over 1500000ns",
      signal: ratio,
    }),
    '"discards": starts when the ratio of ? to 0x1020000300000000 over 1.5 ms ' +
      "is above 0.1 % on at least 3 of the last 5 samples; ends when it is at or below 0.1 % " +
      "and above 0.1 % on fewer than 3 of the last 5 samples",
  );
});

Deno.test("ruleText of a rule that fires below names the clear level's side", () => {
  assert.equal(
    ruleText({
      rule: "slow",
      typeName: "value",
      column: "lat",
      signal: {
        signal: "value",
        windowNs: 0,
        direction: "below",
        threshold: "100",
        clear: "150",
        forNs: 2_000,
        keepFiringForNs: 0,
      },
    }),
    '"slow": starts when the value of lat stays below 100 for 2 µs; ends when it is at or above 150',
  );
});

Deno.test("ruleText of a signal rule whose condition the header did not give leaves the threshold out", () => {
  assert.equal(
    ruleText({
      rule: "r",
      typeName: "rate over 1000ns",
      threshold: "",
      column: "rx",
    }),
    '"r": rate over 1000ns on rx',
  );
  assert.equal(
    ruleText({ rule: "r", typeName: "less_than", threshold: "7" }),
    '"r": less_than 7 on ?',
  );
  // A figure the header garbled is shown as printed, not guessed at.
  assert.equal(
    ruleText({
      rule: "r",
      kind: "rate",
      typeName: "rate over 1000ns",
      threshold: "fast",
      column: "rx",
      signal: {
        signal: "rate",
        windowNs: 1000,
        direction: "above",
        threshold: "fast",
        clear: "fast",
        forNs: 0,
        keepFiringForNs: 0,
      },
    }),
    '"r": rate over 1000ns fast on rx',
  );
});

Deno.test("review states a rule in the very words check-config printed for it", () => {
  const columns = [
    { name: "ecn", dataId: "0x1", kind: "counter" as const },
    { name: "packets", dataId: "0x2", kind: "counter" as const },
  ];
  // What the header of a log written with this configuration reads back as.
  assert.equal(
    ruleText({
      rule: "ECN storm",
      kind: "ratio",
      typeName: "ratio over 1000000ns",
      threshold: "0.0007",
      column: "ecn",
      signal: {
        signal: "ratio",
        windowNs: 1_000_000,
        direction: "above",
        threshold: "0.0007",
        clear: "0.0002",
        forNs: 500_000,
        keepFiringForNs: 10_000_000,
        severity: "critical",
        denominatorDataId: "0x2",
        denominator: "packets",
      },
    }),
    describeRule({
      name: "ECN storm",
      signal: "ratio",
      column: 0,
      denominator: 1,
      windowNs: 1_000_000,
      direction: "above",
      threshold: 0.0007,
      clear: 0.0002,
      forNs: 500_000,
      keepFiringForNs: 10_000_000,
      severity: "critical",
    }, { columns, depth: 64 }),
  );
  assert.equal(
    ruleText({
      rule: "busy",
      kind: "dt_gt",
      typeName: "differential_greater_than",
      threshold: "18446744073709551615",
      column: "ecn",
      depth: 64,
    }),
    describeRule({
      name: "busy",
      column: 0,
      comparisonType: "dt_gt",
      comparisonValue: 18446744073709551615n,
    }, { columns, depth: 64 }),
  );
});
