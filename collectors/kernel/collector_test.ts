/**
 * The kernel source: columns resolved against fixture trees and the real
 * kernel, records delivered on its timer, the one-line refusal of a column
 * the device does not have, and a veth end deleted and made again under a
 * running source (a fault reported once, a gap, samples again).
 *
 * The real-kernel test runs the source in a child process inside a
 * network namespace (collector_test_child.ts); it needs root, `ip` and
 * network namespaces and is ignored without them.
 */

import assert from "node:assert/strict";
import { until } from "../../tests/until.ts";
import { join } from "node:path";
import {
  canMakeNamespaces,
  childReport,
  withVethPair,
} from "../../tests/netns.ts";
import { KernelCollector } from "./collector.ts";
import { RecordingSink } from "./collector_test_util.ts";

const FIXTURE = new URL("../../tests/fixtures/sysfs", import.meta.url)
  .pathname;
const CHILD = new URL("./collector_test_child.ts", import.meta.url).pathname;

function fixtureValue(path: string): bigint {
  return BigInt(Deno.readTextFileSync(join(FIXTURE, path)).trim());
}

Deno.test("rdma: and ib: columns read a port's hw_counters and port counters, by default the device's first port or as named", async () => {
  const kernel = await KernelCollector.open({
    device: "mlx5_0",
    root: FIXTURE,
    samplePeriodNs: 1_000_000,
    columns: [
      { name: "cnp", dataId: "rdma:np_cnp_sent" },
      { name: "xmit", dataId: "ib:port_xmit_data" },
      { name: "ooo", dataId: "rdma:mlx5_0/1/out_of_sequence" },
      { name: "wait", dataId: "ib:mlx5_0/1/port_xmit_wait" },
    ],
  });
  try {
    assert.equal(kernel.source, "kernel");
    assert.equal(kernel.device, "kernel mlx5_0");
    const sink = new RecordingSink(4);
    const controller = new AbortController();
    const three = (async () => {
      for (let n = 0; n < 3; n++) await sink.nextRecord();
      controller.abort();
    })();
    await kernel.run(sink, controller.signal);
    await three;
    const port = "sys/class/infiniband/mlx5_0/ports/1";
    const want = [
      fixtureValue(`${port}/hw_counters/np_cnp_sent`),
      fixtureValue(`${port}/counters/port_xmit_data`),
      fixtureValue(`${port}/hw_counters/out_of_sequence`),
      fixtureValue(`${port}/counters/port_xmit_wait`),
    ];
    const records = sink.records;
    assert.ok(records.length >= 3);
    for (const record of records) assert.deepEqual(record.slice(1), want);
    // Timestamps: ns since the epoch, near now, strictly increasing.
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    for (let i = 0; i < records.length; i++) {
      const t = records[i][0];
      assert.ok(t > nowNs - 60_000_000_000n && t < nowNs + 60_000_000_000n);
      if (i > 0) assert.ok(t > records[i - 1][0], `record ${i}`);
    }
    const { readMaxS, readLastS } = kernel.readStats;
    assert.ok(readMaxS >= readLastS && readLastS >= 0);
    assert.ok(kernel.pollStats.polls >= 3);
    assert.equal(kernel.faults, 0);
  } finally {
    kernel.close();
  }
});

Deno.test("a column the device does not offer is refused in one line naming the nearest names it has", async () => {
  const refused = async (device: string, dataId: string, root?: string) => {
    const error = await KernelCollector.open({
      device,
      root,
      samplePeriodNs: 10_000_000,
      columns: [{ name: "drops", dataId }],
    }).then(() => undefined, (e: Error) => e.message);
    assert.ok(error !== undefined, `${dataId} was taken`);
    assert.ok(!error.includes("\n"), error);
    return error;
  };
  assert.equal(
    await refused("lo", "netdev:rx_dropd"),
    'Cannot read column "drops" (netdev:rx_dropd) of lo: lo has no netdev counter rx_dropd; did you mean rx_dropped?',
  );
  assert.equal(
    await refused("mlx5_0", "rdma:np_cnp_snt", FIXTURE),
    'Cannot read column "drops" (rdma:np_cnp_snt) of mlx5_0: mlx5_0 port 1 has no rdma counter np_cnp_snt; did you mean np_cnp_sent?',
  );
  assert.equal(
    await refused("mlx5_0", "ib:mlx5_0/2/port_xmit_data", FIXTURE),
    'Cannot read column "drops" (ib:mlx5_0/2/port_xmit_data) of mlx5_0: mlx5_0 has no port 2; it has 1',
  );
  assert.equal(
    await refused("lo", "netdev:eth0/rx_bytes"),
    'Cannot read column "drops" (netdev:eth0/rx_bytes) of lo: lo has no interface eth0',
  );
  assert.match(
    await refused("lo", "rdma:np_cnp_sent"),
    /of lo: lo has no RDMA port$/,
  );
  assert.match(
    await refused("lo", "diag:0x1"),
    /the data ID must be netdev:, ethtool:, rdma: or ib: and a counter name$/,
  );
});

