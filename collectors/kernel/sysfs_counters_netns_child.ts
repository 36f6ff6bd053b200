/**
 * The processes of sysfs_counters_netns_test.ts, each run inside a network
 * namespace by `ip netns exec`.
 *
 * `receive ADDRESS PORT COUNT`: binds a UDP socket, prints `ready`, and
 * exits once COUNT datagrams have come, printing `{"received", "bytes"}`.
 *
 * `send PEER_NS FROM TO PORT COUNT SIZE`: mounts PEER_NS's sysfs in its own
 * mount namespace (which `ip netns exec` gave it), opens a
 * {@linkcode SysfsCounterSet} on `va`'s statistics (its own namespace) and
 * `vb`'s (the peer's), reads them and both namespaces' `/proc/net/dev`,
 * sends COUNT datagrams of SIZE bytes from FROM to TO:PORT, reads both
 * again, then deletes the veth pair and reads once more. Prints one JSON
 * object.
 *
 * @module
 */

import dgram from "node:dgram";
import { netdevCounterFiles, SysfsCounterSet } from "./sysfs_counters.ts";
import { runSync } from "../../tests/netns.ts";

const COUNTERS = ["rx_packets", "rx_bytes", "tx_packets", "tx_bytes"];

async function receive(address: string, port: number, count: number) {
  const socket = dgram.createSocket("udp4");
  let received = 0;
  let bytes = 0;
  const done = Promise.withResolvers<void>();
  socket.on("message", (message: Uint8Array) => {
    received++;
    bytes += message.length;
    if (received === count) done.resolve();
  });
  await new Promise<void>((resolve) => socket.bind(port, address, resolve));
  console.log("ready");
  await done.promise;
  socket.close();
  console.log(JSON.stringify({ received, bytes }));
}

/** The u64 at `out[at]`, `out[at + 1]` as decimal text. */
function u64Text(out: Uint32Array, at: number): string {
  return ((BigInt(out[at + 1]) << 32n) | BigInt(out[at])).toString();
}

async function send(
  peerNs: string,
  from: string,
  to: string,
  port: number,
  count: number,
  size: number,
) {
  // A sysfs mounted by a process in the peer's namespace shows the peer's
  // interfaces: mount one under a root of our own.
  const root = Deno.makeTempDirSync({ prefix: "sysfs-peer-" });
  Deno.mkdirSync(`${root}/sys`);
  runSync("nsenter", [
    `--net=/run/netns/${peerNs}`,
    "mount",
    "-t",
    "sysfs",
    "sysfs",
    `${root}/sys`,
  ]);
  try {
    const pick = (iface: string, options = {}) =>
      netdevCounterFiles(iface, options)
        .filter((file) => COUNTERS.includes(file.name))
        .map((file) => ({ ...file, name: `${iface}.${file.name}` }));
    const files = [...pick("va"), ...pick("vb", { root })];
    using set = SysfsCounterSet.open(files);
    const out = new Uint32Array(2 * set.count);
    const snapshot = () => {
      const faults = set.readAll(out, 0);
      if (faults !== 0) {
        throw new Error(
          files.map((_, k) => set.describeFault(k)).filter(Boolean).join("; "),
        );
      }
      return Object.fromEntries(
        files.map((file, k) => [file.name, u64Text(out, 2 * k)]),
      );
    };
    const procNetDev = () => ({
      own: Deno.readTextFileSync("/proc/net/dev"),
      peer: runSync("nsenter", [
        `--net=/run/netns/${peerNs}`,
        "cat",
        "/proc/net/dev",
      ]),
    });

    const before = snapshot();
    const procBefore = procNetDev();
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, from, resolve));
    const payload = new Uint8Array(size).fill(0x5a);
    for (let i = 0; i < count; i++) {
      await new Promise<void>((resolve, reject) =>
        socket.send(
          payload,
          port,
          to,
          (error) => error ? reject(error) : resolve(),
        )
      );
    }
    socket.close();
    const after = snapshot();
    const procAfter = procNetDev();

    // Deleting one end deletes the pair: every open attribute file of
    // both interfaces now fails.
    runSync("ip", ["link", "del", "va"]);
    const faults = set.readAll(out, 0);
    const gone = files.map((file, k) => ({
      name: file.name,
      status: set.status[k],
      errno: set.errno[k],
      line: set.describeFault(k),
    }));
    console.log(JSON.stringify({
      files: files.map((file) => file.path),
      before,
      after,
      procBefore,
      procAfter,
      faults,
      gone,
    }));
  } finally {
    runSync("umount", [`${root}/sys`]);
    Deno.removeSync(root, { recursive: true });
  }
}

const [mode, ...args] = Deno.args;
if (mode === "receive") {
  await receive(args[0], Number(args[1]), Number(args[2]));
} else if (mode === "send") {
  await send(
    args[0],
    args[1],
    args[2],
    Number(args[3]),
    Number(args[4]),
    Number(args[5]),
  );
} else {
  throw new Error(`unknown mode ${mode}`);
}
