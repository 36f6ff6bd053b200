import assert from "node:assert/strict";
import { basename, dirname } from "node:path";
import { GPU_SERVER, pcieTree } from "../tests/fixtures/pcie_tree.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { gpusBehindNic, type ListedGpu, pcieLink } from "./pcie_affinity.ts";
import { numaNodeCount, pciePlace } from "./pcie_place.ts";
import { resolveKernelDevice } from "./kernel/device.ts";

/** The NVML simulator's GPUs 0..count-1, bus IDs as NVML writes them. */
function simGpus(count: number): ListedGpu[] {
  return Array.from({ length: count }, (_, g) => ({
    index: g,
    uuid: `GPU-${g}`,
    pciBusId: `00000000:${(0x18 + 0x10 * g).toString(16).toUpperCase()}:00.0`,
  }));
}

const NIC = "0000:1a:00.0";

Deno.test("each class nvidia-smi prints, from a GPU server's sysfs: the NIC's switch is PIX, a nested switch PXB, the next root port PHB, another host bridge NODE, another NUMA node SYS", async () => {
  await using dir = await tempDir();
  await pcieTree(dir.path, GPU_SERVER);
  const found = gpusBehindNic(NIC, simGpus(8), { root: dir.path });
  assert.deepEqual(
    found.all.map((g) => [g.index, g.busId, g.link]),
    [
      [0, "0000:18:00.0", "PIX"],
      [1, "0000:28:00.0", "PIX"],
      [2, "0000:38:00.0", "PXB"],
      [3, "0000:48:00.0", "PHB"],
      [4, "0000:58:00.0", "NODE"],
      [5, "0000:68:00.0", "SYS"],
      // Its NUMA node unknown on a two-node machine: the worst case.
      [6, "0000:78:00.0", "SYS"],
    ],
  );
  // The closest: both GPUs of the NIC's switch, UUIDs with them.
  assert.deepEqual(found.gpus, [
    { index: 0, uuid: "GPU-0", busId: "0000:18:00.0", link: "PIX" },
    { index: 1, uuid: "GPU-1", busId: "0000:28:00.0", link: "PIX" },
  ]);
  assert.equal(found.none, undefined);
  assert.equal("none" in found, false);
  // NVML lists GPU 7; sysfs has no function for it.
  assert.deepEqual(found.unplaced, [
    { index: 7, uuid: "GPU-7", busId: "0000:88:00.0" },
  ]);
  // The NIC's second port, same slot: the same GPUs.
  assert.deepEqual(
    gpusBehindNic("0000:1a:00.1", simGpus(2), { root: dir.path }).gpus
      .map((g) => g.link),
    ["PIX", "PIX"],
  );
});

Deno.test("the closest are the nearest class there is, best first and by index; across NUMA nodes none is close", async () => {
  await using dir = await tempDir();
  await pcieTree(dir.path, GPU_SERVER);
  const root = dir.path;
  // Without the switch's GPUs, the nested switch's is the closest.
  const pxb = gpusBehindNic(NIC, simGpus(8).slice(2), { root });
  assert.deepEqual(pxb.gpus.map((g) => [g.index, g.link]), [[2, "PXB"]]);
  // Listed out of order, ties come back by index.
  const shuffled = gpusBehindNic(NIC, simGpus(2).reverse(), { root });
  assert.deepEqual(shuffled.gpus.map((g) => g.index), [0, 1]);
  const node = gpusBehindNic(NIC, simGpus(5).slice(4), { root });
  assert.deepEqual(node.gpus.map((g) => [g.index, g.link]), [[4, "NODE"]]);
  // Only GPUs on the other socket: classified, none close.
  const sys = gpusBehindNic(NIC, simGpus(6).slice(5), { root });
  assert.deepEqual(sys.all.map((g) => g.link), ["SYS"]);
  assert.deepEqual(sys.gpus, []);
  assert.equal(sys.none, "no GPU shares its NUMA node");
  assert.equal(gpusBehindNic(NIC, [], { root }).none, "NVML lists no GPU");
  const missing = gpusBehindNic(NIC, simGpus(8).slice(7), { root });
  assert.equal(
    missing.none,
    "sysfs here has none of NVML's GPUs (0000:88:00.0)",
  );
});

