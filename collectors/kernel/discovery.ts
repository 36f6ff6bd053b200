/**
 * What the kernel offers of a device: every counter of every source
 * (netdev statistics and ethtool statistics per interface, RDMA
 * hw_counters and InfiniBand port counters per port), each with its
 * current value and the data ID a configuration names it by, and what one
 * read of each source costs here. For `dpu-traceback counters`.
 *
 * @module
 */

import { formatU64 } from "../../base/u64.ts";
import { errorMessage } from "../../base/error_message.ts";
import { type KernelDevice, resolveKernelDevice } from "./device.ts";
import { EthtoolStats } from "./ethtool_stats.ts";
import {
  type CounterFile,
  CounterRead,
  ibPortCounterFiles,
  netdevCounterFiles,
  rdmaHwCounterFiles,
  rdmaHwCounterLifespanMs,
  SysfsCounterSet,
} from "./sysfs_counters.ts";
import { sysfsReadLink } from "../sysfs.ts";

/** One counter as discovery found it. */
export interface DiscoveredCounter {
  /** What a column's `data_id` says to read it, e.g. `netdev:rx_bytes`. */
  readonly dataId: string;
  /** Its value now (decimal), or why it could not be read. */
  readonly value: string;
  /** Whether {@linkcode value} is a reading (false: it says why not). */
  readonly read: boolean;
}

/** One source of one interface or port, and what it offers. */
export interface DiscoveredSource {
  /** `netdev`, `ethtool`, `rdma` or `ib`. */
  readonly kind: "netdev" | "ethtool" | "rdma" | "ib";
  /** The interface (`eth0`) or RDMA port (`mlx5_0 port 1`) it reads. */
  readonly owner: string;
  /** Every counter, in the order the kernel lists them. */
  readonly counters: readonly DiscoveredCounter[];
  /**
   * The median time, ns, of {@linkcode READS} reads of all its counters at
   * once (one ioctl, or one `pread` per file): what a sample of this source
   * costs when a monitor reads all of them. Undefined when it cannot be read.
   */
  readonly readNs?: number;
  /** Why the source cannot be read, when it cannot. */
  readonly problem?: string;
  /**
   * RDMA hw_counters only: how long the kernel serves the same values
   * (`hw_counters/lifespan`, ms), when it says.
   */
  readonly lifespanMs?: number;
}

/** What the kernel offers of a device. */
export interface KernelDiscovery {
  readonly device: KernelDevice;
  /** Per interface: its driver (`mlx5_core`, `veth`), when sysfs names one. */
  readonly drivers: ReadonlyMap<string, string>;
  readonly sources: readonly DiscoveredSource[];
}

/** How many reads a source's cost is the median of. */
export const READS = 9;

/** Options of {@linkcode discoverKernelCounters}. */
export interface KernelDiscoveryOptions {
  /** The tree holding `sys/` (default `/`); tests give a fixture tree. */
  readonly root?: string;
  /** Monotonic clock, ms (default `performance.now`). */
  readonly monotonic?: () => number;
}

/**
 * Lists every counter the kernel offers of `device` (as `-d` names it),
 * with values and read costs. A source that cannot be read is listed with
 * its problem rather than ending the listing; a device that does not
 * exist throws the same line `run` gives.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { discoverKernelCounters } from "./discovery.ts";
 *
 * const found = await discoverKernelCounters("lo");
 * const netdev = found.sources.find((s) => s.kind === "netdev");
 * assert.equal(netdev?.owner, "lo");
 * assert.ok(netdev?.counters.some((c) => c.dataId === "netdev:rx_bytes" && c.read));
 * assert.ok((netdev?.readNs ?? -1) >= 0);
 * ```
 */
