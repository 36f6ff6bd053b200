/**
 * The kernel source's sampler against the C floor, and on a busy host
 * (issue 32, item 5). A veth pair with four queues between two network
 * namespaces (tests/netns.ts); everything is sampled on `b`'s end, and
 * the only traffic is what this bench sends from `a` to `b`.
 *
 * **Default mode**: `--rounds` rounds (default 3), each with, at 10 ms and
 * then at 1 ms,
 *
 * - the C floor (bench/kernel_floor.c, compiled here with `cc -O2` into
 *   bench/out/): every netdev statistics file of the interface (one
 *   `pread` at offset 0 each), one `ETHTOOL_GSTATS` ioctl, a
 *   CLOCK_REALTIME stamp and an absolute-deadline `clock_nanosleep`;
 * - the agent (`main.ts run -q --listen off`, as bench/kernel.ts runs it):
 *   a kernel monitor of every netdev and every ethtool statistic of the
 *   same interface.
 *
 * The two alternate (the C floor first in odd rounds, the agent first in
 * even ones). CPU of each is measured over `--seconds` (default 10) after
 * `--warmup` (default 5) seconds, so the agent's start-up is excluded, as
 * utime + stime of /proc/PID/stat (tick-based, 10 ms units) and as the
 * sum of /proc/PID/task/TID/schedstat run time over its threads (ns).
 * Printed: min/median/max per case, the agent/C ratio of the medians, and
 * the load average at start and end. The goal (issue 32): the agent at
 * most 1.3 times the C floor at 10 ms and at 1 ms.
 *
 * **`--load`**: the agent at 10 ms with a rule on `rx_packets` (`rate`
 * over a 2 ms window, that is over the last sample interval, above 2k/s),
 * `--listen 127.0.0.1:9477` inside `b`'s namespace, beside `--hogs`
 * (default 3) busy loops at nice 0 (bounded by `timeout`, killed at the
 * end) that keep both cores busy, while a python3 sender in `a`'s
 * namespace sends `--bursts` (default 30) bursts of `--burst-packets`
 * (default 400) UDP datagrams to `b`'s address, one burst a second, as
 * fast as it can (each burst's length is reported). Twice: the agent as
 * root as the service runs it, and the agent without privileges to raise
 * its scheduling (`prlimit --rtprio=0 --nice=0` and `setpriv
 * --inh-caps=-all --bounding-set=-all`). Reported: bursts sent, events
 * (from /metrics and `<<Event start>>` lines in events.log), samples and
 * lost samples (/metrics and the closing line), the poll lateness p99
 * (bucket bound) and max, and the source's late samples and interval p99
 * when the agent has those series (else "n/a").
 *
 * Needs root, iproute2, cc, python3, prlimit and setpriv (util-linux),
 * curl (reads /metrics inside the namespace).
 * Run: deno run -A bench/sampler.ts [--rounds 3] [--seconds 10] [--warmup 5]
 *      deno run -A bench/sampler.ts --load [--bursts 30] [--hogs 3]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  canMakeNamespaces,
  denoIn,
  run,
  type VethEnd,
  withVethPair,
} from "../tests/netns.ts";
import { ROOT } from "../tests/cli_util.ts";
import { cpuSeconds, loadavg, median, range, threadRunNs } from "./proc_cpu.ts";
import { integerOption } from "./options.ts";

import { EthtoolStats } from "../collectors/kernel/ethtool_stats.ts";
import { netdevCounterFiles } from "../collectors/kernel/sysfs_counters.ts";

/** Run time of every live thread of `pid`, s. */
const runSeconds = (pid: number) =>
  [...threadRunNs(pid).values()].reduce((s, t) => s + t.ns, 0) / 1e9;

// In the namespace: the interface's counter names, as JSON.
if (Deno.args[0] === "--names") {
  const iface = Deno.args[1];
  const ethtool = EthtoolStats.open(iface);
  console.log(JSON.stringify({
    netdev: netdevCounterFiles(iface).map((f) => f.name),
    ethtool: ethtool.names,
  }));
  ethtool.close();
  Deno.exit(0);
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "5" },
    load: { type: "boolean", default: false },
    bursts: { type: "string", default: "30" },
    "burst-packets": { type: "string", default: "400" },
    hogs: { type: "string", default: "3" },
  },
});

