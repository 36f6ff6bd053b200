/**
 * `/api/v1/events` and `/api/v1/events/ID`: the agent's recent events as
 * JSON summaries (never raw rows: the traceback stays on the device), read
 * from the shared {@linkcode EventJournal} the sampling thread writes.
 * Memory is bounded by the journal: a request never holds more than its
 * capacity plus one open event per rule.
 *
 * @module
 */

import { openEventPeak } from "../metrics/open_event_peak.ts";
import { errorMessage } from "../base/error_message.ts";
import { formatTimePoint, parseTimePoint } from "../base/time_point.ts";
import { DEFAULT_SEVERITY } from "../config/types.ts";
import type { RuleConfig } from "../config/types.ts";
import type { EventJournal, JournalEvent } from "../events/event_journal.ts";
import type { ServedMonitor } from "../metrics/agent_metrics.ts";
import { traceCommand } from "../events/trace_command.ts";
import {
  eventId,
  type EventKey,
  eventPagePath,
  parseEventId,
} from "../events/event_link.ts";
import { peakKindOf } from "../rules/peak_format.ts";

/** Events in one answer unless `limit` says otherwise. */
export const DEFAULT_EVENTS_LIMIT = 100;
/** The largest `limit` accepted. */
export const MAX_EVENTS_LIMIT = 1000;

/** One event as `/api/v1/events` serves it. */
export interface EventSummary {
  /**
   * The event's stable ID, `MONITOR/RULE/START` (events/event_link.ts):
   * the same for this event after a restart or a rotation.
   */
  readonly id: string;
  /** The event's page on this endpoint (`/events/ID`). */
  readonly page: string;
  /** The monitor's name. */
  readonly monitor: string;
  /** The rule's name. */
  readonly rule: string;
  readonly severity: string;
  /** The rule's configured summary, when it has one. */
  readonly summary?: string;
  /** The start sample's time, ISO-8601 with microseconds. */
  readonly start: string;
  /** The start sample's timestamp, ns since the Unix epoch (exact, as text). */
  readonly start_ns: string;
  /** The end sample's time; null while open. */
  readonly end: string | null;
  readonly end_ns: string | null;
  readonly state: "open" | "ended";
  /** End minus start; for an open event, up to the host's clock when the request is answered. */
  readonly duration_s: number;
  /** Samples in the event: the start sample up to (not counting) the end sample; while open, up to the newest. */
  readonly samples: number;
  /** The rule's peak over the event (live while open); null when it has none. */
  readonly peak: number | null;
  /** `max` for rules that fire high, `min` for rules that fire low. */
  readonly peak_kind: "max" | "min";
  /** What the rule measured on the start sample (in `peak`'s units); null when not known. */
  readonly start_value: number | null;
  /**
   * Samples the source lost within the rule's depth before the start (a
   * stall; the reference's types compare across it); 0 when none.
   */
  readonly lost_before_start: number;
  /**
   * A NIC monitor's: the GPUs closest to its PCIe function (index, UUID,
   * bus ID and the class of their path to it, as `nvidia-smi topo -m`
   * names it), or why there are none. Absent for other monitors.
   */
  readonly gpus?: {
    readonly nic: string;
    readonly closest: readonly {
      readonly index: number;
      readonly uuid: string;
      readonly bus_id: string;
      readonly link: string;
    }[];
    readonly none?: string;
  };
}

/** One event as `/api/v1/events/ID` serves it. */
export interface EventDetail extends EventSummary {
  /** The command that prints the event's traceback on the device. */
  readonly review: string;
  /** The monitor's events.log. */
  readonly events_log: string;
}

/** A JSON answer: status and body. */
export interface ApiAnswer {
  readonly status: 200 | 400 | 404;
  readonly body: unknown;
}

/**
 * Answers `GET /api/v1/events` with `query`'s `since` (ISO-8601 or Unix
 * seconds: events open or ended at or after it) and `limit` (1..1000,
 * default 100). Unknown or repeated parameters are a 400.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type EventsMonitor, listEvents } from "./events_api.ts";
 * import { EventJournal } from "../events/event_journal.ts";
 *
 * const journal = EventJournal.create([1]);
 * const monitors: EventsMonitor[] = [{
 *   config: { name: "nic", rules: [{ name: "drops", column: 0, comparisonType: "gt", comparisonValue: 0n }] },
 *   monitor: { samples: 20, rules: [{ active: true, peak: 7 }], ruleChangedAtMs: () => 0 },
 *   log: { path: "/var/log/dpu-traceback/events.log" },
 * }];
 * const at = new Uint32Array([1_000, 0]); // 1 µs after the epoch
 * journal.started(0, 0, at, 0, 11, 0, 5);
 * const answer = listEvents(journal, monitors, new URLSearchParams(), 0);
 * assert.equal(answer.status, 200);
 * const { events: [event] } = answer.body as { events: { state: string; peak: number; samples: number; start_value: number }[] };
 * assert.deepEqual([event.state, event.peak, event.samples, event.start_value], ["open", 7, 10, 5]);
 * assert.equal(listEvents(journal, monitors, new URLSearchParams("limit=0"), 0).status, 400);
 * ```
 */
