import assert from "node:assert/strict";
import {
  CYCLE_MS,
  newScenarioRates,
  phaseAt,
  Rate,
  scenarioAt,
  TIMELINE,
} from "./scenario.ts";

Deno.test("TIMELINE covers the cycle without gaps or overlaps", () => {
  assert.equal(TIMELINE[0].fromMs, 0);
  assert.equal(TIMELINE.at(-1)!.toMs, CYCLE_MS);
  for (let k = 1; k < TIMELINE.length; k++) {
    assert.equal(TIMELINE[k].fromMs, TIMELINE[k - 1].toMs);
  }
  assert.deepEqual(
    [...new Set(TIMELINE.map((s) => s.phase))].sort(),
    ["burst", "errors", "quiet", "steady"],
  );
});

Deno.test("scenarioAt follows the phases of the timeline", () => {
  const r = newScenarioRates();
  for (let ms = 0; ms < CYCLE_MS; ms += 0.5) {
    scenarioAt(ms * 1000, r);
    const phase = phaseAt(ms);
    const at = `${ms} ms (${phase})`;
    assert.equal(r[Rate.ecnPerS] > 0, phase === "burst" && ms > 5_000, at);
    assert.equal(r[Rate.discardPerS] > 0, phase === "errors", at);
    // Physically possible on a 400 Gb/s port (50 GB/s).
    assert.ok(r[Rate.rxBytesPerS] <= 50e9 && r[Rate.txBytesPerS] <= 50e9, at);
    if (phase === "quiet") {
      assert.ok(r[Rate.rxBytesPerS] < 10e6, at);
      assert.ok(r[Rate.latencyNs] + r[Rate.latencySpreadNs] < 700, at);
      assert.equal(r[Rate.rxPausePerS], 0, at);
    } else {
      assert.ok(r[Rate.rxBytesPerS] > 15e9, at);
      assert.ok(r[Rate.latencyNs] - r[Rate.latencySpreadNs] >= 1_000, at);
    }
    if (phase === "steady") {
      assert.ok(r[Rate.rxPausePerS] > 0 && r[Rate.rxPausePerS] < 100, at);
      assert.ok(r[Rate.latencyNs] + r[Rate.latencySpreadNs] < 4_000, at);
    }
  }
  // The burst's plateau: congestion everywhere, slow PCIe reads.
  scenarioAt(7_000_000, r);
  assert.ok(r[Rate.ecnPerS] > 100_000);
  assert.ok(r[Rate.cnpSentPerS] > 0 && r[Rate.cnpHandledPerS] > 0);
  assert.ok(r[Rate.rxPausePerS] > 20_000);
  assert.ok(r[Rate.latencyNs] - r[Rate.latencySpreadNs] > 4_000);
});