Deno.test("a NUMA node the kernel does not know is shared on a one-node machine, not on a two-node one", async () => {
  await using dir = await tempDir();
  const tree = {
    devices: [
      "pci0000:00/0000:00:01.0/0000:1a:00.0",
      "pci0000:80/0000:80:01.0/0000:18:00.0",
    ],
    numa: { "pci0000:00": -1, "pci0000:80": -1 },
  };
  await pcieTree(dir.path, tree);
  const root = dir.path;
  // No node directory at all: a kernel without NUMA, one node.
  assert.equal(numaNodeCount({ root }), 1);
  assert.deepEqual(
    gpusBehindNic(NIC, simGpus(1), { root }).gpus.map((g) => g.link),
    ["NODE"],
  );
  await Deno.mkdir(`${root}/sys/devices/system/node/node0`, {
    recursive: true,
  });
  await Deno.mkdir(`${root}/sys/devices/system/node/node1`);
  assert.equal(numaNodeCount({ root }), 2);
  const two = gpusBehindNic(NIC, simGpus(1), { root });
  assert.deepEqual(two.all.map((g) => g.link), ["SYS"]);
  assert.equal(two.none, "no GPU shares its NUMA node");
});

Deno.test("a PCIe switch is one bridge: its downstream ports are passed over, and a root port is never a switch", () => {
  const at = (busId: string, path: string, hostBridge = "pci0000:00") => ({
    busId,
    hostBridge,
    bridges: path === "" ? [] : path.split("/"),
    numaNode: 0,
  });
  // The NIC directly under a root port, the GPU in a switch under another.
  const nic = at("0000:1a:00.0", "0000:00:01.0");
  const gpu = at("0000:18:00.0", "0000:00:02.0/0000:10:00.0/0000:11:00.0");
  assert.equal(pcieLink(nic, gpu), "PHB");
  // Both on the root bus (integrated functions, a VM's virtio).
  assert.equal(pcieLink(at("0000:00:03.0", ""), at("0000:00:02.0", "")), "PHB");
  // Three switches deep on one side, one on the other: PXB.
  const deep = at(
    "0000:48:00.0",
    "0000:00:01.0/0000:10:00.0/0000:11:00.0/0000:20:00.0/0000:21:00.0/0000:40:00.0/0000:41:00.0",
  );
  const top = at("0000:1a:00.0", "0000:00:01.0/0000:10:00.0/0000:11:08.0");
  assert.equal(pcieLink(deep, top), "PXB");
  assert.equal(pcieLink(top, deep), "PXB");
  // Two GPUs in two nested switches of one top switch: PXB.
  const left = at(
    "0000:28:00.0",
    "0000:00:01.0/0000:10:00.0/0000:11:00.0/0000:20:00.0/0000:21:00.0",
  );
  const right = at(
    "0000:38:00.0",
    "0000:00:01.0/0000:10:00.0/0000:11:04.0/0000:30:00.0/0000:31:00.0",
  );
  assert.equal(pcieLink(left, right), "PXB");
  // Two GPUs in one nested switch: PIX, however deep.
  const sibling = at(
    "0000:29:00.0",
    "0000:00:01.0/0000:10:00.0/0000:11:00.0/0000:20:00.0/0000:21:04.0",
  );
  assert.equal(pcieLink(left, sibling), "PIX");
  // Known NUMA nodes decide between host bridges; the count does not.
  const far = { ...at("0000:58:00.0", "0000:80:01.0", "pci0000:80") };
  assert.equal(pcieLink(nic, far, 2), "NODE");
  assert.equal(pcieLink(nic, { ...far, numaNode: 1 }, 1), "SYS");
});

