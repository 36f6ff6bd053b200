/**
 * Whether the demo's memory stays flat (issue 32, item 5): runs `main.ts
 * demo` (deploy/demo.yaml's simulated NIC, 10 kHz, nine rules that fire
 * every 20 s cycle, the endpoint on 127.0.0.1) with `alerting:` pushing to
 * a minimal Alertmanager in this process (127.0.0.1, answers every push
 * 200 and keeps nothing), under the demo task's V8 flag and
 * MALLOC_ARENA_MAX (2; `--malloc-arena-max unset` for glibc's default),
 * for `--seconds`.
 * Every `--every` s it reads /proc/PID/status (RssAnon, RssFile, RssShmem,
 * VmRSS, VmHWM) and scrapes /metrics as Prometheus would
 * (process_resident_memory_bytes), prints one row per reading, and at the
 * end the slope of RssAnon and of VmRSS (MB/min, least squares) over the
 * last `--fit` share of the run (default the last half), and the CPU
 * (utime + stime) it used from the first reading to the last.
 *
 * With `--trace-gc` the agent also runs with V8's `--trace-gc`; each
 * isolate (the main thread, the endpoint's Worker, ...) is then a column
 * of its heap after its last collection and, in brackets, what it held
 * committed (MB), so that growth can be put on one isolate or on memory
 * outside the V8 heaps.
 *
 * Run: deno run -A bench/memory_growth.ts [--seconds 600] [--every 15]
 *        [--fit 0.5] [--no-alerting] [--trace-gc] [--v8-flags FLAGS]
 *        [--malloc-arena-max 2|N|unset]
 *        [-- extra demo arguments, e.g. --listen off]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { ROOT } from "../tests/cli_util.ts";
import { freePorts } from "../tests/e2e/fleet_util.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    seconds: { type: "string", default: "600" },
    every: { type: "string", default: "15" },
    fit: { type: "string", default: "0.5" },
    "no-alerting": { type: "boolean", default: false },
    "trace-gc": { type: "boolean", default: false },
    "v8-flags": { type: "string", default: "--max-semi-space-size=1" },
    // As the demo task sets it; "unset" for glibc's default.
    "malloc-arena-max": { type: "string", default: "2" },
  },
});
const SECONDS = Number(values.seconds);
const EVERY = Number(values.every);
const FIT = Number(values.fit);
if (!(SECONDS >= 10) || !(EVERY >= 1 && EVERY <= SECONDS)) {
  throw new RangeError("--seconds must be >= 10, --every 1 to --seconds");
}
if (!(FIT > 0 && FIT <= 1)) throw new RangeError("--fit must be in (0, 1]");

/** The fields of /proc/PID/status read, MB. */
const FIELDS = ["RssAnon", "RssFile", "RssShmem", "VmRSS", "VmHWM"] as const;
type Reading = Record<(typeof FIELDS)[number], number>;

async function status(pid: number): Promise<Reading> {
  const text = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)![1]);
  return Object.fromEntries(FIELDS.map((f) => [f, kb(f) / 1024])) as Reading;
}

/** utime + stime of `pid`, s (fields 14 and 15 of /proc/PID/stat). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ 100
}

/** Least-squares slope of y over x. */
export function slope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0, sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

// The Alertmanager: every push read to its end and answered 200.
let pushes = 0;
const am = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  async (request) => {
    await request.arrayBuffer();
    if (request.method === "POST") pushes++;
    return new Response(null, { status: 200 });
  },
);

const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-memory-" });
const [agentPort] = freePorts(1);
const demo = parse(await Deno.readTextFile(join(ROOT, "deploy/demo.yaml")));
const config = {
  ...demo,
  listen: `127.0.0.1:${agentPort}`,
  monitors: demo.monitors.map((m: Record<string, unknown>) => ({
    ...m,
    event_log: join(dir, `${m.name}-events.log`),
  })),
  ...(values["no-alerting"] ? {} : {
    alerting: {
      alertmanagers: [{ url: `http://127.0.0.1:${am.addr.port}` }],
    },
  }),
};
const file = join(dir, "demo.yaml");
await Deno.writeTextFile(file, stringify(config));

const ARENAS = values["malloc-arena-max"];
if (ARENAS === "unset") Deno.env.delete("MALLOC_ARENA_MAX");
const v8 = [values["v8-flags"], values["trace-gc"] ? "--trace-gc" : ""]
  .filter((f) => f !== "").join(",");
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--no-prompt",
    ...(v8 === "" ? [] : [`--v8-flags=${v8}`]),
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-sys",
    "--allow-net=127.0.0.1",
    join(ROOT, "main.ts"),
    "demo",
    "-c",
    file,
    "--duration",
    String(SECONDS + 30),
    ...positionals,
  ],
  env: ARENAS === "unset" ? {} : { MALLOC_ARENA_MAX: ARENAS },
  stdin: "null",
  stdout: "piped",
  stderr: "piped",
}).spawn();

