/**
 * A fleet on one machine for the end-to-end tests: agents on the simulated
 * NIC, each on its own loopback port with its own topology labels and
 * pushing to one Alertmanager; a real Alertmanager (Debian's
 * `prometheus-alertmanager`) that can be stopped and started again with a
 * fresh data directory; a real Prometheus scraping the agents; and the
 * queries the tests ask of them.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { type StartedAgent, startedAgent } from "../agent_util.ts";
import { startPrometheus } from "./prometheus_util.ts";

/** What a missing tool's error says to do. */
const NEEDS =
  "install them with: apt-get install prometheus prometheus-alertmanager";

/**
 * `count` distinct free loopback ports. All are held open until every one
 * is picked, so the kernel cannot hand out one port twice.
 */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => l.addr.port);
  for (const l of listeners) l.close();
  return ports;
}

/**
 * Calls `read` every `everyMs` until `accept` holds for its answer, and
 * returns that answer; past `deadline` (ms since the epoch) throws with
 * `what` and the last answer (or the last error `read` threw: a process
 * that is not listening yet is no failure until the deadline).
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  deadline: number,
  everyMs = 250,
): Promise<T> {
  let last = "nothing yet";
  for (;;) {
    try {
      const value = await read();
      if (accept(value)) return value;
      last = JSON.stringify(value)?.slice(0, 2000) ?? String(value);
    } catch (error) {
      last = `error: ${error instanceof Error ? error.message : error}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} never held; last: ${last}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves once `url` + `/-/ready` answers 200 (Prometheus, Alertmanager). */
async function waitReady(url: string, deadline: number): Promise<void> {
  await eventually(
    `${url} ready`,
    async () => {
      const res = await fetch(`${url}/-/ready`);
      await res.body?.cancel();
      return res.ok;
    },
    (ok) => ok,
    deadline,
    100,
  );
}

// --- Alertmanager ----------------------------------------------------------

/** An alert as Alertmanager's API v2 lists it (`GettableAlert`). */
export interface GettableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  /** When Alertmanager last received it: never before its first push. */
  readonly updatedAt: string;
  readonly fingerprint: string;
  readonly generatorURL?: string;
  readonly status: {
    readonly state: string;
    readonly silencedBy?: readonly string[];
    readonly inhibitedBy?: readonly string[];
  };
}

