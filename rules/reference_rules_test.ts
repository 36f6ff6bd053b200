import assert from "node:assert/strict";
import type { ComparisonType, ReferenceRuleConfig } from "../config/types.ts";
import { SampleRing } from "./ring.ts";
import { ReferenceRule } from "./reference_rule.ts";
import { ReferenceRules } from "./reference_rules.ts";
import { M, writeRecord } from "./rules_test_util.ts";

// A monitor evaluates its reference rules together, a family of types at a
// time; a rule made alone evaluates itself. Both must give every rule the
// same changes, states, counters (pending) and peaks on every sample.
Deno.test("ReferenceRules: rules evaluated together behave as each evaluated alone", () => {
  const types: ComparisonType[] = ["inc_gt", "lt", "dt_gt", "gt", "dt_lt"];
  const columns = 6;
  const depth = 3;
  // Small values around the thresholds, and a column near 2^64 that wraps.
  const configs: ReferenceRuleConfig[] = [];
  for (let i = 0; i < 15; i++) {
    const type = types[i % types.length];
    configs.push({
      name: `r${i}`,
      column: i % columns,
      comparisonType: type,
      comparisonValue: type.startsWith("dt") ? 6n : type === "inc_gt" ? 3n : 5n,
    });
  }
  const together = new ReferenceRules(configs.length);
  const shared = configs.map((c) => new ReferenceRule(c, depth, together));
  const alone = configs.map((c) => new ReferenceRule(c, depth));
  const ring = new SampleRing(columns, 2 * depth);
  let x = 12345;
  const values = new Array<bigint>(columns).fill(0n);
  let changes = 0;
  for (let s = 0; s < 3000; s++) {
    for (let c = 0; c < columns; c++) {
      x = (x * 1103515245 + 12345) >>> 0;
      const step = BigInt((x >>> 16) % 11);
      // Column 5 counts near 2^64, so rises wrap; the others wander.
      values[c] = c === 5
        ? (values[c] + step + (s === 0 ? M - 200n : 0n)) % M
        : (x >>> 20) % 3 === 0
        ? step
        : values[c] + step;
    }
    writeRecord(ring.words, ring.claim(), BigInt(s), values);
    const n = together.evaluate(ring);
    const listed = new Set(Array.from(together.changes.subarray(0, n)));
    for (let i = 0; i < configs.length; i++) {
      const changed = alone[i].evaluate(ring);
      assert.equal(
        listed.has(shared[i].index),
        changed,
        `rule ${i}, sample ${s}`,
      );
      assert.equal(shared[i].active, alone[i].active);
      assert.equal(shared[i].pending, alone[i].pending);
      assert.equal(shared[i].activations, alone[i].activations);
      assert.ok(Object.is(shared[i].peak, alone[i].peak), `peak ${i}, ${s}`);
    }
    changes += n;
  }
  assert.ok(changes > 100, `rules should change state often, got ${changes}`);
});

Deno.test("ReferenceRules: refuses an unknown type and a rule past its room", () => {
  const rules = new ReferenceRules(1);
  const rule = (type: string) =>
    ({
      name: "r",
      column: 0,
      comparisonType: type as ComparisonType,
      comparisonValue: 1n,
    }) satisfies ReferenceRuleConfig;
  assert.throws(() => rules.add(rule("ge"), 4), TypeError);
  rules.add(rule("gt"), 4);
  assert.throws(() => rules.add(rule("lt"), 4), RangeError);
});
