/**
 * What `-d` names, found in sysfs the way the reference names a device: a
 * PCIe function (`03:00.0`, `0000:03:00.0`), an interface (`eth0`, a
 * BlueField's `p0` or `pf0hpf`) or an RDMA device (`mlx5_0`), and what the
 * kernel source reads of it: its interfaces (netdev and ethtool
 * statistics) and its RDMA devices' ports (hw_counters, port counters).
 *
 * Resolved at start, and again when the device went away and the source
 * looks for it anew ({@linkcode resolveKernelDeviceSync}, which the
 * source's timer calls: a few small sysfs reads); it allocates.
 * The facts it relies on are in docs/spec/kernel-counters.md §4.
 *
 * @module
 */

import { basename, join } from "node:path";
import { nearest } from "../../config/suggest.ts";
import { isSysfsDirectory, readSysfsDir, sysfsRealPath } from "../sysfs.ts";

/** A device as the kernel source reads it. */
export interface KernelDevice {
  /** The name `-d` (or `device:`) gave, as given. */
  readonly name: string;
  /**
   * The PCIe function the device sits on (`0000:03:00.0`), or undefined
   * for a device on no PCIe function (a veth, a bridge, `lo`).
   */
  readonly pci: string | undefined;
  /** Its interfaces, sorted: one for an interface, all of a function's. */
  readonly interfaces: readonly string[];
  /** Its RDMA devices, sorted, each with its port numbers in order. */
  readonly rdma: readonly RdmaDevice[];
}

/** An RDMA device and its ports. */
export interface RdmaDevice {
  /** `mlx5_0`. */
  readonly name: string;
  /** Its port numbers (1 for a single-port function). */
  readonly ports: readonly number[];
}

/** Where sysfs is looked for; tests give a fixture tree instead of `/`. */
export interface DeviceLookupOptions {
  /** The root of the tree holding `sys/` (default `/`). */
  readonly root?: string;
}

// `0000:03:00.0` or `03:00.0`: domain, bus, device, function.
const PCI_ADDRESS =
  /^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-1][0-9a-f])\.([0-7])$/i;

/**
 * The PCIe address `03:00.0` or `0000:03:00.0` in the kernel's form
 * (`0000:03:00.0`, lower case); undefined when `name` is not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pciAddress } from "./device.ts";
 *
 * assert.equal(pciAddress("03:00.0"), "0000:03:00.0");
 * assert.equal(pciAddress("0000:AF:00.1"), "0000:af:00.1");
 * assert.equal(pciAddress("eth0"), undefined);
 * ```
 */
export function pciAddress(name: string): string | undefined {
  const m = PCI_ADDRESS.exec(name);
  if (!m) return undefined;
  return `${m[1] ?? "0000"}:${m[2]}:${m[3]}.${m[4]}`.toLowerCase();
}

/**
 * Finds what `name` names in sysfs: a PCIe function first (if `name` reads
 * as an address), then an interface, then an RDMA device. Rejects with a
 * `Deno.errors.NotFound` of one line naming what this machine has nearest
 * to it when it is none of those.
 *
 * @example An interface every Linux machine has
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveKernelDevice } from "./device.ts";
 *
 * const lo = await resolveKernelDevice("lo");
 * assert.deepEqual([lo.pci, lo.interfaces, lo.rdma], [undefined, ["lo"], []]);
 * ```
 */
export function resolveKernelDevice(
  name: string,
  options: DeviceLookupOptions = {},
): Promise<KernelDevice> {
  try {
    return Promise.resolve(resolveKernelDeviceSync(name, options));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * As {@linkcode resolveKernelDevice}, without a promise: for the kernel
 * source, which looks for a device that went away again from its timer,
 * where nothing may wait. Throws what that rejects with.
 */
export function resolveKernelDeviceSync(
  name: string,
  options: DeviceLookupOptions = {},
): KernelDevice {
  const sys = join(options.root ?? "/", "sys");
  const pci = pciAddress(name);
  if (pci !== undefined) {
    const dir = join(sys, "bus/pci/devices", pci);
    if (isSysfsDirectory(dir)) {
      return {
        name,
        pci,
        interfaces: interfacesUnder(dir),
        rdma: rdmaDevices(sys, entries(join(dir, "infiniband"))),
      };
    }
    throw notFound(
      name,
      "no PCIe function",
      entries(join(sys, "bus/pci/devices")),
      pci, // 03:00.2 is near 0000:03:00.0, as sysfs writes it
    );
  }
  const netdev = join(sys, "class/net", name);
  if (isSysfsDirectory(netdev)) {
    const function_ = pciFunctionOf(join(netdev, "device"));
    const rdma = function_ === undefined ? [] : rdmaDevices(
      sys,
      entries(join(sys, "bus/pci/devices", function_, "infiniband")),
    );
    return { name, pci: function_, interfaces: [name], rdma };
  }
  const ib = join(sys, "class/infiniband", name);
  if (isSysfsDirectory(ib)) {
    return {
      name,
      pci: pciFunctionOf(join(ib, "device")),
      interfaces: entries(join(ib, "device/net")),
      rdma: rdmaDevices(sys, [name]),
    };
  }
  throw notFound(name, "no interface, RDMA device or PCIe function", [
    ...entries(join(sys, "class/net")),
    ...entries(join(sys, "class/infiniband")),
  ]);
}

/**
 * The interfaces of a PCIe function: in its `net/` directory, or one level
 * down (a virtio function keeps them under `virtioN/net/`).
 */
function interfacesUnder(dir: string): string[] {
  const found = entries(join(dir, "net"));
  for (const child of entries(dir)) {
    if (!/^virtio\d+$/.test(child)) continue;
    found.push(...entries(join(dir, child, "net")));
  }
  return found.sort();
}

/** Each RDMA device with its ports (numbers, in order). */
function rdmaDevices(
  sys: string,
  names: readonly string[],
): RdmaDevice[] {
  const devices: RdmaDevice[] = [];
  for (const name of [...names].sort()) {
    const ports = (entries(join(sys, "class/infiniband", name, "ports")))
      .filter((p) => /^\d+$/.test(p)).map(Number).sort((a, b) => a - b);
    devices.push({ name, ports });
  }
  return devices;
}

/**
 * The PCIe function at or above the device a `device` link points to: the
 * nearest directory in its resolved path named like a PCIe address.
 */
function pciFunctionOf(link: string): string | undefined {
  let path: string;
  try {
    path = sysfsRealPath(link);
  } catch {
    return undefined; // a virtual interface has no device link
  }
  for (let dir = path; dir !== "/" && dir !== "."; dir = join(dir, "..")) {
    const address = pciAddress(basename(dir));
    if (address !== undefined && basename(dir) === address) return address;
  }
  return undefined;
}

/** The names in a directory, sorted; none if it is missing or unreadable. */
function entries(dir: string): string[] {
  const names: string[] = [];
  try {
    for (const entry of readSysfsDir(dir)) names.push(entry.name);
  } catch {
    return [];
  }
  return names.sort();
}

function notFound(
  name: string,
  what: string,
  here: readonly string[],
  asWritten = name,
): Deno.errors.NotFound {
  const near = nearest(asWritten, here, 3);
  const list = near.length > 0
    ? `; did you mean ${near.join(", ")}?`
    : here.length > 0 && here.length <= 8
    ? `; this machine has ${here.join(", ")}`
    : "";
  return new Deno.errors.NotFound(
    `Cannot find device "${name}": ${what} of that name${list}`,
  );
}
