import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";

/** A kernel monitor's document, with `extra` keys and `columns` given. */
function kernel(
  extra: Record<string, unknown>,
  columns: unknown[] = [{ name: "drops", data_id: "netdev:rx_dropped" }],
): string {
  return JSON.stringify({
    monitors: [{
      name: "roce0",
      source: "kernel",
      device: "p0",
      columns,
      ...extra,
    }],
  });
}

Deno.test("a kernel monitor: 10 ms and a second of history unless told, its counters named by source", () => {
  const config = parseConfig(
    kernel({}, [
      { name: "drops", data_id: "netdev:rx_dropped" },
      { name: "pause_us", data_id: "ethtool:rx_prio3_pause_duration" },
      { name: "p1_bytes", data_id: "netdev:p1/rx_bytes" },
      { name: "cnp", data_id: "rdma:np_cnp_sent" },
      { name: "cnp_1", data_id: "rdma:mlx5_1/1/np_cnp_sent" },
      { name: "wait", data_id: "ib:port_xmit_wait" },
    ]),
    "kernel.json",
  );
  const [m] = config.monitors;
  assert.deepEqual(
    [m.source, m.device, m.samplePeriodNs, m.depth],
    ["kernel", "p0", 10_000_000, 100],
  );
  assert.deepEqual(m.columns.map((c) => c.dataId), [
    "netdev:rx_dropped",
    "ethtool:rx_prio3_pause_duration",
    "netdev:p1/rx_bytes",
    "rdma:np_cnp_sent",
    "rdma:mlx5_1/1/np_cnp_sent",
    "ib:port_xmit_wait",
  ]);
});

Deno.test("a kernel monitor refuses a DOCA data ID, an unknown source of counters and a period below 1 ms", () => {
  const refused = (doc: string) => {
    try {
      parseConfig(doc, "kernel.json");
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail("accepted");
  };
  assert.match(
    refused(kernel({}, [{ name: "rx", data_id: "0x1020000100000000" }])),
    /monitors\[0\]\.columns\[0\] \("rx"\)\.data_id must name a kernel counter as SOURCE:NAME, SOURCE one of netdev, ethtool, rdma, ib/,
  );
  assert.match(
    refused(kernel({}, [{ name: "rx", data_id: "sysfs:rx_bytes" }])),
    /must name a kernel counter as SOURCE:NAME/,
  );
  assert.match(
    refused(kernel({ sample_period_ns: 100_000 })),
    /sample_period_ns must be between 1000000 and 3600000000000 for source kernel \(1 ms to 1 h\)/,
  );
  assert.match(
    refused(kernel({ input: "capture.csv" })),
    /input is for source replay; a kernel monitor reads its device/,
  );
});
