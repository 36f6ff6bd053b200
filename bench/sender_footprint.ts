/**
 * What the Alertmanager sender's thread costs in memory: the demo's `nic`
 * monitor (simulated NIC, 10 kHz, nine rules that fire every 20 s cycle),
 * endpoint on, run as the compiled binary runs it (`deno run` with the
 * compile task's V8 flag), once without `alerting:` and once pushing to a
 * real Alertmanager (Debian's 0.25), back to back; the agent's VmRSS and
 * VmHWM after `--seconds` (default 60).
 *
 * Needs `prometheus-alertmanager`.
 * Run: deno run -A bench/sender_footprint.ts [--seconds 60]
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
  options: { seconds: { type: "string", default: "60" } },
});
const SECONDS = Number(values.seconds);
if (!(SECONDS >= 10)) {
  throw new RangeError(
    `--seconds must be at least 10, got "${values.seconds}"`,
  );
}

/** VmRSS and VmHWM of `pid`, MB. */
async function memory(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** Runs the agent on `config` for SECONDS; its memory at the end. */
async function footprint(
  dir: string,
  name: string,
  config: Record<string, unknown>,
): Promise<{ rss: number; hwm: number }> {
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
      String(SECONDS + 30),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const m = await memory(child.pid);
  child.kill("SIGTERM");
  const { code, stderr } = await child.output();
  if (code !== 0) {
    throw new Error(
      `${name} exited ${code}: ${new TextDecoder().decode(stderr)}`,
    );
  }
  return m;
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
  const without = await footprint(dir, "without", base);
  const withAlerts = await footprint(dir, "with", {
    ...base,
    alerting: { alertmanagers: [{ url: am.url }] },
  });
  const f = (x: number) => `${x.toFixed(1)} MB`;
  console.log(
    `machine: ${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs; ${SECONDS} s each`,
  );
  console.log(
    `without alerting: VmRSS ${f(without.rss)}, VmHWM ${f(without.hwm)}`,
  );
  console.log(
    `with alerting:    VmRSS ${f(withAlerts.rss)}, VmHWM ${f(withAlerts.hwm)}`,
  );
  console.log(`the sender's thread: ${f(withAlerts.rss - without.rss)} RSS`);
} finally {
  await am.stop();
  await Deno.remove(dir, { recursive: true });
}
