/**
 * What the agent costs at rest: the demo's `nic` monitor (simulated NIC,
 * 10 kHz, nine rules that fire every 20 s cycle), endpoint on, run as the
 * compiled binary runs it (`deno run` with the compile task's V8 flag), once
 * without `alerting:` and once pushing to a real Alertmanager (Debian's
 * 0.25), back to back. For each: CPU as utime + stime from /proc/PID/stat
 * over `--seconds` (default 60) after a 5 s warm-up, as a share of one core;
 * VmRSS from /proc/PID/status at the start and the end of that window, and
 * VmHWM at its end.
 *
 * `--case with` (or `without`) runs one case only; `--every N` also
 * prints CPU and VmRSS for each N s of the window, to show whether they
 * stay flat (e.g. `--case with --seconds 3600 --every 300`, the issue's
 * hour).
 *
 * Needs `prometheus-alertmanager`.
 * Run: deno run -A bench/footprint.ts [--seconds 60] [--case with|without] [--every N]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { ROOT } from "../tests/cli_util.ts";
import { Alertmanager, freePorts } from "../tests/e2e/fleet_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "60" },
    case: { type: "string" },
    every: { type: "string" },
  },
});
const SECONDS = Number(values.seconds);
if (!(SECONDS >= 10)) {
  throw new RangeError(
    `--seconds must be at least 10, got "${values.seconds}"`,
  );
}
const CASE = values.case;
if (CASE !== undefined && CASE !== "with" && CASE !== "without") {
  throw new RangeError(`--case must be with or without, got "${CASE}"`);
}
const EVERY = values.every === undefined ? SECONDS : Number(values.every);
if (!(EVERY >= 10 && EVERY <= SECONDS)) {
  throw new RangeError(
    `--every must be from 10 to --seconds, got "${values.every}"`,
  );
}

/** VmRSS and VmHWM of `pid`, MB. */
async function memory(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

const WARM_UP_S = 5;

/** utime + stime of `pid`, s (fields 14 and 15 of /proc/PID/stat). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // The command name may hold spaces: count fields after its ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100; // USER_HZ is 100 on Linux
}

interface Footprint {
  /** VmRSS at the start and the end of the window, and VmHWM at its end, MB. */
  rssStart: number;
  rss: number;
  hwm: number;
  /** CPU over the window, as a share of one core. */
  cpu: number;
}

/** Runs the agent on `config`: its footprint over SECONDS after the warm-up. */
async function footprint(
  dir: string,
  name: string,
  config: Record<string, unknown>,
): Promise<Footprint> {
  const file = join(dir, `${name}.yaml`);
  await Deno.writeTextFile(file, stringify(config));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--max-semi-space-size=1",
      join(ROOT, "main.ts"),
      "run",
      "-q",
      "-c",
      file,
      "--duration",
      String(WARM_UP_S + SECONDS + 30),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  await new Promise((r) => setTimeout(r, WARM_UP_S * 1000));
  const startCpu = await cpuSeconds(child.pid);
  const start = await memory(child.pid);
  const startedAt = performance.now();
  let lapCpu = startCpu;
  let lapAt = startedAt;
  for (let done = 0; done < SECONDS; done += EVERY) {
    const wait = Math.min(EVERY, SECONDS - done);
    await new Promise((r) => setTimeout(r, wait * 1000));
    if (EVERY === SECONDS) break;
    const [nowCpu, now, at] = [
      await cpuSeconds(child.pid),
      await memory(child.pid),
      performance.now(),
    ];
    console.log(
      `${name} ${(done + wait).toString().padStart(5)} s: CPU ${
        (100 * (nowCpu - lapCpu) / ((at - lapAt) / 1000)).toFixed(2)
      } % of a core, VmRSS ${now.rss.toFixed(1)} MB`,
    );
    [lapCpu, lapAt] = [nowCpu, at];
  }
  const cpu = (await cpuSeconds(child.pid) - startCpu) /
    ((performance.now() - startedAt) / 1000);
  const end = await memory(child.pid);
  child.kill("SIGTERM");
  const { code, stderr } = await child.output();
  if (code !== 0) {
    throw new Error(
      `${name} exited ${code}: ${new TextDecoder().decode(stderr)}`,
    );
  }
  return { rssStart: start.rss, rss: end.rss, hwm: end.hwm, cpu };
}

const demo = parse(await Deno.readTextFile(join(ROOT, "deploy/demo.yaml")));
const nic = demo.monitors.find((m: { name: string }) => m.name === "nic");
const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-footprint-" });
const [amPort, agentPort] = freePorts(2);
await Deno.mkdir(join(dir, "am"));
const am = await Alertmanager.start(join(dir, "am"), amPort);
try {
  const base = {
    listen: `127.0.0.1:${agentPort}`,
    monitors: [{ ...nic, event_log: join(dir, "events.log") }],
  };
  const without = CASE === "with"
    ? undefined
    : await footprint(dir, "without", base);
  const withAlerts = CASE === "without"
    ? undefined
    : await footprint(dir, "with", {
      ...base,
      alerting: { alertmanagers: [{ url: am.url }] },
    });
  const f = (x: number) => `${x.toFixed(1)} MB`;
  const line = (p: Footprint) =>
    `CPU ${(100 * p.cpu).toFixed(2)} % of a core, VmRSS ${f(p.rssStart)} -> ${
      f(p.rss)
    }, VmHWM ${f(p.hwm)}`;
  console.log(
    `machine: ${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs; ` +
      `${SECONDS} s each after ${WARM_UP_S} s`,
  );
  if (without) console.log(`without alerting: ${line(without)}`);
  if (withAlerts) console.log(`with alerting:    ${line(withAlerts)}`);
  if (without && withAlerts) {
    console.log(`what alerting adds: ${f(withAlerts.rss - without.rss)} RSS`);
  }
} finally {
  await am.stop();
  await Deno.remove(dir, { recursive: true });
}
