/**
 * Which GPUs sit behind a NIC: each GPU's PCIe path to the NIC's function,
 * in the classes `nvidia-smi topo -m` prints (docs/gpu-nic-affinity.md has
 * their definitions and sources), from the two functions' places in sysfs
 * (collectors/pcie_place.ts):
 *
 * - `PIX`: at most one PCIe bridge between them. A PCIe switch is one
 *   bridge, although sysfs shows it as two levels (its upstream port, then
 *   one downstream port per slot): a GPU and a NIC in two slots of one
 *   switch are PIX, the usual GPU server layout.
 * - `PXB`: several bridges (nested switches), not the host bridge.
 * - `PHB`: through the PCIe host bridge (the same root complex; different
 *   root ports, or a function on the root bus itself).
 * - `NODE`: between two host bridges of one NUMA node.
 * - `SYS`: across NUMA nodes (the SMP interconnect, QPI/UPI, xGMI).
 *
 * Switches are counted as NCCL counts them (src/graph/xml.cc, which builds
 * the topology `nvidia-smi` and NCCL agree on): from a function, go up two
 * path components at a time (past the downstream port to the switch's
 * upstream port) until the next step would reach the host bridge; a root
 * port is never a switch. A NUMA node the kernel does not know (-1) is
 * taken as shared on a machine with one NUMA node, and as not shared
 * otherwise (SYS, the worst case, as nvidia-smi says when it cannot tell).
 *
 * @module
 */

import { normalizePciBusId } from "../ffi/nvml.ts";
import {
  numaNodeCount,
  type PcieLookupOptions,
  type PciePlace,
  pciePlace,
} from "./pcie_place.ts";

/** A class of PCIe path between two devices, as `nvidia-smi topo -m` names it. */
export type PcieLink = "PIX" | "PXB" | "PHB" | "NODE" | "SYS";

/** Every class, nearest first. */
export const PCIE_LINKS: readonly PcieLink[] = [
  "PIX",
  "PXB",
  "PHB",
  "NODE",
  "SYS",
];

/** A GPU as NVML lists it (collectors/nvml/gpu_list.ts's `GpuInfo` is one). */
export interface ListedGpu {
  /** NVML's index. */
  readonly index: number;
  /** `GPU-...`. */
  readonly uuid: string;
  /** The PCI bus ID as NVML reports it: `00000000:3B:00.0` or `0000:3b:00.0`. */
  readonly pciBusId: string;
}

/** A GPU behind a NIC, and how near. Plain data: it crosses threads. */
export interface NicGpu {
  /** NVML's index (`gpuN`). */
  readonly index: number;
  /** `GPU-...`: stable across reboots and re-indexing. */
  readonly uuid: string;
  /** Its PCIe function as sysfs and lspci write it (`0000:3b:00.0`). */
  readonly busId: string;
  /** Its path to the NIC. */
  readonly link: PcieLink;
}

/**
 * The GPUs behind one NIC monitor's PCIe function, worked out once at
 * start. Plain data: the endpoint's and the alert sender's threads get it
 * as posted.
 */
export interface NicGpus {
  /** The NIC's PCIe function (`0000:03:00.0`). */
  readonly nic: string;
  /**
   * The closest GPUs: those of the nearest class any GPU has, nearest
   * first and by index, unless that class is SYS (then none: a GPU across
   * the SMP interconnect is no nearer than any other).
   */
  readonly gpus: readonly NicGpu[];
  /**
   * Why `gpus` is empty, one phrase (`NVML lists no GPU`, `no GPU shares
   * its NUMA node`); absent when it is not.
   */
  readonly none?: string;
}

/** What {@linkcode gpusBehindNic} found: the closest GPUs, and the rest. */
export interface GpuAffinity extends NicGpus {
  /** Every GPU sysfs places, nearest first and by index. */
  readonly all: readonly NicGpu[];
  /** The GPUs NVML lists and sysfs has no function for (bus IDs as sysfs would write them). */
  readonly unplaced: readonly Omit<NicGpu, "link">[];
}

