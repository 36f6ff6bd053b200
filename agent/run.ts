/**
 * One run of the agent, start to finish: open every monitor, serve the
 * endpoint, sample until a signal or the deadline, close, and say what
 * happened. The `run` and `demo` commands are this with a configuration.
 *
 * @module
 */

import { describeConfig } from "../config/describe.ts";
import { resolveTopology, type Topology } from "../config/topology.ts";
import {
  alertMonitors,
  type AlertSender,
  startAlertSender,
} from "../alerts/sender.ts";
import type { AlertmanagerCredentials } from "../alerts/alertmanager_client.ts";
import type { AgentConfig } from "../config/types.ts";
import { LISTEN_OFF } from "../config/values.ts";
import { ignoreFileSizeSignal } from "../events/file_size_signal.ts";
import { type Logger, writeQuietly } from "../logging/logger.ts";
import type { WebConfig } from "../endpoint/web_config.ts";
import { Agent, type OpenedSources } from "./agent.ts";
import { Endpoint } from "./endpoint.ts";
import {
  type Publication,
  publishMonitors,
  type SharedMonitors,
  shareMonitors,
} from "./publication.ts";
import { longTimeout } from "./long_timeout.ts";
import { refreshCheck } from "./refresh_check.ts";
import { startStatusLine } from "./status_line.ts";
import { formatEventTable } from "./tally.ts";
import { countOf, formatCount } from "../base/units.ts";

/** How often the rules' windows are checked against their columns' refresh, ms. */
const REFRESH_CHECK_MS = 10_000;

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
  /** Stop when this aborts, as at SIGTERM (for a program that embeds the run). */
  readonly signal?: AbortSignal;
  /** No live status line and no closing table. */
  readonly quiet: boolean;
  /**
   * The instance and topology labels, when resolved before the run (the
   * CLI does, cli/start_files.ts, so a bad labels file is a configuration
   * error); resolved at the start of the run otherwise.
   */
  readonly topology?: Topology;
  /**
   * The Alertmanagers' credentials, one per Alertmanager, when read before
   * the run (as the CLI does); read as the sender starts otherwise.
   */
  readonly credentials?: readonly AlertmanagerCredentials[];
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
 * returns) and may end the process on a second signal. The endpoint runs
 * on a thread of its own (agent/endpoint.ts), which gives up its `net`
 * permission once listening.
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
  // A write past RLIMIT_FSIZE must fail with EFBIG (counted, rows kept),
  // not kill the process; listening from before any log opens.
  const restoreFileSizeSignal = ignoreFileSizeSignal();
  try {
    return await runWithSignals(config, options);
  } finally {
    restoreFileSizeSignal();
  }
}

