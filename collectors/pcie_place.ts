/**
 * Where a PCIe function sits, read from sysfs: the host bridge (root bus)
 * it hangs from, the bridges on the way down to it, and its NUMA node.
 * `/sys/bus/pci/devices/<BDF>` is a link into
 * `/sys/devices/pciDDDD:BB/<bridge>/.../<BDF>`: the `pciDDDD:BB`
 * component is the host bridge, each component after it up to the
 * function itself is a PCIe bridge (a root port, a switch's upstream or
 * downstream port). Only reads; what the place means for two devices is
 * collectors/pcie_affinity.ts.
 *
 * Read at start and by check-config, never on the sampling path.
 *
 * @module
 */

import { join } from "node:path";
import { readSysfsDir, readSysfsText, sysfsRealPath } from "./sysfs.ts";

/** Where sysfs is looked for; tests give a fixture tree instead of `/`. */
export interface PcieLookupOptions {
  /** The root of the tree holding `sys/` (default `/`). */
  readonly root?: string;
}

/** A PCIe function's place in the PCIe tree. */
export interface PciePlace {
  /** The function, as sysfs names it (`0000:3b:00.0`). */
  readonly busId: string;
  /** The host bridge it hangs from, as sysfs names it (`pci0000:00`). */
  readonly hostBridge: string;
  /**
   * The bridges from the host bridge down to the function, the root port
   * first; empty for a function on the root bus itself.
   */
  readonly bridges: readonly string[];
  /** Its NUMA node; -1 where the kernel does not know it. */
  readonly numaNode: number;
}

// `0000:3b:00.0`; Intel VMD domains have five hex digits (`10000:01:00.0`).
const BDF = /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$/;
// `pci0000:00`: a host bridge's root bus.
const ROOT_BUS = /^pci[0-9a-f]{4,8}:[0-9a-f]{2}$/;

/**
 * The place of PCIe function `busId` (sysfs's form, `0000:3b:00.0`), or
 * undefined where sysfs has no such function or its path does not lead
 * through a host bridge (a function sysfs shows elsewhere cannot be
 * placed).
 *
 * @example This machine's first PCIe function, if it has one
 * ```ts
 * import assert from "node:assert/strict";
 * import { pciePlace } from "./pcie_place.ts";
 *
 * assert.equal(pciePlace("ffff:ff:1f.7"), undefined);
 * let first: string | undefined;
 * try {
 *   first = [...Deno.readDirSync("/sys/bus/pci/devices")].map((e) => e.name).sort()[0];
 * } catch {
 *   // No PCI bus here.
 * }
 * const place = first === undefined ? undefined : pciePlace(first);
 * if (place !== undefined) assert.match(place.hostBridge, /^pci/);
 * ```
 */
export function pciePlace(
  busId: string,
  options: PcieLookupOptions = {},
): PciePlace | undefined {
  const sys = join(options.root ?? "/", "sys");
  const address = busId.toLowerCase();
  if (!BDF.test(address)) return undefined;
  let path: string;
  try {
    path = sysfsRealPath(join(sys, "bus/pci/devices", address));
  } catch {
    return undefined;
  }
  const parts = path.split("/");
  if (parts.at(-1) !== address) return undefined;
  // The first root bus: behind an Intel VMD the path holds a second one,
  // which is a bridge like any other on the way down.
  const host = parts.findIndex((p) => ROOT_BUS.test(p));
  if (host < 0) return undefined;
  const bridges = parts.slice(host + 1, -1);
  if (!bridges.every((p) => BDF.test(p) || ROOT_BUS.test(p))) return undefined;
  return {
    busId: address,
    hostBridge: parts[host],
    bridges,
    numaNode: readNumber(join(path, "numa_node")) ?? -1,
  };
}

/**
 * How many NUMA nodes this machine has (`/sys/devices/system/node/nodeN`);
 * 1 where the kernel shows none (a kernel without NUMA).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { numaNodeCount } from "./pcie_place.ts";
 *
 * assert.ok(numaNodeCount() >= 1);
 * ```
 */
export function numaNodeCount(options: PcieLookupOptions = {}): number {
  let count = 0;
  try {
    const dir = join(options.root ?? "/", "sys/devices/system/node");
    for (const entry of readSysfsDir(dir)) {
      if (/^node\d+$/.test(entry.name)) count++;
    }
  } catch {
    return 1;
  }
  return Math.max(1, count);
}

/** A small integer file (`numa_node`), or undefined if it cannot be read. */
function readNumber(path: string): number | undefined {
  try {
    const value = Number.parseInt(readSysfsText(path).trim(), 10);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
