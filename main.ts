/**
 * `dpu-traceback`: the command-line entry. Parses arguments, loads the
 * configuration, wires the agent, handles signals. Everything else lives in
 * the modules it calls.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { Agent } from "./agent/agent.ts";
import { libraryVersions } from "./collectors/versions.ts";
import {
  type Command,
  parseCommand,
  type RunOptions,
  USAGE,
} from "./cli/args.ts";
import { describeConfig } from "./config/describe.ts";
import { loadConfig } from "./config/load.ts";
import { withAutoGpuMonitor } from "./config/normalize.ts";
import { applyRunOptions } from "./cli/overrides.ts";
import type { AgentConfig } from "./config/types.ts";
import { VERSION } from "./config/version.ts";
import { formatEventTable } from "./agent/tally.ts";
import { runReview, stdio } from "./review/cli.ts";
import { Logger, underJournald } from "./logging/logger.ts";
import { LISTEN_OFF } from "./config/values.ts";
import { AgentMetrics } from "./metrics/agent_metrics.ts";
import { createMetricsApp } from "./metrics/app.ts";
import { BasicAuthVerifier } from "./metrics/basic_auth.ts";
import { type MetricsServer, serveMetrics } from "./metrics/server.ts";
import { loadWebConfig, type WebConfig } from "./metrics/web_config.ts";

const PROGRAM = "dpu-traceback";
const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;
const DEMO_CONFIG = fileURLToPath(
  new URL("./deploy/demo.yaml", import.meta.url),
);
const DEMO_SECONDS = 20;

// Until the command line says otherwise: info and up.
let log = new Logger({
  program: PROGRAM,
  journald: underJournald(Deno.env.get("JOURNAL_STREAM")),
});

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the CLI with `args` and returns the process exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(args);
  } catch (error) {
    log.error(`${messageOf(error)} Try '${PROGRAM} --help'.`);
    return EXIT_USAGE;
  }
  switch (command.kind) {
    case "help":
      console.log(USAGE);
      return EXIT_OK;
    case "version":
      console.log(
        [
          `${PROGRAM} ${VERSION}`,
          `deno: ${Deno.version.deno} (v8 ${Deno.version.v8}, ${Deno.build.target})`,
          ...libraryVersions(),
        ].join("\n"),
      );
      return EXIT_OK;
    case "check-config":
      try {
        const config = await loadConfig(command.configFile, {
          dataIdsFile: command.dataIdsFile,
        });
        // The endpoint's TLS and auth are checked too, so a bad
        // certificate is found before the service restarts.
        const web = config.webConfigFile === undefined
          ? undefined
          : await loadWebConfig(config.webConfigFile);
        console.log(describeConfig(withAutoGpuMonitor(config)));
        if (web !== undefined) {
          console.log(describeWebConfig(web));
          for (const warning of web.warnings) log.warn(warning);
        }
        return EXIT_OK;
      } catch (error) {
        log.error(messageOf(error));
        return EXIT_USAGE;
      }
    case "demo":
      return await run({
        ...command.options,
        configFile: command.options.configFile ?? DEMO_CONFIG,
        source: command.options.source ?? "sim",
        durationS: command.options.durationS ?? DEMO_SECONDS,
      });
    case "run":
      return await run(command.options);
    case "review":
      return await runReview(
        command.args,
        stdio({
          error: (m) => log.error(m),
          warn: (m) => log.warn(m),
          info: (m) => log.info(m),
        }),
      );
  }
}

/** A run's configuration, with its web config when the endpoint has one. */
interface Prepared {
  readonly config: AgentConfig;
  readonly web?: WebConfig;
}

async function prepare(options: RunOptions): Promise<Prepared> {
  const config = withAutoGpuMonitor(applyRunOptions(
    await loadConfig(options.configFile, { dataIdsFile: options.dataIdsFile }),
    options,
  ));
  for (const m of config.monitors) {
    if (m.source !== "replay" || m.input === undefined) continue;
    try {
      const info = await Deno.stat(m.input);
      if (!info.isFile) {
        throw new TypeError(`Cannot replay ${m.input}: not a file`);
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new TypeError(`Cannot replay ${m.input}: no such file`);
      }
      throw error;
    }
  }
  const web = config.listen !== LISTEN_OFF && config.webConfigFile !== undefined
    ? await loadWebConfig(config.webConfigFile)
    : undefined;
  return { config, web };
}

