/**
 * `review --html FILE`: the review as one self-contained HTML page (no
 * scripts, no fonts or styles from elsewhere: it opens offline, from a
 * laptop or a ticket attachment): the timeline, the table, and per event
 * its facts and chart.
 *
 * @module
 */

import { type EventList, firesLow, type ReviewEvent } from "./event.ts";
import { eventChartSvg } from "./event_chart.ts";
import type { FileSummary } from "./read.ts";
import { ruleText } from "./rule_text.ts";
import { COLORS, escapeXml } from "./svg.ts";
import { timelineSvg } from "./timeline.ts";
import {
  durationCell,
  endCell,
  peakCell,
  signalName,
  startCell,
} from "./table.ts";
import { countOf, formatCount, formatUtc } from "../base/units.ts";
import { measureText } from "../base/peak_text.ts";

/** What the page says besides the events. */
export interface ReportContext {
  /** The review's input files. */
  readonly files: readonly FileSummary[];
  /** Every event of the timeline (the page shows {@linkcode ReviewEvent}s passed separately). */
  readonly total: number;
  /** The filters in words ("rule contains ECN"), if any. */
  readonly filters: readonly string[];
  /** Events shown without a chart: more than {@linkcode maxCharts}. */
  readonly chartsLeftOut: number;
  /** Most events with a chart (the newest shown); default 500. */
  readonly maxCharts?: number;
  /** "dpu-traceback 0.1.0". */
  readonly generator: string;
  /** When the page was made (ms since the epoch). */
  readonly nowMs: number;
}

const STYLE = `
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  margin: 0 auto; padding: 16px 24px 48px; max-width: 1010px; color: #111827; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
.meta { color: #4b5563; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #f3f4f6; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.time { white-space: nowrap; }
.state-open { color: #b91c1c; font-weight: 600; }
.state-interrupted { color: #6b7280; font-weight: 600; }
section.event { margin-top: 28px; page-break-inside: avoid; }
section.event h2 a { color: inherit; text-decoration: none; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0 10px; }
dl.facts dt { color: #4b5563; }
dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; }
svg { display: block; max-width: 100%; height: auto; }
.legend span { display: inline-block; margin-right: 16px; }
.swatch { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
.note { color: #92400e; background: #fffbeb; border: 1px solid #fde68a; padding: 6px 10px; }
code { font-size: 13px; }
a { color: #1d4ed8; }
`;

function cell(text: string, numeric = false, cls = ""): string {
  const classes = [numeric ? "num" : "", cls].filter(Boolean).join(" ");
  return `<td${classes ? ` class="${classes}"` : ""}>${escapeXml(text)}</td>`;
}

/**
 * The report page for `events` (already filtered), self-contained, as one
 * string. For many events prefer {@linkcode reportChunks}.
 *
 * @example
 * ```ts ignore
 * await Deno.writeTextFile("report.html", renderReport(shown, { files, total, filters: [], chartsLeftOut: 0, generator: "dpu-traceback 0.1.0", nowMs: Date.now() }));
 * ```
 */
export function renderReport(
  events: EventList,
  context: ReportContext,
): string {
  return [...reportChunks(events, context)].join("");
}

/** Table rows per piece {@linkcode reportChunks} yields. */
const ROWS_PER_CHUNK = 500;

/**
 * The report page in pieces (the head, the timeline, the table a few
 * hundred rows at a time, then one per event section), so that writing
 * it never holds the whole page in memory. Every event has a row in the
 * table; events with a chart, or every event when there are no more than
 * {@linkcode ReportContext.maxCharts}, also a section with their facts
 * and chart. `#event-N` links to the section, or to the row.
 */
