import assert from "node:assert/strict";
import { EthtoolStats } from "./ethtool_stats.ts";
import { canMakeNamespaces, run, withVethPair } from "../../tests/netns.ts";

const CHILD = new URL("./ethtool_test_child.ts", import.meta.url).pathname;
const NAMESPACES = canMakeNamespaces();
const PORT = 7023;

/** `deno run` of the child inside `namespace`. */
function child(
  namespace: string,
  args: string[],
  flags: string[] = [],
): Deno.Command {
  return new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      namespace,
      Deno.execPath(),
      "run",
      "-A",
      "--no-check",
      "--unstable-net",
      ...flags,
      CHILD,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  });
}

/** The JSON lines a child printed, one at a time, as they come. */
async function* jsonLines(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<Record<string, unknown>> {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let end;
    while ((end = pending.indexOf("\n")) >= 0) {
      yield JSON.parse(pending.slice(0, end));
      pending = pending.slice(end + 1);
    }
  }
}

type Counters = Record<string, string>;
interface Received {
  names: string[];
  unchanged: boolean;
  before: { ethtool: Counters; sysfs: Counters };
  after: { ethtool: Counters; sysfs: Counters };
}

const delta = (after: Counters, before: Counters, name: string): bigint =>
  BigInt(after[name]) - BigInt(before[name]);

Deno.test({
  name:
    "a veth's ethtool counters agree with the kernel's netdev statistics, packet for packet (network namespaces)",
  ignore: !NAMESPACES,
  async fn() {
    await withVethPair(async ({ a, b }) => {
      const n = 37, size = 100;
      const receiver = child(a.namespace, [
        "receive",
        a.interface,
        a.address,
        String(PORT),
        String(n),
      ]).spawn();
      const stderr = new Response(receiver.stderr).text();
      try {
        const lines = jsonLines(receiver.stdout);
        const ready = await lines.next();
        if (ready.done) assert.fail(`the receiver ended: ${await stderr}`);
        assert.deepEqual(ready.value, { ready: true });
        const sent = await child(b.namespace, [
          "send",
          b.interface,
          b.address,
          a.address,
          String(PORT),
          String(n),
          String(size),
        ]).output();
        assert.equal(
          sent.code,
          0,
          new TextDecoder().decode(sent.stderr),
        );
        const { ifindex } = JSON.parse(new TextDecoder().decode(sent.stdout));
        const last = await lines.next();
        if (last.done) assert.fail(`the receiver ended: ${await stderr}`);
        const received = last.value as unknown as Received;
        const { names, before, after } = received;

        // veth's set: the peer's ifindex, then per receive queue its NAPI
        // and XDP counts, then per transmit queue its XDP transmits.
        assert.deepEqual(names, [
          "peer_ifindex",
          "rx_queue_0_xdp_packets",
          "rx_queue_0_xdp_bytes",
          "rx_queue_0_drops",
          "rx_queue_0_xdp_redirect",
          "rx_queue_0_xdp_drops",
          "rx_queue_0_xdp_tx",
          "rx_queue_0_xdp_tx_errors",
          "tx_queue_0_xdp_xmit",
          "tx_queue_0_xdp_xmit_errors",
        ]);
        assert.equal(received.unchanged, true);
        assert.equal(after.ethtool.peer_ifindex, String(ifindex));

        // Nothing else crosses the pair (no IPv6, no ARP), and with GRO on
        // every packet goes through the queue's NAPI: the netdev
        // statistics are the queue's counts, exactly.
        for (const side of [before, after]) {
          assert.equal(
            side.ethtool.rx_queue_0_xdp_packets,
            side.sysfs.rx_packets,
          );
          assert.equal(side.ethtool.rx_queue_0_xdp_bytes, side.sysfs.rx_bytes);
        }
        assert.equal(
          delta(after.ethtool, before.ethtool, "rx_queue_0_xdp_packets"),
          BigInt(n),
        );
        // veth counts a received packet from its IP header on (the
        // Ethernet header is already pulled): 20 + 8 + the payload.
        assert.equal(
          delta(after.ethtool, before.ethtool, "rx_queue_0_xdp_bytes"),
          BigInt(n * (20 + 8 + size)),
        );
        for (const name of names.slice(3)) {
          assert.equal(after.ethtool[name], "0", name);
        }
      } finally {
        try {
          receiver.kill();
        } catch {
          // Already gone.
        }
        await receiver.status;
        await stderr;
      }
    });
  },
});

