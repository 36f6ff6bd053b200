/**
 * The child that ethtool_test.ts runs inside the namespace of a veth
 * pair's end `b` (`ip netns exec NS deno run -A --unstable-net
 * ethtool_test_child.ts '{"a": VethEnd, "b": VethEnd, "ethtool": PATH,
 * "names": [...], "count": N, "payload": BYTES}'`). Prints one JSON
 * object.
 *
 * It runs a {@linkcode KernelCollector} on b with one `ethtool:` column
 * per name, has udp_send.ts in a's namespace send `count` datagrams to b,
 * waits until the kernel has counted them all (nothing else crosses the
 * pair), then, at that quiet moment, runs `ethtool -S b`, waits for the
 * next record, and runs `ethtool -S b` again: the record lies between two
 * answers of the real tool.
 *
 * @module
 */

import { KernelCollector } from "../../collectors/kernel/collector.ts";
import { RecordingSink } from "../../collectors/kernel/collector_test_util.ts";
import { run, type VethEnd } from "../netns.ts";

interface Args {
  readonly a: VethEnd;
  readonly b: VethEnd;
  readonly ethtool: string;
  readonly names: readonly string[];
  readonly count: number;
  readonly payload: number;
}

const SEND = new URL("../fixtures/udp_send.ts", import.meta.url).pathname;

/** rx_packets of `ifname` in this namespace's /proc/net/dev. */
function rxPackets(ifname: string): number {
  for (const line of Deno.readTextFileSync("/proc/net/dev").split("\n")) {
    const match = /^\s*([^:\s]+):(.*)$/.exec(line);
    if (match?.[1] === ifname) return Number(match[2].trim().split(/\s+/)[1]);
  }
  throw new Error(`${ifname} is not in /proc/net/dev`);
}

async function main(args: Args): Promise<void> {
  const { a, b, names, count } = args;
  const kernel = await KernelCollector.open({
    device: b.interface,
    samplePeriodNs: 10_000_000,
    columns: names.map((name) => ({ name, dataId: `ethtool:${name}` })),
    onFault: (message) => console.error(`child: ${message}`),
  });
  const sink = new RecordingSink(names.length);
  const controller = new AbortController();
  const running = kernel.run(sink, controller.signal);
  const socket = Deno.listenDatagram({
    transport: "udp",
    hostname: b.address,
    port: 0,
  });
  try {
    await sink.nextRecord();
    const first = sink.records[0];
    const before = rxPackets(b.interface);
    const all = (async () => {
      for (let i = 0; i < count; i++) await socket.receive();
    })();
    await run(
      "ip",
      "netns",
      "exec",
      a.namespace,
      Deno.execPath(),
      "run",
      "-A",
      "--no-check",
      "--unstable-net",
      SEND,
      a.address,
      b.address,
      String((socket.addr as Deno.NetAddr).port),
      String(count),
      String(args.payload),
    );
    await all;
    // veth counts a NAPI batch at its end, which may come after the socket
    // has the datagrams: wait for the kernel's own count (no event to
    // await for it; the wait ends on the count, not on a clock).
    while (rxPackets(b.interface) - before < count) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    // Records reach this thread in batches, some taken before the count
    // settled: the first taken after it settled is the one to compare.
    const settledNs = BigInt(Date.now() + 2) * 1_000_000n;
    const ethtoolBefore = await run(args.ethtool, "-S", b.interface);
    await sink.nextRecord((r) => r[0] > settledNs);
    const record = sink.records.find((r) => r[0] > settledNs)!;
    const ethtoolAfter = await run(args.ethtool, "-S", b.interface);
    controller.abort();
    await running;
    console.log(JSON.stringify({
      first: first.slice(1).map(String),
      record: record.slice(1).map(String),
      ethtoolBefore,
      ethtoolAfter,
      faults: kernel.faults,
    }));
  } finally {
    controller.abort();
    await running;
    kernel.close();
    socket.close();
  }
}

await main(JSON.parse(Deno.args[0]));
