/**
 * The endpoint's paths: `/metrics`, `/api/v1/snapshot`, `/api/v1/events`
 * (and one event by id), `/healthz`, `/readyz` and an index page, each
 * answered from the agent's counters and last completed windows. Basic
 * auth, when configured, comes before every path.
 *
 * Why no router library: there are seven fixed paths, one of them with a
 * parameter, and the server (endpoint/server.ts) has parsed and bounded
 * the request already; a router would need a `Request` built from that
 * parse and a `Response` read back into bytes, two more layers for a
 * table this short.
 *
 * @module
 */

import type { AgentMetrics } from "../metrics/agent_metrics.ts";
import type { AlertCounters } from "../metrics/alert_stats.ts";
import type { EventJournal } from "../events/event_journal.ts";
import { type Answer, Body, textAnswer } from "./answer.ts";
import { basicAuthRefusal, type BasicAuthVerifier } from "./basic_auth.ts";
import { type ApiAnswer, listEvents, oneEvent } from "./events_api.ts";
import { EventPages } from "./event_pages.ts";
import type { Handler } from "./exchange.ts";
import { contentTypeOf, negotiateFormat } from "./exposition.ts";
import { headerField, type RequestHead } from "./http1.ts";
import { MetricsRenderer } from "./render.ts";
import { ScrapeCache } from "./scrape_cache.ts";
import { buildSnapshot } from "./snapshot.ts";

/** What the routes answer from. */
export interface RoutesOptions {
  /** Basic auth for every path, when the web config has users. */
  readonly auth?: BasicAuthVerifier;
  /** How long one rendering of /metrics is shared, ms (default 200). */
  readonly scrapeCacheMs?: number;
  /** Host clock, Unix ms; for tests. */
  readonly now?: () => number;
  /**
   * The agent's event journal (a reader over the sampling thread's shared
   * buffer): serves `/api/v1/events`. Without it those paths are 404s.
   */
  readonly journal?: EventJournal;
  /** The Alertmanager sender's counters, rendered when alerting is on. */
  readonly alerts?: AlertCounters;
}

