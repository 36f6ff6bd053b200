import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { applyRunOptions } from "./overrides.ts";
import { UsageError } from "./usage_error.ts";

const BASE = { forceOwnership: false, quiet: true } as const;

/** A configuration with the given NIC monitors (DOCA, device p0 each). */
function withNics(...names: string[]) {
  return parseConfig(
    JSON.stringify({
      monitors: names.map((name) => ({
        name,
        device: "p0",
        event_log: `${name}.log`,
        columns: [{ name: "rx", data_id: "0x1020000100000000" }],
        rules: [{
          name: "r",
          column: "rx",
          comparison_type: "gt",
          comparison_value: 5,
        }],
      })),
    }),
    "agent.json",
  );
}

Deno.test("-d and --event-log name the one NIC monitor's device and log", () => {
  const config = withNics("roce0");
  const run = applyRunOptions(config, {
    ...BASE,
    device: "03:00.0",
    eventLog: "x.log",
  });
  assert.deepEqual(
    [run.monitors[0].device, run.monitors[0].eventLog],
    ["03:00.0", "x.log"],
  );
});

Deno.test("-d with several NIC monitors is refused: one device would be read twice, the other never", () => {
  const config = withNics("roce0", "roce1");
  assert.throws(
    () => applyRunOptions(config, { ...BASE, device: "03:00.0" }),
    (e: Error) =>
      e instanceof UsageError &&
      e.message ===
        "-d names one device, and agent.json has 2 NIC monitors (roce0, roce1); set device per monitor",
  );
  assert.throws(
    () => applyRunOptions(config, { ...BASE, eventLog: "x.log" }),
    (e: Error) =>
      e instanceof UsageError &&
      e.message ===
        "--event-log applies to a single monitor, and agent.json has 2; set event_log per monitor",
  );
  // Without either, each monitor keeps its own.
  assert.deepEqual(
    applyRunOptions(config, BASE).monitors.map((m) => m.device),
    ["p0", "p0"],
  );
});
