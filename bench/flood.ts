/**
 * `deno task bench:flood`: the agent, run as an operator runs it
 * (`main.ts run -c CONFIG`, a child process), sampling at 10 kHz with an
 * event active the whole time, against floods on its metrics endpoint,
 * with a correct scraper beside each flood. Sources: the built-in
 * simulator (`sim`) and the DOCA C simulator (`doca`,
 * tests/fixtures/libdoca_sim, built with cc).
 *
 * ```sh
 * deno task bench:flood                              # every case, both sources, 120 s each
 * deno task bench:flood --seconds 15 --case a,e --source doca
 * ```
 *
 * Cases (the attack clients are bench/flood_clients.ts processes; the
 * attackers use the source addresses 127.0.0.16 and up, `--attack-addrs`):
 *
 * - a: `--connections` (1000) HTTP/1.1 keep-alive connections hammering
 *   `/metrics`.
 * - b: `--idle` (20000) connections that send nothing.
 * - c: `--slow` (1000) slowloris connections: a request line, then one
 *   header byte every `--slow-interval-ms` (2000).
 * - d: TLS (self-signed RSA 2048 cert made with openssl): `--tls-abandon`
 *   (1000) connections that start a handshake and abandon it (half after a
 *   whole ClientHello, half after 10 bytes of one) and `--tls-complete`
 *   (64) loops completing handshakes and closing.
 * - e: basic auth (bcrypt cost 10): `--auth-connections` (256) keep-alive
 *   connections sending wrong passwords from `--auth-addrs` (1) address.
 *
 * Every slot of every attack reconnects `--reconnect-ms` (100) after the
 * agent drops it, so the pressure lasts the whole case.
 *
 * Beside every case a correct scraper (source address 127.0.0.2, Deno's
 * fetch, keep-alive like Prometheus, Prometheus' Accept and
 * Accept-Encoding) scrapes `/metrics` every second with a 1 s timeout
 * (`--scrape-timeout-ms`: Prometheus caps the timeout at the interval).
 * In a-d it has been scraping for 2 s when the attack starts; in e its
 * user logs in for the first time after the flood started (the lock-out
 * test). A second correct scraper (127.0.0.4) makes a new connection (and
 * TLS handshake) for every scrape, as Prometheus does when its interval is
 * longer than the agent's 20 s idle timeout (its default is 1 min); it is
 * reported, not a target. The bench's own readings (readiness, the
 * lateness histogram before and after, the final figures) come from a
 * third client, 127.0.0.3 (with its own user in e).
 *
 * The agent gets the file descriptor limit a systemd service without
 * LimitNOFILE= gets (deploy/dpu-traceback.service sets none: systemd's
 * default 1024 soft, 524288 hard; Deno raises the soft limit to the hard
 * one at start-up), the hard limit lowered to this process' own where that
 * is less (`--agent-nofile SOFT:HARD` to choose); the limit it ended up
 * with is read from /proc and printed. The agent runs with the V8 flags
 * `deno task compile` builds the installed binary with. Attack clients run
 * under `nice -n 10` (`--client-nice`), standing in for attackers whose
 * CPU is not the agent's host's, in processes of at most 5000 connections
 * with a limit of 6000 descriptors each (or this process' hard limit).
 *
 * Recorded per case and source: samples and samples lost
 * (`lost_samples_total` at the end and the agent's closing line `nic: N
 * samples, M lost by the source`), `<<Gap>>` markers and timestamp jumps
 * in events.log, rows dropped (`events_log_dropped_rows_total`), peak RSS
 * (VmHWM of the agent's process, the `deno run main.ts` itself, checked by
 * its /proc cmdline), the poll loop's lateness during the attack (p99 as
 * the upper bound of its histogram bucket, so an upper bound; max since
 * start), the scraper's success rate and p99 latency, and the exit code
 * after SIGTERM.
 *
 * Output: a markdown table on stdout, also written to
 * bench/out/flood-<date>.md (git-ignored), raw results to
 * bench/out/flood-<date>.json.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { errorMessage } from "../base/error_message.ts";
import { LATENESS_BOUNDS_S } from "../collectors/poll_stats.ts";
import { mainCommand, ROOT } from "../tests/cli_util.ts";
import {
  buildDocaSim,
  type DocaSim,
} from "../tests/fixtures/libdoca_sim/build.ts";
import type { ClientStats, Mode } from "./flood_clients.ts";
import { selfSignedCert } from "../tests/tls_cert.ts";
import { integerOption } from "./options.ts";

const HERE = new URL("./", import.meta.url);
const CLIENTS = fileURLToPath(new URL("flood_clients.ts", HERE));
const decoder = new TextDecoder();

const CASES = ["a", "b", "c", "d", "e"] as const;
type CaseName = typeof CASES[number];
const SOURCES = ["sim", "doca"] as const;
type Source = typeof SOURCES[number];

const CASE_TITLES: Record<CaseName, string> = {
  a: "keep-alive hammer",
  b: "idle connections",
  c: "slowloris",
  d: "TLS handshake flood",
  e: "wrong-password flood",
};

/** The always-active rule added to the demo's nine. */
const BENCH_RULE = "bench: rx bytes total > 0 (always active)";
const PERIOD_NS = 100_000;
/** Targets. */
const MAX_RSS_BYTES = 200e6;
const MIN_SCRAPE_SUCCESS = 0.99;
/** systemd's default RLIMIT_NOFILE for services (DefaultLimitNOFILE=). */
const SYSTEMD_NOFILE = { soft: 1024, hard: 524288 };
/** Most connections one client process opens. */
const PER_CLIENT_PROCESS = 5000;
/** The correct scraper's and the bench's own source addresses. */
const SCRAPER_ADDR = "127.0.0.2";
const BENCH_ADDR = "127.0.0.3";
/** A second correct scraper, making a new connection for every scrape. */
const FRESH_ADDR = "127.0.0.4";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "120" },
    case: { type: "string", default: CASES.join(",") },
    source: { type: "string", default: SOURCES.join(",") },
    "attack-addrs": { type: "string", default: "16" },
    connections: { type: "string", default: "1000" },
    idle: { type: "string", default: "20000" },
    slow: { type: "string", default: "1000" },
    "slow-interval-ms": { type: "string", default: "2000" },
    "tls-abandon": { type: "string", default: "1000" },
    "tls-complete": { type: "string", default: "64" },
    "auth-connections": { type: "string", default: "256" },
    "auth-addrs": { type: "string", default: "1" },
    "reconnect-ms": { type: "string", default: "100" },
    "scrape-timeout-ms": { type: "string", default: "1000" },
    "agent-nofile": { type: "string" },
    "client-nice": { type: "string", default: "10" },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

/** A positive integer option, or a one-line error. */

function listOption<T extends string>(
  name: string,
  value: string,
  allowed: readonly T[],
): T[] {
  const items = value.split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item)) {
      throw new RangeError(
        `--${name} takes ${allowed.join(",")}, got ${item}`,
      );
    }
  }
  return items as T[];
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