async function run(options: RunOptions): Promise<number> {
  if (options.logLevel !== undefined) {
    log = new Logger({
      program: PROGRAM,
      level: options.logLevel,
      journald: log.journald,
    });
  }
  let prepared: Prepared;
  try {
    prepared = await prepare(options);
  } catch (error) {
    log.error(messageOf(error));
    return EXIT_USAGE;
  }
  const { config, web } = prepared;
  for (const warning of web?.warnings ?? []) log.warn(warning);
  const startMs = Date.now();

  let agent: Agent;
  try {
    agent = await Agent.open(config, {
      version: `${PROGRAM} ${VERSION}`,
      warn: (m) => log.warn(m),
      info: (m) => log.info(m),
    });
  } catch (error) {
    log.error(messageOf(error));
    return EXIT_FAILURE;
  }

  for (const line of describeConfig(config).split("\n")) log.debug(line);
  const metrics = new AgentMetrics(agent.monitors, {
    version: VERSION,
    startMs,
    windowNs: config.metricsWindowNs,
  });
  const freshness = metrics.start();
  let server: MetricsServer | undefined;
  if (config.listen !== LISTEN_OFF) {
    try {
      server = serveMetrics(
        createMetricsApp(metrics, {
          auth: web !== undefined && web.basicAuthUsers.size > 0
            ? new BasicAuthVerifier(web.basicAuthUsers)
            : undefined,
          headers: web?.headers,
          onError: (m) => log.error(m),
        }),
        { listen: config.listen, tls: web?.tls, onError: (m) => log.error(m) },
      );
      log.info(`metrics on ${server.url}`);
      // Listening is all the agent uses the network for: with the socket
      // bound, give the permission back so nothing can connect out.
      await Deno.permissions.revoke({ name: "net" });
    } catch (error) {
      log.error(messageOf(error));
      freshness.stop();
      for (const problem of await agent.close()) log.error(problem.message);
      return EXIT_FAILURE;
    }
  }

  const stop = new AbortController();
  let signals = 0;
  const onSignal = () => {
    // A second signal means the operator does not want to wait for the flush.
    if (++signals > 1) Deno.exit(130);
    stop.abort();
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  // logrotate renamed the logs: start new files, losing no row.
  const onHangUp = () => {
    for (const m of agent.monitors) m.log.reopen();
    log.info("SIGHUP: reopening the events logs");
  };
  Deno.addSignalListener("SIGHUP", onHangUp);
  const deadline = options.durationS === undefined
    ? undefined
    : setTimeout(() => stop.abort(), options.durationS * 1000);
  const status = !options.quiet && Deno.stderr.isTerminal()
    ? startStatusLine(agent)
    : undefined;

  let code = EXIT_OK;
  try {
    await agent.run(stop.signal);
  } catch (error) {
    log.error(messageOf(error));
    code = EXIT_FAILURE;
  } finally {
    clearTimeout(deadline);
    status?.stop();
    freshness.stop();
    await server?.shutdown();
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    Deno.removeSignalListener("SIGHUP", onHangUp);
    for (const error of await agent.close()) {
      log.error(error.message);
      code = EXIT_FAILURE;
    }
  }

  if (!options.quiet) {
    console.log(formatEventTable(agent.tally.events));
    for (const m of agent.monitors) {
      console.log(
        `${m.monitor.name}: ${m.monitor.samples} samples` +
          (m.monitor.droppedSamples > 0
            ? `, ${m.monitor.droppedSamples} lost by the source`
            : "") +
          `, events log ${m.log.path}`,
      );
    }
  }
  return code;
}

/** One line on what a web config turns on. */
function describeWebConfig(web: WebConfig): string {
  const users = web.basicAuthUsers.size;
  const parts = [
    web.tls === undefined ? "plain HTTP" : "TLS",
    users === 0
      ? "no basic auth"
      : `basic auth (${users} user${users === 1 ? "" : "s"})`,
  ];
  if (web.headers.size > 0) parts.push(`${web.headers.size} extra headers`);
  return `web config ${web.file}: ${parts.join(", ")}`;
}

/** A live one-line status on stderr, redrawn every second. */
function startStatusLine(agent: Agent): { stop(): void } {
  const encoder = new TextEncoder();
  const started = performance.now();
  let lastTime = started;
  let lastSamples = agent.monitors.map((m) => m.monitor.samples);
  const draw = () => {
    const now = performance.now();
    const parts = agent.monitors.map((m, i) => {
      const rate = (m.monitor.samples - lastSamples[i]) /
        ((now - lastTime) / 1000);
      return `${m.monitor.name}: ${
        Math.round(rate)
      } samples/s, ${m.monitor.activeRules} active, ${m.monitor.events} events`;
    });
    lastTime = now;
    lastSamples = agent.monitors.map((m) => m.monitor.samples);
    const line = `${((now - started) / 1000).toFixed(0).padStart(4)} s  ${
      parts.join(" | ")
    }`;
    Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${line}`));
  };
  const timer = setInterval(draw, 1000);
  return {
    stop() {
      clearInterval(timer);
      Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
    },
  };
}

if (import.meta.main) Deno.exit(await main(Deno.args));
