import assert from "node:assert/strict";
import type { RuleConfig } from "../config/types.ts";
import { peakKindOf, peakUnitOf } from "./peak_format.ts";

const reference = (comparisonType: string): RuleConfig =>
  ({ name: "r", column: 0, comparisonType, comparisonValue: 1n }) as RuleConfig;
const signal = (
  kind: string,
  direction: "above" | "below",
): RuleConfig =>
  ({
    name: "s",
    signal: kind,
    column: 0,
    ...(kind === "ratio" ? { to: 1 } : {}),
    windowNs: 1e6,
    direction,
    threshold: 1,
    forNs: 0,
    keepFiringForNs: 0,
  }) as unknown as RuleConfig;

Deno.test("every rule kind has its peak direction and unit", () => {
  for (const type of ["gt", "dt_gt", "inc_gt"]) {
    assert.equal(peakKindOf(reference(type)), "max", type);
    assert.equal(peakUnitOf(reference(type)), "", type);
  }
  for (const type of ["lt", "dt_lt"]) {
    assert.equal(peakKindOf(reference(type)), "min", type);
  }
  assert.equal(peakKindOf(signal("value", "below")), "min");
  assert.equal(peakKindOf(signal("increase", "above")), "max");
  assert.deepEqual(
    ["value", "increase", "rate", "ratio"].map((k) =>
      peakUnitOf(signal(k, "above"))
    ),
    ["", "", "/s", "%"],
  );
});
