/**
 * The monitors' state, published from the sampling thread into shared
 * memory a few times a second, for every thread that reports on it: the
 * metrics endpoint and the Alertmanager sender. One publication serves
 * both, and exists whenever either runs, so an agent without an endpoint
 * (`listen: off`) still gives its alerts live peaks and counts the events
 * that began and ended between two of the sender's looks.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import type { Logger } from "../logging/logger.ts";
import type { ServedMonitor } from "../metrics/agent_metrics.ts";
import {
  type MonitorShape,
  shapeOf,
  sharedStateBuffer,
  StatePublisher,
} from "../metrics/shared_state.ts";

/** Where the monitors are published, and how it is laid out. */
export interface SharedMonitors {
  /** The shared buffer readers build a `PublishedState` over. */
  readonly buffer: SharedArrayBuffer;
  /** Its layout: the monitors as the publisher shapes them. */
  readonly shapes: readonly MonitorShape[];
}

/** A running publication. */
export interface Publication extends SharedMonitors {
  /** Stops publishing (readers keep the last state). */
  stop(): void;
}

/**
 * The shared buffer for monitors whose sources are open but whose logs are
 * not yet: the threads that read it (the endpoint, the sender) can start,
 * and fail, before any events.log gets a header; {@linkcode publishMonitors}
 * then publishes into it. Until then a reader sees each monitor idle, with
 * no data since `startMs`.
 *
 * @example
 * ```ts ignore
 * const shared = shareMonitors(opened.monitors, startMs);
 * const endpoint = await Endpoint.start(shared, { listen, info, log });
 * // ... the logs open, the Agent is made ...
 * const publication = publishMonitors(agent.monitors, { startMs, log, shared });
 * ```
 */
export function shareMonitors(
  monitors: readonly Pick<
    ServedMonitor,
    "config" | "collector" | "nicGpus" | "sharedRing"
  >[],
  startMs: number,
): SharedMonitors {
  // A log's path is its monitor's event_log (events/log.ts keeps it).
  const shapes = monitors.map((m) =>
    shapeOf({
      config: m.config,
      collector: m.collector,
      nicGpus: m.nicGpus,
      sharedRing: m.sharedRing,
      log: { path: m.config.eventLog },
    })
  );
  return { buffer: sharedStateBuffer(shapes, startMs), shapes };
}

/**
 * Starts publishing `monitors` every `publishMs` (default 100), into
 * `shared` when given (from {@linkcode shareMonitors} for these monitors),
 * else into a new buffer; a failed publish is told once per failure on
 * `log` and the readers keep the last state.
 *
 * @example
 * ```ts ignore
 * const publication = publishMonitors(agent.monitors, { startMs, log });
 * const endpoint = await Endpoint.start(publication, { listen, info, log });
 * publication.stop();
 * ```
 */
export function publishMonitors(
  monitors: readonly ServedMonitor[],
  options: {
    /** When the agent started (the age of no data), ms since the epoch. */
    readonly startMs: number;
    readonly log: Logger;
    readonly publishMs?: number;
    readonly shared?: SharedMonitors;
  },
): Publication {
  const { buffer, shapes } = options.shared ??
    shareMonitors(monitors, options.startMs);
  const publishing = new StatePublisher(monitors, buffer, options.startMs)
    .start(options.publishMs ?? 100, (error) =>
      options.log.error(
        `cannot publish the monitors' state (the endpoint and the alert sender use the last one): ${
          errorMessage(error).split("\n")[0]
        }`,
      ));
  return { buffer, shapes, stop: () => publishing.stop() };
}
