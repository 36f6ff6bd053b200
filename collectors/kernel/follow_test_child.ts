/**
 * The child that follow_test.ts runs inside the namespace of a veth pair's
 * end `b` (`ip netns exec NS deno run -A follow_test_child.ts '{"a":
 * VethEnd, "b": VethEnd}'`). Prints one JSON object.
 *
 * It runs a {@linkcode KernelCollector} on b (a netdev column, an ethtool
 * column, and a netdev column that names b), then, each step awaited on
 * the records or the source's messages rather than on a clock: takes b's
 * link down and waits for three records; renames b and waits for the
 * source to say so and for three records; deletes the renamed end, makes
 * the pair again under b's first name and waits for the records to come
 * back.
 *
 * @module
 */

import type { VethEnd } from "../../tests/netns.ts";
import { remakeVethPair, run } from "../../tests/netns.ts";
import { KernelCollector } from "./collector.ts";
import { RecordingSink } from "./collector_test_util.ts";

const step = (what: string) => console.error(`child: ${what}`);

/** rx_packets and tx_packets of `ifname` in this namespace's /proc/net/dev. */
function procNetDev(ifname: string): { rx: number; tx: number } {
  for (const line of Deno.readTextFileSync("/proc/net/dev").split("\n")) {
    const match = /^\s*([^:\s]+):(.*)$/.exec(line);
    if (match?.[1] !== ifname) continue;
    const fields = match[2].trim().split(/\s+/).map(Number);
    return { rx: fields[1], tx: fields[9] };
  }
  throw new Error(`${ifname} is not in /proc/net/dev`);
}

async function follow(a: VethEnd, b: VethEnd): Promise<void> {
  const renamed = `${b.interface}r`;
  const messages: string[] = [];
  let said = Promise.withResolvers<void>();
  const kernel = await KernelCollector.open({
    device: b.interface,
    samplePeriodNs: 10_000_000,
    columns: [
      { name: "rx", dataId: "netdev:rx_packets" },
      { name: "peer", dataId: "ethtool:peer_ifindex" },
      { name: "tx", dataId: `netdev:${b.interface}/tx_packets` },
    ],
    onFault(message) {
      messages.push(message);
      said.resolve();
      said = Promise.withResolvers<void>();
    },
  });
  const sink = new RecordingSink(3);
  const controller = new AbortController();
  const running = kernel.run(sink, controller.signal);
  const records = async (n: number) => {
    for (let i = 0; i < n; i++) await sink.nextRecord();
  };
  const columns = (record: readonly bigint[]) => ({
    rx: Number(record[1]),
    peer: Number(record[2]),
    tx: Number(record[3]),
  });
  try {
    await records(1);
    const peer = columns(sink.records[0]).peer;

    step("link down");
    await run("ip", "link", "set", b.interface, "down");
    await records(3);
    const down = {
      operstate: Deno.readTextFileSync(
        `/sys/class/net/${b.interface}/operstate`,
      ).trim(),
      up: kernel.up,
      faults: kernel.faults,
      record: columns(sink.records.at(-1)!),
      proc: procNetDev(b.interface),
    };
    await run("ip", "link", "set", b.interface, "up");

    step("renaming");
    const renaming = said.promise;
    await run("ip", "link", "set", b.interface, "name", renamed);
    await renaming;
    await records(3);
    const rename = {
      messages: [...messages],
      up: kernel.up,
      faults: kernel.faults,
      record: columns(sink.records.at(-1)!),
      proc: procNetDev(renamed),
    };

    step("deleting the renamed end");
    const deleted = said.promise;
    await run("ip", "link", "del", renamed);
    await deleted;
    step("making the pair again under the first name");
    const replaced = said.promise;
    await remakeVethPair({ a, b });
    await replaced;
    await records(1);
    const back = {
      messages: messages.slice(rename.messages.length),
      faults: kernel.faults,
      record: columns(sink.records.at(-1)!),
      ifindex: Number(
        Deno.readTextFileSync(`/sys/class/net/${b.interface}/ifindex`),
      ),
    };
    step("stopping");
    controller.abort();
    await running;
    console.log(JSON.stringify({
      peer,
      down,
      rename,
      back,
      lost: kernel.lostSamples,
      gaps: sink.lost,
    }));
  } finally {
    controller.abort();
    await running;
    kernel.close();
  }
}

const { a, b } = JSON.parse(Deno.args[0]);
await follow(a, b);
