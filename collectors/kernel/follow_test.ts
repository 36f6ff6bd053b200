/**
 * The kernel source follows the device it opened: a link taken down is no
 * fault; an interface renamed is read under its new name, said once, with
 * no fault; one deleted is looked for again as `-d` named it, and a
 * PCIe function whose interface came back under another name (a driver
 * reload) is resolved anew.
 *
 * The real-kernel test runs the source in a child process inside a
 * network namespace (follow_test_child.ts); it needs root, `ip` and
 * network namespaces and is ignored without them. The PCIe test runs on a
 * fixture tree.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  canMakeNamespaces,
  childReport,
  run,
  withVethPair,
} from "../../tests/netns.ts";
import { tempDir } from "../../tests/temp_dir.ts";
import { KernelCollector } from "./collector.ts";
import { RecordingSink } from "./collector_test_util.ts";

const CHILD = new URL("./follow_test_child.ts", import.meta.url).pathname;

Deno.test({
  name:
    "on a veth end: a link taken down keeps delivering; a rename is said once and followed, no fault; the renamed end deleted and made again under its first name, the source reads it there (needs root and network namespaces)",
  ignore: !canMakeNamespaces(),
  async fn() {
    await withVethPair(async ({ a, b }) => {
      const report = await childReport(b.namespace, CHILD, { a, b }, 20_000);
      const renamed = `${b.interface}r`;

      // Down is no fault: the counters read, and equal the kernel's.
      assert.equal(report.down.operstate, "down");
      assert.equal(report.down.up, true);
      // (A late timer's missed periods are lost samples too, on a busy
      // machine: faults are what is counted here.)
      assert.equal(report.down.faults, 0);
      assert.deepEqual(
        { rx: report.down.record.rx, tx: report.down.record.tx },
        report.down.proc,
      );

      // A rename: one line, no fault, the same counters.
      assert.deepEqual(report.rename.messages, [
        `kernel ${b.interface}: interface ${b.interface} is now called ${renamed}; reading it under its new name`,
      ]);
      assert.equal(report.rename.up, true);
      assert.equal(report.rename.faults, 0);
      assert.equal(report.rename.record.peer, report.peer);
      assert.deepEqual(
        { rx: report.rename.record.rx, tx: report.rename.record.tx },
        report.rename.proc,
      );

      // Deleted: a fault; made again under b's first name: read there,
      // the column that named b included, after a gap.
      assert.equal(report.back.messages.length, 2, report.back.messages);
      assert.match(
        report.back.messages[0],
        new RegExp(
          `^kernel ${b.interface} stopped delivering: .*; opening it again$`,
        ),
      );
      assert.equal(
        report.back.messages[1],
        `kernel ${b.interface}: interface ${renamed} is gone; reading ${b.interface} in its place`,
      );
      assert.equal(report.back.faults, 1);
      // The ethtool column reads the new pair: its peer is a's new end.
      const peerNow = await run(
        "ip",
        "-n",
        a.namespace,
        "-o",
        "link",
        "show",
        a.interface,
      );
      assert.equal(report.back.record.peer, Number(peerNow.split(":")[0]));
      assert.notEqual(report.back.record.peer, report.peer);
      assert.ok(report.lost > 0);
      assert.equal(report.lost, report.gaps);
    });
  },
});

/**
 * A PCIe function with one interface, as sysfs shows it: `net/IF/` with an
 * ifindex and an rx_bytes counter, and the class and bus links.
 */
function addInterface(
  root: string,
  iface: string,
  ifindex: number,
  rxBytes: number,
): void {
  const sys = join(root, "sys");
  const fn = "devices/pci0000:00/0000:00:02.0/0000:03:00.0";
  Deno.mkdirSync(join(sys, fn, "net", iface, "statistics"), {
    recursive: true,
  });
  Deno.writeTextFileSync(
    join(sys, fn, "net", iface, "ifindex"),
    `${ifindex}\n`,
  );
  Deno.writeTextFileSync(
    join(sys, fn, "net", iface, "statistics/rx_bytes"),
    `${rxBytes}\n`,
  );
  Deno.mkdirSync(join(sys, "bus/pci/devices"), { recursive: true });
  try {
    Deno.symlinkSync(
      `../../../${fn}`,
      join(sys, "bus/pci/devices/0000:03:00.0"),
    );
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  Deno.mkdirSync(join(sys, "class/net"), { recursive: true });
  Deno.symlinkSync(`../../${fn}/net/${iface}`, join(sys, "class/net", iface));
}

Deno.test("a device given by PCIe address whose interface came back under another name (a driver reload) is resolved anew and read there, said once", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  addInterface(root, "ens1f0np0", 3, 1000);
  let t = 1_000;
  const messages: string[] = [];
  const kernel = await KernelCollector.open({
    device: "03:00.0",
    root,
    samplePeriodNs: 10_000_000,
    columns: [{ name: "rx", dataId: "netdev:rx_bytes" }],
    monotonic: () => t,
    onFault: (message) => messages.push(message),
  });
  try {
    const sink = new RecordingSink(1);
    assert.equal(kernel.sample(sink), true);
    // The reload: the old interface's counter stops reading (sysfs says
    // ENODEV; in a fixture, bytes that are no counter), the interface goes
    // and the function's interface comes back as eth7, a new ifindex.
    const old = join(
      root,
      "sys/devices/pci0000:00/0000:00:02.0/0000:03:00.0/net/ens1f0np0",
    );
    Deno.writeTextFileSync(join(old, "statistics/rx_bytes"), "gone\n");
    Deno.removeSync(old, { recursive: true });
    Deno.removeSync(join(root, "sys/class/net/ens1f0np0"));
    addInterface(root, "eth7", 9, 555);
    assert.equal(kernel.sample(sink), false);
    t += 10;
    assert.equal(kernel.sample(sink), true);
    assert.equal(messages.length, 2, messages.join("\n"));
    assert.match(
      messages[0],
      /^kernel 03:00\.0 stopped delivering: .*ens1f0np0\/statistics\/rx_bytes: not a counter: .*; opening it again$/,
    );
    assert.equal(
      messages[1],
      "kernel 03:00.0: interface ens1f0np0 is gone; reading eth7 in its place",
    );
    const kinds = sink.deliveries.map((d) => "gap" in d ? d.gap : "record");
    assert.deepEqual(kinds, ["record", 1, "record"]);
    assert.deepEqual(sink.records.map((r) => r[1]), [1000n, 555n]);
    assert.equal(kernel.faults, 1);
  } finally {
    kernel.close();
  }
});