async function runWithSignals(
  config: AgentConfig,
  options: RunAgentOptions,
): Promise<boolean> {
  // Listening from the first moment: a SIGTERM while the agent starts
  // (systemd stopping a unit that is still starting, an operator's Ctrl-C)
  // ends the run cleanly once what is open is open, never mid-write.
  const stop = new AbortController();
  let signals = 0;
  const onSignal = () => {
    // A second signal means the operator does not want to wait for the flush.
    if (++signals > 1) Deno.exit(130);
    stop.abort();
  };
  // A SIGHUP before the logs can be reopened (logrotate during start-up)
  // is kept and acted on once they can.
  let reopen: (() => void) | undefined;
  let hangUpPending = false;
  const onHangUp = () => reopen === undefined ? hangUpPending = true : reopen();
  const onAbort = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  Deno.addSignalListener("SIGHUP", onHangUp);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();
  try {
    return await runStarting(config, options, stop, (f) => {
      reopen = f;
      if (hangUpPending) f();
      hangUpPending = false;
    });
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    Deno.removeSignalListener("SIGHUP", onHangUp);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function runStarting(
  config: AgentConfig,
  options: RunAgentOptions,
  stop: AbortController,
  onHangUp: (reopen: () => void) => void,
): Promise<boolean> {
  const { log, web } = options;
  for (const warning of web?.warnings ?? []) log.warn(warning);
  const startMs = Date.now();

  // The labels file and the host name first: a bad labels file must fail
  // before any events.log gets a header.
  let topology: Topology;
  try {
    topology = options.topology ?? await resolveTopology(config);
  } catch (error) {
    log.failed(error);
    return false;
  }

  const alerting = config.alerting;
  // Published for the endpoint's thread and the sender alike.
  const publishing = config.listen !== LISTEN_OFF || alerting !== undefined;
  let shared: SharedMonitors | undefined;
  let endpoint: Endpoint | undefined;
  let ownSender: AlertSender | undefined;
  // The threads start once the sources are open and before any log is:
  // a busy port, an address gone or a credential file that cannot be read
  // must fail the start before any events.log gets a header.
  const startThreads = async ({ monitors, journal }: OpenedSources) => {
    // Stopped while the sources opened: close them without starting threads.
    if (!publishing || stop.signal.aborted) return;
    shared = shareMonitors(monitors, startMs);
    const sender = alerting === undefined ? undefined : {
      config: alerting,
      instance: topology.instance,
      labels: topology.labels,
      monitors: alertMonitors(
        monitors.map((m) => m.config),
        monitors.map((m) => m.nicGpus),
      ),
      journalBuffer: journal.buffer,
      state: shared,
      version: options.version,
      credentials: options.credentials,
    };
    if (config.listen !== LISTEN_OFF) {
      // Everything a remote party drives (scrapes, Alertmanagers) runs
      // on one thread of its own: a flooded, slow or failing endpoint or
      // Alertmanager must never cost a sample (agent/endpoint.ts).
      endpoint = await Endpoint.start(shared, {
        listen: config.listen,
        web,
        info: {
          version: options.version,
          startMs,
          windowNs: config.metricsWindowNs,
          topology: topology.labels,
        },
        log,
        journal,
        sender,
      });
      log.info(`metrics on ${endpoint.url}`);
    } else if (sender !== undefined) {
      // No endpoint: the sender gets the thread alone (alerts/sender.ts).
      ownSender = await startAlertSender({
        ...sender,
        onError: (line) => log.error(line),
      });
    }
    if (alerting !== undefined) {
      log.info(
        `alerts to ${alerting.alertmanagers.length} Alertmanager${
          alerting.alertmanagers.length === 1 ? "" : "s"
        }`,
      );
    }
  };

  let agent: Agent;
  try {
    agent = await Agent.open(config, {
      version: options.generator,
      warn: (m) => log.warn(m),
      info: (m) => log.info(m),
      beforeLogs: startThreads,
    });
  } catch (error) {
    log.failed(error);
    // A log that could not open, after the threads started.
    await ownSender?.stop();
    await endpoint?.shutdown();
    return false;
  }

  for (const line of describeConfig(config).split("\n")) log.debug(line);
  const publication: Publication | undefined = shared === undefined
    ? undefined
    : publishMonitors(agent.monitors, { startMs, log, shared });

  // logrotate renamed the logs: start new files, losing no row.
  onHangUp(() => {
    for (const m of agent.monitors) m.log.reopen();
    log.info("SIGHUP: reopening the events logs");
  });
  const deadline = options.durationS === undefined
    ? undefined
    : longTimeout(() => stop.abort(), options.durationS * 1000);
  const status = !options.quiet && Deno.stderr.isTerminal()
    ? startStatusLine(
      agent.monitors.map((m) => m.monitor),
      // A terminal that went away must not end the run.
      (text) => void writeQuietly(Deno.stderr, text),
    )
    : undefined;

  // A column that changes only every few seconds makes a short window
  // see steps: said once the windows show it.
  const refresh = setInterval(
    refreshCheck(agent.monitors, (message) => log.warn(message)),
    REFRESH_CHECK_MS,
  );
  let ok = true;
  try {
    await agent.run(stop.signal);
  } catch (error) {
    log.failed(error);
    ok = false;
  } finally {
    deadline?.clear();
    clearInterval(refresh);
    status?.stop();
    await ownSender?.stop();
    await endpoint?.shutdown();
    publication?.stop();
    onHangUp(() => {});
    for (const error of await agent.close()) {
      log.failed(error);
      ok = false;
    }
  }

  if (!options.quiet) {
    // The logs are complete by now; a full or closed stdout loses nothing
    // but this summary, and must not turn a clean run into a failure.
    writeQuietly(
      Deno.stdout,
      formatEventTable(agent.tally.events, agent.tally.earlier) + "\n",
    );
    for (const m of agent.monitors) {
      writeQuietly(
        Deno.stdout,
        // Counts as review writes them ("40,123 samples").
        `${m.monitor.name}: ${countOf(m.monitor.samples, "sample")}` +
          (m.monitor.droppedSamples > 0
            ? `, ${formatCount(m.monitor.droppedSamples)} lost by the source`
            : "") +
          `, events log ${m.log.path}\n`,
      );
    }
  }
  return ok;
}
