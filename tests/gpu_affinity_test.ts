/**
 * The GPUs behind a NIC, end to end: a kernel NIC monitor on a fixture
 * sysfs tree of a GPU server (tests/fixtures/pcie_tree.ts) beside the
 * simulated NVML (tests/fixtures/libnvml_sim) whose GPUs have the tree's
 * bus IDs. What the agent works out at start reaches the threads that
 * serve and alert through the monitors' shapes; check-config prints it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Agent, type OpenedSources } from "../agent/agent.ts";
import { shareMonitors } from "../agent/publication.ts";
import { checkConfig } from "../cli/check_config.ts";
import type { NicGpu, NicGpus, PcieLink } from "../collectors/nic_gpus.ts";
import { parseConfig } from "../config/load.ts";
import { Logger } from "../logging/logger.ts";
import { PublishedState } from "../metrics/shared_state.ts";
import { buildNvmlSim, nvmlSimIdentity } from "./fixtures/libnvml_sim/build.ts";
import { GPU_SERVER, netdevOn, pcieTree } from "./fixtures/pcie_tree.ts";
import { tempDir } from "./temp_dir.ts";
import { until } from "./until.ts";
import { writeMonitorLog } from "./monitor_log.ts";
import { EventPages } from "../endpoint/event_pages.ts";
import { eventId } from "../events/event_link.ts";
import { SharedRingReader } from "../rules/shared_ring.ts";
import { toNumberU64 } from "../base/u64.ts";

/** The NIC of {@linkcode GPU_SERVER}, with an interface. */
const NIC_PATH = GPU_SERVER.devices.find((d) => d.endsWith("/0000:1a:00.0"))!;

/** GPU `g` of the simulator as the NIC's list names it. */
function simGpu(g: number, link: PcieLink): NicGpu {
  return {
    index: g,
    uuid: nvmlSimIdentity(g).uuid,
    busId: nvmlSimIdentity(g).busIdLegacy.toLowerCase(),
    link,
  };
}

/** The two GPUs in the NIC's switch. */
const BEHIND: NicGpus = {
  nic: "0000:1a:00.0",
  gpus: [simGpu(0, "PIX"), simGpu(1, "PIX")],
};

/**
 * Runs `fn` in a fixture tree with the simulator built and `NVML_SIM_GPUS`
 * set (read at NVML's first init, on whichever thread makes it).
 */
async function withServer(
  gpus: number,
  fn: (root: string, nvmlDir: string) => Promise<void>,
): Promise<void> {
  const sim = await buildNvmlSim();
  Deno.env.set("NVML_SIM_GPUS", String(gpus));
  try {
    await using dir = await tempDir();
    await pcieTree(dir.path, GPU_SERVER);
    await netdevOn(dir.path, NIC_PATH, "ens1f0np0");
    await fn(dir.path, sim.dir);
  } finally {
    Deno.env.delete("NVML_SIM_GPUS");
    await sim.cleanup();
  }
}

/** A kernel NIC monitor on `device`, and a GPU monitor when `gpu`. */
function config(
  root: string,
  nvmlDir: string,
  device: string,
  extra: { gpuMonitor?: boolean; gpu?: "off"; readings?: string } = {},
): string {
  return `listen: off
nvml_lib_dir: ${nvmlDir}
${extra.gpu === undefined ? "" : `gpu: ${extra.gpu}\n`}monitors:
  - name: nic
    source: kernel
    device: ${device}
    event_log: ${join(root, "events.log")}
    columns: [{ name: rx, data_id: "netdev:rx_bytes" }]
${
    extra.gpuMonitor
      ? `  - name: gpu
    source: nvml
    event_log: ${join(root, "gpu-events.log")}
    readings: [${extra.readings ?? "gpu*.temperature"}]
${extra.readings === undefined ? "" : "    sample_period_ns: 10000000\n"}`
      : ""
  }`;
}

/** Opens the agent on `text`, keeping what the threads would be given. */
async function openAgent(
  root: string,
  text: string,
): Promise<{ agent: Agent; opened: OpenedSources; info: string[] }> {
  const info: string[] = [];
  let opened: OpenedSources | undefined;
  const agent = await Agent.open(
    parseConfig(text, join(root, "agent.yaml")),
    {
      version: "test",
      info: (m) => info.push(m),
      sysfsRoot: root,
      beforeLogs: (o) => {
        opened = o;
        return Promise.resolve();
      },
    },
  );
  return { agent, opened: opened!, info };
}

