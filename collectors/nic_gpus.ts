/**
 * The GPUs behind each NIC monitor, as the agent works them out once at
 * start and check-config prints them: which monitors read a NIC on a PCIe
 * function (the kernel and DOCA sources; the simulator and replays read
 * none), where the GPU list comes from (the GPU monitor's NVML, or NVML
 * opened briefly, or none and why), and the line that says what was found.
 * The classes themselves are collectors/pcie_affinity.ts.
 *
 * @module
 */

import type { MonitorConfig } from "../config/types.ts";
import { resolveKernelDeviceSync } from "./kernel/device.ts";
import {
  gpusBehindNic,
  type ListedGpu,
  type NicGpus,
} from "./pcie_affinity.ts";
import type { PcieLookupOptions } from "./pcie_place.ts";

export type { ListedGpu, NicGpu, NicGpus, PcieLink } from "./pcie_affinity.ts";

/** The GPUs NVML lists, or why there are none to look among. */
export type GpuListing =
  | { readonly gpus: readonly ListedGpu[] }
  | { readonly none: string };

/**
 * The PCIe function (`0000:03:00.0`) the monitor reads its NIC on, found
 * in sysfs under `root` as the kernel source finds `-d`; undefined for a
 * source with no device (sim, replay, nvml), a device left to `-d` and not
 * given, or one that is on no PCIe function here (a veth; a DOCA device
 * named as this host's sysfs does not know it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nicFunction } from "./nic_gpus.ts";
 *
 * assert.equal(nicFunction({ source: "sim" }), undefined);
 * assert.equal(nicFunction({ source: "kernel", device: "lo" }), undefined);
 * ```
 */
export function nicFunction(
  monitor: Pick<MonitorConfig, "source" | "device">,
  options: PcieLookupOptions = {},
): string | undefined {
  if (monitor.source !== "kernel" && monitor.source !== "doca") {
    return undefined;
  }
  if (monitor.device === undefined) return undefined;
  try {
    return resolveKernelDeviceSync(monitor.device, options).pci;
  } catch {
    // Not here: the source itself says so when it opens.
    return undefined;
  }
}

/**
 * The GPUs behind NIC function `nic`, from `listing`: the closest, or why
 * none (no NVML, no GPU near, none of them in sysfs).
 *
 * @example Without NVML there is nothing to look among
 * ```ts
 * import assert from "node:assert/strict";
 * import { nicGpus } from "./nic_gpus.ts";
 *
 * assert.deepEqual(
 *   nicGpus("0000:03:00.0", { none: "no NVML (libnvidia-ml.so.1 not found in /usr/lib64)" }),
 *   { nic: "0000:03:00.0", gpus: [], none: "no NVML (libnvidia-ml.so.1 not found in /usr/lib64)" },
 * );
 * ```
 */
export function nicGpus(
  nic: string,
  listing: GpuListing,
  options: PcieLookupOptions = {},
): NicGpus {
  if ("none" in listing) return { nic, gpus: [], none: listing.none };
  const found = gpusBehindNic(nic, listing.gpus, options);
  return {
    nic,
    gpus: found.gpus,
    ...(found.none === undefined ? {} : { none: found.none }),
  };
}

/**
 * One line on the GPUs behind a NIC, as check-config prints it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeNicGpus } from "./nic_gpus.ts";
 *
 * assert.equal(
 *   describeNicGpus({ nic: "0000:03:00.0", gpus: [
 *     { index: 0, uuid: "GPU-a", busId: "0000:18:00.0", link: "PIX" },
 *     { index: 1, uuid: "GPU-b", busId: "0000:28:00.0", link: "PIX" },
 *   ] }),
 *   "GPUs behind 0000:03:00.0: GPU 0 (GPU-a, 0000:18:00.0) PIX, GPU 1 (GPU-b, 0000:28:00.0) PIX",
 * );
 * assert.equal(
 *   describeNicGpus({ nic: "0000:03:00.0", gpus: [], none: "no GPU shares its NUMA node" }),
 *   "no GPU behind 0000:03:00.0: no GPU shares its NUMA node",
 * );
 * ```
 */
export function describeNicGpus(found: NicGpus): string {
  if (found.gpus.length === 0) {
    return `no GPU behind ${found.nic}: ${found.none ?? "none found"}`;
  }
  return `GPUs behind ${found.nic}: ${
    found.gpus.map((g) => `GPU ${g.index} (${g.uuid}, ${g.busId}) ${g.link}`)
      .join(", ")
  }`;
}
