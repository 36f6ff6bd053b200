/**
 * What the kernel source costs, on the real kernel: a veth pair with four
 * queues between two network namespaces (tests/netns.ts), and on one end
 *
 * 1. the cost of one read of each kind, in a loop in that namespace: all
 *    the interface's netdev statistics files (`pread` each), and one ethtool
 *    statistics ioctl;
 * 2. the whole agent's CPU with a kernel monitor of about 60 counters (every
 *    netdev statistic and every ethtool statistic of the veth) at 10 ms and
 *    at 1 ms, endpoint off: utime + stime from /proc/PID/stat over
 *    `--seconds` (default 30) after a 5 s warm-up, as a share of one core,
 *    and VmRSS at the end.
 *
 * Needs root and iproute2.
 * Run: deno run -A bench/kernel.ts [--seconds 30]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { canMakeNamespaces, denoIn, withVethPair } from "../tests/netns.ts";
import { ROOT } from "../tests/cli_util.ts";
import { EthtoolStats } from "../collectors/kernel/ethtool_stats.ts";
import {
  netdevCounterFiles,
  SysfsCounterSet,
} from "../collectors/kernel/sysfs_counters.ts";

const READS = 20_000;

// In the namespace: time the reads of one interface, print JSON.
if (Deno.args[0] === "--reads") {
  const iface = Deno.args[1];
  const files = netdevCounterFiles(iface);
  const set = SysfsCounterSet.open(files);
  const ethtool = EthtoolStats.open(iface);
  const out = new Uint32Array(2 * (files.length + ethtool.count));
  const all = ethtool.indexesOf(ethtool.names);
  const time = (read: () => void) => {
    for (let i = 0; i < 1000; i++) read(); // warm up the JIT
    const start = performance.now();
    for (let i = 0; i < READS; i++) read();
    return (performance.now() - start) * 1e6 / READS; // ns a read
  };
  const netdevNs = time(() => set.readAll(out, 0));
  const ethtoolNs = time(() => ethtool.read(out, 0, all));
  set.close();
  ethtool.close();
  console.log(JSON.stringify({
    netdevFiles: files.length,
    netdevNs,
    ethtoolCounters: ethtool.count,
    ethtoolNs,
    names: { netdev: files.map((f) => f.name), ethtool: ethtool.names },
  }));
  Deno.exit(0);
}

const { values } = parseArgs({
  args: Deno.args,
  options: { seconds: { type: "string", default: "30" } },
});
const SECONDS = Number(values.seconds);
if (!(SECONDS >= 5)) {
  throw new RangeError(`--seconds must be at least 5, got "${values.seconds}"`);
}
if (!canMakeNamespaces()) {
  throw new Error("bench/kernel.ts needs root and iproute2 (ip netns)");
}

/** utime + stime of `pid`, s (fields 14 and 15 of /proc/PID/stat). */
function cpuSeconds(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

await withVethPair(async ({ b }) => {
  const reads = await denoIn(b.namespace, [
    import.meta.filename!,
    "--reads",
    b.interface,
  ]).output();
  if (!reads.success) throw new Error(new TextDecoder().decode(reads.stderr));
  const cost = JSON.parse(new TextDecoder().decode(reads.stdout));
  console.log(
    `one read: ${cost.netdevFiles} netdev statistics files ${
      (cost.netdevNs / 1000).toFixed(1)
    } µs (${
      (cost.netdevNs / cost.netdevFiles).toFixed(0)
    } ns a file), ${cost.ethtoolCounters} ethtool statistics ${
      (cost.ethtoolNs / 1000).toFixed(1)
    } µs (one ioctl)`,
  );

  const dir = await Deno.makeTempDir();
  try {
    const columns = [
      ...cost.names.netdev.map((n: string) => `netdev:${n}`),
      ...cost.names.ethtool.map((n: string) => `ethtool:${n}`),
    ];
    for (const periodMs of [10, 1]) {
      const config = join(dir, `kernel-${periodMs}.yaml`);
      await Deno.writeTextFile(
        config,
        `monitors:
  - name: veth
    source: kernel
    device: ${b.interface}
    sample_period_ns: ${periodMs * 1_000_000}
    event_log: ${JSON.stringify(join(dir, `events-${periodMs}.log`))}
    columns:
${
          columns.map((c, i) => `      - { name: c${i}, data_id: "${c}" }`)
            .join("\n")
        }
`,
      );
      // `ip netns exec` enters the namespace and execs deno: one pid.
      const agent = denoIn(b.namespace, [
        "--v8-flags=--max-semi-space-size=1",
        join(ROOT, "main.ts"),
        "run",
        "-q",
        "--config",
        config,
        "--listen",
        "off",
      ], { stdout: "null", stderr: "piped" }).spawn();
      try {
        await new Promise((r) => setTimeout(r, 5_000)); // warm-up
        const before = cpuSeconds(agent.pid);
        await new Promise((r) => setTimeout(r, SECONDS * 1000));
        const cpu = (cpuSeconds(agent.pid) - before) / SECONDS * 100;
        console.log(
          `agent, ${columns.length} counters every ${periodMs} ms: ${
            cpu.toFixed(2)
          } % of a core over ${SECONDS} s, VmRSS ${
            rssMb(agent.pid).toFixed(1)
          } MB`,
        );
      } finally {
        agent.kill("SIGTERM");
        const { stderr } = await agent.output();
        const text = new TextDecoder().decode(stderr).trim();
        if (text !== "") console.error(text);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}, { queues: 4 });
