import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { discoverKernelCounters, READS } from "./discovery.ts";
import { tempDir } from "../../tests/temp_dir.ts";

const FIXTURE = fileURLToPath(
  new URL("../../tests/fixtures/sysfs", import.meta.url),
);

/** A clock that moves `stepMs` at each look. */
function steps(stepMs: number): () => number {
  let t = 0;
  return () => (t += stepMs);
}

Deno.test("an RDMA device's hw_counters and port counters are listed with their values, data IDs, cost and lifespan", async () => {
  const found = await discoverKernelCounters("mlx5_0", {
    root: FIXTURE,
    monotonic: steps(0.025),
  });
  assert.deepEqual(found.device.rdma, [{ name: "mlx5_0", ports: [1] }]);
  assert.deepEqual(found.sources.map((s) => [s.kind, s.owner]), [
    ["rdma", "mlx5_0 port 1"],
    ["ib", "mlx5_0 port 1"],
  ]);
  const [rdma, ib] = found.sources;
  // Each read is timed between two looks at the clock: 25 µs.
  assert.equal(rdma.readNs, 25_000);
  assert.equal(rdma.lifespanMs, 10);
  assert.equal(ib.lifespanMs, undefined);
  assert.deepEqual(rdma.counters, [
    { dataId: "rdma:local_ack_timeout_err", value: "42", read: true },
    { dataId: "rdma:np_cnp_sent", value: "9007199254740993", read: true },
    {
      dataId: "rdma:np_ecn_marked_roce_packets",
      value: "18446744073709551615",
      read: true,
    },
    { dataId: "rdma:out_of_sequence", value: "0", read: true },
    { dataId: "rdma:rp_cnp_handled", value: "9007199254740992", read: true },
  ]);
  assert.deepEqual(
    ib.counters.map((c) => `${c.dataId}=${c.value}`),
    [
      "ib:link_downed=1",
      "ib:port_rcv_errors=7",
      "ib:port_xmit_data=4294967296",
      "ib:port_xmit_wait=18446744073709551614",
      "ib:symbol_error=4294967295",
    ],
  );
});

Deno.test("a second port is named in its data IDs, a bad file is listed with why, a source that cannot be read says so", async () => {
  await using dir = await tempDir();
  const ports = `${dir.path}/sys/class/infiniband/mlx5_1/ports`;
  for (const port of [1, 2]) {
    await Deno.mkdir(`${ports}/${port}/hw_counters`, { recursive: true });
    await Deno.writeTextFile(`${ports}/${port}/hw_counters/np_cnp_sent`, "5\n");
  }
  await Deno.writeTextFile(`${ports}/2/hw_counters/out_of_sequence`, "N/A\n");
  // Port 1 has no counters/ directory.
  await Deno.mkdir(`${ports}/2/counters`);
  const found = await discoverKernelCounters("mlx5_1", {
    root: dir.path,
    monotonic: steps(1),
  });
  const byOwner = found.sources.map((s) => ({
    kind: s.kind,
    owner: s.owner,
    problem: s.problem,
    counters: s.counters.map((c) => `${c.dataId}=${c.value}`),
  }));
  assert.deepEqual(byOwner, [
    {
      kind: "rdma",
      owner: "mlx5_1 port 1",
      problem: undefined,
      counters: ["rdma:np_cnp_sent=5"],
    },
    {
      kind: "ib",
      owner: "mlx5_1 port 1",
      problem:
        `No port counters for mlx5_1 port 1: ${ports}/1/counters does not exist`,
      counters: [],
    },
    {
      kind: "rdma",
      owner: "mlx5_1 port 2",
      problem: undefined,
      counters: [
        "rdma:mlx5_1/2/np_cnp_sent=5",
        `rdma:mlx5_1/2/out_of_sequence=${ports}/2/hw_counters/out_of_sequence: not a counter: "N/A\\n" is not a decimal number`,
      ],
    },
    { kind: "ib", owner: "mlx5_1 port 2", problem: undefined, counters: [] },
  ]);
  assert.equal(found.sources[2].counters[1].read, false);
});

Deno.test("the live kernel: lo's netdev statistics, each read of them timed", async () => {
  const found = await discoverKernelCounters("lo");
  assert.equal(found.device.pci, undefined);
  const netdev = found.sources.find((s) => s.kind === "netdev")!;
  const names = [...Deno.readDirSync("/sys/class/net/lo/statistics")]
    .map((e) => `netdev:${e.name}`).sort();
  assert.deepEqual(netdev.counters.map((c) => c.dataId), names);
  assert.ok(netdev.counters.every((c) => c.read && /^\d+$/.test(c.value)));
  assert.ok(netdev.readNs !== undefined && netdev.readNs > 0);
  assert.equal(READS % 2, 1, "a median of an odd count is one of the reads");
});
