/**
 * One run of the agent, start to finish: open every monitor, serve the
 * endpoint, sample until a signal or the deadline, close, and say what
 * happened. The `run` and `demo` commands are this with a configuration.
 *
 * @module
 */

import { describeConfig } from "../config/describe.ts";
import type { AgentConfig } from "../config/types.ts";
import { LISTEN_OFF } from "../config/values.ts";
import type { Logger } from "../logging/logger.ts";
import { AgentMetrics } from "../metrics/agent_metrics.ts";
import { createMetricsApp } from "../metrics/app.ts";
import { BasicAuthVerifier } from "../metrics/basic_auth.ts";
import { type MetricsServer, serveMetrics } from "../metrics/server.ts";
import type { WebConfig } from "../metrics/web_config.ts";
import { Agent } from "./agent.ts";
import { startStatusLine } from "./status_line.ts";
import { formatEventTable } from "./tally.ts";

/** How one run goes. */
export interface RunAgentOptions {
  /** Where operational messages go. */
  readonly log: Logger;
  /** Program and version for events.log headers (`dpu-traceback 0.1.0`). */
  readonly generator: string;
  /** The version the endpoint reports (`0.1.0`). */
  readonly version: string;
  /** The endpoint's TLS, basic auth and headers, when configured. */
  readonly web?: WebConfig;
  /** Stop after this long, s; default: at SIGINT or SIGTERM. */
  readonly durationS?: number;
  /** No live status line and no closing table. */
  readonly quiet: boolean;
}

/**
 * Runs the agent on `config` until SIGINT or SIGTERM (a second one exits
 * at once with 130), the deadline, or every source ending. SIGHUP reopens
 * the events logs for logrotate. Returns true when the run ended cleanly:
 * false when the agent could not start, a source failed or a log could not
 * be finished, each said on `log`.
 *
 * It acts for the whole process, as the CLI's run command: it listens for
 * SIGINT, SIGTERM and SIGHUP while it runs (removing its listeners when it
 * returns), may end the process on a second signal, and once the endpoint
 * is listening revokes the `net` permission for the rest of the process.
 *
 * @example
 * ```ts ignore
 * const ok = await runAgent(config, { log, generator: "dpu-traceback 0.1.0", version: "0.1.0", durationS: 20, quiet: false });
 * ```
 */
export async function runAgent(
  config: AgentConfig,
  options: RunAgentOptions,
): Promise<boolean> {
  const { log, web } = options;
  for (const warning of web?.warnings ?? []) log.warn(warning);
  const startMs = Date.now();

  let agent: Agent;
  try {
    agent = await Agent.open(config, {
      version: options.generator,
      warn: (m) => log.warn(m),
      info: (m) => log.info(m),
    });
  } catch (error) {
    log.failed(error);
    return false;
  }

  for (const line of describeConfig(config).split("\n")) log.debug(line);
  const metrics = new AgentMetrics(agent.monitors, {
    version: options.version,
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
      log.failed(error);
      freshness.stop();
      for (const problem of await agent.close()) log.failed(problem);
      return false;
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
  const encoder = new TextEncoder();
  const status = !options.quiet && Deno.stderr.isTerminal()
    ? startStatusLine(
      agent.monitors.map((m) => m.monitor),
      (text) => Deno.stderr.writeSync(encoder.encode(text)),
    )
    : undefined;

  let ok = true;
  try {
    await agent.run(stop.signal);
  } catch (error) {
    log.failed(error);
    ok = false;
  } finally {
    clearTimeout(deadline);
    status?.stop();
    freshness.stop();
    await server?.shutdown();
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    Deno.removeSignalListener("SIGHUP", onHangUp);
    for (const error of await agent.close()) {
      log.failed(error);
      ok = false;
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
  return ok;
}
