/**
 * The metrics endpoint's Hono app: `/metrics`, `/api/v1/snapshot`,
 * `/healthz`, `/readyz` and an index page. Read-only; every response is
 * built from the agent's counters and last completed windows.
 *
 * @module
 */

import type { AlertCounters } from "../metrics/alert_stats.ts";
import { type Context, Hono } from "hono";
import { errorMessage } from "../base/error_message.ts";
import type { AgentMetrics } from "../metrics/agent_metrics.ts";
import type { BasicAuthVerifier } from "./basic_auth.ts";
import { basicAuth } from "./basic_auth.ts";
import { acceptsGzip, gzipResponses } from "./compress.ts";
import {
  contentTypeOf,
  type ExpositionFormat,
  negotiateFormat,
} from "./exposition.ts";
import {
  type ConnectionInfo,
  type RequestLimitOptions,
  requestLimits,
} from "./limits.ts";
import { MetricsRenderer } from "./render.ts";
import { ScrapeCache } from "./scrape_cache.ts";
import { buildSnapshot } from "./snapshot.ts";
import type { EventJournal } from "../events/event_journal.ts";
import { type ApiAnswer, listEvents, oneEvent } from "./events_api.ts";

/**
 * The endpoint as a request handler: all a server (or a test) needs of
 * the Hono app behind it. Routes are fixed; nothing can be added.
 */
export interface MetricsApp {
  /**
   * Answers one request. `env` is what the server knows of the connection;
   * the per-client request limit is keyed on its `remoteAddr`.
   */
  fetch(request: Request, env?: ConnectionInfo): Response | Promise<Response>;
  /**
   * Answers a request made from `input` (a path such as `/metrics`, a URL
   * or a Request) and `init`, with no server or socket: for tests and
   * examples.
   */
  request(
    input: string | URL | Request,
    init?: RequestInit,
    env?: ConnectionInfo,
  ): Response | Promise<Response>;
}

/** What the app is built from. */
export interface MetricsAppOptions {
  /** Basic auth for every path, when the web config has users. */
  readonly auth?: BasicAuthVerifier;
  /** Extra response headers (web config `http_server_config.headers`). */
  readonly headers?: ReadonlyMap<string, string>;
  /**
   * Bounds on request size and on requests in flight, per client and in
   * all; the defaults suit a Prometheus scraping every few seconds.
   */
  readonly limits?: RequestLimitOptions;
  /** Told of handler failures (one line each); the client gets a 500. */
  readonly onError?: (message: string) => void;
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
<li><a href="api/v1/events">api/v1/events</a>: recent events, newest first (JSON)</li>
<li><a href="healthz">healthz</a>: the process is alive</li>
<li><a href="readyz">readyz</a>: every source is running and its data is fresh</li>
</ul></body></html>
`;

/**
 * Builds the endpoint's app for `metrics`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMetricsApp } from "./app.ts";
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
 * // No server needed: app.request answers in-process. A server passes the
 * // client's address: serveMetrics, or
 * // serveMetrics(app, { listen: "127.0.0.1:9477" }) passes each client's address.
 * const app = createMetricsApp(metrics, { now: () => 200 });
 * const scrape = await app.request("/metrics");
 * assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
 * assert.match(await scrape.text(), /^dpu_traceback_samples_total\{monitor="nic"\} 1$/m);
 * assert.equal(await (await app.request("/readyz")).text(), "ready\n");
 * // Read-only: anything but GET and HEAD is refused before any work.
 * assert.equal((await app.request("/metrics", { method: "POST", body: "x" })).status, 405);
 * ```
 */
export function createMetricsApp(
  metrics: AgentMetrics,
  options: MetricsAppOptions = {},
): MetricsApp {
  const now = options.now ?? Date.now;
  const renderer = new MetricsRenderer(metrics, options.alerts);
  // /metrics and /api/v1/snapshot alike: a flood of requests costs one
  // render (and one gzip) per interval on the endpoint's thread.
  const scrapes = new ScrapeCache<ExpositionFormat | "json">(
    (key, nowMs) =>
      key === "json"
        ? JSON.stringify(buildSnapshot(metrics, nowMs))
        : renderer.render(key, nowMs),
    options.scrapeCacheMs,
  );
  const cached = (
    c: Context,
    key: ExpositionFormat | "json",
    contentType: string,
  ) => {
    const type = { "content-type": contentType };
    if (acceptsGzip(c.req.header("accept-encoding"))) {
      return c.body(scrapes.gzip(key, now()), 200, {
        ...type,
        "content-encoding": "gzip",
      });
    }
    return c.body(scrapes.text(key, now()), 200, type);
  };
  const app = new Hono<{ Bindings: ConnectionInfo }>();

  // First, so refusals (405, 413, 429 ...) carry these headers too.
  const extra = [...(options.headers ?? new Map())];
  app.use(async function commonHeaders(c, next) {
    await next();
    c.res.headers.set("cache-control", "no-store");
    c.res.headers.set("x-content-type-options", "nosniff");
    for (const [name, value] of extra) c.res.headers.set(name, value);
  });
  app.use(requestLimits(options.limits));
  app.use(gzipResponses());
  if (options.auth !== undefined) app.use(basicAuth(options.auth));

  app.get("/", (c) => c.html(INDEX));
  app.get("/metrics", (c) => {
    const format = negotiateFormat(c.req.header("accept"));
    return cached(c, format, contentTypeOf(format));
  });
  app.get(
    "/api/v1/snapshot",
    (c) => cached(c, "json", "application/json; charset=utf-8"),
  );
  const journal = options.journal;
  if (journal !== undefined) {
    const json = (c: Context, answer: ApiAnswer) =>
      c.body(JSON.stringify(answer.body), answer.status, {
        "content-type": "application/json; charset=utf-8",
      });
    app.get("/api/v1/events", (c) =>
      json(
        c,
        listEvents(
          journal,
          metrics.monitors,
          new URL(c.req.url).searchParams,
          now(),
        ),
      ));
    app.get(
      "/api/v1/events/:id",
      (c) =>
        json(c, oneEvent(journal, metrics.monitors, c.req.param("id"), now())),
    );
  }
  app.get("/healthz", (c) => c.text("ok\n"));
  app.get("/readyz", (c) => {
    const { ready, problems } = metrics.readiness(now());
    return ready
      ? c.text("ready\n")
      : c.text(`not ready\n${problems.join("\n")}\n`, 503);
  });
  app.notFound((c) => c.text("not found\n", 404));
  app.onError((error, c) => {
    options.onError?.(
      // The path is the client's: quoted, so it cannot start a log line.
      `metrics endpoint: ${JSON.stringify(c.req.path)}: ${errorMessage(error)}`,
    );
    return c.text("internal error\n", 500);
  });
  return app;
}
