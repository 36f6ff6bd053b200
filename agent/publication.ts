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

/** A running publication. */
export interface Publication {
  /** The shared buffer readers build a `PublishedState` over. */
  readonly buffer: SharedArrayBuffer;
  /** Its layout: the monitors as the publisher shaped them. */
  readonly shapes: readonly MonitorShape[];
  /** Stops publishing (readers keep the last state). */
  stop(): void;
}

/**
 * Starts publishing `monitors` every `publishMs` (default 100); a failed
 * publish is told once per failure on `log` and the readers keep the last
 * state.
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
  },
): Publication {
  const shapes = monitors.map(shapeOf);
  const buffer = sharedStateBuffer(shapes);
  const publishing = new StatePublisher(monitors, buffer, options.startMs)
    .start(options.publishMs ?? 100, (error) =>
      options.log.error(
        `cannot publish the monitors' state (the endpoint and the alert sender use the last one): ${
          errorMessage(error).split("\n")[0]
        }`,
      ));
  return { buffer, shapes, stop: () => publishing.stop() };
}
