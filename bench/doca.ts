/**
 * The DOCA FFI path under load, against the simulated libdoca
 * (tests/fixtures/libdoca_sim): the agent's real DocaCollector, Monitor and
 * EventsLog in this process.
 *
 * 1. CPU time per second of wall time over 30 s at 10 kHz (100 us period)
 *    with 16 data IDs and 16 rules (none firing, so the cost measured is
 *    polling, decoding and evaluating, not writing events).
 * 2. The highest sample rate the path sustains without SKIPPED: shorter and
 *    shorter periods, 3 s each, until the device ring overwrites.
 *
 * ```sh
 * deno run -A bench/doca.ts            # both, about a minute
 * deno run -A bench/doca.ts --seconds 10
 * ```
 *
 * The simulator computes every value in C inside query_counters, work the
 * real device does in hardware, so the CPU figure is an upper bound.
 *
 * @module
 */

import { join } from "node:path";
import { DocaCollector } from "../collectors/doca.ts";
import type {
  ColumnConfig,
  ComparisonType,
  RuleConfig,
} from "../config/types.ts";
import { EventsLog } from "../events/log.ts";
import { Monitor } from "../rules/monitor.ts";
import { buildDocaSim } from "../tests/fixtures/libdoca_sim/build.ts";

const TICKS_PER_S = 100; // USER_HZ on Linux

/** 16 data IDs the simulator supports: the port, transport and PCIe families. */
export const COLUMNS: ColumnConfig[] = [
  ...[1, 2, 3, 4, 5, 6].map((c) => ({
    name: `rx_${c}`,
    dataId: `0x102000${c.toString(16).padStart(2, "0")}00000000`,
  })),
  ...[4, 5].map((c) => ({
    name: `rxt_${c}`,
    dataId: `0x108000${c.toString(16).padStart(2, "0")}00000000`,
  })),
  ...[1, 2].map((c) => ({
    name: `txt_${c}`,
    dataId: `0x110000${c.toString(16).padStart(2, "0")}00000000`,
  })),
  ...[1, 2, 3, 4, 5].map((c) => ({
    name: `tx_${c}`,
    dataId: `0x114000${c.toString(16).padStart(2, "0")}00000000`,
  })),
  { name: "icmc_1", dataId: "0x1180000100000000" },
];

/**
 * 16 rules over the 16 columns, thresholds the simulated counters never
 * cross. (inc_gt gets 2^63, not 2^64 - 1: its target is the previous value
 * plus the threshold mod 2^64, so 2^64 - 1 would be "previous - 1" and match
 * every sample.)
 */
const TYPES: ComparisonType[] = ["gt", "lt", "dt_gt", "dt_lt", "inc_gt"];
export const RULES: RuleConfig[] = COLUMNS.map((_, i) => {
  const type = TYPES[i % TYPES.length];
  const value = type === "lt" || type === "dt_lt"
    ? 0n
    : type === "inc_gt"
    ? 1n << 63n
    : (1n << 64n) - 1n;
  return {
    name: `rule_${i}`,
    column: i,
    comparisonType: type,
    comparisonValue: value,
  };
});

/** utime + stime of this process, in seconds. */
async function cpuSeconds(): Promise<number> {
  const stat = await Deno.readTextFile("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/** One sampling run's figures. */
export interface Run {
  periodNs: number;
  samples: number;
  wallS: number;
  cpuS: number;
  skippedPolls: number;
  droppedSamples: number;
  polls: number;
}

/** Samples for `seconds` at `periodNs`; CPU is measured after `warmupS`. */
export async function sample(
  libDir: string,
  dir: string,
  periodNs: number,
  seconds: number,
  warmupS: number,
): Promise<Run> {
  const log = await EventsLog.open({
    path: join(dir, `events-${periodNs}.log`),
    version: "bench",
    device: "sim",
    depth: 1024,
    samplePeriodNs: periodNs,
    columns: COLUMNS,
    rules: RULES,
  });
  const monitor = new Monitor({
    name: "nic",
    depth: 1024,
    columns: COLUMNS,
    rules: RULES,
  }, log);
  const doca = DocaCollector.open({
    device: "03:00.0",
    columns: COLUMNS,
    samplePeriodNs: periodNs,
    depth: 1024,
    forceOwnership: false,
    libDir,
  });
  try {
    const stop = new AbortController();
    const running = doca.run(monitor, stop.signal);
    await new Promise((r) => setTimeout(r, warmupS * 1000));
    const samples0 = monitor.samples;
    const skipped0 = doca.pollStats.overflows;
    const dropped0 = doca.lostSamples;
    const polls0 = doca.pollStats.polls;
    const cpu0 = await cpuSeconds();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const cpu1 = await cpuSeconds();
    const wallS = (performance.now() - t0) / 1000;
    const run: Run = {
      periodNs,
      samples: monitor.samples - samples0,
      wallS,
      cpuS: cpu1 - cpu0,
      skippedPolls: doca.pollStats.overflows - skipped0,
      droppedSamples: doca.lostSamples - dropped0,
      polls: doca.pollStats.polls - polls0,
    };
    stop.abort();
    await running;
    return run;
  } finally {
    doca.close();
    await log.close();
  }
}

function describe(run: Run): string {
  return `period ${run.periodNs} ns: ${
    (run.samples / run.wallS).toFixed(0)
  } samples/s, ` +
    `CPU ${
      (100 * run.cpuS / run.wallS).toFixed(2)
    }% of one core, ${run.polls} polls ` +
    `(${(run.polls / run.wallS).toFixed(0)}/s, ${
      (1000 * run.wallS / run.polls).toFixed(2)
    } ms apart), ` +
    `SKIPPED polls ${run.skippedPolls}, samples lost ${run.droppedSamples}`;
}

async function main(): Promise<void> {
  const i = Deno.args.indexOf("--seconds");
  const seconds = i >= 0 ? Number(Deno.args[i + 1]) : 30;
  const sim = await buildDocaSim();
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-doca-bench-" });
  try {
    const steady = await sample(sim.dir, dir, 100_000, seconds, 2);
    console.log(JSON.stringify({ case: "10kHz", ...steady }));
    console.log(
      `10 kHz, 16 data IDs, 16 rules, ${seconds} s: ${describe(steady)}`,
    );

    let best = 0;
    for (
      const periodNs of [50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500, 250]
    ) {
      const run = await sample(sim.dir, dir, periodNs, 3, 1);
      console.log(JSON.stringify({ case: "sweep", ...run }));
      console.log(`sweep: ${describe(run)}`);
      if (run.skippedPolls > 0 || run.droppedSamples > 0) break;
      best = 1e9 / periodNs;
    }
    console.log(`highest rate without SKIPPED: ${best.toFixed(0)} samples/s`);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await sim.cleanup();
  }
}

if (import.meta.main) await main();
