/**
 * The GPU monitor's cost, against the simulated NVML
 * (tests/fixtures/libnvml_sim) and, for the NIC, the simulated DOCA
 * (tests/fixtures/libdoca_sim):
 *
 * 1. The NIC poll loop's lateness (10 kHz DOCA diag, the agent as an
 *    operator runs it) with the GPU monitor off, on (8 GPUs, every reading,
 *    polled every 100 ms: ten times the default rate), and on with NVML
 *    calls that block 300 ms each. Read from the agent's /metrics.
 * 2. One GPU poll of 8 GPUs x every reading (GPU_READINGS) in the worker's code
 *    (NvmlPoller.poll, in this process): time per poll and heap growth.
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/gpu.ts [--seconds 20]
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { GPU_READINGS } from "../config/gpu_readings.ts";
import { NvmlPoller } from "../collectors/nvml/poller.ts";
import { LATENESS_BOUNDS_S } from "../collectors/poll_stats.ts";
import { buildDocaSim } from "../tests/fixtures/libdoca_sim/build.ts";
import { buildNvmlSim } from "../tests/fixtures/libnvml_sim/build.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { seconds: { type: "string", default: "20" } },
});
const SECONDS = Number(values.seconds);
const ROOT = new URL("../", import.meta.url).pathname;

const nvml = await buildNvmlSim();
const doca = await buildDocaSim();
const dir = await Deno.makeTempDir({ prefix: "bench_gpu_" });

/** The NIC monitor's lateness line from a /metrics body. */
function nicLateness(body: string): string {
  const value = (name: string) =>
    Number(
      new RegExp(`^${name.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(
        body,
      )?.[1],
    );
  const count = value(
    'dpu_traceback_poll_lateness_seconds_count{monitor="nic"}',
  );
  const max = value(
    'dpu_traceback_poll_lateness_max_seconds{monitor="nic"}',
  );
  const buckets = LATENESS_BOUNDS_S.map((le) => [
    le,
    value(
      `dpu_traceback_poll_lateness_seconds_bucket{monitor="nic",le="${le}"}`,
    ),
  ]);
  // The smallest bound holding 99% of the polls.
  const p99 = buckets.find(([, n]) => n >= 0.99 * count)?.[0];
  const gpuSamples = value('dpu_traceback_samples_total{monitor="gpu"}');
  const nicSamples = value('dpu_traceback_samples_total{monitor="nic"}');
  return `${count} NIC polls, p99 <= ${
    p99 !== undefined ? p99 * 1000 : "?"
  } ms, max ${
    (max * 1000).toFixed(2)
  } ms; NIC samples ${nicSamples}, GPU samples ${
    Number.isNaN(gpuSamples) ? "-" : gpuSamples
  }`;
}

async function agentRun(
  label: string,
  gpu: boolean,
  env: Record<string, string>,
): Promise<void> {
  const config = join(dir, "agent.yaml");
  await Deno.writeTextFile(
    config,
    `listen: "127.0.0.1:0"
gpu: off
monitors:
  - name: nic
    device: "03:00.0"
    sample_period_ns: 100000
    depth: 1024
    event_log: ${join(dir, `${label}-nic.log`)}
    columns:
${
      [1, 2, 3, 4, 5, 6].map((c) =>
        `      - { name: rx_${c}, data_id: "0x102000${
          c.toString(16).padStart(2, "0")
        }00000000" }`
      ).join("\n")
    }
${
      gpu
        ? `  - name: gpu
    source: nvml
    sample_period_ns: 100000000
    event_log: ${join(dir, `${label}-gpu.log`)}
`
        : ""
    }`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "main.ts"), "-c", config, "-q"],
    env: {
      DOCA_LIB_DIR: doca.dir,
      NVML_LIB_DIR: nvml.dir,
      NVML_SIM_GPUS: "8",
      ...env,
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | undefined;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`agent ended: ${seen}`);
    seen += value;
    url = /metrics on (\S+)/.exec(seen)?.[1];
  }
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const body = await (await fetch(`${url}metrics`)).text();
  child.kill("SIGTERM");
  await child.status;
  reader.releaseLock();
  console.log(`| ${label} | ${nicLateness(body)} |`);
}

function pollCost(): void {
  Deno.env.set("NVML_SIM_GPUS", "8");
  const opened = NvmlPoller.open([nvml.dir]);
  if (opened.poller === undefined) throw new Error(JSON.stringify(opened));
  const poller = opened.poller;
  const columns = [];
  for (let gpu = 0; gpu < 8; gpu++) {
    for (let reading = 0; reading < GPU_READINGS.length; reading++) {
      columns.push({ gpu, reading });
    }
  }
  poller.start(columns);
  const record = new Uint32Array(poller.recordWords);
  for (let i = 0; i < 2_000; i++) poller.poll(record, Date.now());
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const polls = 20_000;
  const heapBefore = Deno.memoryUsage().heapUsed;
  const t0 = performance.now();
  for (let i = 0; i < polls; i++) poller.poll(record, 1_795_000_000_000 + i);
  const t1 = performance.now();
  const heapAfter = Deno.memoryUsage().heapUsed;
  gc?.();
  const retained = Deno.memoryUsage().heapUsed - heapBefore;
  poller.close();
  console.log(
    `GPU poll, 8 GPUs x ${GPU_READINGS.length} readings (${columns.length} columns, ${
      8 * 11
    } NVML calls + 1 event wait): ${
      ((t1 - t0) / polls * 1000).toFixed(1)
    } us/poll over ${polls} polls; heap ${
      heapAfter - heapBefore
    } B grown without GC (${
      ((heapAfter - heapBefore) / polls).toFixed(2)
    } B/poll)${gc ? `, ${retained} B retained after GC` : ""}`,
  );
}

try {
  console.log(`Deno ${Deno.version.deno}, ${SECONDS} s per case\n`);
  console.log("| case | NIC poll lateness (from /metrics) |");
  console.log("| ---- | --------------------------------- |");
  await agentRun("GPU monitor off", false, {});
  await agentRun("GPU monitor on, 8 GPUs every 100 ms", true, {});
  await agentRun(
    "GPU monitor on, every temperature and power read blocks 300 ms",
    true,
    {
      NVML_SIM_SLOW:
        "nvmlDeviceGetTemperatureV:300,nvmlDeviceGetPowerUsage:300",
    },
  );
  console.log();
  pollCost();
} finally {
  await Deno.remove(dir, { recursive: true });
  await nvml.cleanup();
  await doca.cleanup();
}
