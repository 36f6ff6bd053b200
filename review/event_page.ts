/**
 * The page of one event, as the agent's endpoint serves it at
 * `/events/ID`: what an on-call engineer opens from an alert. The event in
 * words first (what fired, where, when, for how long, how far), then the
 * picture of the burst (review/signal_chart.ts), then where the numbers
 * are: the rows as CSV and JSON, and the `review` command that prints the
 * full traceback on the device.
 *
 * One self-contained HTML document: no script, no external asset, one
 * inline style sheet whose hash is in {@linkcode EVENT_PAGE_CSP}, so the
 * page works offline, in a text browser (everything the chart shows is
 * also said in words) and on a phone (the chart scales to the width).
 *
 * @module
 */

import { createHash } from "node:crypto";
import { escapeXml } from "./svg.ts";
import type { ReviewEvent } from "./event.ts";
import { ruleText } from "./rule_text.ts";
import { type SignalChart, signalChartSvg } from "./signal_chart.ts";
import { type GpuChart, gpuChartSummary, gpuChartSvg } from "./gpu_chart.ts";
import { eventId, type EventKey } from "../events/event_link.ts";
import { traceCommand } from "../events/trace_command.ts";
import { formatTimePoint } from "../base/time_point.ts";
import { formatDuration } from "../base/units.ts";
import { measureText, type PeakUnit } from "../base/peak_text.ts";

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:780px;padding:12px;color:#111827}
h1{font-size:1.3em;margin:.2em 0}
.sev{display:inline-block;padding:0 .4em;border-radius:3px;background:#fee2e2;color:#991b1b}
.sev.warning{background:#fef3c7;color:#92400e}.sev.info{background:#e0f2fe;color:#075985}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.8em 0}
dt{color:#4b5563}dd{margin:0}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:.1em .3em;word-break:break-all}
figure{margin:1em 0}figcaption{color:#4b5563;font-size:.9em}
.note{background:#fef3c7;padding:.4em .6em;border-radius:3px}
`;

/**
 * The Content-Security-Policy the page is served with: nothing may load
 * or run; only the page's own style sheet applies (by its hash).
 */
export const EVENT_PAGE_CSP: string =
  // The style's hash is computed at load: a changed style cannot be
  // forgotten in the policy.
  `default-src 'none'; style-src 'sha256-${
    createHash("sha256").update(STYLE).digest("base64")
  }'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** What the page says about an event the agent still holds in memory. */
export interface LiveEvent {
  readonly state: "open" | "ended";
  /** The rule's peak so far (open) or over the event, in its units; null when none. */
  readonly peak: number | null;
  /** End minus start; for an open event, up to now. */
  readonly durationS: number;
  readonly samples: number;
  /** Samples lost just before the start (a stall); 0 when none. */
  readonly lostBeforeStart: number;
}

/** Everything the page is made of. */
export interface EventPageInput {
  readonly key: EventKey;
  /** The monitor's events.log, for the review command. */
  readonly log: string;
  /** The rule's severity and summary, from the configuration (when it still has the rule). */
  readonly severity?: string;
  readonly summary?: string;
  /** The rule's peak unit, from the configuration or the log. */
  readonly peakUnit: PeakUnit;
  /** The event as the log holds it, when it does. */
  readonly event?: ReviewEvent;
  /** Its chart, gathered from the log. */
  readonly chart?: SignalChart;
  /** Why the log holds no rows of it (rotated away, deleted), when it does not. */
  readonly missing?: string;
  /** The event as the agent holds it now, when it does. */
  readonly live?: LiveEvent;
  /**
   * A NIC monitor's closest GPUs (collectors/pcie_affinity.ts), or why it
   * has none: what "which job did this hit?" starts from.
   */
  readonly gpus?: {
    readonly nic: string;
    readonly gpus: readonly {
      readonly index: number;
      readonly uuid: string;
      readonly busId: string;
      readonly link: string;
    }[];
    readonly none?: string;
  };
  /**
   * The readings of the GPUs behind a NIC over its chart's time span
   * (review/gpu_chart.ts), with what they are in words, or one line on
   * why there are none: drawn below the chart.
   */
  readonly gpuReadings?: {
    readonly chart?: GpuChart;
    readonly caption?: string;
    readonly note?: string;
  };
  /** The rows' download links, relative to the page; none when there are no rows. */
  readonly rows?: {
    readonly csv: string;
    readonly json: string;
    readonly limit: number;
  };
}

/**
 * The page as one HTML document.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventPageHtml } from "./event_page.ts";
 *
 * const html = eventPageHtml({
 *   key: { monitor: "nic", rule: "drops", startNs: 1_795_272_600_000_300_000n },
 *   log: "/var/log/dpu-traceback/nic-events.log",
 *   peakUnit: "",
 *   missing: "its rows were rotated away",
 *   live: { state: "ended", peak: 12, durationS: 0.002, samples: 20, lostBeforeStart: 0 },
 * });
 * assert.match(html, /<h1>drops on nic<\/h1>/);
 * assert.match(html, /<dt>Peak<\/dt><dd>12<\/dd>/);
 * assert.match(html, /its rows were rotated away/);
 * ```
 */
export function eventPageHtml(input: EventPageInput): string {
  const { key, event: e, live } = input;
  const start = formatTimePoint(key.startNs);
  const state = live?.state ??
    (e === undefined ? undefined : e.state === "ended" ? "ended" : "open");
  const durationS = e?.state === "ended" ? e.durationS : live?.durationS;
  const peak = e?.rulePeak ?? live?.peak ?? null;
  const severity = input.severity ?? e?.signal?.severity ?? "warning";
  const facts: [string, string][] = [
    ["Monitor", key.monitor],
    ...(e?.device === undefined
      ? []
      : [["Device", e.device] as [string, string]]),
    ["Rule", ruleLine(input)],
    ["Start", `${start} (the start sample)`],
    [
      "End",
      state === "ended"
        ? e?.end ? `${formatTimePoint(nsOf(e.end))} (the end sample)` : "ended"
        : state === "open"
        ? "still open"
        : "not known",
    ],
    [
      "Duration",
      durationS === null || durationS === undefined
        ? "not known"
        : `${formatDuration(durationS)}${state === "open" ? " so far" : ""}`,
    ],
    [
      "Peak",
      peak === null ? "not known" : measureText(peak, input.peakUnit),
    ],
    ...(input.gpus === undefined ? [] : [[
      `GPUs behind ${input.gpus.nic}`,
      input.gpus.gpus.length === 0
        ? `none known (${input.gpus.none ?? "NVML lists none near it"})`
        : input.gpus.gpus.map((g) =>
          `GPU ${g.index} (${g.uuid}, ${g.busId}) ${g.link}`
        ).join("; "),
    ] as [string, string]]),
    ...(e === undefined && live === undefined ? [] : [[
      "Samples",
      String(
        e?.state === "ended" ? e.samples : live?.samples ?? e?.samples ?? 0,
      ),
    ] as [string, string]]),
  ];
  const lost = live?.lostBeforeStart ?? 0;
  const parts: string[] = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeXml(`${key.rule} on ${key.monitor} at ${start}`)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<h1>${escapeXml(key.rule)} on ${escapeXml(key.monitor)}</h1>`,
    `<p><span class="sev ${escapeXml(severity)}">${
      escapeXml(severity)
    }</span> ${
      escapeXml(
        state === "open"
          ? "still open"
          : state === "ended"
          ? `ended after ${durationS == null ? "?" : formatDuration(durationS)}`
          : "",
      )
    }</p>`,
    input.summary === undefined ? "" : `<p>${escapeXml(input.summary)}</p>`,
    "<dl>",
    ...facts.map(([k, v]) => `<dt>${k}</dt><dd>${escapeXml(v)}</dd>`),
    "</dl>",
    lost > 0
      ? `<p class="note">${
        escapeXml(
          `It began after the source lost ${lost} samples (a stall): a rule of the reference's types compares across the loss, so check the <<Gap>> line before acting.`,
        )
      }</p>`
      : "",
  ];
  if (e !== undefined && input.chart !== undefined) {
    const svg = signalChartSvg(e, input.chart);
    if (svg !== "") {
      parts.push(
        `<figure>${svg}<figcaption>${
          escapeXml(
            `From ${input.chart.rows} rows of ${e.file}: the history before the start, the event${
              state === "ended" ? " and its end" : ""
            }. Each of the chart's columns is drawn from its lowest to its highest value.`,
          )
        }</figcaption></figure>`,
      );
    }
  }
  const gpu = input.gpuReadings;
  const gpuSvg = gpu?.chart === undefined ? "" : gpuChartSvg(gpu.chart);
  if (gpuSvg !== "") {
    parts.push(
      `<figure>${gpuSvg}<figcaption>${
        escapeXml(`${gpuChartSummary(gpu!.chart!)} ${gpu?.caption ?? ""}`)
      }</figcaption></figure>`,
    );
  }
  if (gpu?.note !== undefined) parts.push(`<p>${escapeXml(gpu.note)}</p>`);
  if (input.missing !== undefined) {
    parts.push(`<p class="note">${escapeXml(input.missing)}</p>`);
  }
  if (input.rows !== undefined) {
    parts.push(
      `<p>The event's rows: <a href="${
        escapeXml(input.rows.csv)
      }">CSV</a>, <a href="${
        escapeXml(input.rows.json)
      }">JSON</a> (the first ${input.rows.limit} rows of its window).</p>`,
    );
  }
  parts.push(
    `<p>The full traceback, on the device:<br><code>${
      escapeXml(traceCommand(input.log, key.startNs, key.rule))
    }</code></p>`,
    `<p>Event ID <code>${escapeXml(eventId(key))}</code></p>`,
    "</body></html>\n",
  );
  return parts.join("\n");
}

/** What the rule is, in words, from the log's header; its name otherwise. */
function ruleLine(input: EventPageInput): string {
  const e = input.event;
  return (e === undefined ? undefined : ruleText(e)) ?? input.key.rule;
}

/** An instant as ns since the epoch, exactly. */
function nsOf(t: { readonly sec: number; readonly ns: number }): bigint {
  return BigInt(t.sec) * 1_000_000_000n + BigInt(t.ns);
}
