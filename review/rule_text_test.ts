import assert from "node:assert/strict";
import type { HeaderSignal } from "./header.ts";
import { ruleText } from "./rule_text.ts";

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
      typeName: "ratio over 1500000ns",
      column: "rx_discards",
      signal: { ...ratio, denominator: "rx_packets", severity: "warning" },
    }),
    "ratio of rx_discards to rx_packets over 1.5 ms above 0.001, 3 of 5 samples, severity warning",
  );
  assert.equal(
    ruleText({ typeName: "ratio over 1500000ns", signal: ratio }),
    "ratio of ? to 0x1020000300000000 over 1.5 ms above 0.001, 3 of 5 samples",
  );
});

Deno.test("ruleText of a rule that fires below names the clear level's side", () => {
  assert.equal(
    ruleText({
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
    "value of lat below 100, clear at or above 150, for 2 µs",
  );
});

Deno.test("ruleText of a signal rule whose condition the header did not give leaves the threshold out", () => {
  assert.equal(
    ruleText({ typeName: "rate over 1000ns", threshold: "", column: "rx" }),
    "rate over 1000ns on rx",
  );
  assert.equal(
    ruleText({ typeName: "less_than", threshold: "7" }),
    "less_than 7 on ?",
  );
});
