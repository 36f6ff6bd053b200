/**
 * `review --html FILE`: the review as one self-contained HTML page (no
 * scripts, no fonts or styles from elsewhere: it opens offline, from a
 * laptop or a ticket attachment): the timeline, the table, and per event
 * its facts and chart.
 *
 * @module
 */

import type { ReviewEvent } from "./event.ts";
import type { FileSummary } from "./read.ts";
import { escapeXml, eventChartSvg, timelineSvg } from "./svg.ts";
import {
  durationCell,
  endCell,
  peakCell,
  peakRateCell,
  startCell,
} from "./table.ts";
import { formatCount, formatUtc } from "./units.ts";

/** What the page says besides the events. */
export interface ReportContext {
  /** The review's input files. */
  readonly files: readonly FileSummary[];
  /** Every event of the timeline (the page shows {@linkcode ReviewEvent}s passed separately). */
  readonly total: number;
  /** The filters in words ("rule contains ECN"), if any. */
  readonly filters: readonly string[];
  /** Charts left out to bound memory. */
  readonly chartsLeftOut: number;
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
  events: readonly ReviewEvent[],
  context: ReportContext,
): string {
  return [...reportChunks(events, context)].join("");
}

/**
 * The report page in pieces (the head, the timeline and table, then one
 * per event), so that writing hundreds of charts never holds the whole
 * page in memory.
 */
export function* reportChunks(
  events: readonly ReviewEvent[],
  context: ReportContext,
): Generator<string> {
  let out: string[] = [];
  const chunk = () => {
    const text = out.join("\n") + "\n";
    out = [];
    return text;
  };
  const first = events.find((e) => e.start !== null)?.start;
  const count = events.length === context.total
    ? `${events.length} event${events.length === 1 ? "" : "s"}`
    : `${events.length} of ${context.total} events`;
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
      `<p class="note">${context.chartsLeftOut} events have no chart: the report keeps at most a fixed number to bound memory; narrow it with --rule, --since or --until.</p>`,
    );
  }
  if (events.length === 0) {
    out.push("<p>No events.</p>", "</body>", "</html>");
    yield chunk();
    return;
  }

  out.push(
    '<h2 id="timeline">Timeline</h2>',
    `<p class="legend"><span><i class="swatch" style="background:#2563eb"></i>ended</span><span><i class="swatch" style="background:#dc2626"></i>open at the end of the log</span><span><i class="swatch" style="background:#9ca3af"></i>cut by a restart</span> Click a bar for its event.</p>`,
    timelineSvg(events),
    '<h2 id="events">Events</h2>',
    "<table>",
    "<thead><tr><th>#</th><th>Monitor</th><th>Rule</th><th>Start (UTC)</th><th>End</th><th>Duration</th><th>Samples</th><th>Peak</th><th>Peak rate</th></tr></thead>",
    "<tbody>",
  );
  for (const e of events) {
    out.push(
      `<tr><td class="num"><a href="#event-${e.id}">${e.id}</a></td>${
        cell(e.monitor)
      }${cell(e.rule)}${cell(startCell(e), false, "time")}${
        cell(endCell(e), false, `time state-${e.state}`)
      }${cell(durationCell(e), true)}${cell(formatCount(e.samples), true)}${
        cell(peakCell(e), true)
      }${cell(peakRateCell(e), true)}</tr>`,
    );
  }
  out.push("</tbody>", "</table>");
  yield chunk();

  for (const e of events) {
    out.push(
      `<section class="event" id="event-${e.id}">`,
      `<h2><a href="#event-${e.id}">#${e.id}</a> ${escapeXml(e.monitor)} · ${
        escapeXml(e.rule)
      }</h2>`,
      '<dl class="facts">',
    );
    const fact = (name: string, value: string) =>
      out.push(`<dt>${escapeXml(name)}</dt><dd>${escapeXml(value)}</dd>`);
    fact(
      "Rule",
      e.typeName === undefined
        ? "not described in the log's header"
        : `${e.typeName} ${e.threshold} on ${e.column ?? "?"}`,
    );
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
      `${durationCell(e)}, ${formatCount(e.samples)} samples` +
        (e.droppedSamples
          ? `, ${formatCount(e.droppedSamples)} lost by the source`
          : "") +
        (e.lostRows ? `, ${formatCount(e.lostRows)} rows not written` : ""),
    );
    fact(
      e.kind === "lt" || e.kind === "dt_lt" ? "Lowest value" : "Peak value",
      e.peak === null
        ? "-"
        : `${e.peak}${e.peakAt ? ` at ${formatUtc(e.peakAt, 6)}` : ""}`,
    );
    fact(
      e.kind === "lt" || e.kind === "dt_lt" ? "Lowest rate" : "Peak rate",
      e.peakRate === null
        ? "-"
        : `${peakRateCell(e)}${
          e.peakRateAt ? ` at ${formatUtc(e.peakRateAt, 6)}` : ""
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
            ? "left out to bound memory"
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