const ROUNDS = integerOption(values, "rounds", 1);
const SECONDS = integerOption(values, "seconds", 2);
const WARMUP = integerOption(values, "warmup", 1);
const BURSTS = integerOption(values, "bursts", 1);
const BURST_PACKETS = integerOption(values, "burst-packets", 1);
const HOGS = integerOption(values, "hogs", 0);
if (!canMakeNamespaces()) {
  throw new Error("bench/sampler.ts needs root and iproute2 (ip netns)");
}

const FLOOR = join(ROOT, "bench/out/kernel_floor");
const LISTEN = "127.0.0.1:9477";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU of `pid` over SECONDS after WARMUP, % of a core, two ways. */
async function cpuShare(pid: number): Promise<{ stat: number; run: number }> {
  await sleep(WARMUP * 1000);
  const stat0 = cpuSeconds(pid);
  const run0 = runSeconds(pid);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  const stat1 = cpuSeconds(pid);
  const run1 = runSeconds(pid);
  const s = (performance.now() - t0) / 1000;
  return { stat: (stat1 - stat0) / s * 100, run: (run1 - run0) / s * 100 };
}

/** The agent's config: every counter of `iface`, and `extra` (rules). */
function agentConfig(
  iface: string,
  periodMs: number,
  eventLog: string,
  names: { netdev: string[]; ethtool: string[] },
  extra = "",
): string {
  const columns = [
    ...names.netdev.map((n) => `netdev:${n}`),
    ...names.ethtool.map((n) => `ethtool:${n}`),
  ];
  return `monitors:
  - name: veth
    source: kernel
    device: ${iface}
    sample_period_ns: ${periodMs * 1_000_000}
    event_log: ${JSON.stringify(eventLog)}
    columns:
${
    columns.map((c, i) =>
      `      - { name: ${
        c === "netdev:rx_packets" ? "rx_packets" : `c${i}`
      }, data_id: "${c}" }`
    ).join("\n")
  }
${extra}`;
}

/** The agent's arguments after `deno run -A`. */
function agentArgs(config: string, listen: string, quiet: boolean): string[] {
  return [
    "--v8-flags=--max-semi-space-size=1",
    join(ROOT, "main.ts"),
    "run",
    ...(quiet ? ["-q"] : []),
    "--config",
    config,
    "--listen",
    listen,
  ];
}

/**
 * Waits (2 s at most) until `pid` is the agent: `ip netns exec` execs it
 * in place, one pid, but a moment after the spawn. Throws if it never is.
 */