Deno.test("sysfs places a function by its link: the host bridge, the bridges down to it, its NUMA node; NVML's bus ID form is sysfs's once normalized", async () => {
  await using dir = await tempDir();
  await pcieTree(dir.path, GPU_SERVER);
  const root = dir.path;
  assert.deepEqual(pciePlace("0000:38:00.0", { root }), {
    busId: "0000:38:00.0",
    hostBridge: "pci0000:00",
    bridges: [
      "0000:00:01.0",
      "0000:10:00.0",
      "0000:11:10.0",
      "0000:30:00.0",
      "0000:31:00.0",
    ],
    numaNode: 0,
  });
  assert.equal(pciePlace("0000:78:00.0", { root })?.numaNode, -1);
  assert.equal(pciePlace("0000:88:00.0", { root }), undefined);
  // Not an address: never a path into sysfs.
  assert.equal(pciePlace("../../etc", { root }), undefined);
  const upper = gpusBehindNic(NIC, [{
    index: 0,
    uuid: "GPU-0",
    pciBusId: "00000000:18:00.0",
  }], { root });
  assert.equal(upper.gpus[0]?.busId, "0000:18:00.0");
});

/** The PCIe functions of this machine's /sys, each with its real path. */
function realFunctions(): { busId: string; path: string }[] {
  const found: { busId: string; path: string }[] = [];
  try {
    for (const entry of Deno.readDirSync("/sys/bus/pci/devices")) {
      found.push({
        busId: entry.name,
        path: Deno.realPathSync(`/sys/bus/pci/devices/${entry.name}`),
      });
    }
  } catch {
    return [];
  }
  return found.sort((a, b) => a.busId.localeCompare(b.busId));
}

const REAL = realFunctions();

Deno.test({
  name:
    "this machine's /sys: its network interface's function and another on the same root bus are PHB; one under another host bridge NODE or SYS by their numa_node files",
  // A container without sysfs, or a machine with no PCI bus (some Arm
  // boards, a VM with only MMIO virtio devices), has no function to place.
  ignore: REAL.length < 2,
  async fn() {
    // The NIC: the first interface on a PCIe function, as -d names one.
    let nic: string | undefined;
    for (const entry of Deno.readDirSync("/sys/class/net")) {
      const pci = (await resolveKernelDevice(entry.name)).pci;
      if (pci !== undefined) {
        nic = pci;
        break;
      }
    }
    nic ??= REAL[0].busId;
    const nicPath = REAL.find((f) => f.busId === nic)!.path;
    let checked = 0;
    for (const other of REAL) {
      if (other.busId === nic) continue;
      // What the real paths say, worked out here from the paths alone.
      const rootOf = (path: string) =>
        path.split("/").find((p) => /^pci[0-9a-f]+:[0-9a-f]{2}$/.test(p));
      const onRootBus = (path: string) =>
        basename(dirname(path)) === rootOf(path);
      let expected: string | undefined;
      if (rootOf(other.path) !== rootOf(nicPath)) {
        const numa = (path: string) =>
          Number(Deno.readTextFileSync(`${path}/numa_node`));
        const [a, b] = [numa(nicPath), numa(other.path)];
        expected = a >= 0 && b >= 0
          ? (a === b ? "NODE" : "SYS")
          : numaNodeCount() <= 1
          ? "NODE"
          : "SYS";
      } else if (onRootBus(nicPath) || onRootBus(other.path)) {
        expected = "PHB";
      } else {
        continue; // below bridges: the fixture trees cover those
      }
      const found = gpusBehindNic(nic, [{
        index: checked,
        uuid: `real-${other.busId}`,
        pciBusId: other.busId,
      }]);
      assert.deepEqual(
        found.all.map((g) => [g.busId, g.link]),
        [[other.busId, expected]],
        `${nicPath} and ${other.path}`,
      );
      checked++;
    }
    assert.ok(checked > 0, `no function to compare with ${nicPath}`);
  },
});