Deno.test({
  name:
    "on a veth end: netdev and ethtool columns equal the kernel's counts; its ethtool set changed, then the end deleted and made again, the source reports one fault each, a gap, then samples again (needs root and network namespaces)",
  ignore: !canMakeNamespaces(),
  async fn() {
    await withVethPair(async ({ a, b }) => {
      const report = await childReport(b.namespace, CHILD, { a, b }, 40_000);
      const count = report.count;
      // The records equal /proc/net/dev exactly once the traffic is in.
      assert.deepEqual(report.after.record, report.after.proc);
      assert.equal(
        report.after.proc.rx_packets - report.before.proc.rx_packets,
        count,
      );
      // The ethtool column equals the driver's own answer. (Whether queue
      // 0's NAPI counted the datagrams depends on how the channel change
      // left the queues: seen both ways, so its value is not asserted.)
      assert.equal(report.after.xdpPackets, report.after.xdpDirect);
      assert.equal(report.after.peerIfindex, report.peerIfindex);
      assert.ok(report.increasing, "timestamps strictly increase");
      // A receive queue fewer, then deleted and made again: one fault
      // each, named, then a gap and records.
      assert.equal(report.faults.length, 2, report.faults.join("\n"));
      assert.match(
        report.faults[0],
        new RegExp(
          `^kernel ${b.interface} stopped delivering: the ethtool statistics of ${b.interface} changed; opening it again$`,
        ),
      );
      assert.match(
        report.faults[1],
        // A statistics file read during the unregistering answers EINVAL,
        // after it ENODEV, and the ethtool ioctl "no such device": which
        // one a sample meets depends on when its deadline falls.
        new RegExp(
          `^kernel ${b.interface} stopped delivering: .*(ENODEV|EINVAL|no such device)`,
        ),
      );
      assert.ok(report.gapBeforeResume > 0);
      assert.ok(report.resumed.rx_packets < report.after.record.rx_packets);
      assert.equal(report.lostSamples, report.gapTotal);
    }, { queues: 2 });
  },
});

Deno.test("a sample taken late is a late sample with its true time, not a loss, and says why it was late", async () => {
  let t = 1_000;
  const said: string[] = [];
  const kernel = await KernelCollector.open({
    device: "mlx5_0",
    root: FIXTURE,
    samplePeriodNs: 10_000_000,
    columns: [{ name: "cnp", dataId: "rdma:np_cnp_sent" }],
    monotonic: () => t,
    onLate: (message) => said.push(message),
  });
  try {
    const sink = new RecordingSink(1);
    assert.equal(kernel.sample(sink, 0), true);
    // Due at 1010, woken at 1055 by a busy host: one sample, 45 ms late.
    t = 1_055;
    assert.equal(kernel.sample(sink, 45), true);
    assert.equal(kernel.sample(sink, 0.2), true);
    const kinds = sink.deliveries.map((d) => "gap" in d ? d.gap : "record");
    assert.deepEqual(kinds, ["record", "record", "record"]);
    assert.equal(kernel.lostSamples, 0);
    assert.equal(kernel.pollStats.lateSamples, 1);
    assert.equal(kernel.pollStats.latenessMaxS, 0.045);
    assert.deepEqual(said, [
      "kernel mlx5_0: a sample came late: the sampler thread was woken 45 ms late (the host is busy; its reads took 0 ns), against a 10 ms sample period; nothing is lost (the sample has its true time and the counters' whole increase), but a burst shorter than the delay is averaged over it",
    ]);
  } finally {
    kernel.close();
  }
});