// ---------------------------------------------------------------------------
// The machine

async function text(command: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(command, {
      args,
      stdout: "piped",
      stderr: "null",
    }).output();
    return decoder.decode(out.stdout);
  } catch {
    return "";
  }
}

async function machine(): Promise<string> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? "unknown";
  const nproc = (await text("nproc", [])).trim();
  const mem = /^MemTotal:\s*(\d+)/m.exec(
    await Deno.readTextFile("/proc/meminfo").catch(() => ""),
  )?.[1];
  const load = (await Deno.readTextFile("/proc/loadavg").catch(() => ""))
    .split(" ").slice(0, 3).join(" ");
  return `${model}, nproc ${nproc}, ${
    mem ? `${(Number(mem) / 1048576).toFixed(0)} GiB RAM, ` : ""
  }Linux ${Deno.osRelease()} ${Deno.build.arch}; Deno ${Deno.version.deno} ` +
    `(V8 ${Deno.version.v8}); load average at start ${load}`;
}

/**
 * The V8 flags `deno task compile` builds the installed binary with, so
 * that `deno run main.ts` here has the heap an operator's agent has.
 */
async function compiledV8Flags(): Promise<string | undefined> {
  const json = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  return /--v8-flags=(\S+)/.exec(json.tasks?.compile ?? "")?.[1];
}

/** This process' RLIMIT_NOFILE. */
async function ownNofile(): Promise<{ soft: number; hard: number }> {
  const limits = await Deno.readTextFile("/proc/self/limits");
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  const n = (s: string | undefined) =>
    s === undefined || s === "unlimited" ? Infinity : Number(s);
  return { soft: n(m?.[1]), hard: n(m?.[2]) };
}

// ---------------------------------------------------------------------------
// Set-up: config, certificate, web configs

interface Setup {
  readonly dir: string;
  readonly doca?: DocaSim;
  readonly tlsWeb: string;
  readonly authWeb: string;
  readonly caCert: string;
  /** `Authorization` values. */
  readonly scraperAuth: string;
  readonly benchAuth: string;
}

const basic = (user: string, password: string) =>
  `Basic ${btoa(`${user}:${password}`)}`;

async function setUp(dir: string, sources: Source[]): Promise<Setup> {
  // A self-signed server certificate, as an operator would make one.
  const tls = await selfSignedCert(dir, "tls", "rsa");
  const tlsWeb = join(dir, "web-tls.yml");
  await Deno.writeTextFile(
    tlsWeb,
    "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n",
  );
  // Two users, cost 10: the scraper's, and the bench's own for its readings
  // (so the scraper's first login is its own, during the flood).
  const scraperPassword = crypto.randomUUID();
  const benchPassword = crypto.randomUUID();
  const authWeb = join(dir, "web-auth.yml");
  await Deno.writeTextFile(
    authWeb,
    "basic_auth_users:\n" +
      `  prometheus: "${bcrypt.hashSync(scraperPassword, 10)}"\n` +
      `  bench: "${bcrypt.hashSync(benchPassword, 10)}"\n`,
  );
  const doca = sources.includes("doca") ? await buildDocaSim() : undefined;
  return {
    dir,
    doca,
    tlsWeb,
    authWeb,
    caCert: tls.cert,
    scraperAuth: basic("prometheus", scraperPassword),
    benchAuth: basic("bench", benchPassword),
  };
}

/**
 * The demo rule left out on the DOCA simulator: its counters follow a
 * formula, not the demo's scenario, and this `inc_gt` flaps there
 * (about 10,000 events in a 6 s run), which would make the doca cases a
 * test of event churn (an fsync per event end, a tally entry per event)
 * rather than of the endpoint.
 */
const FLAPPING_ON_DOCA = "Rx buffer discards >= 10 per sample";

/**
 * deploy/demo.yaml's monitor (10 columns at 10 kHz, depth 1000, nine
 * scenario rules, three of them signal rules; eight on doca, see
 * FLAPPING_ON_DOCA: there the ECN storm never starts and the discard ratio
 * and PFC pause storm start once and stay active) on `source`, plus a rule
 * that is active from the first 0.1 s to the end, so every sample is
 * written to events.log.
 */
async function writeConfig(
  path: string,
  source: Source,
  eventLog: string,
): Promise<void> {
  const demo = parseYaml(
    await Deno.readTextFile(join(ROOT, "deploy/demo.yaml")),
  ) as { monitors: Record<string, unknown>[] };
  const monitor = { ...demo.monitors[0] };
  monitor.source = source;
  if (source === "doca") {
    monitor.device = "03:00.0";
    delete monitor.seed;
  }
  monitor.event_log = eventLog;
  monitor.rules = [
    ...(monitor.rules as { name: string }[]).filter((r) =>
      source !== "doca" || r.name !== FLAPPING_ON_DOCA
    ),
    {
      name: BENCH_RULE,
      column: "port_0_rx_bytes",
      comparison_type: "gt",
      comparison_value: 0,
    },
  ];
  await Deno.writeTextFile(
    path,
    stringifyYaml({ gpu: "off", monitors: [monitor] }),
  );
}

// ---------------------------------------------------------------------------
// The agent

interface ProcPeak {
  maxRss: number;
  maxFds: number;
  maxThreads: number;
  /** [performance.now(), VmRSS] every 250 ms. */
  rss: [number, number][];
}

class Agent {
  readonly child: Deno.ChildProcess;
  readonly pid: number;
  url = "";
  exited: Deno.CommandStatus | undefined;
  readonly #stderr: string[] = [];
  #stderrLength = 0;
  #stdout: Promise<string>;
  #stderrDone: Promise<void>;
  readonly peak: ProcPeak = {
    maxRss: 0,
    maxFds: 0,
    maxThreads: 0,
    rss: [],
  };
  #sampling: ReturnType<typeof setInterval> | undefined;

