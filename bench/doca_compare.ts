/**
 * The DOCA path against a C poller of the same simulated device (issue 32,
 * item 5: "the DOCA path at 10 kHz <= 2x the C poller"). Everything runs
 * against the simulated libdoca (tests/fixtures/libdoca_sim), built once
 * here; 16 data IDs (bench/doca.ts's), 100 us period, device depth 1024.
 *
 * `--rounds` rounds (default 3), each with, one after the other,
 *
 * - the C poller (bench/doca_floor.c, compiled here with `cc -O2` into
 *   bench/out/): the agent's calls to set up the diag context, then
 *   query_counters on the agent's adaptive wait, every sample decoded and
 *   its values summed, clock_nanosleep(TIMER_ABSTIME) between polls;
 * - the agent as an operator runs it (`main.ts run -q --config X --listen
 *   off`, `DOCA_LIB_DIR` at the simulator): one DOCA monitor on the
 *   simulated device with the same 16 data IDs and bench/doca.ts's 16 rules
 *   (thresholds never crossed), depth 1024;
 * - unless `--no-in-process`, bench/doca.ts's in-process path (the real
 *   DocaCollector, Monitor and EventsLog in one Deno process, no CLI, no
 *   config, no other tasks), in a child process of this script.
 *
 * The order alternates (C first in odd rounds, last in even ones). CPU of
 * each is measured from outside over `--seconds` (default 30) after a
 * warm-up (`--warmup`, default 30 s, for the Deno processes, so start-up is
 * excluded and V8 has optimised; `--c-warmup`, default 5 s, for C), as
 * utime + stime of /proc/PID/stat (10 ms ticks) and as the sum of
 * /proc/PID/task/TID/schedstat run time (ns) over its threads, each thread
 * also reported on its own. Printed: min / median / max per case, the
 * ratios of the medians, the per-thread split of the Deno processes, and
 * the load average at start, after each round and at the end.
 *
 * Needs cc. Bounded: every child is killed at the end of its window, and
 * the C poller stops by itself.
 * Run: deno run -A bench/doca_compare.ts [--rounds 3] [--seconds 30]
 *        [--warmup 30] [--c-warmup 5] [--no-in-process]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { isReferenceRule } from "../config/types.ts";
import { ROOT } from "../tests/cli_util.ts";
import { buildDocaSim } from "../tests/fixtures/libdoca_sim/build.ts";
import { COLUMNS, RULES, sample } from "./doca.ts";
import { cpuSeconds, loadavg, median, range, threadRunNs } from "./proc_cpu.ts";
import { integerOption } from "./options.ts";

const PERIOD_NS = 100_000;
const DEPTH = 1024;
const DEVICE = "03:00.0";
const FLOOR = join(ROOT, "bench/out/doca_floor");

// The in-process case, in a child: bench/doca.ts's sample() for SECONDS.
if (Deno.args[0] === "--child") {
  const [libDir, dir, seconds] = Deno.args.slice(1);
  const run = await sample(libDir, dir, PERIOD_NS, Number(seconds), 0);
  console.log(JSON.stringify(run));
  Deno.exit(0);
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "30" },
    warmup: { type: "string", default: "30" },
    "c-warmup": { type: "string", default: "5" },
    "no-in-process": { type: "boolean", default: false },
  },
});

const ROUNDS = integerOption(values, "rounds", 1);
const SECONDS = integerOption(values, "seconds", 2);
const WARMUP = integerOption(values, "warmup", 1);
const C_WARMUP = integerOption(values, "c-warmup", 1);
const IN_PROCESS = !values["no-in-process"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One thread's share of a core over the window. */
interface ThreadShare {
  tid: number;
  comm: string;
  main: boolean;
  percent: number;
}

/** One case's measurement: % of one core, two ways, and its threads. */
interface Measured {
  stat: number;
  run: number;
  threads: ThreadShare[];
  report?: Record<string, unknown>;
}