export function listEvents(
  journal: EventJournal,
  monitors: readonly EventsMonitor[],
  query: URLSearchParams,
  nowMs: number,
): ApiAnswer {
  let sinceNs: bigint | undefined;
  let limit = DEFAULT_EVENTS_LIMIT;
  const seen = new Set<string>();
  for (const [name, value] of query) {
    if (seen.has(name)) return badRequest(`${quote(name)} is given twice`);
    seen.add(name);
    if (name === "since") {
      try {
        sinceNs = parseTimePoint("since", value).ns;
      } catch (error) {
        return badRequest(errorMessage(error));
      }
    } else if (name === "limit") {
      if (
        !/^[1-9][0-9]{0,3}$/.test(value) || Number(value) > MAX_EVENTS_LIMIT
      ) {
        return badRequest(
          `limit must be an integer from 1 to ${MAX_EVENTS_LIMIT}, got ${
            quote(value)
          }`,
        );
      }
      limit = Number(value);
    } else {
      return badRequest(
        `unknown parameter ${quote(name)} (known: since, limit)`,
      );
    }
  }
  const events = withOpenEvents(journal, monitors, journal.recent());
  const kept = events.filter((e) =>
    sinceNs === undefined || e.endNs === undefined || e.endNs >= sinceNs
  );
  return {
    status: 200,
    body: {
      events: kept.slice(0, limit).map((e) => summarize(e, monitors, nowMs)),
      truncated: kept.length > limit,
    },
  };
}

/**
 * Answers `GET /api/v1/events/ID`, ID the event's stable ID
 * (`MONITOR/RULE/START`, as {@linkcode EventSummary.id} gives it): the
 * event's summary, the `review` command that prints its traceback and its
 * events.log; 404 when the journal does not hold it (its page may still
 * find it in events.log), 400 for an ID that is not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type EventsMonitor, oneEvent } from "./events_api.ts";
 * import { EventJournal } from "../events/event_journal.ts";
 *
 * const journal = EventJournal.create([1]);
 * const monitors: EventsMonitor[] = [{
 *   config: { name: "nic", rules: [{ name: "it's hot", column: 0, comparisonType: "lt", comparisonValue: 1n }] },
 *   monitor: { samples: 20, rules: [{ active: true, peak: 0 }], ruleChangedAtMs: () => 0 },
 *   log: { path: "/var/log/dpu-traceback/events.log" },
 * }];
 * // The start sample's record: its timestamp, 2026-11-21T14:50:00.25Z in ns.
 * const record = new Uint32Array(new BigUint64Array([1_795_272_600_250_000_000n]).buffer);
 * journal.started(0, 0, record, 0, 1, Date.UTC(2026, 10, 21, 14, 50, 0, 251));
 * const id = "nic/it%27s%20hot/2026-11-21T14:50:00.250000000Z";
 * const answer = oneEvent(journal, monitors, id, 0);
 * const event = answer.body as { id: string; page: string; review: string; peak_kind: string };
 * assert.equal(event.id, id);
 * assert.equal(event.page, `/events/${id}`);
 * assert.equal(
 *   event.review,
 *   "dpu-traceback review /var/log/dpu-traceback/events.log --event 2026-11-21T14:50:00.250000000Z --rule='it'\\''s hot'",
 * );
 * assert.equal(event.peak_kind, "min");
 * assert.equal(oneEvent(journal, monitors, "nic/it%27s%20hot/2026-11-21T14:50:00.250000001Z", 0).status, 404);
 * assert.equal(oneEvent(journal, monitors, "1", 0).status, 400);
 * ```
 */
export function oneEvent(
  journal: EventJournal,
  monitors: readonly EventsMonitor[],
  idText: string,
  nowMs: number,
): ApiAnswer {
  const parsed = parseEventId(idText);
  if (!parsed.ok) return badRequest(parsed.problem);
  const event = journalEvent(journal, monitors, parsed.key);
  if (event === undefined) {
    return {
      status: 404,
      body: {
        error:
          `event ${idText} is not in the agent's recent events (the ${journal.capacity} newest, and each rule's open and last one); its page, /events/${idText}, looks for it in events.log`,
      },
    };
  }
  const served = monitors[event.monitor];
  const summary = summarize(event, monitors, nowMs);
  const detail: EventDetail = {
    ...summary,
    review: traceCommand(served.log.path, event.startNs, summary.rule),
    events_log: served.log.path,
  };
  return { status: 200, body: detail };
}