Deno.test("the agent names the GPUs in its NIC's switch at start, from its GPU monitor's NVML, on the monitor the endpoint and the alert sender read", async () => {
  await withServer(8, async (root, nvmlDir) => {
    const { agent, opened, info } = await openAgent(
      root,
      config(root, nvmlDir, "ens1f0np0", { gpuMonitor: true }),
    );
    try {
      const [nic, gpu] = agent.monitors;
      assert.deepEqual(nic.nicGpus, BEHIND);
      assert.equal(gpu.nicGpus, undefined);
      assert.ok(
        info.includes(
          `monitor "nic": GPUs behind 0000:1a:00.0: GPU 0 (${
            nvmlSimIdentity(0).uuid
          }, 0000:18:00.0) PIX, GPU 1 (${
            nvmlSimIdentity(1).uuid
          }, 0000:28:00.0) PIX`,
        ),
        info.join("\n"),
      );
      // What the endpoint's and the sender's threads are posted, and
      // what their PublishedState serves.
      const shared = shareMonitors(opened.monitors, Date.now());
      const posted = structuredClone(shared.shapes);
      assert.deepEqual(posted[0].nicGpus, BEHIND);
      assert.equal("nicGpus" in posted[1], false);
      const state = new PublishedState(shared.buffer, posted);
      assert.deepEqual(state.monitors[0].nicGpus, BEHIND);
      assert.equal(state.monitors[1].nicGpus, undefined);
    } finally {
      assert.deepEqual(await agent.close(), []);
    }
  });
});

Deno.test("a NIC event's page, served from what the endpoint's thread is posted, charts the two GPUs in the NIC's switch from the GPU monitor sampling the simulated NVML", async () => {
  await withServer(8, async (root, nvmlDir) => {
    const { agent, opened } = await openAgent(
      root,
      config(root, nvmlDir, "ens1f0np0", {
        gpuMonitor: true,
        readings: "gpu*.gpu_utilization, gpu*.power",
      }),
    );
    const stop = new AbortController();
    const running = agent.run(stop.signal);
    try {
      // A NIC event of 10 ms starting now, in a log of its own.
      const log = join(root, "nic-page.log");
      const startNs = BigInt(Date.now()) * 1_000_000n;
      await writeMonitorLog({
        path: log,
        monitor: "nic",
        depth: 64,
        periodNs: 100_000n,
        rules: ["rx burst"],
        events: [{ rule: 0, startNs, samples: 100 }],
      });
      // Until the GPU monitor (every 10 ms) has sampled past its end.
      const ring = new SharedRingReader(
        opened.monitors[1].sharedRing!,
        opened.monitors[1].config.columns.length,
      );
      const newest = () => {
        const r = ring.read();
        const at = (r.count - 1) * r.stride;
        return r.count === 0 ? 0 : toNumberU64(r.words[at], r.words[at + 1]);
      };
      await until(
        "GPU samples past the NIC event",
        () => newest() > Number(startNs) + 30e6,
      );
      // What the endpoint's thread is posted, as it reads it.
      const shared = shareMonitors(opened.monitors, Date.now());
      const state = new PublishedState(
        shared.buffer,
        structuredClone(shared.shapes),
      );
      const [nic, gpu] = state.monitors;
      const pages = new EventPages({
        monitors: [{ ...nic, log: { ...nic.log, path: log } }, gpu],
        now: Date.now,
      });
      const id = eventId({ monitor: "nic", rule: "rx burst", startNs });
      const answer = (await pages.answer(`/events/${id}`))!;
      assert.equal(answer.status, 200);
      const html = new TextDecoder().decode(answer.body.bytes);
      const figures = html.split("<figure>");
      assert.equal(figures.length, 3, "the NIC's chart and the GPUs'");
      assert.match(
        figures[2],
        /<figcaption>GPU 0 \(PIX\): GPU utilisation \d+ %( to \d+ %)?; power 10\d W( to 10\d W)?\. GPU 1 \(PIX\): GPU utilisation \d+ %( to \d+ %)?; power 10\d W( to 10\d W)?\. The GPUs behind the NIC, from the GPU monitor &quot;gpu&quot;: each reading drawn over the 10 ms it was measured over/,
      );
      assert.equal(
        (figures[2].match(/<path /g) ?? []).length,
        4,
        "two GPUs, two readings",
      );
    } finally {
      stop.abort();
      await running;
      assert.deepEqual(await agent.close(), []);
    }
  });
});