async function checkAgent(pid: number): Promise<void> {
  let cmdline = "";
  for (let tries = 0; tries < 200; tries++) {
    cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`)
      .split("\0").join(" ");
    if (cmdline.includes("main.ts") && cmdline.includes(" run ")) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`pid ${pid} is not the agent: ${cmdline}`);
}

async function counterNames(
  b: VethEnd,
): Promise<{ netdev: string[]; ethtool: string[] }> {
  const out = await denoIn(b.namespace, [
    import.meta.filename!,
    "--names",
    b.interface,
  ]).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

// ---------------------------------------------------------------------------
// Default mode: the agent against the C floor

interface FloorReport {
  samples: number;
  late: number;
  cpu_s: number;
  interval_p50_ms: number;
  interval_p99_ms: number;
  interval_max_ms: number;
  netdev_files: number;
  ethtool_stats: number;
}

interface Measured {
  stat: number;
  run: number;
  floor?: FloorReport;
}

async function runFloor(b: VethEnd, periodMs: number): Promise<Measured> {
  const child = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      b.namespace,
      FLOOR,
      b.interface,
      String(periodMs * 1_000_000),
      String(WARMUP + SECONDS + 1),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const share = await cpuShare(child.pid);
  const out = await child.output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return { ...share, floor: JSON.parse(new TextDecoder().decode(out.stdout)) };
}

async function runAgent(
  b: VethEnd,
  periodMs: number,
  dir: string,
  names: { netdev: string[]; ethtool: string[] },
): Promise<Measured> {
  const config = join(dir, `sampler-${periodMs}.yaml`);
  await Deno.writeTextFile(
    config,
    agentConfig(
      b.interface,
      periodMs,
      join(dir, `events-${periodMs}.log`),
      names,
    ),
  );
  const agent = denoIn(b.namespace, agentArgs(config, "off", true), {
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    await checkAgent(agent.pid);
    return await cpuShare(agent.pid);
  } finally {
    agent.kill("SIGTERM");
    const { stderr } = await agent.output();
    const text = new TextDecoder().decode(stderr).trim();
    if (text !== "") console.error(text);
  }
}

async function compare(
  b: VethEnd,
  names: { netdev: string[]; ethtool: string[] },
  dir: string,
): Promise<void> {
  const cases: Record<string, Measured[]> = {};
  const add = (key: string, m: Measured) => (cases[key] ??= []).push(m);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const periodMs of [10, 1]) {
      const order = round % 2 === 1 ? ["C", "agent"] : ["agent", "C"];
      for (const who of order) {
        const m = who === "C"
          ? await runFloor(b, periodMs)
          : await runAgent(b, periodMs, dir, names);
        add(`${who} ${periodMs}`, m);
        console.error(
          `round ${round}, ${who} at ${periodMs} ms: ${m.stat.toFixed(2)} % ` +
            `(stat), ${m.run.toFixed(2)} % (schedstat)` +
            (m.floor === undefined ? "" : `, ${JSON.stringify(m.floor)}`),
        );
      }
    }
  }
  console.log(
    "| period | who | CPU % utime+stime min / median / max | CPU % schedstat min / median / max | samples, late (C) | interval p50 / p99 / max ms (C) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const periodMs of [10, 1]) {
    for (const who of ["C", "agent"]) {
      const ms = cases[`${who} ${periodMs}`];
      const floors = ms.map((m) => m.floor).filter((f) => f !== undefined);
      console.log(
        `| ${periodMs} ms | ${who === "C" ? "C floor" : "agent"} | ${
          range(ms.map((m) => m.stat))
        } | ${range(ms.map((m) => m.run))} | ${
          floors.map((f) => `${f.samples}, ${f.late}`).join("; ") || "-"
        } | ${
          floors.map((f) =>
            `${f.interval_p50_ms.toFixed(2)} / ${
              f.interval_p99_ms.toFixed(2)
            } / ${f.interval_max_ms.toFixed(2)}`
          ).join("; ") || "-"
        } |`,
      );
    }
  }
  for (const periodMs of [10, 1]) {
    const ratio = (k: "stat" | "run") =>
      (median(cases[`agent ${periodMs}`].map((m) => m[k])) /
        median(cases[`C ${periodMs}`].map((m) => m[k]))).toFixed(2);
    console.log(
      `agent / C floor at ${periodMs} ms (medians): ${
        ratio("stat")
      } (utime+stime), ${ratio("run")} (schedstat); goal <= 1.3`,
    );
  }
}

// ---------------------------------------------------------------------------
// --load: bursts beside CPU hogs

/**
 * The sender, run by python3 in `a`'s namespace: BURSTS bursts of
 * BURST_PACKETS 64-byte UDP datagrams to `b`'s port 9, one a second, as
 * fast as it can; prints the bursts' lengths as JSON.
 */
const SENDER = `
import json, socket, sys, time
src, dst, bursts, packets = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 0))
payload = b"x" * 64
t0 = time.monotonic() + 0.5
lengths = []
sent = 0
for i in range(bursts):
    due = t0 + i
    while True:
        d = due - time.monotonic()
        if d <= 0:
            break
        time.sleep(d)
    start = time.monotonic()
    for k in range(packets):
        s.sendto(payload, (dst, 9))
        sent += 1
    lengths.append((time.monotonic() - start) * 1000)
