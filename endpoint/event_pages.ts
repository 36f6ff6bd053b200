/**
 * `/events/ID` and its rows, `/events/ID/rows.csv` and `rows.json`: the
 * page an alert's link opens, drawn on demand from the monitor's
 * events.log. Nothing is read or drawn until someone asks; finding the
 * event reads only around it (review/event_lookup.ts), whatever the log's
 * size.
 *
 * It runs on the endpoint's thread, never the sampling thread, and bounds
 * what a flood of requests can cost there: at most
 * {@linkcode MAX_BUILDS} pages or downloads are made at once (more get a
 * 503 to retry), a page is at most about 100 KB, a download at most
 * {@linkcode ROWS_LIMIT} rows, and the page of an event that has ended
 * (which cannot change) is kept and served again without reading the log.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { eventId, type EventKey, parseEventId } from "../events/event_link.ts";
import type { EventJournal } from "../events/event_journal.ts";
import { peakUnitOf } from "../rules/peak_format.ts";
import type { PeakUnit } from "../base/peak_text.ts";
import {
  type EventLookup,
  findEvent,
  unknownMonitor,
} from "../review/event_lookup.ts";
import { EVENT_PAGE_CSP, eventPageHtml } from "../review/event_page.ts";
import { eventRows } from "../review/event_rows.ts";
import { chartSpan, SignalChartData } from "../review/signal_chart.ts";
import { readWindow } from "../review/window_rows.ts";
import { type Answer, Body, textAnswer } from "./answer.ts";
import { type EventsMonitor, journalEvent, summarize } from "./events_api.ts";
import {
  type GpuRingMonitor,
  type GpuWindow,
  gpuWindow,
} from "./gpu_window.ts";

/** Pages and downloads made at once, at most. */
export const MAX_BUILDS = 2;
/** Rows in one download, at most: about 5 MB of CSV for a few columns. */
export const ROWS_LIMIT = 100_000;
/** Pages of ended events kept. */
export const PAGE_CACHE_SIZE = 64;

const HTML_TYPE = "text/html; charset=utf-8";

/** The headers every page goes out with. */
const PAGE_HEADERS = {
  "content-security-policy": EVENT_PAGE_CSP,
  "referrer-policy": "no-referrer",
} as const;

/** What the pages are made from. */
export interface EventPagesOptions {
  /**
   * The agent's monitors, as the events API reads them; a GPU monitor's
   * shared ring too, for the GPUs behind a NIC.
   */
  readonly monitors: readonly (EventsMonitor & GpuRingMonitor)[];
  /** The agent's event journal: what it holds in memory. */
  readonly journal?: EventJournal;
  /** Host clock, Unix ms. */
  readonly now: () => number;
  /** Finds an event in a log (tests count or fail reads). */
  readonly find?: typeof findEvent;
}

/**
 * Serves the event pages and rows.
 *
 * @example Usage
 * ```ts ignore
 * const pages = new EventPages({ monitors, journal, now: Date.now });
 * const answer = await pages.answer("/events/nic/drops/2026-11-21T14:50:00.000300000Z");
 * ```
 */
export class EventPages {
  readonly #monitors: readonly (EventsMonitor & GpuRingMonitor)[];
  readonly #journal: EventJournal | undefined;
  readonly #now: () => number;
  readonly #find: typeof findEvent;
  readonly #cache = new Map<string, Body>();
  #building = 0;

  /** Pages of `options.monitors`' events. */
  constructor(options: EventPagesOptions) {
    this.#monitors = options.monitors;
    this.#journal = options.journal;
    this.#now = options.now;
    this.#find = options.find ?? findEvent;
  }

  /**
   * The answer to `path` (`/events/ID`, `/events/ID/rows.csv`,
   * `/events/ID/rows.json`); undefined for a path that is none of them.
   */
  async answer(path: string): Promise<Answer | undefined> {
    if (!path.startsWith("/events/")) return undefined;
    let rest = path.slice("/events/".length);
    let rows: "csv" | "json" | undefined;
    for (const format of ["csv", "json"] as const) {
      if (rest.endsWith(`/rows.${format}`)) {
        rows = format;
        rest = rest.slice(0, -`/rows.${format}`.length);
      }
    }
    const parsed = parseEventId(rest);
    if (!parsed.ok) return textAnswer(400, parsed.problem);
    const key = parsed.key;
    const m = this.#monitors.findIndex((s) => s.config.name === key.monitor);
    if (m < 0) {
      const names = this.#monitors.map((s) => s.config.name);
      return textAnswer(404, unknownMonitor(key, names).message);
    }
    const id = eventId(key);
    if (rows === undefined) {
      const kept = this.#cache.get(id);
      if (kept !== undefined) return page(200, kept);
    }
    if (this.#building >= MAX_BUILDS) {
      return textAnswer(503, "busy drawing other event pages; try again", {
        "retry-after": "1",
      });
    }
    this.#building++;
    try {
      return rows === undefined
        ? await this.#page(m, key, id)
        : await this.#rows(m, key, rows);
    } catch (error) {
      return textAnswer(
        500,
        `Cannot show event ${id}: ${errorMessage(error)}`,
      );
    } finally {
      this.#building--;
    }
  }