/**
 * The journal's record of the event `key` names: among the recent events
 * and each rule's open and last one; undefined when it holds none.
 */
export function journalEvent(
  journal: EventJournal,
  monitors: readonly EventsMonitor[],
  key: EventKey,
): JournalEvent | undefined {
  const m = monitors.findIndex((s) => s.config.name === key.monitor);
  if (m < 0) return undefined;
  const rules = monitors[m].config.rules;
  const matches = (e: JournalEvent | undefined) =>
    e !== undefined && e.monitor === m && e.startNs === key.startNs &&
    rules[e.rule]?.name === key.rule;
  const recent = journal.recent().find(matches);
  if (recent !== undefined) return recent;
  for (let r = 0; r < rules.length; r++) {
    if (rules[r].name !== key.rule) continue;
    for (const event of [journal.open(m, r), journal.last(m, r)]) {
      if (matches(event)) return event;
    }
  }
  return undefined;
}

/** What the events API reads of a served monitor. */
export type EventsMonitor = {
  readonly config: {
    readonly name: string;
    readonly rules: readonly RuleConfig[];
  };
  readonly monitor: {
    readonly samples: number;
    readonly rules: readonly {
      readonly active: boolean;
      readonly peak: number;
    }[];
    /** Unix ms of rule `i`'s last start or end (the published one). */
    ruleChangedAtMs(i: number): number;
  };
  readonly log: Pick<ServedMonitor["log"], "path">;
  /** A NIC monitor's closest GPUs, worked out at start. */
  readonly nicGpus?: ServedMonitor["nicGpus"];
};

// The ring's events, plus each rule's open event that the ring has
// dropped (a long event outlives the ring under a flood of short ones),
// newest first.
function withOpenEvents(
  journal: EventJournal,
  monitors: readonly EventsMonitor[],
  recent: JournalEvent[],
): JournalEvent[] {
  const oldest = recent.length === 0 ? Infinity : recent[recent.length - 1].id;
  const extra: JournalEvent[] = [];
  monitors.forEach((m, i) => {
    for (let r = 0; r < m.config.rules.length; r++) {
      const open = journal.open(i, r);
      if (open !== undefined && open.id < oldest) extra.push(open);
    }
  });
  if (extra.length === 0) return recent;
  return [...recent, ...extra.sort((a, b) => b.id - a.id)];
}

/** An event of the journal as the API (and the event's page) tells it. */
export function summarize(
  event: JournalEvent,
  monitors: readonly EventsMonitor[],
  nowMs: number,
): EventSummary {
  const served = monitors[event.monitor];
  const config = served.config.rules[event.rule];
  const open = event.endNs === undefined;
  const peak = open
    ? openEventPeak(served.monitor, event.rule, event.startMs)
    : event.peak;
  const durationNs = open
    ? BigInt(Math.round(nowMs)) * 1_000_000n - event.startNs
    : event.endNs! - event.startNs;
  const samples = open
    ? Math.max(0, served.monitor.samples - event.startSample + 1)
    : event.endSample! - event.startSample;
  const key = {
    monitor: served.config.name,
    rule: config.name,
    startNs: event.startNs,
  };
  return {
    id: eventId(key),
    page: eventPagePath(key),
    monitor: served.config.name,
    rule: config.name,
    severity: config.severity ?? DEFAULT_SEVERITY,
    ...(config.summary === undefined ? {} : { summary: config.summary }),
    start: isoMicros(event.startNs),
    start_ns: String(event.startNs),
    end: open ? null : isoMicros(event.endNs!),
    end_ns: open ? null : String(event.endNs),
    state: open ? "open" : "ended",
    duration_s: Math.max(0, Number(durationNs) / 1e9),
    samples,
    peak: Number.isFinite(peak) ? peak : null,
    peak_kind: peakKindOf(config),
    start_value: Number.isFinite(event.value) ? event.value : null,
    lost_before_start: event.lostBefore,
    ...(served.nicGpus === undefined ? {} : {
      gpus: {
        nic: served.nicGpus.nic,
        closest: served.nicGpus.gpus.map((g) => ({
          index: g.index,
          uuid: g.uuid,
          bus_id: g.busId,
          link: g.link,
        })),
        ...(served.nicGpus.none === undefined
          ? {}
          : { none: served.nicGpus.none }),
      },
    }),
  };
}

// The API's times stop at microseconds, as the start and end figures
// (`start_ns`, `end_ns`) carry the exact value.
function isoMicros(ns: bigint): string {
  return `${formatTimePoint(ns).slice(0, -4)}Z`;
}

function badRequest(error: string): ApiAnswer {
  return { status: 400, body: { error } };
}

// Client text in a message: JSON-quoted and cut short.
function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
