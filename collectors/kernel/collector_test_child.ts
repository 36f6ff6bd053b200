/**
 * The child that collector_test.ts runs inside the namespace of a veth
 * pair's end `b` (`ip netns exec NS deno run -A --unstable-net collector_test_child.ts
 * '{"a": VethEnd, "b": VethEnd}'`). Prints one JSON object.
 *
 * With `alloc ROOT` (no namespace needed) it measures instead how much a
 * sample of a fixture port allocates.
 *
 * It turns GRO on for b (so veth counts in its queue statistics), runs a
 * {@linkcode KernelCollector} on b, has a sender in a's namespace (this
 * file again, `send`) turn TSO off for a and send datagrams to b, and
 * compares the records with `/proc/net/dev`; before the datagrams it takes
 * one of b's two receive queues away (the ethtool set changes) and waits
 * for the fault and the records after it. Then it deletes b (and with
 * it the pair), waits for the fault, makes the pair again and waits for
 * the records to come back.
 *
 * @module
 */

import type { VethEnd } from "../../tests/netns.ts";
import {
  ETHTOOL_SGRO,
  ETHTOOL_STSO,
  setFeature,
  setRxChannels,
} from "./ethtool_test_util.ts";
import { denoIn, remakeVethPair, run } from "../../tests/netns.ts";
import { KernelCollector } from "./collector.ts";
import { EthtoolStats } from "./ethtool_stats.ts";
import { RecordingSink } from "./collector_test_util.ts";

const COUNT = 40;
const SIZE = 200;
const step = (what: string) => console.error(`child: ${what}`);

/** rx_packets and rx_bytes of `ifname` in this namespace's /proc/net/dev. */
function procNetDev(ifname: string): { rx_packets: number; rx_bytes: number } {
  for (const line of Deno.readTextFileSync("/proc/net/dev").split("\n")) {
    const match = /^\s*([^:\s]+):(.*)$/.exec(line);
    if (match?.[1] !== ifname) continue;
    const fields = match[2].trim().split(/\s+/).map(Number);
    return { rx_packets: fields[1], rx_bytes: fields[0] };
  }
  throw new Error(`${ifname} is not in /proc/net/dev`);
}

async function send(a: VethEnd, b: VethEnd, port: number): Promise<void> {
  setFeature(a.interface, ETHTOOL_STSO, false);
  const socket = Deno.listenDatagram({
    transport: "udp",
    hostname: a.address,
    port: 0,
  });
  const payload = new Uint8Array(SIZE);
  for (let i = 0; i < COUNT; i++) {
    await socket.send(payload, {
      transport: "udp",
      hostname: b.address,
      port,
    });
  }
  socket.close();
  console.log(
    Deno.readTextFileSync(`/sys/class/net/${a.interface}/ifindex`).trim(),
  );
}