export async function discoverKernelCounters(
  device: string,
  options: KernelDiscoveryOptions = {},
): Promise<KernelDiscovery> {
  const { root } = options;
  const clock = options.monotonic ?? (() => performance.now());
  const found = await resolveKernelDevice(device, { root });
  const sources: DiscoveredSource[] = [];
  const drivers = new Map<string, string>();
  for (const [i, iface] of found.interfaces.entries()) {
    const prefix = i === 0 ? "" : `${iface}/`;
    const driver = driverOf(iface, root);
    if (driver !== undefined) drivers.set(iface, driver);
    sources.push(
      sysfsSource(
        "netdev",
        iface,
        prefix,
        () => netdevCounterFiles(iface, { root }),
        clock,
      ),
    );
    // ethtool speaks to the running kernel: a fixture tree has none.
    if (root === undefined) sources.push(ethtoolSource(iface, prefix, clock));
  }
  const first = found.rdma.find((d) => d.ports.length > 0);
  for (const rdma of found.rdma) {
    for (const port of rdma.ports) {
      const isFirst = rdma === first && port === first.ports[0];
      const prefix = isFirst ? "" : `${rdma.name}/${port}/`;
      const owner = `${rdma.name} port ${port}`;
      sources.push({
        ...sysfsSource(
          "rdma",
          owner,
          prefix,
          () => rdmaHwCounterFiles(rdma.name, port, { root }),
          clock,
        ),
        ...lifespan(rdma.name, port, root),
      });
      sources.push(
        sysfsSource(
          "ib",
          owner,
          prefix,
          () => ibPortCounterFiles(rdma.name, port, { root }),
          clock,
        ),
      );
    }
  }
  return { device: found, drivers, sources };
}

function sysfsSource(
  kind: "netdev" | "rdma" | "ib",
  owner: string,
  prefix: string,
  list: () => CounterFile[],
  clock: () => number,
): DiscoveredSource {
  let set: SysfsCounterSet;
  try {
    set = SysfsCounterSet.open(list());
  } catch (error) {
    return unreadable(kind, owner, errorMessage(error));
  }
  try {
    const words = new Uint32Array(2 * set.count);
    const readNs = medianNs(() => set.readAll(words, 0), clock);
    set.readAll(words, 0);
    const counters = set.files.map((file, k) =>
      set.status[k] === CounterRead.OK
        ? counter(`${kind}:${prefix}${file.name}`, words, k)
        : {
          dataId: `${kind}:${prefix}${file.name}`,
          value: set.describeFault(k),
          read: false,
        }
    );
    return { kind, owner, counters, readNs };
  } finally {
    set.close();
  }
}

function ethtoolSource(
  iface: string,
  prefix: string,
  clock: () => number,
): DiscoveredSource {
  let stats: EthtoolStats;
  try {
    stats = EthtoolStats.open(iface);
  } catch (error) {
    return unreadable("ethtool", iface, errorMessage(error));
  }
  try {
    const all = Int32Array.from(stats.names, (_, k) => k);
    const words = new Uint32Array(2 * all.length);
    const readNs = medianNs(() => stats.read(words, 0, all), clock);
    if (!stats.read(words, 0, all)) {
      return unreadable(
        "ethtool",
        iface,
        "its set of statistics changed while it was read; try again",
      );
    }
    const counters = stats.names.map((name, k) =>
      counter(`ethtool:${prefix}${name}`, words, k)
    );
    return { kind: "ethtool", owner: iface, counters, readNs };
  } catch (error) {
    return unreadable("ethtool", iface, errorMessage(error));
  } finally {
    stats.close();
  }
}

function unreadable(
  kind: DiscoveredSource["kind"],
  owner: string,
  problem: string,
): DiscoveredSource {
  return { kind, owner, counters: [], problem };
}

function counter(
  dataId: string,
  words: Uint32Array,
  k: number,
): DiscoveredCounter {
  return {
    dataId,
    value: formatU64(words[2 * k], words[2 * k + 1]),
    read: true,
  };
}

/** The median of {@linkcode READS} timed calls, ns. */
function medianNs(read: () => unknown, clock: () => number): number {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const start = clock();
    read();
    times.push((clock() - start) * 1e6);
  }
  times.sort((a, b) => a - b);
  return times[READS >> 1];
}

function driverOf(iface: string, root: string | undefined): string | undefined {
  try {
    const link = sysfsReadLink(
      `${
        (root ?? "").replace(/\/+$/, "")
      }/sys/class/net/${iface}/device/driver`,
    );
    return link.slice(link.lastIndexOf("/") + 1);
  } catch {
    // Virtual interfaces (veth, lo) have no device; their driver is in
    // ethtool's answer, which discovery does not ask for.
    return undefined;
  }
}

function lifespan(
  device: string,
  port: number,
  root: string | undefined,
): { lifespanMs?: number } {
  try {
    return { lifespanMs: rdmaHwCounterLifespanMs(device, port, { root }) };
  } catch {
    return {}; // older kernels have no lifespan file
  }
}
