/**
 * The report's timeline, as inline SVG: one lane per monitor and rule,
 * one bar per event. A lane of a flapping rule holds more events than it
 * has pixels, so events whose bars would touch are drawn as one bar that
 * says how many it holds: the picture stays a few hundred bars per lane
 * whatever the number of events.
 *
 * @module
 */

import {
  type EventList,
  type EventState,
  instantMs,
  lastKnown,
  type ReviewEvent,
} from "./event.ts";
import {
  COLORS,
  coord as f,
  escapeXml,
  RIGHT_MARGIN as RIGHT,
  scale,
  timeTicks,
  WIDTH as W,
} from "./svg.ts";
import { formatCount, formatDuration } from "../base/units.ts";

const LANE = 26;
const LABEL_W = 300;

/** Bars narrower than this are drawn this wide. */
const MIN_BAR = 3;

/** Events drawn as one bar. */
interface Bar {
  x0: number;
  x1: number;
  first: ReviewEvent;
  last: ReviewEvent;
  count: number;
  states: Record<EventState, number>;
}

/**
 * The timeline: one lane per monitor and rule, one bar per event from its
 * start to its end (to its last row, in red, if still open; grey if cut by
 * a restart), each a link to the event (`#event-N`). Events whose bars
 * would touch are one bar, a link to the first of them.
 */
export function timelineSvg(events: EventList): string {
  const lanes = new Map<string, number>();
  let t0 = Infinity;
  let t1 = -Infinity;
  let dated = 0;
  for (const e of events) {
    if (e.start === null) continue;
    dated++;
    const key = `${e.monitor}\u0000${e.rule}`;
    if (!lanes.has(key)) lanes.set(key, lanes.size);
    t0 = Math.min(t0, instantMs(e.start));
    t1 = Math.max(t1, instantMs(lastKnown(e)!));
  }
  if (dated === 0) return "";
  if (t1 - t0 < 1) {
    t0 -= 1;
    t1 += 1;
  }
  const pad = (t1 - t0) * 0.02;
  t0 -= pad;
  t1 += pad;
  const top = 14;
  const height = top + lanes.size * LANE + 40;
  const sx = scale(t0, t1, LABEL_W, W - RIGHT);
  const parts = [
    `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="Timeline of ${dated} events" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>Timeline of ${dated} events</title>`,
  ];
  for (const [key, lane] of lanes) {
    const [monitor, rule] = key.split("\u0000");
    const y = top + lane * LANE;
    const label = `${monitor} · ${rule}`;
    const short = label.length > 44 ? label.slice(0, 43) + "…" : label;
    parts.push(
      `<rect x="${LABEL_W}" y="${y}" width="${W - RIGHT - LABEL_W}" height="${
        LANE - 4
      }" fill="${lane % 2 ? "#f9fafb" : "#f3f4f6"}"/>`,
      `<text x="${LABEL_W - 8}" y="${
        y + 15
      }" text-anchor="end" fill="${COLORS.axis}"><title>${
        escapeXml(label)
      }</title>${escapeXml(short)}</text>`,
    );
  }
  const axisY = top + lanes.size * LANE;
  for (const t of timeTicks(t0, t1, 7)) {
    const x = sx(t.ms);
    parts.push(
      `<line x1="${f(x)}" x2="${f(x)}" y1="${top}" y2="${
        axisY + 4
      }" stroke="${COLORS.grid}"/>`,
      `<text x="${f(x)}" y="${
        axisY + 18
      }" text-anchor="middle" fill="${COLORS.axis}">${
        escapeXml(t.label)
      }</text>`,
    );
  }
  parts.push(
    `<text x="${W - RIGHT}" y="${
      axisY + 34
    }" text-anchor="end" fill="${COLORS.axis}">UTC, ${
      new Date(t0).toISOString().slice(0, 10)
    }${
      new Date(t1).toISOString().slice(0, 10) !==
          new Date(t0).toISOString().slice(0, 10)
        ? " to " + new Date(t1).toISOString().slice(0, 10)
        : ""
    }</text>`,
  );
  const drawBar = (lane: number, bar: Bar) => {
    const y = top + lane * LANE + 3;
    const { first, count, states } = bar;
    const state = states.open > 0
      ? "open"
      : states.ended >= states.interrupted
      ? "ended"
      : "interrupted";
    const tip = count === 1
      ? `#${first.id} ${first.monitor} · ${first.rule}: ${
        first.durationS === null ? "?" : formatDuration(first.durationS)
      } (${first.state})`
      : `#${first.id} to #${bar.last.id} ${first.monitor} · ${first.rule}: ${
        formatCount(count)
      } events (${
        (["ended", "open", "interrupted"] as const).filter((s) => states[s])
          .map((s) => `${formatCount(states[s])} ${s}`).join(", ")
      })`;
    parts.push(
      `<a href="#event-${first.id}"><rect class="event-bar" x="${
        f(bar.x0)
      }" y="${y}" width="${f(bar.x1 - bar.x0)}" height="${
        LANE - 10
      }" rx="2" fill="${COLORS[state]}"><title>${
        escapeXml(tip)
      }</title></rect></a>`,
    );
  };
  const pending: (Bar | undefined)[] = [];
  for (const e of events) {
    if (e.start === null) continue;
    const lane = lanes.get(`${e.monitor}\u0000${e.rule}`)!;
    const xa = sx(instantMs(e.start));
    const xb = Math.max(xa + MIN_BAR, sx(instantMs(lastKnown(e)!)));
    const bar = pending[lane];
    // Events come in start order: one that starts on (or within a pixel
    // of) the lane's last bar joins it.
    if (bar !== undefined && xa <= bar.x1 + 1) {
      bar.x1 = Math.max(bar.x1, xb);
      bar.last = e;
      bar.count++;
      bar.states[e.state]++;
      continue;
    }
    if (bar !== undefined) drawBar(lane, bar);
    const states = { ended: 0, open: 0, interrupted: 0 };
    states[e.state]++;
    pending[lane] = { x0: xa, x1: xb, first: e, last: e, count: 1, states };
  }
  pending.forEach((bar, lane) => {
    if (bar !== undefined) drawBar(lane, bar);
  });
  parts.push("</svg>");
  return parts.join("\n");
}