Deno.test({
  name: "reading allocates nothing (heap probe in a namespace, with a control)",
  ignore: !NAMESPACES,
  async fn() {
    await withVethPair(async ({ a }) => {
      const output = await child(
        a.namespace,
        ["alloc", a.interface],
        ["--v8-flags=--expose-gc"],
      ).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      const { count, reads, checks, fresh, ok } = JSON.parse(
        new TextDecoder().decode(output.stdout),
      );
      assert.equal(count, 10);
      assert.equal(ok, 2 * 20_000 + 2 * 20_000 + 2 * 2_000);
      // 20,000 reads: one 16-byte object each would be 320 kB.
      assert.ok(reads < 65_536, `20,000 reads grew the heap by ${reads} bytes`);
      assert.ok(
        checks < 65_536,
        `20,000 checks grew the heap by ${checks} bytes`,
      );
      // The control: a record per read (about 150 bytes each) must show.
      assert.ok(fresh > 100_000, `2,000 fresh records grew it by ${fresh}`);
    });
  },
});

Deno.test({
  name: "the set of statistics is checked against the kernel's count",
  ignore: !NAMESPACES,
  async fn() {
    await withVethPair(async ({ a }) => {
      const out = await run(
        "ip",
        "netns",
        "exec",
        a.namespace,
        Deno.execPath(),
        "eval",
        `
        import { EthtoolStats } from ${
          JSON.stringify(new URL("./ethtool_stats.ts", import.meta.url).href)
        };
        const stats = EthtoolStats.open(${JSON.stringify(a.interface)});
        const wanted = stats.indexesOf(["peer_ifindex", "no_such_counter"]);
        const out = new Uint32Array([7, 7, 7, 7]);
        const read = stats.read(out, 0, wanted);
        const unchanged = stats.unchanged();
        stats.close();
        let closed = "";
        try { stats.read(out, 0, wanted); } catch (e) { closed = e.message; }
        console.log(JSON.stringify({ wanted: [...wanted], read, unchanged, out: [...out], closed }));
        `,
      );
      const got = JSON.parse(out);
      assert.deepEqual(got.wanted, [0, -1]);
      assert.equal(got.read, true);
      assert.equal(got.unchanged, true);
      // peer_ifindex is small; the missing name's words are left alone.
      assert.ok(got.out[0] > 0 && got.out[1] === 0, String(got.out));
      assert.deepEqual(got.out.slice(2), [7, 7]);
      assert.equal(
        got.closed,
        `Cannot read ethtool statistics of ${a.interface}: the reader is closed`,
      );
    });
  },
});

Deno.test({
  name:
    "a driver whose set changes under the reader is seen at the next read and check (veth channels)",
  ignore: !NAMESPACES,
  async fn() {
    await withVethPair(async ({ a }) => {
      const output = await child(a.namespace, ["resize", a.interface])
        .output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      // 4 receive queues: 1 + 4 * 7 + 4 * 2 counters; 3: 7 fewer. Shrinking
      // and growing are both seen (a kernel with the December 2025 fix
      // answers a count it was not asked for with none; an older one
      // writes them all, into the guard page when there are more).
      assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), [
        {
          rx: 3,
          count: 37,
          before: true,
          read: false,
          unchanged: false,
          reopened: 30,
          lastQueue: "rx_queue_2_xdp_packets",
        },
        {
          rx: 4,
          count: 30,
          before: true,
          read: false,
          unchanged: false,
          reopened: 37,
          lastQueue: "rx_queue_3_xdp_packets",
        },
      ]);
    }, { queues: 4 });
  },
});

Deno.test("an interface that is not there is one line naming it", () => {
  assert.throws(
    () => EthtoolStats.open("dtb-nosuch0"),
    {
      message: "Cannot read ethtool statistics of dtb-nosuch0: no such device",
    },
  );
});

Deno.test("a name that cannot be an interface's is refused before any call", () => {
  assert.throws(
    () => EthtoolStats.open("a-name-of-16-byt"),
    {
      message:
        "Cannot read ethtool statistics of a-name-of-16-byt: not an interface name (1 to 15 bytes, no NUL)",
    },
  );
  assert.throws(() => EthtoolStats.open(""), /not an interface name/);
});

Deno.test({
  name: "loopback has no ethtool statistics: one line",
  ignore: Deno.build.os !== "linux",
  fn() {
    assert.throws(
      () => EthtoolStats.open("lo"),
      {
        message:
          "Cannot read ethtool statistics of lo: its driver has no ethtool statistics",
      },
    );
  },
});