  async #page(m: number, key: EventKey, id: string): Promise<Answer> {
    const served = this.#monitors[m];
    const journal = this.#journal;
    const held = journal === undefined
      ? undefined
      : journalEvent(journal, this.#monitors, key);
    const live = held === undefined
      ? undefined
      : summarize(held, this.#monitors, this.#now());
    // The page draws its own picture (SignalChartData) and the rows need
    // none: the review's chart would be work thrown away.
    const lookup = await this.#find(served.log.path, key, { chart: false });
    const rule = served.config.rules.find((r) => r.name === key.rule);
    if (lookup.kind !== "found" && live === undefined) {
      return {
        status: 404,
        body: new Body(
          eventPageHtml({
            key,
            log: served.log.path,
            peakUnit: rule === undefined ? "" : peakUnitOf(rule),
            missing: lookup.message,
          }),
          HTML_TYPE,
        ),
        headers: PAGE_HEADERS,
      };
    }
    let chart;
    let gpus: GpuWindow | undefined;
    if (lookup.kind === "found") {
      const data = new SignalChartData(lookup.event);
      await readWindow(lookup.event, data);
      chart = data.chart();
      const span = chartSpan(lookup.event, chart);
      // GPU samples carry host time; a log in another clock cannot be
      // placed against them.
      if (span !== undefined && lookup.event.timeFormat === "ns") {
        gpus = gpuWindow(served.nicGpus, this.#monitors, key.startNs, span);
      }
    }
    const event = lookup.kind === "found" ? lookup.event : undefined;
    const html = eventPageHtml({
      key,
      log: served.log.path,
      ...(rule?.severity === undefined ? {} : { severity: rule.severity }),
      ...(rule?.summary === undefined ? {} : { summary: rule.summary }),
      ...(served.nicGpus === undefined ? {} : { gpus: served.nicGpus }),
      peakUnit: rule === undefined ? unitOf(lookup) : peakUnitOf(rule),
      ...(event === undefined ? {} : { event, chart }),
      ...(gpus === undefined ? {} : { gpuReadings: gpus }),
      ...(lookup.kind === "found" ? {} : { missing: lookup.message }),
      ...(live === undefined ? {} : {
        live: {
          state: live.state,
          peak: live.peak,
          durationS: live.duration_s,
          samples: live.samples,
          lostBeforeStart: live.lost_before_start,
        },
      }),
      ...(event === undefined ? {} : {
        rows: {
          csv: `./${lastSegment(id)}/rows.csv`,
          json: `./${lastSegment(id)}/rows.json`,
          limit: ROWS_LIMIT,
        },
      }),
    });
    const body = new Body(html, HTML_TYPE);
    // An ended event's page cannot change: keep it. (An open one's
    // duration and peak move, so it is drawn afresh; so does one whose
    // GPU reading over its end is still to come.) Kept, it also keeps the
    // GPUs' readings after the GPU monitor's ring has moved past them.
    const ended = live?.state === "ended" ||
      (live === undefined && event?.state === "ended");
    if (ended && gpus?.complete !== false) this.#keep(id, body);
    return page(200, body);
  }

  async #rows(
    m: number,
    key: EventKey,
    format: "csv" | "json",
  ): Promise<Answer> {
    const served = this.#monitors[m];
    const lookup = await this.#find(served.log.path, key, { chart: false });
    if (lookup.kind !== "found") return textAnswer(404, lookup.message);
    let text = "";
    for await (
      const chunk of eventRows(lookup, format, { maxRows: ROWS_LIMIT })
    ) {
      text += chunk;
    }
    const name = `${key.monitor}-${key.rule}-${key.startNs}`.replace(
      /[^A-Za-z0-9._-]+/g,
      "_",
    );
    return {
      status: 200,
      body: new Body(
        text,
        format === "csv"
          ? "text/csv; charset=utf-8"
          : "application/json; charset=utf-8",
      ),
      headers: {
        "content-disposition": `attachment; filename="${name}.${format}"`,
      },
    };
  }

  #keep(id: string, body: Body): void {
    this.#cache.delete(id);
    this.#cache.set(id, body);
    if (this.#cache.size > PAGE_CACHE_SIZE) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
  }
}

function page(status: number, body: Body): Answer {
  return { status, body, headers: PAGE_HEADERS };
}

/** A relative link from the page (`.../START`) to what is under it. */
function lastSegment(id: string): string {
  return id.slice(id.lastIndexOf("/") + 1);
}

/** The peak's unit from the log's header, for a rule no longer configured. */
function unitOf(lookup: EventLookup): PeakUnit {
  if (lookup.kind !== "found") return "";
  const kind = lookup.event.kind;
  return kind === "rate" ? "/s" : kind === "ratio" ? "%" : "";
}