/**
 * The class of the PCIe path between two placed functions, on a machine
 * with `numaNodes` NUMA nodes (for a node the kernel does not know).
 *
 * @example A GPU and a NIC in two slots of one switch, and a GPU under the
 * next root port
 * ```ts
 * import assert from "node:assert/strict";
 * import { pcieLink } from "./pcie_affinity.ts";
 *
 * const at = (busId: string, bridges: string[]) =>
 *   ({ busId, hostBridge: "pci0000:00", bridges, numaNode: 0 });
 * const nic = at("0000:05:00.0", ["0000:00:01.0", "0000:01:00.0", "0000:02:08.0"]);
 * const gpu0 = at("0000:03:00.0", ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"]);
 * const gpu1 = at("0000:07:00.0", ["0000:00:02.0"]);
 * assert.equal(pcieLink(nic, gpu0), "PIX");
 * assert.equal(pcieLink(nic, gpu1), "PHB");
 * ```
 */
export function pcieLink(
  a: PciePlace,
  b: PciePlace,
  numaNodes = 1,
): PcieLink {
  if (a.hostBridge !== b.hostBridge) {
    if (a.numaNode >= 0 && b.numaNode >= 0) {
      return a.numaNode === b.numaNode ? "NODE" : "SYS";
    }
    return numaNodes <= 1 ? "NODE" : "SYS";
  }
  const above = switchesAbove(a);
  const other = switchesAbove(b);
  let common = 0;
  while (
    common < above.length && common < other.length &&
    above[common] === other[common]
  ) common++;
  if (common === 0) return "PHB";
  // The switches the path crosses: the common one, and each below it on
  // either side.
  const crossed = (above.length - common) + (other.length - common) + 1;
  return crossed === 1 ? "PIX" : "PXB";
}

/**
 * The switches above a function, the topmost first, each named by its
 * upstream port: NCCL's walk (two path components up at a time, stopping
 * before the host bridge), so a root port is never one and a switch's
 * downstream port is passed over.
 */
function switchesAbove(place: PciePlace): string[] {
  const chain = [...place.bridges, place.busId];
  const switches: string[] = [];
  for (let i = chain.length - 1; i - 2 >= 0; i -= 2) {
    switches.push(chain[i - 2]);
  }
  return switches.reverse();
}

/**
 * The GPUs of `gpus` (as NVML lists them) behind the NIC function `nic`
 * (`0000:03:00.0`), read from sysfs under `root`: each classified, and the
 * closest picked out. Never throws: what cannot be placed is said.
 *
 * @example Two GPUs NVML lists that this machine's sysfs does not have
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpusBehindNic } from "./pcie_affinity.ts";
 *
 * const found = gpusBehindNic("ffff:ff:00.0", [
 *   { index: 0, uuid: "GPU-a", pciBusId: "00000000:3B:00.0" },
 * ]);
 * assert.deepEqual(found.gpus, []);
 * assert.equal(found.none, "the NIC's function ffff:ff:00.0 is not in sysfs here");
 * assert.deepEqual(found.unplaced, [{ index: 0, uuid: "GPU-a", busId: "0000:3b:00.0" }]);
 * ```
 */
export function gpusBehindNic(
  nic: string,
  gpus: readonly ListedGpu[],
  options: PcieLookupOptions = {},
): GpuAffinity {
  const here = pciePlace(nic, options);
  const numaNodes = numaNodeCount(options);
  const all: NicGpu[] = [];
  const unplaced: Omit<NicGpu, "link">[] = [];
  for (const gpu of gpus) {
    const busId = normalizePciBusId(gpu.pciBusId);
    const place = here === undefined ? undefined : pciePlace(busId, options);
    const named = { index: gpu.index, uuid: gpu.uuid, busId };
    if (here === undefined || place === undefined) unplaced.push(named);
    else all.push({ ...named, link: pcieLink(here, place, numaNodes) });
  }
  all.sort((x, y) =>
    PCIE_LINKS.indexOf(x.link) - PCIE_LINKS.indexOf(y.link) || x.index - y.index
  );
  const best = all[0]?.link;
  const closest = best === undefined || best === "SYS"
    ? []
    : all.filter((g) => g.link === best);
  const none = here === undefined
    ? `the NIC's function ${nic} is not in sysfs here`
    : gpus.length === 0
    ? "NVML lists no GPU"
    : all.length === 0
    ? `sysfs here has none of NVML's GPUs (${
      unplaced.map((g) => g.busId).join(", ")
    })`
    : closest.length === 0
    ? "no GPU shares its NUMA node"
    : undefined;
  return {
    nic,
    gpus: closest,
    ...(none === undefined ? {} : { none }),
    all,
    unplaced,
  };
}