/** CPU of `pid` over SECONDS after `warmupS`. */
async function cpuShare(
  pid: number,
  warmupS: number,
): Promise<Omit<Measured, "report">> {
  await sleep(warmupS * 1000);
  const stat0 = cpuSeconds(pid);
  const run0 = threadRunNs(pid);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  const stat1 = cpuSeconds(pid);
  const run1 = threadRunNs(pid);
  const s = (performance.now() - t0) / 1000;
  const threads: ThreadShare[] = [];
  let ns = 0;
  for (const [tid, { comm, ns: end }] of run1) {
    // A thread started inside the window counts from 0.
    const d = end - (run0.get(tid)?.ns ?? 0);
    ns += d;
    threads.push({ tid, comm, main: tid === pid, percent: d / 1e7 / s });
  }
  threads.sort((a, b) => b.percent - a.percent);
  return { stat: (stat1 - stat0) / s * 100, run: ns / 1e7 / s, threads };
}

/** Waits for `child` to end, at most `ms`, then kills it. */
async function ended(
  child: Deno.ChildProcess,
  ms: number,
): Promise<Deno.CommandOutput> {
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, ms);
  try {
    return await child.output();
  } finally {
    clearTimeout(timer);
  }
}

async function runFloor(simDir: string): Promise<Measured> {
  const child = new Deno.Command(FLOOR, {
    args: [
      simDir,
      DEVICE,
      String(PERIOD_NS),
      String(DEPTH),
      String(C_WARMUP + SECONDS + 1),
      ...COLUMNS.map((c) => c.dataId),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const share = await cpuShare(child.pid, C_WARMUP);
  const out = await ended(child, 10_000);
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return { ...share, report: JSON.parse(new TextDecoder().decode(out.stdout)) };
}

/** The agent's config: one DOCA monitor, bench/doca.ts's columns and rules. */
function agentConfig(eventLog: string): string {
  const rules = RULES.filter(isReferenceRule).map((r) =>
    `      - name: ${r.name}
        column: ${COLUMNS[r.column].name}
        comparison_type: ${r.comparisonType}
        comparison_value: "${r.comparisonValue}"`
  ).join("\n");
  return `gpu: "off"
monitors:
  - name: nic
    source: doca
    device: "${DEVICE}"
    sample_period_ns: ${PERIOD_NS}
    depth: ${DEPTH}
    event_log: ${JSON.stringify(eventLog)}
    columns:
${
    COLUMNS.map((c) => `      - { name: ${c.name}, data_id: "${c.dataId}" }`)
      .join("\n")
  }
    rules:
${rules}
`;
}

/**
 * Runs a Deno child for the window, then ends it with SIGTERM (`kill`) or
 * waits for it to end by itself; fails if it ended before the window did.
 */
async function runDeno(
  args: string[],
  env: Record<string, string>,
  what: string,
  kill: boolean,
): Promise<Measured> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let share: Omit<Measured, "report">;
  try {
    share = await cpuShare(child.pid, WARMUP);
  } catch (error) {
    const out = await ended(child, 5_000);
    throw new Error(
      `${what} ended early (${error}): ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  if (kill) {
    try {
      child.kill("SIGTERM");
    } catch {
      // ended by itself
    }
  }
  const out = await ended(child, 30_000);
  const stdout = new TextDecoder().decode(out.stdout).trim();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  if (stderr !== "") console.error(`${what} stderr: ${stderr}`);
  const last = stdout.split("\n").at(-1) ?? "";
  return {
    ...share,
    report: last.startsWith("{")
      ? JSON.parse(last)
      : { stdout: stdout.slice(-400) },
  };
}

function runAgent(simDir: string, dir: string): Promise<Measured> {
  const config = join(dir, "doca-compare.yaml");
  Deno.writeTextFileSync(config, agentConfig(join(dir, "events.log")));
  return runDeno(
    [
      "run",
      "-A",
      "--v8-flags=--max-semi-space-size=1",
      join(ROOT, "main.ts"),
      "run",
      "-q",
      "--config",
      config,
      "--listen",
      "off",
    ],
    { DOCA_LIB_DIR: simDir },
    "agent",
    true,
  );
}

function runInProcess(simDir: string, dir: string): Promise<Measured> {
  return runDeno(
    [
      "run",
      "-A",
      "--v8-flags=--max-semi-space-size=1",
      import.meta.filename!,
      "--child",
      simDir,
      dir,
      // It starts sampling after its own start-up, so it ends after the
      // window, by itself, and prints its figures.
      String(WARMUP + SECONDS),
    ],
    {},
    "in-process",
    false,
  );
}

/** The threads over 0.01 % of a core, main first: `name tid: x.xx %`. */
function describeThreads(threads: ThreadShare[]): string {
  const shown = threads.filter((t) => t.main || t.percent >= 0.01);
  shown.sort((a, b) => Number(b.main) - Number(a.main));
  const rest = threads.length - shown.length;
  return shown.map((t) =>
    `${t.main ? "main " : ""}${t.comm} ${t.tid}: ${t.percent.toFixed(3)} %`
  ).join(", ") + (rest > 0 ? ` (+${rest} threads under 0.01 %)` : "");
}

const CASES = IN_PROCESS
  ? ["C poller", "agent", "in-process"] as const
  : ["C poller", "agent"] as const;
type Case = (typeof CASES)[number];

async function main(): Promise<void> {
  console.log(`Deno ${Deno.version.deno}, ${Deno.build.target}`);
  console.log(`load average at start: ${loadavg()}`);
  await Deno.mkdir(join(ROOT, "bench/out"), { recursive: true });
  const cc = await new Deno.Command("cc", {
    args: [
      "-O2",
      "-Wall",
      "-Wextra",
      "-o",
      FLOOR,
      join(ROOT, "bench/doca_floor.c"),
      "-ldl",
    ],
  }).output();
  if (!cc.success) throw new Error(new TextDecoder().decode(cc.stderr));
  const sim = await buildDocaSim();
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-doca-cmp-" });
  console.log(
    `${ROUNDS} rounds; CPU over ${SECONDS} s after ${WARMUP} s (Deno) / ${C_WARMUP} s (C) of warm-up; ` +
      `${COLUMNS.length} data IDs, ${RULES.length} rules, ${PERIOD_NS} ns period, depth ${DEPTH}`,
  );
  const cases = new Map<Case, Measured[]>(CASES.map((c) => [c, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? [...CASES] : [...CASES].reverse();
      for (const who of order) {
        const m = who === "C poller"
          ? await runFloor(sim.dir)
          : who === "agent"
          ? await runAgent(sim.dir, dir)
          : await runInProcess(sim.dir, dir);
        cases.get(who)!.push(m);
        console.log(
          `round ${round}, ${who}: ${m.stat.toFixed(2)} % (utime+stime), ` +
            `${m.run.toFixed(3)} % (schedstat); threads: ${
              describeThreads(m.threads)
            }; report: ${JSON.stringify(m.report)}`,
        );
      }
      console.log(`load average after round ${round}: ${loadavg()}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await sim.cleanup();
  }

  console.log(
    "\n| who | CPU % utime+stime min / median / max | CPU % schedstat min / median / max | main thread % schedstat min / median / max | other threads % schedstat min / median / max |",
  );
  console.log("| --- | --- | --- | --- | --- |");
  for (const who of CASES) {
    const ms = cases.get(who)!;
    const main = ms.map((m) =>
      m.threads.filter((t) => t.main).reduce((a, t) => a + t.percent, 0)
    );
    const others = ms.map((m) =>
      m.threads.filter((t) => !t.main).reduce((a, t) => a + t.percent, 0)
    );
    console.log(
      `| ${who} | ${range(ms.map((m) => m.stat))} | ${
        range(ms.map((m) => m.run), 3)
      } | ${range(main, 3)} | ${range(others, 3)} |`,
    );
  }
  const c = cases.get("C poller")!;
  for (const who of CASES.filter((w) => w !== "C poller")) {
    const ms = cases.get(who)!;
    const ratio = (k: "stat" | "run") =>
      (median(ms.map((m) => m[k])) / median(c.map((m) => m[k]))).toFixed(2);
    console.log(
      `${who} / C poller (medians): ${ratio("stat")} (utime+stime), ${
        ratio("run")
      } (schedstat); goal <= 2`,
    );
  }
  console.log(`load average at end: ${loadavg()}`);
}

if (import.meta.main) await main();