Deno.test("run samples on a thread of its own at 1 ms, says once what scheduling it got, delivers rising timestamps, and ends cleanly", async () => {
  const scheduling: string[] = [];
  const kernel = await KernelCollector.open({
    device: "mlx5_0",
    root: FIXTURE,
    samplePeriodNs: 1_000_000,
    columns: [{ name: "cnp", dataId: "rdma:np_cnp_sent" }],
    onScheduling: (message) => scheduling.push(message),
  });
  try {
    const sink = new RecordingSink(1);
    const stop = new AbortController();
    const running = kernel.run(sink, stop.signal);
    // How many of the periods it keeps is a benchmark's figure
    // (bench/RESULTS.md); here, that it samples and stops.
    await until("20 records", () => sink.records.length >= 20);
    stop.abort();
    await running;
    assert.equal(scheduling.length, 1);
    assert.match(
      scheduling[0],
      /^kernel mlx5_0: the sampler thread runs at (SCHED_FIFO priority 1|nice -10 \(SCHED_FIFO refused: \w+\)|the default priority \(.*\))/,
    );
    assert.equal(kernel.scheduling, scheduling[0].split(" runs at ")[1]);
    const times = sink.records.map((r) => r[0]);
    assert.ok(times.every((ns, i) => i === 0 || ns > times[i - 1]));
    // Nothing on this fixture fails: every sample is a record.
    assert.equal(sink.lost, 0);
    assert.equal(kernel.lostSamples, 0);
    assert.equal(kernel.pollStats.polls, sink.records.length);
    const intervals = kernel.pollStats.intervalCounts.reduce((a, b) => a + b);
    assert.equal(intervals, sink.records.length - 1);
    // The run can be started again once ended (its thread has ended).
    const again = new AbortController();
    const second = kernel.run(sink, again.signal);
    const before = sink.records.length;
    await until(
      "a record of the second run",
      () => sink.records.length > before,
    );
    again.abort();
    await second;
  } finally {
    kernel.close();
  }
});

Deno.test("a sample allocates nothing, in a process of its own (the heap of a test runner moves for its own reasons)", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-check",
      "--v8-flags=--expose-gc",
      CHILD,
      "alloc",
      FIXTURE,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  assert.equal(output.code, 0, text.decode(output.stderr));
  const { growth, value, control } = JSON.parse(text.decode(output.stdout));
  // 20,000 samples that each allocated even 16 bytes would grow 320 kB;
  // the control, a record allocated per sample, shows the measure works.
  assert.ok(growth < 64_000, `the heap grew ${growth} bytes`);
  assert.ok(control > 320_000, `the control grew only ${control} bytes`);
  assert.equal(value, "9007199254740993");
});

Deno.test("late samples are counted each time and said once, then again only after a quiet minute, naming slow reads when the reads were slow", async () => {
  // Each clock read moves it by `step` ms: a sample reads it before and
  // after its reads, so its reads take `step`.
  let t = 1_000;
  let step = 12;
  const said: string[] = [];
  const faults: string[] = [];
  const kernel = await KernelCollector.open({
    device: "mlx5_0",
    root: FIXTURE,
    samplePeriodNs: 10_000_000,
    columns: [{ name: "cnp", dataId: "rdma:np_cnp_sent" }],
    monotonic: () => (t += step),
    onLate: (message) => said.push(message),
    onFault: (message) => faults.push(message),
  });
  try {
    const sink = new RecordingSink(1);
    const sample = (readMs: number, atMs?: number) => {
      if (atMs !== undefined) t = atMs;
      step = readMs;
      assert.equal(kernel.sample(sink, 0.5), true);
    };
    sample(12);
    assert.deepEqual(said, [
      "kernel mlx5_0: a sample came late: its reads took 12 ms, longer than the 10 ms sample period (woken 500 µs late); nothing is lost (the sample has its true time and the counters' whole increase), but a burst shorter than the delay is averaged over it",
    ]);
    sample(0.5);
    sample(15);
    sample(10); // as long as the period: keeps up
    sample(25, 59_000); // the last slow one ended at 1,055: 58 s before
    assert.equal(said.length, 1);
    sample(0.5, 119_000);
    sample(30, 119_050); // a minute after the last slow one
    assert.equal(said.length, 2);
    assert.match(said[1], /reads took 30 ms, longer than the 10 ms/);
    const stats = kernel.readStats;
    assert.equal(stats.reads, 7);
    assert.equal(stats.slowReads, 4);
    assert.equal(stats.readMaxS, 0.03);
    assert.equal(kernel.readStats.readLastS, 0.03);
    // Slow samples are still delivered, and none of this is a fault.
    assert.equal(sink.records.length, 7);
    assert.deepEqual(faults, []);
  } finally {
    kernel.close();
  }
});