export function* reportChunks(
  events: EventList,
  context: ReportContext,
): Generator<string> {
  const maxCharts = context.maxCharts ?? 500;
  const sectioned = (e: ReviewEvent) =>
    e.chart !== undefined || events.length <= maxCharts;
  let out: string[] = [];
  const chunk = () => {
    const text = out.join("\n") + "\n";
    out = [];
    return text;
  };
  let first = null;
  for (const e of events) {
    if (e.start !== null) {
      first = e.start;
      break;
    }
  }
  const count = events.length === context.total
    ? countOf(events.length, "event")
    : `${formatCount(events.length)} of ${countOf(context.total, "event")}`;
  out.push(
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>events.log review: ${escapeXml(count)}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    `<h1>events.log review: ${escapeXml(count)}</h1>`,
    `<p class="meta">${
      first ? `From ${escapeXml(formatUtc(first))} UTC. ` : ""
    }Read ${escapeXml(context.files.map((f) => f.path).join(", "))}. Made ${
      escapeXml(formatUtc({ sec: Math.floor(context.nowMs / 1000), ns: 0 }, 0))
    } UTC by ${escapeXml(context.generator)}.${
      context.filters.length
        ? ` Shown: ${escapeXml(context.filters.join("; "))}.`
        : ""
    }</p>`,
  );
  if (context.chartsLeftOut > 0) {
    out.push(
      `<p class="note">${
        countOf(context.chartsLeftOut, "event has", "events have")
      } no chart and no section of their own (their facts are in the table): the report charts at most ${maxCharts} events, the newest of those shown. Narrow it with --rule, --monitor, --since or --until to chart others.</p>`,
    );
  }
  if (events.length === 0) {
    out.push("<p>No events.</p>", "</body>", "</html>");
    yield chunk();
    return;
  }

  out.push(
    '<h2 id="timeline">Timeline</h2>',
    `<p class="legend"><span><i class="swatch" style="background:${COLORS.ended}"></i>ended</span><span><i class="swatch" style="background:${COLORS.open}"></i>open at the end of the log</span><span><i class="swatch" style="background:${COLORS.interrupted}"></i>cut by a restart</span> Click a bar for its event.</p>`,
    timelineSvg(events),
    '<h2 id="events">Events</h2>',
    "<table>",
    "<thead><tr><th>#</th><th>Monitor</th><th>Rule</th><th>Start (UTC)</th><th>End</th><th>Duration</th><th>Samples</th><th>Peak</th></tr></thead>",
    "<tbody>",
  );
  let rows = 0;
  for (const e of events) {
    out.push(
      `<tr${sectioned(e) ? "" : ` id="event-${e.id}"`}><td class="num">${
        sectioned(e) ? `<a href="#event-${e.id}">${e.id}</a>` : e.id
      }</td>${cell(e.monitor)}${cell(e.rule)}${
        cell(startCell(e), false, "time")
      }${cell(endCell(e), false, `time state-${e.state}`)}${
        cell(durationCell(e), true)
      }${cell(formatCount(e.samples), true)}${cell(peakCell(e), true)}</tr>`,
    );
    if (++rows % ROWS_PER_CHUNK === 0) yield chunk();
  }
  out.push("</tbody>", "</table>");
  yield chunk();

  for (const e of events) {
    if (!sectioned(e)) continue;
    out.push(
      `<section class="event" id="event-${e.id}">`,
      `<h2><a href="#event-${e.id}">#${e.id}</a> ${escapeXml(e.monitor)} · ${
        escapeXml(e.rule)
      }</h2>`,
      '<dl class="facts">',
    );
    const fact = (name: string, value: string) =>
      out.push(`<dt>${escapeXml(name)}</dt><dd>${escapeXml(value)}</dd>`);
    const low = firesLow(e);
    fact("Rule", ruleText(e) ?? "not described in the log's header");
    if (e.signal?.summary !== undefined) fact("Summary", e.signal.summary);
    fact(
      "Start",
      e.start === null
        ? "?"
        : `${startCell(e)} UTC${
          e.startMarker ? ` (marker ${e.startMarker})` : ""
        }`,
    );
    fact(
      "End",
      e.end === null
        ? endCell(e)
        : `${formatUtc(e.end)} UTC${
          e.endMarker ? ` (marker ${e.endMarker})` : ""
        }`,
    );
    fact(
      "Duration",
      `${durationCell(e)}, ${countOf(e.samples, "sample")}` +
        (e.droppedSamples
          ? `, ${formatCount(e.droppedSamples)} lost by the source`
          : "") +
        (e.lostRows ? `, ${countOf(e.lostRows, "row")} not written` : ""),
    );
    fact(`Peak (the rule's ${signalName(e)})`, peakCell(e));
    fact(
      low ? "Column's lowest value" : "Column's highest value",
      e.columnPeak === null
        ? "-"
        : `${e.columnPeak}${
          e.columnPeakAt ? ` at ${formatUtc(e.columnPeakAt, 6)}` : ""
        }`,
    );
    fact(
      low
        ? "Column's lowest rate per sample"
        : "Column's highest rate per sample",
      e.columnPeakRate === null
        ? "-"
        : `${measureText(e.columnPeakRate, "/s")}${
          e.columnPeakRateAt ? ` at ${formatUtc(e.columnPeakRateAt, 6)}` : ""
        }`,
    );
    fact(
      "Rows",
      `${formatCount(e.historyRows)} before the start, ${
        formatCount(e.rows)
      } during; ${e.file} line ${e.line}`,
    );
    out.push("</dl>");
    const svg = eventChartSvg(e);
    out.push(
      svg === ""
        ? `<p class="note">No chart: ${
          e.column === undefined
            ? "the log does not say which column the rule watches"
            : e.chart === undefined
            ? "more events than the report charts"
            : "no rows were recorded"
        }.</p>`
        : svg,
      "</section>",
    );
    yield chunk();
  }
  out.push(
    '<h2 id="files">Files read</h2>',
    "<table><thead><tr><th>File</th><th>Monitor</th><th>Lines</th><th>Rows</th><th>Header blocks</th><th>Timestamps</th></tr></thead><tbody>",
  );
  for (const f of context.files) {
    out.push(
      `<tr>${cell(f.path)}${cell(f.monitor)}${
        cell(formatCount(f.lines), true)
      }${cell(formatCount(f.rows), true)}${cell(String(f.blocks), true)}${
        cell(f.timeFormats.join(", ") || "-")
      }</tr>`,
    );
  }
  out.push("</tbody></table>", "</body>", "</html>");
  yield chunk();
}