async function collect(a: VethEnd, b: VethEnd): Promise<void> {
  setFeature(b.interface, ETHTOOL_SGRO, true);
  const socket = Deno.listenDatagram({
    transport: "udp",
    hostname: b.address,
    port: 0,
  });
  const port = (socket.addr as Deno.NetAddr).port;
  const all = (async () => {
    for (let i = 0; i < COUNT; i++) await socket.receive();
  })();

  const faults: string[] = [];
  let faulted = Promise.withResolvers<void>();
  const kernel = await KernelCollector.open({
    device: b.interface,
    samplePeriodNs: 10_000_000,
    columns: [
      { name: "packets", dataId: "netdev:rx_packets" },
      { name: "bytes", dataId: "netdev:rx_bytes" },
      { name: "xdp", dataId: `ethtool:${b.interface}/rx_queue_0_xdp_packets` },
      { name: "peer", dataId: "ethtool:peer_ifindex" },
    ],
    onFault(message) {
      faults.push(message);
      faulted.resolve();
      faulted = Promise.withResolvers<void>();
    },
  });
  const sink = new RecordingSink(4);
  const controller = new AbortController();
  const running = kernel.run(sink, controller.signal);
  const columns = (record: readonly bigint[]) => ({
    rx_packets: Number(record[1]),
    rx_bytes: Number(record[2]),
  });
  try {
    await sink.nextRecord();
    step("first record in");
    // One receive queue fewer: the ethtool set changes under the reader.
    step("changing the receive channels");
    const changed = faulted.promise;
    setRxChannels(b.interface, 1);
    await changed;
    await sink.nextRecord();
    step("changed");
    const before = { proc: procNetDev(b.interface) };

    const sender = await denoIn(a.namespace, [
      "--no-check",
      "--unstable-net",
      import.meta.filename!,
      "send",
      JSON.stringify({ a, b, port }),
    ], { stdout: "piped", stderr: "inherit" }).output();
    if (!sender.success) throw new Error("the sender failed");
    const peerIfindex = Number(new TextDecoder().decode(sender.stdout).trim());
    step("sent; waiting for the datagrams");
    await all;
    // veth counts a NAPI batch at its end, which may come after the socket
    // has the datagrams: wait for the kernel's own count first.
    while (
      procNetDev(b.interface).rx_packets - before.proc.rx_packets < COUNT
    ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Nothing else crosses the pair: once the datagrams are in, the counts
    // stay, and the next record must equal what the kernel says now.
    const proc = procNetDev(b.interface);
    const direct = EthtoolStats.open(b.interface);
    const xdp = new Uint32Array(2);
    const xdpRead = direct.read(
      xdp,
      0,
      direct.indexesOf(["rx_queue_0_xdp_packets"]),
    );
    direct.close();
    if (!xdpRead) throw new Error("the ethtool set changed again");
    // Records reach this thread in batches, some taken before the count
    // settled: the first taken after it was read must equal it.
    const readNs = BigInt(Date.now() + 2) * 1_000_000n;
    await sink.nextRecord((r) => r[0] > readNs);
    const record = sink.records.find((r) => r[0] > readNs)!;
    const after = {
      proc,
      record: columns(record),
      xdpPackets: Number(record[3]),
      xdpDirect: xdp[0] + xdp[1] * 2 ** 32,
      peerIfindex: Number(record[4]),
    };

    step("compared; deleting the pair");
    const deleted = faulted.promise;
    await run("ip", "link", "del", b.interface);
    step("deleted; waiting for the fault");
    await deleted;
    const gapAt = sink.deliveries.length;
    await remakeVethPair({ a, b });
    step("made again; waiting for records");
    // Records reach this thread in batches: some taken before the fault
    // may come after its message. The gap, then a record, is the resume.
    const gapIndex = () =>
      sink.deliveries.findIndex((d, i) => i >= gapAt && "gap" in d);
    while (
      gapIndex() < 0 ||
      !sink.deliveries.slice(gapIndex() + 1).some((d) => "record" in d)
    ) {
      await sink.nextRecord();
    }
    const gap = sink.deliveries[gapIndex()];
    const next = sink.deliveries[gapIndex() + 1];
    const resumed = columns("record" in next ? next.record : []);
    // A few more, to see that the fault is not reported again.
    for (let n = 0; n < 3; n++) await sink.nextRecord();
    step("stopping");
    controller.abort();
    await running;
    const times = sink.records.map((r) => r[0]);
    console.log(JSON.stringify({
      count: COUNT,
      before,
      after,
      peerIfindex,
      increasing: times.every((t, i) => i === 0 || t > times[i - 1]),
      faults,
      gapBeforeResume: gap !== undefined && "gap" in gap ? gap.gap : 0,
      resumed,
      lostSamples: kernel.lostSamples,
      gapTotal: sink.lost,
    }));
  } finally {
    controller.abort();
    await running;
    kernel.close();
    socket.close();
  }
}

/**
 * How much the heap grows over 20,000 samples of a fixture port, after as
 * many to warm up, with clocks that box no number (a clock read returns a
 * fresh heap number whenever V8 does not inline it: the clock's
 * allocation, not the sample's); and the same with a record allocated per
 * sample, as a control.
 */
async function alloc(root: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("needs --v8-flags=--expose-gc");
  const WALL_MS = 1.7e12 + 0.5;
  const MONOTONIC_MS = 12_345.5;
  const kernel = await KernelCollector.open({
    device: "mlx5_0",
    root,
    samplePeriodNs: 10_000_000,
    columns: [
      { name: "cnp", dataId: "rdma:np_cnp_sent" },
      { name: "xmit", dataId: "ib:port_xmit_data" },
    ],
    now: () => WALL_MS,
    monotonic: () => MONOTONIC_MS,
  });
  const words = new Uint32Array(6 * 16);
  let head = 0;
  const sink = {
    words,
    columns: 2,
    claim: () => (head++ & 15) * 6,
    commit() {},
    gap() {},
  };
  let kept: Uint32Array | undefined;
  const control = {
    ...sink,
    commit() {
      kept = words.slice(0, 6);
    },
  };
  const growth = (target: typeof sink) => {
    for (let i = 0; i < 20_000; i++) kernel.sample(target);
    gc();
    const before = Deno.memoryUsage().heapUsed;
    for (let i = 0; i < 20_000; i++) kernel.sample(target);
    return Deno.memoryUsage().heapUsed - before;
  };
  const result = {
    growth: growth(sink),
    control: growth(control),
    value: ((BigInt(words[3]) << 32n) | BigInt(words[2])).toString(),
    kept: kept?.length,
  };
  kernel.close();
  console.log(JSON.stringify(result));
}

const [first, second] = Deno.args;
if (first === "alloc") {
  await alloc(second);
} else if (first === "send") {
  const { a, b, port } = JSON.parse(second);
  await send(a, b, port);
} else {
  const { a, b } = JSON.parse(first);
  await collect(a, b);
}
