import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../../tests/temp_dir.ts";
import { pciAddress, resolveKernelDevice } from "./device.ts";

/**
 * A sysfs tree as a ConnectX port shows it, with the kernel's links: the
 * function 0000:03:00.0 with interface ens1f0np0 and RDMA device mlx5_0
 * (ports 1), a second function 0000:03:00.1 (ens1f1np1, mlx5_1), and a
 * veth with no device at all.
 */
async function connectxTree(root: string): Promise<void> {
  const sys = join(root, "sys");
  const link = (target: string, path: string) =>
    Deno.symlink(target, join(sys, path));
  const mkdir = (path: string) =>
    Deno.mkdir(join(sys, path), { recursive: true });
  for (
    const [f, netdev, ib] of [[0, "ens1f0np0", "mlx5_0"], [
      1,
      "ens1f1np1",
      "mlx5_1",
    ]]
  ) {
    const fn = `devices/pci0000:00/0000:00:02.0/0000:03:00.${f}`;
    await mkdir(`${fn}/net/${netdev}/statistics`);
    await link("../../../0000:03:00." + f, `${fn}/net/${netdev}/device`);
    await mkdir(`${fn}/infiniband/${ib}/ports/1/hw_counters`);
    await link("../../../0000:03:00." + f, `${fn}/infiniband/${ib}/device`);
    await mkdir("bus/pci/devices");
    await link(`../../../${fn}`, `bus/pci/devices/0000:03:00.${f}`);
    await mkdir("class/net");
    await link(`../../${fn}/net/${netdev}`, `class/net/${netdev}`);
    await mkdir("class/infiniband");
    await link(`../../${fn}/infiniband/${ib}`, `class/infiniband/${ib}`);
  }
  await mkdir("devices/virtual/net/veth0/statistics");
  await link("../../devices/virtual/net/veth0", "class/net/veth0");
}

Deno.test("-d as the reference takes it: a PCIe address, an interface or an RDMA device, the same port each way", async () => {
  await using dir = await tempDir();
  await connectxTree(dir.path);
  const root = dir.path;
  const port = {
    pci: "0000:03:00.0",
    interfaces: ["ens1f0np0"],
    rdma: [{ name: "mlx5_0", ports: [1] }],
  };
  for (const name of ["03:00.0", "0000:03:00.0", "ens1f0np0", "mlx5_0"]) {
    const device = await resolveKernelDevice(name, { root });
    assert.deepEqual(
      {
        pci: device.pci,
        interfaces: device.interfaces,
        rdma: device.rdma,
      },
      port,
      name,
    );
    assert.equal(device.name, name);
  }
  const second = await resolveKernelDevice("mlx5_1", { root });
  assert.deepEqual(
    [second.pci, second.interfaces],
    ["0000:03:00.1", ["ens1f1np1"]],
  );
  // A veth: an interface on no PCIe function and with no RDMA device.
  const veth = await resolveKernelDevice("veth0", { root });
  assert.deepEqual([veth.pci, veth.interfaces, veth.rdma], [
    undefined,
    ["veth0"],
    [],
  ]);
});

Deno.test("a device that is not there is one line naming the nearest this machine has", async () => {
  await using dir = await tempDir();
  await connectxTree(dir.path);
  const root = dir.path;
  await assert.rejects(
    () => resolveKernelDevice("ens1f0np", { root }),
    (e: Error) =>
      e instanceof Deno.errors.NotFound &&
      e.message ===
        'Cannot find device "ens1f0np": no interface, RDMA device or PCIe function of that name; did you mean ens1f0np0, ens1f1np1?',
  );
  await assert.rejects(
    () => resolveKernelDevice("03:00.2", { root }),
    (e: Error) =>
      e.message ===
        'Cannot find device "03:00.2": no PCIe function of that name; did you mean 0000:03:00.0, 0000:03:00.1?',
  );
  await assert.rejects(
    () => resolveKernelDevice("nothing-like-it", { root }),
    (e: Error) =>
      e.message ===
        'Cannot find device "nothing-like-it": no interface, RDMA device or PCIe function of that name; this machine has ens1f0np0, ens1f1np1, veth0, mlx5_0, mlx5_1',
  );
});

Deno.test("PCIe addresses are read with or without their domain, and only as addresses", () => {
  assert.equal(pciAddress("3b:00.1"), "0000:3b:00.1");
  assert.equal(pciAddress("0001:3B:1f.7"), "0001:3b:1f.7");
  for (const name of ["3b:00.8", "3b:20.0", "eth0", "0000:03:00", "mlx5_0"]) {
    assert.equal(pciAddress(name), undefined, name);
  }
});

// This machine's own network device, where it sits on PCIe: a virtio
// function keeps its interface one level down (virtioN/net/).
const eth = [...Deno.readDirSync("/sys/class/net")].map((e) => e.name)
  .find((name) => {
    try {
      return Deno.realPathSync(`/sys/class/net/${name}/device`).includes(
        "/pci",
      );
    } catch {
      return false;
    }
  });

Deno.test({
  name:
    "this machine's PCIe network device resolves by its address and by its interface alike",
  ignore: eth === undefined, // no interface here sits on a PCIe function
  async fn() {
    const byName = await resolveKernelDevice(eth!);
    assert.ok(byName.pci !== undefined, `${eth} has a PCIe function`);
    const byAddress = await resolveKernelDevice(byName.pci);
    assert.ok(
      byAddress.interfaces.includes(eth!),
      `${byName.pci} has ${byAddress.interfaces}`,
    );
    // The short form names the same function.
    const short = byName.pci.replace(/^0000:/, "");
    assert.deepEqual(
      (await resolveKernelDevice(short)).interfaces,
      byAddress.interfaces,
    );
  },
});