const INDEX = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dpu-traceback</title></head>
<body><h1>dpu-traceback</h1>
<ul>
<li><a href="metrics">metrics</a>: Prometheus text or OpenMetrics</li>
<li><a href="api/v1/snapshot">api/v1/snapshot</a>: the same aggregates as JSON</li>
<li><a href="api/v1/events">api/v1/events</a>: recent events, newest first (JSON); each event's page is at events/ID</li>
<li><a href="healthz">healthz</a>: the process is alive</li>
<li><a href="readyz">readyz</a>: every source is running and its data is fresh</li>
</ul></body></html>
`;
const JSON_TYPE = "application/json; charset=utf-8";
const EVENT_PATH = "/api/v1/events/";

/**
 * The endpoint's handler for `metrics`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { endpointRoutes } from "./routes.ts";
 * import { parseRequestHead } from "./http1.ts";
 * import { AgentMetrics, type ServedMonitor } from "../metrics/agent_metrics.ts";
 * import { WindowAggregator } from "../metrics/aggregate.ts";
 * import { Monitor } from "../rules/monitor.ts";
 * import type { MonitorConfig } from "../config/types.ts";
 *
 * const config: MonitorConfig = {
 *   name: "nic",
 *   source: "sim",
 *   samplePeriodNs: 1_000_000, // 1 ms
 *   depth: 2,
 *   columns: [{ name: "rx", dataId: "0x0000000000000001", kind: "counter" }],
 *   rules: [],
 *   eventLog: "events.log",
 *   seed: 1,
 * };
 * const aggregator = new WindowAggregator({ columns: config.columns });
 * const noLog = { columnNames() {}, row() {}, eventStart() {}, eventEnd() {}, gap() {} };
 * const monitor = new Monitor(config, noLog, { observer: aggregator });
 * const nic: ServedMonitor = {
 *   config,
 *   monitor,
 *   aggregator,
 *   collector: {},
 *   log: {
 *     path: "events.log",
 *     stats: { bytesWritten: 0, writeErrors: 0, droppedRows: 0, pendingBytes: 0 },
 *   },
 *   status: { state: "running" },
 * };
 * const metrics = new AgentMetrics([nic], { version: "0.1.0", startMs: 0, windowNs: 10e9 });
 * monitor.claim();
 * monitor.commit(); // one sample
 * metrics.tick(100);
 *
 * // No server needed: the handler takes a parsed request head.
 * // serveMetrics(routes, { listen: "127.0.0.1:9477" }) serves it.
 * const routes = endpointRoutes(metrics, { now: () => 200 });
 * const get = (path: string) => {
 *   const parsed = parseRequestHead(
 *     new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`),
 *     { maxHeaders: 100, maxTargetBytes: 2048 },
 *   );
 *   assert.ok(parsed.ok);
 *   return routes(parsed.head);
 * };
 * const text = (answer: { body: { bytes: Uint8Array } }) =>
 *   new TextDecoder().decode(answer.body.bytes);
 * const scrape = await get("/metrics");
 * assert.equal(scrape.body.type, "text/plain; version=0.0.4; charset=utf-8");
 * assert.match(text(scrape), /^dpu_traceback_samples_total\{monitor="nic"\} 1$/m);
 * assert.equal(text(await get("/readyz")), "ready\n");
 * assert.equal((await get("/nope")).status, 404);
 * ```
 */
export function endpointRoutes(
  metrics: AgentMetrics,
  options: RoutesOptions = {},
): Handler {
  const now = options.now ?? Date.now;
  const renderer = new MetricsRenderer(metrics, options.alerts);
  // /metrics and /api/v1/snapshot alike: a flood of requests costs one
  // render (and one gzip) per interval on the endpoint's thread.
  const scrapes = new ScrapeCache<ReturnType<typeof negotiateFormat> | "json">(
    (key, nowMs) =>
      key === "json"
        ? new Body(JSON.stringify(buildSnapshot(metrics, nowMs)), JSON_TYPE)
        : new Body(renderer.render(key, nowMs), contentTypeOf(key)),
    options.scrapeCacheMs,
  );
  const journal = options.journal;
  const json = (answer: ApiAnswer): Answer => ({
    status: answer.status,
    body: new Body(JSON.stringify(answer.body), JSON_TYPE),
  });

  const pages = journal === undefined ? undefined : new EventPages({
    monitors: metrics.monitors,
    journal,
    now,
  });

  const route = (request: RequestHead): Answer | Promise<Answer> => {
    const path = request.path;
    switch (path) {
      case "/":
        return {
          status: 200,
          body: new Body(INDEX, "text/html; charset=utf-8"),
        };
      case "/metrics": {
        const format = negotiateFormat(headerField(request, "accept"));
        return { status: 200, body: scrapes.body(format, now()) };
      }
      case "/api/v1/snapshot":
        return { status: 200, body: scrapes.body("json", now()) };
      case "/healthz":
        return textAnswer(200, "ok");
      case "/readyz": {
        const { ready, problems } = metrics.readiness(now());
        return ready
          ? textAnswer(200, "ready")
          : textAnswer(503, ["not ready", ...problems].join("\n"));
      }
    }
    if (journal !== undefined) {
      if (path === "/api/v1/events") {
        return json(
          listEvents(
            journal,
            metrics.monitors,
            new URLSearchParams(request.query),
            now(),
          ),
        );
      }
      const id = path.startsWith(EVENT_PATH)
        ? path.slice(EVENT_PATH.length)
        : "";
      if (id !== "") {
        return json(oneEvent(journal, metrics.monitors, id, now()));
      }
      if (pages !== undefined && path.startsWith("/events/")) {
        return pages.answer(path).then((a) =>
          a ?? textAnswer(404, "not found")
        );
      }
    }
    return textAnswer(404, "not found");
  };

  const auth = options.auth;
  if (auth === undefined) return route;
  return async (request, client) =>
    await basicAuthRefusal(
      auth,
      headerField(request, "authorization"),
      client,
    ) ?? await route(request);
}