// --trace-gc: "[PID:0xISOLATE]   123 ms: Scavenge 12.3 (15.0) -> 9.8 (14.0) MB, ..."
// (or Mark-Compact): each isolate's heap after its last collection and what
// it then held committed, MB.
const heaps = new Map<string, { used: number; committed: number }>();
const GC =
  /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: [^\d]*[\d.]+ \([\d.]+\) -> ([\d.]+) \(([\d.]+)\)/;
async function readLines(
  stream: ReadableStream<Uint8Array>,
  line: (text: string) => void,
) {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split(/[\r\n]/);
    rest = parts.pop()!;
    parts.forEach(line);
  }
}
const stdoutDone = readLines(child.stdout, (text) => {
  const m = GC.exec(text);
  if (m) heaps.set(m[1], { used: Number(m[2]), committed: Number(m[3]) });
});
let stderrTail: string[] = [];
const stderrDone = readLines(child.stderr, (text) => {
  if (text.trim() !== "") stderrTail = [...stderrTail.slice(-20), text];
});

async function scrapeRss(): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${agentPort}/metrics`))
      .text();
    const m = /^process_resident_memory_bytes (\S+)$/m.exec(text);
    return m ? Number(m[1]) / 2 ** 20 : NaN;
  } catch {
    return NaN;
  }
}

const loadavg = async () =>
  (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(
  `machine: ${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs, ` +
    `load average ${await loadavg()} at the start; deno ${Deno.version.deno}`,
);
console.log(
  `demo for ${SECONDS} s, a reading every ${EVERY} s, alerting ${
    values["no-alerting"] ? "off" : "on"
  }, V8 flags ${v8 || "none"}, MALLOC_ARENA_MAX ${ARENAS}, extra arguments: ${
    positionals.join(" ")
  }`,
);
const f = (x: number) => x.toFixed(1).padStart(6);
const isolates = () => [...heaps.keys()];
let header = false;
const rows: { t: number; r: Reading; cpu: number }[] = [];
const t0 = performance.now();
try {
  for (let k = 1; k * EVERY <= SECONDS; k++) {
    const wait = t0 + k * EVERY * 1000 - performance.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    const t = (performance.now() - t0) / 1000;
    const [r, cpu, scraped] = [
      await status(child.pid),
      await cpuSeconds(child.pid),
      await scrapeRss(),
    ];
    rows.push({ t, r, cpu });
    if (!header) {
      console.log(
        `${"s".padStart(6)} ${FIELDS.map((x) => x.padStart(8)).join(" ")} ${
          "/metrics".padStart(8)
        }  per isolate: heap after its last GC (committed), MB`,
      );
      header = true;
    }
    console.log(
      `${t.toFixed(0).padStart(6)} ${
        FIELDS.map((x) => f(r[x]).padStart(8)).join(" ")
      } ${f(scraped).padStart(8)}  ${
        isolates().map((i) => {
          const h = heaps.get(i)!;
          return `${h.used.toFixed(1)} (${h.committed.toFixed(1)})`;
        }).join(" ")
      }`,
    );
  }
} finally {
  const fitted = rows.filter((row) => row.t >= SECONDS * (1 - FIT));
  const x = fitted.map((row) => row.t / 60);
  const per = (field: (typeof FIELDS)[number]) =>
    slope(x, fitted.map((row) => row.r[field])).toFixed(3);
  console.log(
    `slope over the last ${Math.round(SECONDS * FIT)} s (${fitted.length} ` +
      `readings), MB/min: RssAnon ${per("RssAnon")}, RssFile ${
        per("RssFile")
      }, VmRSS ${per("VmRSS")}`,
  );
  if (rows.length > 1) {
    const [first, last] = [rows[0], rows.at(-1)!];
    const [a, b] = [first.r, last.r];
    console.log(
      `first -> last reading: RssAnon ${a.RssAnon.toFixed(1)} -> ${
        b.RssAnon.toFixed(1)
      } MB, RssFile ${a.RssFile.toFixed(1)} -> ${b.RssFile.toFixed(1)} MB, ` +
        `VmHWM ${b.VmHWM.toFixed(1)} MB; CPU ${
          (100 * (last.cpu - first.cpu) / (last.t - first.t)).toFixed(2)
        } % of a core; pushes received ${pushes}; ` +
        `load average ${await loadavg()} at the end`,
    );
  }
  child.kill("SIGTERM");
  const { code } = await child.status;
  await Promise.all([stdoutDone, stderrDone]);
  if (code !== 0) {
    console.error(`the demo exited ${code}:\n${stderrTail.join("\n")}`);
  }
  await am.shutdown();
  await Deno.remove(dir, { recursive: true });
  if (code !== 0) Deno.exit(1);
}