  constructor(
    args: string[],
    env: Record<string, string>,
    nofile: string,
    v8Flags: string | undefined,
  ) {
    this.child = mainCommand(args, {
      flags: [
        "-A",
        ...(v8Flags === undefined ? [] : [`--v8-flags=${v8Flags}`]),
      ],
      testDefaults: false,
      env,
      via: ["prlimit", `--nofile=${nofile}`, "--"],
    }).spawn();
    this.pid = this.child.pid;
    this.#stdout = new Response(this.child.stdout).text().catch(() => "");
    const reader = this.child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    this.#stderrDone = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({
          value: undefined,
          done: true,
        }));
        if (done) return;
        // Bounded: a flood of lines must not grow this process.
        if (this.#stderrLength < 1_000_000) {
          this.#stderr.push(value!);
          this.#stderrLength += value!.length;
        }
      }
    })();
    this.child.status.then((s) => this.exited = s);
  }

  get stderr(): string {
    return this.#stderr.join("");
  }

  /** Waits for the `metrics on URL` line. */
  async waitUrl(timeoutMs = 60_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const url = /metrics on (\S+)/.exec(this.stderr)?.[1];
      if (url !== undefined) return this.url = url;
      if (this.exited !== undefined) break;
      await sleep(50);
    }
    throw new Error(
      `agent printed no endpoint address (exit ${this.exited?.code}); stderr: ${
        this.stderr.slice(0, 2000)
      }`,
    );
  }

  /** Throws unless the process is the agent (`deno run ... main.ts run`). */
  async checkIdentity(): Promise<{ cmdline: string; nofile: string }> {
    const cmdline = (await Deno.readTextFile(`/proc/${this.pid}/cmdline`))
      .split("\0").join(" ").trim();
    if (!cmdline.includes("main.ts") || !cmdline.includes(" run ")) {
      throw new Error(`pid ${this.pid} is not the agent: ${cmdline}`);
    }
    const limits = await Deno.readTextFile(`/proc/${this.pid}/limits`);
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
    return { cmdline, nofile: `${m?.[1]}:${m?.[2]}` };
  }

  /** Samples VmRSS, open fds and threads every 250 ms. */
  startSampling(): void {
    const tick = async () => {
      const status = await this.status();
      if (status === undefined) return;
      this.peak.maxRss = Math.max(this.peak.maxRss, status.rss);
      this.peak.rss.push([performance.now(), status.rss]);
      this.peak.maxThreads = Math.max(this.peak.maxThreads, status.threads);
      let fds = 0;
      try {
        for await (const _ of Deno.readDir(`/proc/${this.pid}/fd`)) fds++;
      } catch {
        return;
      }
      this.peak.maxFds = Math.max(this.peak.maxFds, fds);
    };
    this.#sampling = setInterval(() => void tick(), 250);
  }

  stopSampling(): void {
    clearInterval(this.#sampling);
  }

  /** VmRSS, VmHWM (bytes) and threads; undefined once the process is gone. */
  async status(): Promise<
    { rss: number; hwm: number; threads: number } | undefined
  > {
    let text: string;
    try {
      text = await Deno.readTextFile(`/proc/${this.pid}/status`);
    } catch {
      return undefined;
    }
    const kb = (key: string) =>
      Number(new RegExp(`^${key}:\\s*(\\d+)`, "m").exec(text)?.[1] ?? 0) *
      1024;
    return {
      rss: kb("VmRSS"),
      hwm: kb("VmHWM"),
      threads: Number(/^Threads:\s*(\d+)/m.exec(text)?.[1] ?? 0),
    };
  }

  /** utime + stime, s. */
  async cpuSeconds(): Promise<number> {
    try {
      const stat = await Deno.readTextFile(`/proc/${this.pid}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return NaN;
    }
  }

  /**
   * SIGTERM, then the exit code and stdout; SIGKILL after `graceMs`
   * (systemd's TimeoutStopSec=30s), reported as code null.
   */
  async stop(graceMs = 30_000): Promise<
    { code: number | null; stdout: string; stopS: number }
  > {
    this.stopSampling();
    const t0 = performance.now();
    try {
      this.child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    const grace = new AbortController();
    const killed = await Promise.race([
      this.child.status.then(() => false),
      sleep(graceMs, grace.signal).then(() => !grace.signal.aborted),
    ]);
    grace.abort();
    if (killed) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    const status = await this.child.status;
    const stopS = (performance.now() - t0) / 1000;
    const stdout = await this.#stdout;
    await this.#stderrDone;
    return { code: killed ? null : status.code, stdout, stopS };
  }

  /** Ends the process whatever state it is in (cleanup). */
  async kill(): Promise<void> {
    this.stopSampling();
    if (this.exited === undefined) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Gone.
      }
    }
    await this.child.status.catch(() => {});
  }
}

// ---------------------------------------------------------------------------
// Scraping

interface ScrapeResult {
  ok: boolean;
  ms: number;
  status?: number;
  error?: string;
  body?: string;
}

/** A client of the endpoint from one source address (keep-alive). */
class Scraper {
  readonly #client: Deno.HttpClient | undefined;
  readonly #makeClient: () => Deno.HttpClient;
  readonly #url: string;
  readonly #authorization?: string;
  readonly #timeoutMs: number;

  /**
   * `fresh`: a new connection (and TLS handshake) for every request, as
   * Prometheus makes when its scrape interval is longer than the agent's
   * idle timeout (20 s; Prometheus' default interval is 1 min).
   */
  constructor(
    url: string,
    localAddress: string,
    options: {
      caCert?: string;
      authorization?: string;
      timeoutMs: number;
      fresh?: boolean;
    },
  ) {
    this.#url = url;
    this.#authorization = options.authorization;
    this.#timeoutMs = options.timeoutMs;
    this.#makeClient = () =>
      Deno.createHttpClient({
        localAddress,
        caCerts: options.caCert === undefined ? undefined : [options.caCert],
      });
    this.#client = options.fresh ? undefined : this.#makeClient();
  }

  /** One GET; `prometheus` sends Prometheus' Accept and Accept-Encoding. */
  async get(
    path: string,
    prometheus: boolean,
    timeoutMs = this.#timeoutMs,
  ): Promise<ScrapeResult> {
    const t0 = performance.now();
    const client = this.#client ?? this.#makeClient();
    try {
      const res = await fetch(new URL(path.replace(/^\//, ""), this.#url), {
        client,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          accept: prometheus
            ? "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
            : "text/plain",
          ...(prometheus ? { "accept-encoding": "gzip" } : {}),
          ...(this.#authorization === undefined
            ? {}
            : { authorization: this.#authorization }),
        },
      });
      let bytes = new Uint8Array(await res.arrayBuffer());
      if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
        // Deno 2.9.6's fetch decodes gzip itself, also when the caller
        // set Accept-Encoding; should a version not, decode here.
        bytes = new Uint8Array(
          await new Response(
            new Blob([bytes]).stream().pipeThrough(
              new DecompressionStream("gzip"),
            ),
          ).arrayBuffer(),
        );
      }
      const body = decoder.decode(bytes);
      const ms = performance.now() - t0;
      const ok = res.status === 200 &&
        (path !== "/metrics" ||
          body.includes('dpu_traceback_samples_total{monitor="nic"}'));
      return { ok, ms, status: res.status, body };
    } catch (error) {
      return {
        ok: false,
        ms: performance.now() - t0,
        error: error instanceof DOMException && error.name === "TimeoutError"
          ? "timeout"
          : errorMessage(error).split("\n")[0].slice(0, 120),
      };
    } finally {
      if (client !== this.#client) client.close();
    }
  }

  /** Retries `path` until it answers 200 (or `timeoutMs` passes). */
  async until(path: string, timeoutMs: number): Promise<ScrapeResult> {
    const end = performance.now() + timeoutMs;
    let last: ScrapeResult = { ok: false, ms: 0, error: "never tried" };
    while (performance.now() < end) {
      last = await this.get(path, false, 5000);
      if (last.ok) return last;
      await sleep(200);
    }
    return last;
  }

  close(): void {
    this.#client?.close();
  }
}

/** The correct scraper's loop: one scrape a second until stopped. */
function scrapeLoop(scraper: Scraper, stop: AbortSignal): {
  results: (ScrapeResult & { at: number })[];
  done: Promise<void>;
} {
  const results: (ScrapeResult & { at: number })[] = [];
  const done = (async () => {
    let next = performance.now();
    while (!stop.aborted) {
      const at = performance.now();
      const r = await scraper.get("/metrics", true);
      delete r.body;
      results.push({ ...r, at });
      next += 1000;
      // A scrape that overran its slot: the next starts on the next second.
      while (next < performance.now()) next += 1000;
      await sleep(next - performance.now(), stop);
    }
  })();
  return { results, done };
}

// ---------------------------------------------------------------------------
// Readings from /metrics

interface Reading {
  samples: number;
  lost: number;
  droppedRows: number;
  events: number;
  buckets: number[];
  count: number;
  maxS: number;
  ruleActive: number;
  ruleActivations: number;
  rssBytes: number;
}

function reading(body: string): Reading {
  const value = (series: string) => {
    const line = body.split("\n").find((l) => l.startsWith(`${series} `));
    if (line === undefined) throw new Error(`no series ${series} in /metrics`);
    return Number(line.slice(series.length + 1));
  };
  const m = 'monitor="nic"';
  const rule = `${m},rule="${BENCH_RULE}"`;
  return {
    samples: value(`dpu_traceback_samples_total{${m}}`),
    lost: value(`dpu_traceback_lost_samples_total{${m}}`),
    droppedRows: value(`dpu_traceback_events_log_dropped_rows_total{${m}}`),
    events: value(`dpu_traceback_events_total{${m}}`),
    buckets: [...LATENESS_BOUNDS_S.map(String), "+Inf"].map((le) =>
      value(`dpu_traceback_poll_lateness_seconds_bucket{${m},le="${le}"}`)
    ),
    count: value(`dpu_traceback_poll_lateness_seconds_count{${m}}`),
    maxS: value(`dpu_traceback_poll_lateness_max_seconds{${m}}`),
    ruleActive: value(`dpu_traceback_rule_active{${rule}}`),
    ruleActivations: value(`dpu_traceback_rule_activations_total{${rule}}`),
    rssBytes: value("process_resident_memory_bytes"),
  };
}

/** Upper bound of the p99 of polls between two readings, s (Infinity: over 1 s). */
function latenessP99(before: Reading, after: Reading): number {
  const polls = after.count - before.count;
  const i = LATENESS_BOUNDS_S.findIndex((_, i) =>
    after.buckets[i] - before.buckets[i] >= 0.99 * polls
  );
  return i < 0 ? Infinity : LATENESS_BOUNDS_S[i];
}

// ---------------------------------------------------------------------------
// events.log

interface LogCheck {
  rows: number;
  gapMarkers: number;
  /** Sum of the numbers in `<<Gap>>` markers. */
  gapSamples: number;
  /** Row-to-row timestamp steps over 1.5 periods (forward). */
  jumps: number;
  /** Samples those steps skip. */
  jumpSamples: number;
  backward: number;
  bytes: number;
}

/** Reads events.log once, counting rows, gap markers and timestamp jumps. */
async function checkLog(path: string): Promise<LogCheck> {
  const check: LogCheck = {
    rows: 0,
    gapMarkers: 0,
    gapSamples: 0,
    jumps: 0,
    jumpSamples: 0,
    backward: 0,
    bytes: 0,
  };
  const file = await Deno.open(path);
  let last: bigint | undefined;
  let rest = "";
  const period = BigInt(PERIOD_NS);
  const line = (l: string) => {
    const c = l.charCodeAt(0);
    if (c >= 48 && c <= 57) {
      check.rows++;
      const ts = BigInt(l.slice(0, l.indexOf(",")));
      if (last !== undefined) {
        const d = ts - last;
        if (d < 0n) check.backward++;
        else if (d * 2n > period * 3n) {
          check.jumps++;
          check.jumpSamples += Number((d + period / 2n) / period) - 1;
        }
      }
      last = ts;
    } else if (l.startsWith("<<Gap>>")) {
      check.gapMarkers++;
      check.gapSamples += Number(/: (\d+)$/.exec(l)?.[1] ?? 0);
    } else if (l.startsWith("<<")) {
      // Event markers: a history dump may follow, going back in time.
      last = undefined;
    }
  };
  const textDecoder = new TextDecoder();
  for await (const chunk of file.readable) {
    check.bytes += chunk.length;
    const text = rest + textDecoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    rest = lines.pop()!;
    for (const l of lines) line(l);
  }
  if (rest !== "") line(rest);
  return check;
}

// ---------------------------------------------------------------------------
// Attack clients

interface ClientProcess {
  mode: Mode;
  child: Deno.ChildProcess;
  output: Promise<{ stats?: ClientStats; stderr: string; code: number }>;
}

function spawnClients(
  mode: Mode,
  total: number,
  addrs: string[],
  port: number,
  seconds: number,
  nofile: number,
  extra: string[],
): ClientProcess[] {
  const processes = Math.max(1, Math.ceil(total / PER_CLIENT_PROCESS));
  const out: ClientProcess[] = [];
  const nice = integerOption(values, "client-nice", 0);
  for (let p = 0; p < processes; p++) {
    const share = Math.floor(total / processes) +
      (p < total % processes ? 1 : 0);
    if (share === 0) continue;
    const args = [
      ...(nice > 0 ? ["-n", String(nice)] : []),
      "prlimit",
      `--nofile=${nofile}:${nofile}`,
      "--",
      Deno.execPath(),
      "run",
      "-A",
      CLIENTS,
      "--mode",
      mode,
      "--port",
      String(port),
      "--count",
      String(share),
      "--addrs",
      addrs.join(","),
      "--seconds",
      String(seconds),
      "--reconnect-ms",
      values["reconnect-ms"],
      ...extra,
    ];
    const child = new Deno.Command(nice > 0 ? "nice" : args.shift()!, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output().then((o) => {
      const line = decoder.decode(o.stdout).split("\n").find((l) =>
        l.startsWith("{")
      );
      return {
        stats: line === undefined ? undefined : JSON.parse(line),
        stderr: decoder.decode(o.stderr).slice(-2000),
        code: o.code,
      };
    });
    out.push({ mode, child, output });
  }
  return out;
}

function killClients(clients: ClientProcess[]): void {
  for (const c of clients) {
    try {
      c.child.kill("SIGKILL");
    } catch {
      // Already ended.
    }
  }
}

/** Sums the counts of one mode's processes. */
function mergeStats(all: ClientStats[]): ClientStats | undefined {
  if (all.length === 0) return undefined;
  const sum = (f: (s: ClientStats) => number) =>
    all.reduce((a, s) => a + f(s), 0);
  const tables = (f: (s: ClientStats) => Record<string, number>) => {
    const t: Record<string, number> = {};
    for (const s of all) {
      for (const [k, v] of Object.entries(f(s))) t[k] = (t[k] ?? 0) + v;
    }
    return t;
  };
  const ramps = all.map((s) => s.rampS);
  return {
    mode: all[0].mode,
    count: sum((s) => s.count),
    addrs: all[0].addrs,
    connects: sum((s) => s.connects),
    connected: sum((s) => s.connected),
    connectErrors: tables((s) => s.connectErrors),
    closedByServer: sum((s) => s.closedByServer),
    responses: tables((s) => s.responses),
    requests: sum((s) => s.requests),
    handshakes: sum((s) => s.handshakes),
    maxOpen: sum((s) => s.maxOpen),
    openAtEnd: sum((s) => s.openAtEnd),
    connectingAtEnd: sum((s) => s.connectingAtEnd),
    rampS: ramps.some((r) => r === null)
      ? null
      : Math.max(...(ramps as number[])),
    lifetimeMs: {
      count: sum((s) => s.lifetimeMs.count),
      max: Math.max(...all.map((s) => s.lifetimeMs.max)),
      median: all[0].lifetimeMs.median,
    },
    socketErrors: tables((s) => s.socketErrors),
    seconds: all[0].seconds,
  };
}

// ---------------------------------------------------------------------------
// One case

interface CaseResult {
  source: Source;
  case: CaseName;
  error?: string;
  agentNofile?: string;
  samples?: number;
  /** lost_samples_total at the end, and from the closing line. */
  lostMetric?: number;
  lostSummary?: number;
  log?: LogCheck;
  droppedRows?: number;
  hwmBytes?: number;
  /** VmRSS when the attack started. */
  rssBeforeBytes?: number;
  /** VmRSS at a quarter, half, three quarters and the end of the attack. */
  rssDuringBytes?: number[];
  maxRssSampled?: number;
  maxFds?: number;
  maxThreads?: number;
  agentCpuS?: number;
  latenessP99S?: number;
  latenessMaxS?: number;
  polls?: number;
  eventActive?: boolean;
  /** The keep-alive scraper (the target) and the new-connection one. */
  scraper?: ScrapeSummary;
  freshScraper?: ScrapeSummary;
  finalRead?: boolean;
  aliveThroughout?: boolean;
  exitCode?: number | null;
  stopS?: number;
  endpointLines?: string[];
  clients?: ClientStats[];
  clientProblems?: string[];
  wallS?: number;
}

/**
 * The agent's stderr, the start-up line left out and repeats folded: each
 * distinct line once, with how often it was printed and how many more the
 * agent's rate limit said it held back ("(N more like it ...)").
 */
function stderrSummary(stderr: string): string[] {
  const seen = new Map<string, { lines: number; more: number }>();
  for (const line of stderr.split("\n")) {
    if (line.trim() === "" || /metrics on \S+$/.test(line)) continue;
    const more = / \((\d+) more like it since the last report\)$/.exec(line);
    const text = more === null ? line : line.slice(0, more.index);
    const entry = seen.get(text) ?? { lines: 0, more: 0 };
    entry.lines++;
    entry.more += Number(more?.[1] ?? 0);
    seen.set(text, entry);
  }
  return [...seen].slice(0, 20).map(([text, { lines, more }]) =>
    `${text.slice(0, 240)}` +
    (lines > 1 || more > 0
      ? ` [${lines} lines${more > 0 ? `, ${more} more held back` : ""}]`
      : "")
  );
}

/** What one scraper saw during the attack. */
interface ScrapeSummary {
  scrapes: number;
  ok: number;
  /** Over the successful scrapes, ms. */
  p99Ms: number;
  maxMs: number;
  failures: Record<string, number>;
}

function summarize(
  results: readonly (ScrapeResult & { at: number })[],
  from: number,
): ScrapeSummary {
  // The scrapes of the attack (not the 2 s before it).
  const during = results.filter((r) => r.at >= from);
  const oks = during.filter((r) => r.ok).map((r) => r.ms).sort((a, b) => a - b);
  const failures: Record<string, number> = {};
  for (const r of during) {
    if (r.ok) continue;
    const key = r.error ?? `HTTP ${r.status}`;
    failures[key] = (failures[key] ?? 0) + 1;
  }
  return {
    scrapes: during.length,
    ok: oks.length,
    p99Ms: percentile(oks, 0.99),
    maxMs: oks.at(-1) ?? NaN,
    failures,
  };
}

/** Each case's attack: client mode, slots, source addresses, extra options. */
const ATTACKS: Record<
  CaseName,
  (addrs: string[]) => [Mode, number, string[], string[]][]
> = {
  a: (
    addrs,
  ) => [["keepalive", integerOption(values, "connections", 0), addrs, []]],
  b: (addrs) => [["idle", integerOption(values, "idle", 0), addrs, []]],
  c: (addrs) => [[
    "slowloris",
    integerOption(values, "slow", 0),
    addrs,
    ["--interval-ms", values["slow-interval-ms"]],
  ]],
  d: (addrs) => [
    ["tls-abandon", integerOption(values, "tls-abandon", 0), addrs, []],
    ["tls-complete", integerOption(values, "tls-complete", 0), addrs, []],
  ],
  e: (addrs) => [[
    "auth",
    integerOption(values, "auth-connections", 0),
    addrs.slice(0, Math.max(1, integerOption(values, "auth-addrs", 0))),
    ["--auth-user", "prometheus"],
  ]],
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

async function runCase(
  setup: Setup,
  source: Source,
  name: CaseName,
  options: {
    seconds: number;
    agentNofile: string;
    clientNofile: number;
    v8Flags: string | undefined;
    signal: AbortSignal;
  },
): Promise<CaseResult> {
  const result: CaseResult = { source, case: name };
  const dir = await Deno.makeTempDir({
    dir: setup.dir,
    prefix: `${source}-${name}-`,
  });
  const eventLog = join(dir, "events.log");
  const config = join(dir, "agent.yaml");
  await writeConfig(config, source, eventLog);
  const web = name === "d" ? setup.tlsWeb : name === "e" ? setup.authWeb : "";
  const args = [
    "run",
    "-c",
    config,
    "--listen",
    "127.0.0.1:0",
    "--gpu",
    "off",
    ...(web === "" ? [] : ["--web-config-file", web]),
  ];
  const env: Record<string, string> = source === "doca"
    ? { DOCA_LIB_DIR: setup.doca!.dir }
    : {};
  const attackAddrs = Array.from(
    { length: integerOption(values, "attack-addrs", 0) },
    (_, i) => `127.0.0.${16 + i}`,
  );
  const clients: ClientProcess[] = [];
  const scrapers: Scraper[] = [];
  const stopScraping = new AbortController();
  const t0 = performance.now();
  const agent = new Agent(args, env, options.agentNofile, options.v8Flags);
  try {
    await agent.waitUrl();
    const identity = await agent.checkIdentity();
    result.agentNofile = identity.nofile;
    agent.startSampling();
    const caCert = name === "d" ? setup.caCert : undefined;
    const bench = new Scraper(agent.url, BENCH_ADDR, {
      caCert,
      authorization: name === "e" ? setup.benchAuth : undefined,
      timeoutMs: 5000,
    });
    scrapers.push(bench);
    const ready = await bench.until("/readyz", 30_000);
    if (!ready.ok) {
      throw new Error(
        `agent never ready: ${ready.status ?? ready.error} ${ready.body ?? ""}`,
      );
    }
    // Until the bench rule's event is active: every sample is a row.
    let before: Reading | undefined;
    for (let i = 0; i < 100; i++) {
      const r = await bench.get("/metrics", false, 5000);
      if (r.ok) {
        before = reading(r.body!);
        if (before.ruleActive === 1) break;
      }
      await sleep(200);
    }
    if (before?.ruleActive !== 1) throw new Error("the bench rule never fired");

    const scraper = new Scraper(agent.url, SCRAPER_ADDR, {
      caCert,
      authorization: name === "e" ? setup.scraperAuth : undefined,
      timeoutMs: integerOption(values, "scrape-timeout-ms", 0),
    });
    const fresh = new Scraper(agent.url, FRESH_ADDR, {
      caCert,
      authorization: name === "e" ? setup.scraperAuth : undefined,
      timeoutMs: integerOption(values, "scrape-timeout-ms", 0),
      fresh: true,
    });
    scrapers.push(scraper, fresh);
    let loop: ReturnType<typeof scrapeLoop> | undefined;
    let freshLoop: ReturnType<typeof scrapeLoop> | undefined;
    if (name !== "e") {
      // A Prometheus that was scraping before the attack began.
      loop = scrapeLoop(scraper, stopScraping.signal);
      freshLoop = scrapeLoop(fresh, stopScraping.signal);
      await sleep(2000, options.signal);
    }
    const cpu0 = await agent.cpuSeconds();
    result.rssBeforeBytes = (await agent.status())?.rss;
    const attackStart = performance.now();
    const port = Number(new URL(agent.url).port);
    const seconds = options.seconds;
    for (const [mode, n, addrs, extra] of ATTACKS[name](attackAddrs)) {
      clients.push(
        ...spawnClients(
          mode,
          n,
          addrs,
          port,
          seconds,
          options.clientNofile,
          extra,
        ),
      );
    }
    if (name === "e") {
      // The scraper's user logs in for the first time under the flood,
      // once the clients have started (Deno start-up: about a second).
      await sleep(3000, options.signal);
      loop = scrapeLoop(scraper, stopScraping.signal);
      freshLoop = scrapeLoop(fresh, stopScraping.signal);
    }
    // The attack runs; watch that the agent stays up.
    const end = attackStart + seconds * 1000;
    result.aliveThroughout = true;
    while (performance.now() < end && !options.signal.aborted) {
      if (agent.exited !== undefined) {
        result.aliveThroughout = false;
        break;
      }
      await sleep(Math.min(500, end - performance.now()), options.signal);
    }
    stopScraping.abort();
    if (options.signal.aborted) {
      // Interrupted: end the attack now, still read and stop the agent.
      killClients(clients);
      result.error = "interrupted";
    }
    await loop?.done;
    await freshLoop?.done;
    const cpu1 = await agent.cpuSeconds();
    result.agentCpuS = cpu1 - cpu0;
    // The clients end on their own at the deadline; give them a moment.
    const outputs = await Promise.race([
      Promise.all(clients.map((c) => c.output)),
      sleep(20_000).then(() => undefined),
    ]);
    killClients(clients);
    const finished = outputs ?? await Promise.all(clients.map((c) => c.output));
    const byMode = new Map<Mode, ClientStats[]>();
    result.clientProblems = [];
    for (const [i, o] of finished.entries()) {
      if (o.stats === undefined) {
        result.clientProblems.push(
          `${clients[i].mode} client exited ${o.code} without its counts: ${
            o.stderr.trim().split("\n").slice(-3).join(" / ")
          }`,
        );
        continue;
      }
      byMode.set(o.stats.mode, [...(byMode.get(o.stats.mode) ?? []), o.stats]);
    }
    result.clients = [...byMode.values()].map((s) => mergeStats(s)!);

    result.scraper = summarize(loop?.results ?? [], attackStart);
    result.freshScraper = summarize(freshLoop?.results ?? [], attackStart);

    // The final reading, after the attack.
    if (agent.exited === undefined) {
      const last = await bench.until("/metrics", 15_000);
      result.finalRead = last.ok;
      if (last.ok) {
        const after = reading(last.body!);
        result.samples = after.samples;
        result.lostMetric = after.lost;
        result.droppedRows = after.droppedRows;
        result.latenessP99S = latenessP99(before, after);
        result.latenessMaxS = after.maxS;
        result.polls = after.count - before.count;
        result.eventActive = after.ruleActive === 1 &&
          after.ruleActivations === before.ruleActivations;
      }
      result.hwmBytes = (await agent.status())?.hwm;
    } else {
      result.finalRead = false;
    }
    result.maxRssSampled = agent.peak.maxRss;
    result.rssDuringBytes = [0.25, 0.5, 0.75, 1].map((f) => {
      const t = attackStart + f * seconds * 1000;
      const at = agent.peak.rss.findLast(([when]) => when <= t);
      return at?.[1] ?? NaN;
    });
    result.maxFds = agent.peak.maxFds;
    result.maxThreads = agent.peak.maxThreads;
    for (const s of scrapers) s.close();
    scrapers.length = 0;

    const stopped = await agent.stop();
    result.exitCode = stopped.code;
    result.stopS = stopped.stopS;
    // Counts are written with thousands separators (40,123).
    const summary = /^nic: ([\d,]+) samples(?:, ([\d,]+) lost by the source)?,/m
      .exec(stopped.stdout);
    const closingCount = (text: string | undefined) =>
      Number((text ?? "0").replaceAll(",", ""));
    if (summary !== null) {
      result.samples = closingCount(summary[1]);
      result.lostSummary = closingCount(summary[2]);
    }
    result.endpointLines = stderrSummary(agent.stderr);
    result.log = await checkLog(eventLog);
  } catch (error) {
    result.error = errorMessage(error).split("\n")[0];
    result.endpointLines ??= stderrSummary(agent.stderr);
  } finally {
    stopScraping.abort();
    killClients(clients);
    await Promise.all(clients.map((c) => c.output.catch(() => {})));
    for (const s of scrapers) s.close();
    await agent.kill();
    if (!values.keep) await Deno.remove(dir, { recursive: true });
    result.wallS = (performance.now() - t0) / 1000;
  }
  return result;
}

// ---------------------------------------------------------------------------
// Report

function served(s: ScrapeSummary | undefined): boolean {
  return s !== undefined && s.scrapes > 0 &&
    s.ok / s.scrapes >= MIN_SCRAPE_SUCCESS;
}

interface Verdicts {
  lost: boolean;
  dropped: boolean;
  rss: boolean;
  scraper: boolean;
  alive: boolean;
}

function verdicts(r: CaseResult): Verdicts {
  const lost = r.lostMetric === 0 && r.lostSummary === 0 &&
    r.log !== undefined && r.log.gapMarkers === 0 && r.log.jumps === 0;
  return {
    lost,
    dropped: r.droppedRows === 0,
    rss: r.hwmBytes !== undefined && r.hwmBytes < MAX_RSS_BYTES,
    scraper: r.finalRead === true && served(r.scraper),
    alive: r.aliveThroughout === true && r.exitCode === 0,
  };
}

const pf = (ok: boolean) => ok ? "PASS" : "FAIL";
const mb = (bytes: number | undefined) =>
  bytes === undefined ? "?" : `${(bytes / 1e6).toFixed(0)} MB`;
const ms = (s: number | undefined) =>
  s === undefined
    ? "?"
    : s === Infinity
    ? "> 1000 ms"
    : `${(s * 1000).toFixed(s < 0.01 ? 1 : 0)} ms`;

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) =>
    Math.max(...rows.map((r) => r[i].length))
  );
  const line = (r: string[]) =>
    "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  return [
    line(rows[0]),
    "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|",
    ...rows.slice(1).map(line),
  ].join("\n");
}

function attackLine(r: CaseResult): string {
  const parts: string[] = [];
  for (const c of r.clients ?? []) {
    const responses = Object.entries(c.responses).map(([k, v]) => `${k}: ${v}`)
      .join(", ");
    const errors = Object.entries(c.connectErrors).map(([k, v]) => `${k} ${v}`)
      .join(", ");
    parts.push(
      `${c.mode} x${c.count} from ${c.addrs.length} address(es): ` +
        `${c.connects} connects (${c.connected} connected` +
        `${errors === "" ? "" : `; failed: ${errors}`}` +
        `${
          c.connectingAtEnd > 0
            ? `; ${c.connectingAtEnd} under way at the end`
            : ""
        }), ` +
        `at most ${c.maxOpen} open at once (${c.openAtEnd} at the end)` +
        (c.rampS === null ? ", never all open at once" : "") +
        `, ${c.closedByServer} closed by the agent` +
        (c.lifetimeMs.count > 0 && c.mode !== "keepalive" && c.mode !== "auth"
          ? ` (lifetime median ${c.lifetimeMs.median} ms in one process, max ${c.lifetimeMs.max} ms)`
          : "") +
        (c.requests > 0 ? `, ${c.requests} requests` : "") +
        (c.handshakes > 0 ? `, ${c.handshakes} handshakes completed` : "") +
        (responses === "" ? "" : `; answers: ${responses}`),
    );
  }
  return parts.join("; ");
}

function report(
  host: string,
  results: CaseResult[],
  seconds: number,
  agentNofileAsked: string,
  v8Flags: string | undefined,
): string {
  const rows: string[][] = [[
    "source",
    "case",
    "samples",
    "lost (metric / summary / log gaps)",
    "rows dropped",
    "peak RSS (VmHWM)",
    "max fds",
    "lateness p99 (bucket) / max",
    "scraper ok",
    "scraper p99 / max",
    "new-conn scraper ok (extra)",
    "exit",
    "agent CPU",
  ]];
  for (const r of results) {
    if (r.error !== undefined && r.exitCode === undefined) {
      rows.push([
        r.source,
        `${r.case} ${CASE_TITLES[r.case]}`,
        `ERROR: ${r.error}`,
        ...Array(10).fill(""),
      ]);
      continue;
    }
    const v = verdicts(r);
    const gaps = r.log === undefined
      ? "?"
      : `${r.log.gapMarkers}+${r.log.jumps}`;
    rows.push([
      r.source,
      `${r.case} ${CASE_TITLES[r.case]}`,
      String(r.samples ?? "?"),
      `${r.lostMetric ?? "?"} / ${r.lostSummary ?? "?"} / ${gaps} ${
        pf(v.lost)
      }`,
      `${r.droppedRows ?? "?"} ${pf(v.dropped)}`,
      `${mb(r.hwmBytes)} ${pf(v.rss)}`,
      String(r.maxFds ?? "?"),
      `<= ${ms(r.latenessP99S)} / ${ms(r.latenessMaxS)}`,
      `${r.scraper?.ok ?? "?"}/${r.scraper?.scrapes ?? "?"} ${pf(v.scraper)}`,
      `${r.scraper?.p99Ms.toFixed(1) ?? "?"} / ${
        r.scraper?.maxMs.toFixed(1) ?? "?"
      } ms`,
      `${r.freshScraper?.ok ?? "?"}/${r.freshScraper?.scrapes ?? "?"} ${
        pf(served(r.freshScraper))
      }`,
      `${r.exitCode === null ? "killed" : r.exitCode ?? "?"} ${pf(v.alive)}`,
      `${((r.agentCpuS ?? NaN) / seconds * 100).toFixed(0)}%`,
    ]);
  }
  const out: string[] = [];
  out.push(
    `## Flood (\`deno task bench:flood\`, ${new Date().toISOString()})`,
    "",
    `Machine: ${host}.`,
    `Attack: ${seconds} s per case; attackers from ${
      integerOption(values, "attack-addrs", 0)
    } loopback address(es) (127.0.0.16 and up) unless said otherwise, ` +
      `clients under nice ${
        integerOption(values, "client-nice", 0)
      }, reconnecting ${
        values["reconnect-ms"]
      } ms after being dropped. Agent: \`main.ts run\` with deploy/demo.yaml's monitor ` +
      `(10 columns, 10 kHz, depth 1000, its 9 rules; on doca 8, without "${FLAPPING_ON_DOCA}", ` +
      `which flaps on the simulator's formula counters) plus "${BENCH_RULE}", ` +
      `so an event is active the whole time and every sample is written to events.log; ` +
      `V8 flags ${v8Flags ?? "none"} (those of \`deno task compile\`); ` +
      `fd limit asked ${agentNofileAsked} (systemd's default for a unit without LimitNOFILE=: ` +
      `${SYSTEMD_NOFILE.soft}:${SYSTEMD_NOFILE.hard}, hard capped to this machine's), ` +
      `the agent had ${
        [...new Set(results.map((r) => r.agentNofile).filter(Boolean))].join(
          ", ",
        )
      } (soft:hard, from /proc).`,
    `Scraper: 127.0.0.2, every 1 s, timeout ${
      values["scrape-timeout-ms"]
    } ms, keep-alive; p99/max over its successful scrapes of the attack ` +
      "(in a-d it started 2 s before the attack; in e its user's first login is 3 s into the flood). " +
      "New-conn scraper (extra, not a target): 127.0.0.4, the same but a new connection " +
      "(and TLS handshake) for every scrape, as Prometheus makes with a scrape interval " +
      "longer than the agent's 20 s idle timeout (its default is 1 min). " +
      "Lateness: the poll loop's histogram between the readings before and after the attack; " +
      "p99 is the upper bound of the bucket holding it (an upper bound), max is since the agent started. " +
      "Lost: lost_samples_total at the end / the closing line / `<<Gap>>` markers + timestamp jumps in events.log. " +
      `Targets: 0 lost, 0 rows dropped, VmHWM < ${
        mb(MAX_RSS_BYTES)
      }, scraper >= ${
        MIN_SCRAPE_SUCCESS * 100
      }% ok (and the final reading served), exit 0 after SIGTERM with the process alive throughout.`,
    "",
    table(rows),
    "",
  );
  for (const r of results) {
    const lines: string[] = [];
    lines.push(
      `- **${r.source} ${r.case} (${CASE_TITLES[r.case]})**: ${attackLine(r)}.`,
    );
    if (r.error !== undefined) lines.push(`  Error: ${r.error}.`);
    for (
      const [label, summary] of [
        ["Scraper", r.scraper],
        ["New-connection scraper", r.freshScraper],
      ] as const
    ) {
      const fails = Object.entries(summary?.failures ?? {}).map(([k, v]) =>
        `${k} x${v}`
      ).join(", ");
      if (fails !== "") lines.push(`  ${label} failures: ${fails}.`);
    }
    if (r.freshScraper !== undefined && r.freshScraper.ok > 0) {
      lines.push(
        `  New-connection scraper p99 / max: ${
          r.freshScraper.p99Ms.toFixed(1)
        } / ${r.freshScraper.maxMs.toFixed(1)} ms.`,
      );
    }
    if (r.log !== undefined) {
      lines.push(
        `  events.log: ${r.log.rows} rows, ${
          (r.log.bytes / 1e6).toFixed(0)
        } MB, ` +
          `${r.log.gapMarkers} gap markers (${r.log.gapSamples} samples), ` +
          `${r.log.jumps} timestamp jumps (${r.log.jumpSamples} samples), ` +
          `${r.log.backward} steps back (history dumps after event markers excluded)` +
          `; event active throughout: ${r.eventActive ?? "?"}; ` +
          `${r.polls ?? "?"} polls in the attack; max VmRSS sampled ${
            mb(r.maxRssSampled)
          }, max threads ${r.maxThreads ?? "?"}; stopped in ${
            r.stopS?.toFixed(2) ?? "?"
          } s; VmRSS when the attack began ${
            mb(r.rssBeforeBytes)
          }, at 1/4, 1/2, 3/4 and its end ${
            (r.rssDuringBytes ?? []).map(mb).join(", ")
          }.`,
      );
    }
    for (const p of r.clientProblems ?? []) lines.push(`  ${p}.`);
    if ((r.endpointLines ?? []).length > 0) {
      lines.push(
        `  Agent stderr: ${r.endpointLines!.map((l) => `\`${l}\``).join("; ")}`,
      );
    }
    out.push(lines.join("\n"));
  }
  return out.join("\n");
}

// ---------------------------------------------------------------------------

const USAGE = `Usage: deno task bench:flood [options]
  --seconds N            attack length per case (default 120)
  --case a,b,c,d,e       which cases (default all)
  --source sim,doca      which sources (default both)
  --attack-addrs N       loopback addresses the attackers use (default 16)
  --connections N        case a: keep-alive connections (default 1000)
  --idle N               case b: idle connections (default 20000)
  --slow N               case c: slowloris connections (default 1000)
  --slow-interval-ms MS  case c: one header byte this often (default 2000)
  --tls-abandon N        case d: abandoned handshakes held (default 1000)
  --tls-complete N       case d: completing handshake loops (default 64)
  --auth-connections N   case e: wrong-password connections (default 256)
  --auth-addrs N         case e: addresses they come from (default 1)
  --reconnect-ms MS      attackers' pause before reconnecting (default 100)
  --scrape-timeout-ms MS the correct scraper's timeout (default 1000)
  --agent-nofile S:H     the agent's RLIMIT_NOFILE (default 1024:min(524288, own hard))
  --client-nice N        nice value of the attack clients (default 10; 0: none)
  --keep                 keep the temp dir (events logs, configs)`;

async function main(): Promise<number> {
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new RangeError("--seconds needs a positive number");
  const cases = listOption("case", values.case, CASES);
  const sources = listOption("source", values.source, SOURCES);
  const own = await ownNofile();
  const agentNofile = values["agent-nofile"] ??
    `${SYSTEMD_NOFILE.soft}:${Math.min(SYSTEMD_NOFILE.hard, own.hard)}`;
  if (!/^\d+:\d+$/.test(agentNofile)) {
    throw new RangeError("--agent-nofile takes SOFT:HARD");
  }
  const clientNofile = Math.min(own.hard, PER_CLIENT_PROCESS + 1000);
  const v8Flags = await compiledV8Flags();

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);

  const host = await machine();
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-flood-" });
  const results: CaseResult[] = [];
  let setup: Setup | undefined;
  try {
    setup = await setUp(dir, sources);
    for (const source of sources) {
      for (const name of cases) {
        if (stop.signal.aborted) break;
        console.error(
          `flood: ${source} case ${name} (${
            CASE_TITLES[name]
          }), ${seconds} s ...`,
        );
        const r = await runCase(setup, source, name, {
          seconds,
          agentNofile,
          clientNofile,
          v8Flags,
          signal: stop.signal,
        });
        results.push(r);
        const v = r.error === undefined ? verdicts(r) : undefined;
        console.error(
          `flood: ${source} ${name}: ${
            r.error ??
              Object.entries(v!).map(([k, ok]) => `${k} ${pf(ok)}`).join(", ")
          } (${r.wallS?.toFixed(0)} s)`,
        );
      }
    }
  } finally {
    await setup?.doca?.cleanup();
    if (values.keep) console.error(`flood: kept ${dir}`);
    else await Deno.remove(dir, { recursive: true });
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }

  const md = report(host, results, seconds, agentNofile, v8Flags);
  console.log(md);
  const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, "");
  await Deno.mkdir(new URL("out/", HERE), { recursive: true });
  await Deno.writeTextFile(new URL(`out/flood-${stamp}.md`, HERE), md + "\n");
  await Deno.writeTextFile(
    new URL(`out/flood-${stamp}.json`, HERE),
    JSON.stringify({ host, seconds, agentNofile, results }, null, 1) + "\n",
  );
  console.error(`flood: wrote bench/out/flood-${stamp}.md`);
  const failed = results.some((r) =>
    r.error !== undefined || Object.values(verdicts(r)).includes(false)
  );
  return failed ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(`bench:flood: ${errorMessage(error)}`);
    Deno.exit(1);
  }
}
