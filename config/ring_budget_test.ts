import assert from "node:assert/strict";
import { SampleRing } from "../rules/ring.ts";
import { MAX_RING_BYTES } from "./limits.ts";
import { parseConfig } from "./load.ts";
import { maxDepth, ringBytes, ringColumns } from "./ring_budget.ts";

Deno.test("ringBytes() is what the monitor's ring allocates", () => {
  for (const [columns, depth] of [[1, 1], [3, 1024], [1024, 7]]) {
    // The Monitor makes its ring with room for 2 x depth records.
    const ring = new SampleRing(columns, 2 * depth);
    assert.equal(ringBytes(columns, depth), ring.words.byteLength);
  }
});

Deno.test("maxDepth() is the deepest ring that fits", () => {
  for (const columns of [1, 9, 1024, 1281]) {
    const depth = maxDepth(columns, MAX_RING_BYTES);
    assert.ok(ringBytes(columns, depth) <= MAX_RING_BYTES);
    assert.ok(ringBytes(columns, depth + 1) > MAX_RING_BYTES);
  }
  assert.equal(maxDepth(1, 10), 0);
});

Deno.test("ringColumns() counts gpu* columns for every GPU there may be", () => {
  const column = (name: string) => ({
    name,
    dataId: "x",
    kind: "gauge" as const,
  });
  assert.equal(ringColumns({ source: "doca", columns: [column("gpu*.x")] }), 1);
  assert.equal(
    ringColumns({
      source: "nvml",
      columns: [column("gpu*.power"), column("gpu3.temperature")],
    }),
    65,
  );
});

Deno.test("a depth whose ring cannot be allocated is refused at load", () => {
  const reference = (depth: number) =>
    JSON.stringify({
      sample_history_depth: depth,
      "data-ids": [{ name: "rx", data_id: "0x1" }],
    });
  // One column: 32 bytes a sample of history.
  const fits = MAX_RING_BYTES / 32;
  assert.equal(parseConfig(reference(fits), "r.json").monitors[0].depth, fits);
  assert.throws(() => parseConfig(reference(fits + 1), "r.json"), {
    name: "RangeError",
    message:
      `Cannot load config r.json:1: sample_history_depth needs a 1 GiB ring (2 x depth records of 2 values); the rings of all monitors may take at most 1 GiB, so depth can be at most ${fits} here, got ${
        fits + 1
      }`,
  });
  assert.throws(() => parseConfig(reference(2 ** 53 - 1), "r.json"), {
    message: /sample_history_depth needs a 256 PiB ring/,
  });
});

Deno.test("the rings of all monitors share the bound", () => {
  const monitor = (name: string, depth: number, extra = "") =>
    `  - name: ${name}
    source: sim
    depth: ${depth}
    event_log: ${name}.log
    columns: [{ name: rx, data_id: "0x1" }]${extra}\n`;
  const half = MAX_RING_BYTES / 64;
  const text = "monitors:\n" + monitor("a", half) + monitor("b", half + 1);
  assert.throws(() => parseConfig(text, "a.yaml"), {
    name: "RangeError",
    message: new RegExp(
      `^Cannot load config a\\.yaml:9: monitors\\[1\\]\\.depth needs a 512 MiB ring .*\\(the monitors before it take 512 MiB\\), so depth can be at most ${half} here, got ${
        half + 1
      }$`,
    ),
  });
  // A GPU monitor counts every GPU its gpu* columns may expand to.
  const gpu = `monitors:
  - name: gpu
    source: nvml
    depth: 1100000
    readings: [gpu*.temperature]
`;
  assert.throws(() => parseConfig(gpu, "g.yaml"), {
    message:
      /monitors\[0\]\.depth needs a .* ring \(2 x depth records of 65 values, counting each gpu\* column once per GPU there may be\)/,
  });
});