lengths.sort()
print(json.dumps({"bursts": bursts, "packets": sent, "burst_ms_min": lengths[0],
    "burst_ms_median": lengths[len(lengths) // 2], "burst_ms_max": lengths[-1]}))
`;

/** A busy loop that ends by itself after argv[1] seconds. */
const HOG = `
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
`;

/** The agent's rule: a burst is well above 2k/s, the background is 0. */
const BURST_RULE = `    rules:
      - name: burst
        rate: rx_packets
        window: 2ms
        above: 2k/s
        clear: 500/s
        keep_firing_for: 100ms
`;

/** One series' value from a /metrics text, or undefined when absent. */
function series(body: string, name: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** The p99 of a histogram as its bucket's upper bound, or "n/a". */
function histogramP99(body: string, family: string, labels: string): string {
  const buckets: [number, number][] = [];
  const re = new RegExp(
    `^${family}_bucket\\{${labels},le="([^"]+)"\\} (\\S+)$`,
    "gm",
  );
  for (const m of body.matchAll(re)) {
    buckets.push([m[1] === "+Inf" ? Infinity : Number(m[1]), Number(m[2])]);
  }
  const total = series(body, `${family}_count{${labels}}`);
  if (buckets.length === 0 || total === undefined) return "n/a";
  const at = buckets.find(([, n]) => n >= 0.99 * total);
  return at === undefined || at[0] === Infinity
    ? "> last bucket"
    : `<= ${at[0] * 1000} ms`;
}

interface LoadResult {
  who: string;
  capEff: string;
  sender: Record<string, number>;
  eventsMetric: string;
  eventStarts: number;
  samples: string;
  lost: string;
  closing: string;
  latenessP99: string;
  latenessMax: string;
  sourceLate: string;
  intervalP99: string;
  cpu: number;
  loadStart: string;
  loadEnd: string;
}

async function loadCase(
  a: VethEnd,
  b: VethEnd,
  names: { netdev: string[]; ethtool: string[] },
  dir: string,
  unprivileged: boolean,
): Promise<LoadResult> {
  const tag = unprivileged ? "unprivileged" : "root";
  const eventLog = join(dir, `events-load-${tag}.log`);
  const config = join(dir, `sampler-load-${tag}.yaml`);
  await Deno.writeTextFile(
    config,
    agentConfig(b.interface, 10, eventLog, names, BURST_RULE),
  );
  const wrap = unprivileged
    ? [
      "prlimit",
      "--rtprio=0",
      "--nice=0",
      "setpriv",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--",
    ]
    : [];
  const agent = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      b.namespace,
      ...wrap,
      Deno.execPath(),
      "run",
      "-A",
      ...agentArgs(config, LISTEN, false),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Bounded whatever happens: killed at the end, and by `timeout` anyway.
  const bound = String(BURSTS + 60);
  const hogs: Deno.ChildProcess[] = [];
  let streams: Promise<unknown> = Promise.resolve();
  const loadStart = loadavg();
  try {
    const decoder = new TextDecoder();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const collect = async (
      stream: ReadableStream<Uint8Array>,
      into: string[],
    ) => {
      for await (const chunk of stream) into.push(decoder.decode(chunk));
    };
    streams = Promise.all([
      collect(agent.stdout, stdout),
      collect(agent.stderr, stderr),
    ]);
    const until = Date.now() + 60_000;
    while (!/metrics on /.test(stderr.join(""))) {
      if (Date.now() > until) {
        throw new Error(`the agent did not start: ${stderr.join("")}`);
      }
      await sleep(50);
    }
    await checkAgent(agent.pid);
    const capEff = /^CapEff:\s+(\S+)/m.exec(
      Deno.readTextFileSync(`/proc/${agent.pid}/status`),
    )?.[1] ?? "?";
    for (let i = 0; i < HOGS; i++) {
      hogs.push(
        // `nice` execs python3: one pid, which ends by itself.
        new Deno.Command("nice", {
          args: ["-n", "0", "python3", "-c", HOG, bound],
          stdout: "null",
          stderr: "null",
        }).spawn(),
      );
    }
    await sleep(WARMUP * 1000);
    const cpu0 = runSeconds(agent.pid);
    const t0 = performance.now();
    const sent = await new Deno.Command("ip", {
      args: [
        "netns",
        "exec",
        a.namespace,
        "timeout",
        bound,
        "python3",
        "-c",
        SENDER,
        a.address,
        b.address,
        String(BURSTS),
        String(BURST_PACKETS),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!sent.success) throw new Error(decoder.decode(sent.stderr));
    await sleep(1000); // the last burst's event ends (keep_firing_for)
    const cpu = (runSeconds(agent.pid) - cpu0) /
      ((performance.now() - t0) / 1000) * 100;
    const metrics = await new Deno.Command("ip", {
      args: [
        "netns",
        "exec",
        b.namespace,
        "curl",
        "-sS",
        "--max-time",
        "10",
        `http://${LISTEN}/metrics`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const body = decoder.decode(metrics.stdout);
    const m = 'monitor="veth"';
    const show = (v: number | undefined, f = (x: number) => String(x)) =>
      v === undefined ? "n/a" : f(v);
    const loadEnd = loadavg();
    for (const hog of hogs) hog.kill("SIGKILL");
    agent.kill("SIGTERM");
    await agent.status;
    await streams;
    const closing = /^veth: .*$/m.exec(stdout.join(""))?.[0] ?? "n/a";
    const log = await Deno.readTextFile(eventLog).catch(() => "");
    return {
      who: unprivileged
        ? "nice 0, no caps (prlimit --rtprio=0 --nice=0, setpriv)"
        : "root",
      capEff,
      sender: JSON.parse(decoder.decode(sent.stdout)),
      eventsMetric: show(series(body, `dpu_traceback_events_total{${m}}`)),
      eventStarts: log.split("\n").filter((l) =>
        l.startsWith("<<Event start>>")
      ).length,
      samples: show(series(body, `dpu_traceback_samples_total{${m}}`)),
      lost: show(series(body, `dpu_traceback_lost_samples_total{${m}}`)),
      closing,
      latenessP99: histogramP99(body, "dpu_traceback_poll_lateness_seconds", m),
      latenessMax: show(
        series(body, `dpu_traceback_poll_lateness_max_seconds{${m}}`),
        (s) => `${(s * 1000).toFixed(1)} ms`,
      ),
      sourceLate: show(
        series(body, `dpu_traceback_source_late_samples_total{${m}}`),
      ),
      intervalP99: histogramP99(
        body,
        "dpu_traceback_source_interval_seconds",
        m,
      ),
      cpu,
      loadStart,
      loadEnd,
    };
  } finally {
    for (const hog of hogs) {
      try {
        hog.kill("SIGKILL");
      } catch {
        // already gone
      }
      await hog.status;
    }
    try {
      agent.kill("SIGTERM");
    } catch {
      // already gone
    }
    await agent.status;
    await streams;
  }
}

async function load(
  a: VethEnd,
  b: VethEnd,
  names: { netdev: string[]; ethtool: string[] },
  dir: string,
): Promise<void> {
  const results: LoadResult[] = [];
  for (const unprivileged of [false, true]) {
    const r = await loadCase(a, b, names, dir, unprivileged);
    console.error(JSON.stringify(r));
    results.push(r);
  }
  console.log(
    `agent at 10 ms beside ${HOGS} busy loops at nice 0; ${BURSTS} bursts of ${BURST_PACKETS} UDP datagrams, one a second; rule: rate of rx_packets over 2 ms above 2k/s`,
  );
  console.log(
    "| agent | CapEff | bursts sent (length min / median / max ms) | events (metric / log starts) | samples | lost | source late | lateness p99 / max | interval p99 | agent CPU % | load average start → end |",
  );
  console.log(
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const r of results) {
    const s = r.sender;
    console.log(
      `| ${r.who} | ${r.capEff} | ${s.bursts} (${s.burst_ms_min.toFixed(2)} / ${
        s.burst_ms_median.toFixed(2)
      } / ${
        s.burst_ms_max.toFixed(2)
      }) | ${r.eventsMetric} / ${r.eventStarts} | ${r.samples} | ${r.lost} | ${r.sourceLate} | ${r.latenessP99} / ${r.latenessMax} | ${r.intervalP99} | ${
        r.cpu.toFixed(2)
      } | ${r.loadStart.split(" ").slice(0, 3).join(" ")} → ${
        r.loadEnd.split(" ").slice(0, 3).join(" ")
      } |`,
    );
    console.log(`closing line (${r.who}): ${r.closing}`);
  }
}

// ---------------------------------------------------------------------------

const startLoad = loadavg();
console.log(`Deno ${Deno.version.deno}, ${Deno.build.target}`);
console.log(`load average at start: ${startLoad}`);
await Deno.mkdir(join(ROOT, "bench/out"), { recursive: true });
if (!values.load) {
  await run(
    "cc",
    "-O2",
    "-Wall",
    "-Wextra",
    "-o",
    FLOOR,
    join(ROOT, "bench/kernel_floor.c"),
  );
}
await withVethPair(async ({ a, b }) => {
  const names = await counterNames(b);
  console.log(
    `${b.interface}: ${names.netdev.length} netdev statistics files, ${names.ethtool.length} ethtool statistics`,
  );
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-sampler-" });
  try {
    if (values.load) await load(a, b, names, dir);
    else {
      console.log(
        `${ROUNDS} rounds, CPU over ${SECONDS} s after a ${WARMUP} s warm-up`,
      );
      await compare(b, names, dir);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}, { queues: 4 });
console.log(`load average at end: ${loadavg()}`);
