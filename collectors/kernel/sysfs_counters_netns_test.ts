/**
 * The sysfs counter reader on the real kernel: netdev statistics of a veth
 * pair between two network namespaces, checked against the kernel's own
 * `/proc/net/dev` and against the datagrams sent.
 *
 * Two namespaces, not one: between two addresses of one namespace the
 * kernel routes over `lo`, and the veth counters would not move. IPv6 is
 * off and the neighbours are static, so no NDP, MLD or ARP frame lands in
 * the counts: only the datagrams the test sends.
 *
 * Needs root, `ip`, `nsenter` and network namespaces; ignored without them.
 */

import assert from "node:assert/strict";
import { CounterRead } from "./sysfs_counters.ts";
import { runSync } from "../../tests/netns.ts";

const CHILD = new URL("./sysfs_counters_netns_child.ts", import.meta.url)
  .pathname;

function succeeds(command: string, args: string[]): boolean {
  try {
    return new Deno.Command(command, { args, stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const CAN_NETNS = Deno.uid() === 0 && succeeds("ip", ["-V"]) &&
  succeeds("nsenter", ["--version"]) &&
  succeeds("unshare", ["--net", "--mount", "true"]);

/** The netdev counters of `/proc/net/dev`'s text, by interface. */
function parseProcNetDev(text: string): Record<string, Record<string, bigint>> {
  const table: Record<string, Record<string, bigint>> = {};
  for (const line of text.split("\n").slice(2)) {
    const match = /^\s*([^:\s]+):(.*)$/.exec(line);
    if (!match) continue;
    const fields = match[2].trim().split(/\s+/).map(BigInt);
    table[match[1]] = {
      rx_bytes: fields[0],
      rx_packets: fields[1],
      tx_bytes: fields[8],
      tx_packets: fields[9],
    };
  }
  return table;
}

const MAC_A = "02:00:00:00:00:0a";
const MAC_B = "02:00:00:00:00:0b";
const ADDRESS_A = "10.99.0.1";
const ADDRESS_B = "10.99.0.2";
let serial = 0;

Deno.test({
  name:
    "netdev statistics of a veth pair read by pread match /proc/net/dev and the datagrams sent; a deleted pair is ENODEV (needs root and network namespaces)",
  ignore: !CAN_NETNS,
  async fn() {
    const nsA = `dtsf${Deno.pid}x${serial}a`;
    const nsB = `dtsf${Deno.pid}x${serial++}b`;
    const count = 50;
    const size = 100; // UDP payload bytes
    const port = 40_000 + (Deno.pid % 20_000);
    let receiver: Deno.ChildProcess | undefined;
    let lines: ReadableStreamDefaultReader<string> | undefined;
    try {
      for (const ns of [nsA, nsB]) {
        runSync("ip", ["netns", "add", ns]);
        runSync("ip", [
          "netns",
          "exec",
          ns,
          "sh",
          "-c",
          "for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do [ -e $f ] && echo 1 > $f; done; true",
        ]);
      }
      // vb is made straight in the peer namespace.
      // deno-fmt-ignore
      runSync("ip", [
        "-n", nsA, "link", "add", "va", "address", MAC_A,
        "type", "veth", "peer", "name", "vb", "address", MAC_B, "netns", nsB,
      ]);
      runSync("ip", ["-n", nsA, "addr", "add", `${ADDRESS_A}/24`, "dev", "va"]);
      runSync("ip", ["-n", nsB, "addr", "add", `${ADDRESS_B}/24`, "dev", "vb"]);
      runSync("ip", ["-n", nsA, "link", "set", "va", "up"]);
      runSync("ip", ["-n", nsB, "link", "set", "vb", "up"]);
      for (
        const [ns, address, mac, dev] of [
          [nsA, ADDRESS_B, MAC_B, "va"],
          [nsB, ADDRESS_A, MAC_A, "vb"],
        ]
      ) {
        // deno-fmt-ignore
        runSync("ip", [
          "-n", ns, "neigh", "replace", address, "lladdr", mac, "dev", dev,
          "nud", "permanent",
        ]);
      }

      receiver = new Deno.Command("ip", {
        args: [
          "netns",
          "exec",
          nsB,
          Deno.execPath(),
          "run",
          "-A",
          "--no-check",
          CHILD,
          "receive",
          ADDRESS_B,
          String(port),
          String(count),
        ],
        stdout: "piped",
        stderr: "inherit",
        signal: AbortSignal.timeout(60_000),
      }).spawn();
      lines = receiver.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let received = "";
      while (!received.includes("ready\n")) {
        const { value, done } = await lines.read();
        assert.ok(!done, `the receiver ended before it was ready: ${received}`);
        received += value;
      }

      const sender = await new Deno.Command("ip", {
        args: [
          "netns",
          "exec",
          nsA,
          Deno.execPath(),
          "run",
          "-A",
          "--no-check",
          CHILD,
          "send",
          nsB,
          ADDRESS_A,
          ADDRESS_B,
          String(port),
          String(count),
          String(size),
        ],
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
      assert.equal(
        sender.code,
        0,
        new TextDecoder().decode(sender.stderr),
      );
      const report = JSON.parse(new TextDecoder().decode(sender.stdout));

      for (;;) {
        const { value, done } = await lines.read();
        if (done) break;
        received += value;
      }
      assert.equal((await receiver.status).code, 0);
      receiver = undefined;
      assert.deepEqual(
        JSON.parse(received.slice(received.indexOf("ready\n") + 6)),
        { received: count, bytes: count * size },
      );

      // Both ends' files were found, va's in its own /sys and vb's under
      // the peer's sysfs mounted at another root.
      assert.equal(report.files.length, 8);
      const sysfs = (
        snapshot: Record<string, string>,
      ): Record<string, Record<string, bigint>> => {
        const table: Record<string, Record<string, bigint>> = {};
        for (const [key, value] of Object.entries(snapshot)) {
          const [iface, counter] = key.split(".");
          (table[iface] ??= {})[counter] = BigInt(value);
        }
        return table;
      };
      const before = sysfs(report.before);
      const after = sysfs(report.after);
      const procBefore = {
        va: parseProcNetDev(report.procBefore.own).va,
        vb: parseProcNetDev(report.procBefore.peer).vb,
      };
      const procAfter = {
        va: parseProcNetDev(report.procAfter.own).va,
        vb: parseProcNetDev(report.procAfter.peer).vb,
      };
      // The reader reads what the kernel reports, value for value.
      assert.deepEqual(before, procBefore);
      assert.deepEqual(after, procAfter);

      // veth counts skb->len as it enters veth_xmit: the Ethernet header
      // (14 bytes), IPv4 (20) and UDP (8) headers and the payload; no
      // preamble, no FCS, no padding.
      const frame = BigInt(14 + 20 + 8 + size);
      const n = BigInt(count);
      const delta = (iface: "va" | "vb") =>
        Object.fromEntries(
          Object.entries(after[iface]).map((
            [name, value],
          ) => [name, value - before[iface][name]]),
        );
      assert.deepEqual(delta("va"), {
        tx_packets: n,
        tx_bytes: n * frame,
        rx_packets: 0n,
        rx_bytes: 0n,
      });
      assert.deepEqual(delta("vb"), {
        rx_packets: n,
        rx_bytes: n * frame,
        tx_packets: 0n,
        tx_bytes: 0n,
      });

      // Once the pair is deleted every open file fails with ENODEV.
      assert.equal(report.faults, 8);
      for (const gone of report.gone) {
        assert.equal(gone.status, CounterRead.FAILED, gone.name);
        assert.equal(gone.errno, 19, gone.name); // ENODEV
        assert.match(
          gone.line,
          /\/statistics\/[rt]x_(packets|bytes): read failed: ENODEV \(the device is gone\)$/,
        );
      }
    } finally {
      if (receiver) {
        try {
          receiver.kill("SIGKILL");
        } catch {
          // already gone
        }
        await lines?.cancel().catch(() => {});
        await receiver.status;
      }
      for (const ns of [nsA, nsB]) {
        new Deno.Command("ip", {
          args: ["netns", "del", ns],
          stderr: "null",
        }).outputSync();
      }
    }
  },
});