/** The Alertmanager binary: Debian names it prometheus-alertmanager. */
async function alertmanagerBinary(): Promise<string> {
  for (const name of ["prometheus-alertmanager", "alertmanager"]) {
    try {
      await new Deno.Command(name, {
        args: ["--version"],
        stdout: "null",
        stderr: "null",
      }).output();
      return name;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  throw new Error(`Alertmanager is not on PATH; ${NEEDS}`);
}

/**
 * A real Alertmanager on one loopback port, without clustering. It can be
 * stopped and started again on the same port; each start gets a fresh data
 * directory, so a restarted one has forgotten every alert, as after a
 * crash that lost its disk.
 */
export class Alertmanager {
  /** Its base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly #binary: string;
  readonly #dir: string;
  readonly #port: number;
  #child: Deno.ChildProcess | undefined;
  #starts = 0;

  private constructor(binary: string, dir: string, port: number) {
    this.#binary = binary;
    this.#dir = dir;
    this.#port = port;
    this.url = `http://127.0.0.1:${port}`;
  }

  /**
   * Starts one under `dir` on `port` and waits until it is ready; `more`
   * is YAML appended to its configuration (inhibit rules, say).
   */
  static async start(
    dir: string,
    port: number,
    more = "",
  ): Promise<Alertmanager> {
    const am = new Alertmanager(await alertmanagerBinary(), dir, port);
    // One route to a receiver that sends nothing: the test reads the API.
    await Deno.writeTextFile(
      join(dir, "alertmanager.yml"),
      "route:\n  receiver: none\nreceivers:\n  - name: none\n" + more,
    );
    await am.startAgain();
    return am;
  }

  /** When the running process started, from its own `/api/v2/status`. */
  async startedAt(): Promise<Date> {
    const res = await fetch(`${this.url}/api/v2/status`);
    const status = await res.json();
    if (!res.ok) throw new Error(`GET /api/v2/status: ${res.status}`);
    return new Date(status.uptime);
  }

  /** Whether it is running. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Starts it (again) with a fresh data directory; resolves when ready. */
  async startAgain(deadline = Date.now() + 30_000): Promise<void> {
    assert.equal(this.#child, undefined, "Alertmanager is already running");
    const data = join(this.#dir, `data-${++this.#starts}`);
    this.#child = new Deno.Command(this.#binary, {
      args: [
        `--config.file=${join(this.#dir, "alertmanager.yml")}`,
        `--storage.path=${data}`,
        `--web.listen-address=127.0.0.1:${this.#port}`,
        "--cluster.listen-address=",
        "--log.level=warn",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await waitReady(this.url, deadline);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Stops it (SIGTERM) and waits for it to exit; nothing if not running. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    this.#child = undefined;
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone: its status says so.
    }
    await child.status;
  }

  /** The alerts it holds now (`GET /api/v2/alerts`): active ones only. */
  async alerts(): Promise<GettableAlert[]> {
    const res = await fetch(`${this.url}/api/v2/alerts`);
    if (!res.ok) {
      throw new Error(`GET /api/v2/alerts: ${res.status} ${await res.text()}`);
    }
    return await res.json();
  }
}

// --- Agents ----------------------------------------------------------------

/** One agent of the fleet. */
export interface FleetAgent {
  /** A short name, unique in the fleet (`a00`). */
  readonly name: string;
  /** Its topology labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** `127.0.0.1:PORT`: its listen address, its `instance:` and so the
   * `instance` both of its pushed alerts and of its scraped series. */
  readonly instance: string;
  /** Its events log. */
  readonly eventLog: string;
  /** The running process. */
  readonly agent: StartedAgent;
}

/** What {@linkcode startFleet} starts. */
interface FleetOptions {
  /** Where configurations and events logs go. */
  readonly dir: string;
  /** Each agent's name and topology labels. */
  readonly members: readonly {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
  }[];
  /** The `nic` monitor's settings besides its name and events log. */
  readonly monitor: Readonly<Record<string, unknown>>;
  /** The `alerting:` section every agent gets. */
  readonly alerting: Readonly<Record<string, unknown>>;
  /**
   * Each agent's port, from {@linkcode freePorts} together with any other
   * port the test will bind later; default: picked here.
   */
  readonly ports?: readonly number[];
  /** Extra CLI arguments (e.g. `--metrics-window 1`). */
  readonly args?: readonly string[];
}

/**
 * Starts one agent per member, all at once, each with its own configuration
 * (`listen` and `instance` on a port of its own, its labels, `alerting`),
 * and waits until every one serves. If any fails to start, the others are
 * stopped and the first failure is thrown.
 */
export async function startFleet(options: FleetOptions): Promise<FleetAgent[]> {
  const ports = options.ports ?? freePorts(options.members.length);
  assert.equal(ports.length, options.members.length, "one port per agent");
  const starts = options.members.map(async (member, i) => {
    const instance = `127.0.0.1:${ports[i]}`;
    const eventLog = join(options.dir, `${member.name}-events.log`);
    const file = join(options.dir, `${member.name}.yaml`);
    await Deno.writeTextFile(
      file,
      stringify({
        listen: instance,
        instance,
        labels: member.labels,
        alerting: options.alerting,
        monitors: [{
          name: "nic",
          ...options.monitor,
          event_log: eventLog,
        }],
      }),
    );
    const agent = await startedAgent([
      "-c",
      file,
      "-q",
      // The test's own runner passes --listen :0 unless told; the
      // configuration's address is the one wanted.
      "--listen",
      instance,
      // A safety net: an agent the test failed to stop ends by itself.
      "--duration",
      "600",
      ...(options.args ?? []),
    ]);
    return { ...member, instance, eventLog, agent };
  });
  const settled = await Promise.allSettled(starts);
  const started = settled.flatMap((s) =>
    s.status === "fulfilled" ? [s.value] : []
  );
  const failed = settled.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await stopFleet(started);
    throw failed.reason;
  }
  return started;
}

/**
 * Stops every agent (SIGTERM, all at once) and returns how each ended; it
 * never throws, so a `finally` can call it before asserting on the codes.
 */
export async function stopFleet(
  fleet: readonly FleetAgent[],
): Promise<{ name: string; code: number; stderr: string }[]> {
  return await Promise.all(fleet.map(async (member) => {
    const { code, stderr } = await member.agent.stop();
    return { name: member.name, code, stderr };
  }));
}

/**
 * The value of the sample of family `name` whose labels include every one
 * of `labels`, in Prometheus text `exposition`; undefined when there is
 * none. Only for families whose label values hold no `}` or `"` escapes.
 */
export function sampleValue(
  exposition: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  for (const line of exposition.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = new Map(
      [...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) {
      return Number(m[3]);
    }
  }
  return undefined;
}

/** An event as `/api/v1/events` serves it (the fields the tests read). */
export interface AgentEvent {
  readonly id: number;
  readonly monitor: string;
  readonly rule: string;
  readonly severity: string;
  readonly start: string;
  readonly start_ns: string;
  readonly end: string | null;
  readonly end_ns: string | null;
  readonly state: string;
}

/** The agent's recent events, newest first (`/api/v1/events`). */
export async function agentEvents(agent: StartedAgent): Promise<AgentEvent[]> {
  const res = await agent.get("/api/v1/events?limit=1000");
  if (!res.ok) {
    throw new Error(`/api/v1/events: ${res.status} ${await res.text()}`);
  }
  return (await res.json()).events;
}

/** Unix ms of an event time given in ns since the epoch (a string). */
export function nsToMs(ns: string): number {
  return Number(BigInt(ns) / 1_000_000n);
}

// --- Prometheus ------------------------------------------------------------

/** One series of a PromQL instant query's answer. */
interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** A real Prometheus scraping the fleet. */
export interface FleetPrometheus {
  /** Its base URL. */
  readonly url: string;
  /** A PromQL instant query's result vector; throws unless it succeeds. */
  query(promql: string): Promise<PromSample[]>;
  /**
   * The `data` of any other HTTP API answer (`GET` of `path`, e.g.
   * `/api/v1/rules`); throws unless it succeeds.
   */
  get<T>(path: string): Promise<T>;
  /** SIGTERM, and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts Prometheus under `dir` on `port`, scraping `targets` as job `job`
 * with `ruleFiles` loaded, scraping and evaluating every `intervalS`
 * seconds (default 1), sending its alerts to `alertmanager` when given,
 * and waits until it is ready. A missing binary's error says `needs`
 * (default {@linkcode NEEDS}).
 */
export async function startFleetPrometheus(options: {
  readonly dir: string;
  readonly port: number;
  readonly job: string;
  readonly targets: readonly string[];
  readonly ruleFiles: readonly string[];
  readonly deadline: number;
  readonly intervalS?: number;
  /** An Alertmanager's base URL (`http://127.0.0.1:PORT`). */
  readonly alertmanager?: string;
  readonly needs?: string;
}): Promise<FleetPrometheus> {
  const intervalS = options.intervalS ?? 1;
  await Deno.writeTextFile(
    join(options.dir, "prometheus.yml"),
    stringify({
      global: {
        scrape_interval: `${intervalS}s`,
        scrape_timeout: `${Math.min(10_000, intervalS * 900)}ms`,
        evaluation_interval: `${intervalS}s`,
      },
      rule_files: options.ruleFiles,
      ...(options.alertmanager === undefined ? {} : {
        alerting: {
          alertmanagers: [{
            static_configs: [{ targets: [new URL(options.alertmanager).host] }],
          }],
        },
      }),
      scrape_configs: [{
        job_name: options.job,
        static_configs: [{ targets: options.targets }],
      }],
    }),
  );
  const child = startPrometheus(
    options.dir,
    options.port,
    options.needs ?? NEEDS,
  );
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
  };
  try {
    await waitReady(url, options.deadline);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    async query(promql: string) {
      const res = await fetch(
        `${url}/api/v1/query?query=${encodeURIComponent(promql)}`,
      );
      const body = await res.json();
      if (body.status !== "success") {
        throw new Error(`${promql}: ${JSON.stringify(body)}`);
      }
      return body.data.result;
    },
    async get<T>(path: string): Promise<T> {
      const res = await fetch(`${url}${path}`);
      const body = await res.json();
      if (body.status !== "success") {
        throw new Error(`${path}: ${JSON.stringify(body)}`);
      }
      return body.data as T;
    },
    stop,
  };
}
