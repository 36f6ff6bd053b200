/**
 * The child that ethtool_stats_test.ts runs inside a network namespace
 * (`ip netns exec NS deno run -A --unstable-net ethtool_test_child.ts
 * MODE ...`), where the veth end it reads lives. Prints JSON lines.
 *
 * - `receive IF ADDR PORT N`: turns GRO on for IF (so that veth receives
 *   through NAPI and counts in its per-queue statistics), reads IF's
 *   ethtool statistics and sysfs statistics, prints `{"ready":true}`,
 *   takes N datagrams on ADDR:PORT, reads both again and prints them.
 * - `send IF FROM TO PORT N SIZE`: turns TSO off for IF (veth hands a
 *   peer's packets to NAPI only then), prints IF's ifindex and sends N
 *   datagrams of SIZE bytes from FROM to TO:PORT.
 * - `resize IF`: opens IF's statistics, changes its receive channels
 *   (veth has 7 counters per receive queue) down by one and back, and
 *   prints what a read and a check said after each change.
 * - `alloc IF`: how much the heap grows over many reads (needs
 *   `--v8-flags=--expose-gc`), with a control that allocates.
 *
 * @module
 */

import { EthtoolStats } from "./ethtool_stats.ts";
import {
  ETHTOOL_SGRO,
  ETHTOOL_STSO,
  setFeature,
  setRxChannels,
} from "./ethtool_test_util.ts";

/** All of `stats`'s counters, as decimal strings. */
function readAll(stats: EthtoolStats): Record<string, string> {
  const indexes = stats.indexesOf(stats.names);
  const out = new Uint32Array(2 * indexes.length);
  if (!stats.read(out, 0, indexes)) throw new Error("the set changed");
  return Object.fromEntries(
    stats.names.map((
      name,
      j,
    ) => [
      name,
      ((BigInt(out[2 * j + 1]) << 32n) | BigInt(out[2 * j])).toString(),
    ]),
  );
}

/** The kernel's netdev statistics of `ifname` in this namespace. */
function sysfs(ifname: string): Record<string, string> {
  const dir = `/sys/class/net/${ifname}/statistics`;
  const out: Record<string, string> = {};
  for (const entry of Deno.readDirSync(dir)) {
    out[entry.name] = Deno.readTextFileSync(`${dir}/${entry.name}`).trim();
  }
  return out;
}

const [mode, ...args] = Deno.args;
const print = (value: unknown) => console.log(JSON.stringify(value));

if (mode === "receive") {
  const [ifname, address, port, n] = args;
  setFeature(ifname, ETHTOOL_SGRO, true);
  const stats = EthtoolStats.open(ifname);
  const socket = Deno.listenDatagram({
    transport: "udp",
    hostname: address,
    port: Number(port),
  });
  const before = { ethtool: readAll(stats), sysfs: sysfs(ifname) };
  print({ ready: true });
  // A lost datagram fails the test rather than hanging it.
  const timer = setTimeout(() => {
    console.error(`timed out waiting for ${n} datagrams`);
    Deno.exit(3);
  }, 60_000);
  for (let i = 0; i < Number(n); i++) await socket.receive();
  socket.close();
  clearTimeout(timer);
  const after = { ethtool: readAll(stats), sysfs: sysfs(ifname) };
  print({
    names: stats.names,
    unchanged: stats.unchanged(),
    before,
    after,
  });
  stats.close();
} else if (mode === "send") {
  const [ifname, from, to, port, n, size] = args;
  setFeature(ifname, ETHTOOL_STSO, false);
  const ifindex = Number(
    Deno.readTextFileSync(`/sys/class/net/${ifname}/ifindex`),
  );
  const socket = Deno.listenDatagram({
    transport: "udp",
    hostname: from,
    port: 0,
  });
  const payload = new Uint8Array(Number(size));
  for (let i = 0; i < Number(n); i++) {
    await socket.send(payload, {
      transport: "udp",
      hostname: to,
      port: Number(port),
    });
  }
  socket.close();
  print({ ifindex });
} else if (mode === "resize") {
  const [ifname] = args;
  const steps = [];
  let stats = EthtoolStats.open(ifname);
  for (const rx of [3, 4]) {
    const indexes = stats.indexesOf(["peer_ifindex"]);
    const out = new Uint32Array(2);
    const before = stats.read(out, 0, indexes);
    setRxChannels(ifname, rx);
    const read = stats.read(out, 0, indexes);
    const unchanged = stats.unchanged();
    const count = stats.count;
    stats.close();
    stats = EthtoolStats.open(ifname);
    steps.push({
      rx,
      count,
      before,
      read,
      unchanged,
      reopened: stats.count,
      lastQueue: stats.names.filter((name) => name.endsWith("_xdp_packets"))
        .at(-1),
    });
  }
  stats.close();
  print(steps);
} else if (mode === "alloc") {
  const [ifname] = args;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("needs --v8-flags=--expose-gc");
  const stats = EthtoolStats.open(ifname);
  const indexes = stats.indexesOf(stats.names);
  const out = new Uint32Array(2 * indexes.length);
  let ok = 0;
  const reads = (times: number) => {
    for (let i = 0; i < times; i++) if (stats.read(out, 0, indexes)) ok++;
  };
  const checks = (times: number) => {
    for (let i = 0; i < times; i++) if (stats.unchanged()) ok++;
  };
  // The control: the same reads, each into a record of its own.
  const fresh = (times: number) => {
    for (let i = 0; i < times; i++) {
      if (stats.read(new Uint32Array(out.length), 0, indexes)) ok++;
    }
  };
  const growth = (body: (times: number) => void, times: number) => {
    body(times); // warm up: compiled, inline caches settled
    gc();
    const before = Deno.memoryUsage().heapUsed;
    body(times);
    return Deno.memoryUsage().heapUsed - before;
  };
  print({
    count: stats.count,
    reads: growth(reads, 20_000),
    checks: growth(checks, 20_000),
    fresh: growth(fresh, 2_000),
    ok,
  });
  stats.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
