/**
 * The GPU truth check (bench/gpu_truth.ts) on this machine: the agent's
 * GPU monitor on the simulated NVML (tests/fixtures/libnvml_sim) against
 * a fake nvidia-smi that prints what the simulator holds at the same
 * instant (tests/fixtures/fake_nvidia_smi). It passes there, shuts NVML
 * down cleanly, and fails, one line a reading, when nvidia-smi is told to
 * report readings wrong. In the slow tier: each run samples the real
 * monitor for a few seconds at its 1 s period (the simulator adds its
 * energy per poll as 1 s of power).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { buildNvmlSim } from "../fixtures/libnvml_sim/build.ts";
import { ROOT } from "../cli_util.ts";
import { tempDir } from "../temp_dir.ts";

const CHECK = join(ROOT, "bench/gpu_truth.ts");
const FAKE_SMI = join(ROOT, "tests/fixtures/fake_nvidia_smi/nvidia-smi");

/**
 * Runs the check for `seconds` against the simulator, nvidia-smi told to
 * report `wrong` wrong and to take `delayMs`; its exit, output and files.
 */
async function runCheck(
  { wrong, delayMs, seconds = 3 }: {
    wrong?: string;
    delayMs?: number;
    seconds?: number;
  } = {},
): Promise<{
  code: number;
  stdout: string;
  stderr: string;
  table: string;
  readings: string[];
  callLog: string[];
}> {
  const sim = await buildNvmlSim();
  try {
    await using dir = await tempDir("gpu_truth_");
    const out = join(dir.path, "out");
    const env: Record<string, string> = {
      NVML_SIM_GPUS: "2",
      NVML_SIM_TICKS: join(dir.path, "ticks"),
      NVML_SIM_LOG: join(dir.path, "nvml.log"),
      // The byte counters step as fast as GetPcieThroughput says, per 1 s
      // period, on both directions.
      NVML_SIM_PCIE_BYTES: "0:4294967296:1000000:1000000;" +
        "1:8589934592:2000000:2000000",
      FAKE_NVIDIA_SMI_DENO: Deno.execPath(),
    };
    if (wrong !== undefined) env.FAKE_NVIDIA_SMI_WRONG = wrong;
    if (delayMs !== undefined) env.FAKE_NVIDIA_SMI_DELAY_MS = String(delayMs);
    const result = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "-A",
        CHECK,
        "--seconds",
        String(seconds),
        "--period-ms",
        "1000",
        "--nvml-lib-dir",
        sim.dir,
        "--nvidia-smi",
        FAKE_SMI,
        "--out",
        out,
      ],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return {
      code: result.code,
      stdout: text.decode(result.stdout),
      stderr: text.decode(result.stderr),
      table: await Deno.readTextFile(join(out, "table.txt")),
      readings: (await Deno.readTextFile(join(out, "readings.jsonl")))
        .trim().split("\n"),
      callLog: (await Deno.readTextFile(join(dir.path, "nvml.log")))
        .trim().split("\n"),
    };
  } finally {
    await sim.cleanup();
  }
}

Deno.test("the GPU truth check passes against the NVML simulator and its fake nvidia-smi, and NVML is shut down", async () => {
  const run = await runCheck();
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /No mismatch\./);
  assert.equal(run.table, run.stdout.trimEnd() + "\n");
  for (const gpu of [0, 1]) {
    for (
      const reading of [
        "uuid",
        "pci_bus_id",
        "memory_total",
        "memory_used",
        "temperature",
        "power",
        "sm_clock",
        "memory_clock",
        "gpu_utilization",
        "memory_utilization",
        "ecc_corrected",
        "ecc_uncorrected",
        "pcie_replays",
        "pcie_tx_bytes",
        "pcie_rx_bytes",
        "energy",
      ]
    ) {
      assert.match(
        run.stdout,
        new RegExp(`^\\| gpu${gpu}\\.${reading} \\|.*\\| ok \\(`, "m"),
        `gpu${gpu}.${reading} compared and ok`,
      );
    }
  }
  assert.match(
    run.stdout,
    /^\| Xid event registration \| registered .*ok \|$/m,
  );
  assert.match(run.stdout, /^\| shutdown \| nvmlShutdown SUCCESS.*ok \|$/m);
  assert.match(run.stdout, /^Agent CPU: \d+\.\d+ s user\+system over /m);
  assert.match(run.stdout, /^NVML poll cost: \d+\.\d+ ms mean/m);
  // Every sample and every nvidia-smi answer, raw.
  const sources = run.readings.map((l) => JSON.parse(l).source);
  assert.ok(sources.filter((s) => s === "agent").length >= 3, run.readings[0]);
  assert.ok(sources.filter((s) => s === "nvidia-smi").length >= 2);
  // The monitor's session and the poll-cost session each shut NVML down.
  assert.equal(
    run.callLog.filter((l) => l === "nvmlShutdown 0").length,
    2,
    run.callLog.join("\n"),
  );
  assert.ok(run.callLog.includes("nvmlDeviceRegisterEvents 0"));
  for (const line of run.callLog.filter((l) => l.startsWith("leaks"))) {
    assert.equal(line, "leaks inits=0 eventsets=0");
  }
});

Deno.test("the GPU truth check fails, one line a reading, when nvidia-smi reports readings wrong", async () => {
  const run = await runCheck({
    wrong: "0:memory.total:1;1:temperature.gpu:10;1:uuid:f;0:replays:1",
  });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  const mismatches = run.stdout.split("\n").filter((l) =>
    l.startsWith("MISMATCH")
  );
  assert.deepEqual(
    mismatches.map((l) => l.slice(0, l.indexOf(":"))).sort(),
    [
      "MISMATCH gpu0.memory_total",
      "MISMATCH gpu0.pcie_replays",
      "MISMATCH gpu1.temperature",
      "MISMATCH gpu1.uuid",
    ],
    run.stdout,
  );
  assert.match(
    run.stdout,
    /^MISMATCH gpu0\.memory_total: agent 81920 MiB, nvidia-smi 81921 MiB at /m,
  );
  assert.match(run.stdout, /^4 mismatch\(es\):$/m);
  assert.match(
    run.table,
    /MISMATCH gpu1\.temperature: agent 3\d °C, nvidia-smi 4\d °C/,
  );
});

Deno.test("an nvidia-smi slower than a period is compared with the samples taken while it ran", async () => {
  const run = await runCheck({ delayMs: 1300, seconds: 4 });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^\| gpu1\.temperature \|.*\| ok \(/m);
  assert.match(run.stdout, /^\| gpu1\.pcie_replays \|.*\| ok \(/m);
  assert.match(run.stdout, /No mismatch\./);
});
