import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describeConfig } from "./describe.ts";
import { loadConfig } from "./load.ts";
import { isReferenceRule } from "./types.ts";

const DEPLOY = new URL("../deploy/", import.meta.url);

function deployFile(name: string): string {
  return fileURLToPath(new URL(name, DEPLOY));
}

Deno.test("deploy/example-config.yaml loads as the agent form", async () => {
  const config = await loadConfig(
    deployFile("example-config.yaml"),
  );
  assert.equal(config.form, "agent");
  assert.deepEqual(config.monitors.map((m) => m.name), ["nic", "pcie"]);
  // The top-level device is the default; each monitor needs its own.
  assert.deepEqual(config.monitors.map((m) => m.device), [
    "03:00.0",
    "03:00.1",
  ]);
  // Columns named by DOCA counter name load as the data IDs they stand for.
  assert.deepEqual(config.monitors[0].columns.map((c) => c.dataId), [
    "0x1020000100000000",
    "0x1140000100000000",
    "0x1020000300000000",
    "0x1020000500000000",
    "0x1020000600000300",
    "0x1080000400000000",
    "0x1100000100000000",
  ]);
  const rule = config.monitors[0].rules[3];
  assert.ok(isReferenceRule(rule));
  assert.equal(rule.column, 0);
  assert.equal(rule.comparisonValue, 18446744073709000000n);
  assert.match(
    describeConfig(config),
    /"PCIe max read latency > 4 us for 5 s": gt/,
  );
});

Deno.test("deploy/example-rules.json loads as the reference form", async () => {
  const config = await loadConfig(
    deployFile("example-rules.json"),
  );
  assert.equal(config.form, "reference");
  assert.deepEqual(
    config.monitors[0].rules.map((r) =>
      isReferenceRule(r) ? r.comparisonType : r.signal
    ),
    ["dt_gt", "inc_gt", "dt_gt"],
  );
});

Deno.test("deploy/example-rules-only.json loads with --data-ids", async () => {
  const config = await loadConfig(
    deployFile("example-rules-only.json"),
    { dataIdsFile: deployFile("example-data-ids.json") },
  );
  assert.deepEqual(config.monitors[0].rules.map((r) => r.column), [0, 3]);
});

Deno.test("deploy/roce-host.yaml loads, and reads only counters mlx5 documents (docs/spec/kernel-counters.md)", async () => {
  const config = await loadConfig(deployFile("roce-host.yaml"));
  const [roce] = config.monitors;
  assert.deepEqual(
    [roce.source, roce.device, roce.samplePeriodNs, roce.depth],
    ["kernel", "mlx5_0", 10_000_000, 100],
  );
  const spec = await Deno.readTextFile(
    fileURLToPath(new URL("../docs/spec/kernel-counters.md", import.meta.url)),
  );
  for (const column of roce.columns) {
    const name = column.dataId.replace(/^\w+:/, "");
    if (column.dataId.startsWith("netdev:")) continue; // any NIC has these
    // The spec writes per-priority names with {p}: rx_prio{p}_pause.
    const written = name.replace(/prio3/, "prio{p}");
    assert.ok(spec.includes(`\`${written}\``), `${column.dataId} in the spec`);
  }
  // Every rule reads one of its columns, and every rule has a severity.
  assert.equal(roce.rules.length, 11);
  assert.ok(roce.rules.every((r) => r.severity !== undefined));
});