Deno.test("with no GPU monitor, NVML is opened only to list the GPUs; gpu: off leaves it closed and says so", async () => {
  await withServer(8, async (root, nvmlDir) => {
    // -d as a PCIe address, as the reference takes it.
    const listed = await openAgent(root, config(root, nvmlDir, "1a:00.0"));
    try {
      assert.deepEqual(listed.agent.monitors[0].nicGpus, BEHIND);
      assert.equal(listed.agent.monitors.length, 1);
    } finally {
      await listed.agent.close();
    }
    const off = await openAgent(
      root,
      config(root, nvmlDir, "1a:00.0", { gpu: "off" }),
    );
    try {
      assert.deepEqual(off.agent.monitors[0].nicGpus, {
        nic: "0000:1a:00.0",
        gpus: [],
        none: "gpu: off, NVML not opened",
      });
    } finally {
      await off.agent.close();
    }
    // NVML not here: why, as the GPU monitor would say it.
    const empty = join(root, "no-nvml");
    await Deno.mkdir(empty);
    const none = await openAgent(root, config(root, empty, "1a:00.0"));
    try {
      const found = none.agent.monitors[0].nicGpus;
      assert.deepEqual(found?.gpus, []);
      // Where this host has a GPU driver, the system's NVML answers instead.
      if (found?.none !== undefined) {
        assert.match(
          found.none,
          /^no NVML \(libnvidia-ml\.so\.1 not found in /,
        );
      }
    } finally {
      await none.agent.close();
    }
  });
});

Deno.test("check-config prints the GPUs behind each NIC on a PCIe function, or why none", async () => {
  await withServer(8, async (root, nvmlDir) => {
    const yaml = join(root, "agent.yaml");
    const printed = async (text: string): Promise<string[]> => {
      await Deno.writeTextFile(yaml, text);
      const lines: string[] = [];
      const log = console.log;
      console.log = (line: string) => lines.push(...String(line).split("\n"));
      try {
        const code = await checkConfig(
          { configFile: yaml, sysfsRoot: root },
          new Logger({ program: "test", write: () => {} }),
        );
        assert.equal(code, 0);
      } finally {
        console.log = log;
      }
      return lines;
    };
    const lines = await printed(config(root, nvmlDir, "ens1f0np0"));
    assert.ok(
      lines.includes(
        `monitor nic: GPUs behind 0000:1a:00.0: GPU 0 (${
          nvmlSimIdentity(0).uuid
        }, 0000:18:00.0) PIX, GPU 1 (${
          nvmlSimIdentity(1).uuid
        }, 0000:28:00.0) PIX`,
      ),
      lines.join("\n"),
    );
    const off = await printed(
      config(root, nvmlDir, "ens1f0np0", { gpu: "off" }),
    );
    assert.ok(
      off.includes(
        "monitor nic: no GPU behind 0000:1a:00.0: gpu: off, NVML not opened",
      ),
      off.join("\n"),
    );
  });
});

Deno.test("check-config on a NIC on the other socket says no GPU shares its NUMA node", async () => {
  const sim = await buildNvmlSim();
  Deno.env.set("NVML_SIM_GPUS", "2");
  try {
    await using dir = await tempDir();
    const root = dir.path;
    const nic = "pci0000:80/0000:80:01.0/0000:8a:00.0";
    await pcieTree(root, {
      devices: [
        "pci0000:00/0000:00:01.0/0000:18:00.0",
        "pci0000:00/0000:00:02.0/0000:28:00.0",
        nic,
      ],
      numa: { "pci0000:00": 0, "pci0000:80": 1 },
      nodes: 2,
    });
    await netdevOn(root, nic, "ens9");
    const yaml = join(root, "agent.yaml");
    await Deno.writeTextFile(yaml, config(root, sim.dir, "ens9"));
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: string) => lines.push(...String(line).split("\n"));
    try {
      await checkConfig(
        { configFile: yaml, sysfsRoot: root },
        new Logger({ program: "test", write: () => {} }),
      );
    } finally {
      console.log = log;
    }
    assert.ok(
      lines.includes(
        "monitor nic: no GPU behind 0000:8a:00.0: no GPU shares its NUMA node",
      ),
      lines.join("\n"),
    );
  } finally {
    Deno.env.delete("NVML_SIM_GPUS");
    await sim.cleanup();
  }
});
