/**
 * The review's HTML report in a real browser: Debian's headless Chromium
 * lays it out and screenshots it, and the charts must be there, sized and
 * drawn.
 *
 * Needs `chromium` on PATH (Debian: `apt-get install chromium`); `.ci/run`
 * installs it. Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  chromium,
  decodePng,
  findChromium,
  REVIEW_FIXTURES as FIXTURES,
} from "../review_util.ts";
import { runMain } from "../cli_util.ts";
import { tempDir } from "../temp_dir.ts";

const FOUND = findChromium();
if (FOUND === undefined) {
  throw new Error(
    "chromium is not on PATH: install it with: apt-get install chromium",
  );
}
const CHROMIUM: string = FOUND;

/**
 * Runs in the page: where the charts, their lines and marks were laid out,
 * and where each vertex of each value line landed (page x), from the
 * path's own coordinates through the transform the browser applied.
 */
const MEASURE = `<script>
(() => {
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height };
  };
  const vertexXs = (path) => {
    if (!path) return null;
    const ctm = path.getScreenCTM();
    return path.getAttribute("d").split(/[ML]/).filter(Boolean).map((p) => {
      const [x, y] = p.trim().split(" ").map(Number);
      return new DOMPoint(x, y).matrixTransform(ctm).x + scrollX;
    });
  };
  const charts = [...document.querySelectorAll("svg.chart")].map((svg) => ({
    id: Number(svg.closest("section").id.replace("event-", "")),
    box: box(svg),
    value: box(svg.querySelector("path.value-line")),
    rate: box(svg.querySelector("path.rate-line")),
    start: box(svg.querySelector("line.start-marker")),
    end: box(svg.querySelector("line.end-marker")),
    vertices: vertexXs(svg.querySelector("path.value-line")),
  }));
  const timeline = document.querySelector("svg.timeline");
  const bars = [...document.querySelectorAll("rect.event-bar")].map((el) => ({
    ...box(el),
    title: el.querySelector("title").textContent,
  }));
  const pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify({
    height: document.documentElement.scrollHeight,
    charts,
    timeline: box(timeline),
    bars,
  });
  document.body.append(pre);
})();
</script>`;

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

function colorPixels(
  img: { width: number; height: number; rgba: Uint8Array },
  box: Box,
  [r, g, b]: [number, number, number],
): number {
  let n = 0;
  const x0 = Math.max(0, Math.floor(box.x) - 2);
  const y0 = Math.max(0, Math.floor(box.y) - 2);
  const x1 = Math.min(img.width, Math.ceil(box.x + box.w) + 2);
  const y1 = Math.min(img.height, Math.ceil(box.y + box.h) + 2);
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const o = (y * img.width + x) * 4;
      const d = Math.abs(img.rgba[o] - r) + Math.abs(img.rgba[o + 1] - g) +
        Math.abs(img.rgba[o + 2] - b);
      if (d < 60) n++;
    }
  }
  return n;
}

Deno.test({
  name:
    "the HTML report renders in headless Chromium: a timeline and a drawn chart per event",
  async fn() {
    await using dir = await tempDir();
    const report = join(dir.path, "report.html");
    const r = await runMain(["review", FIXTURES, "--html", report]);
    assert.equal(r.code, 0, r.stderr);
    const events = (r.stdout.match(/^\s*\d+ {2}/gm) ?? []).length;
    assert.equal(events, 6);
    // What the data says of each event: its rows before and during.
    const facts = new Map<number, Record<string, number | string>>(
      JSON.parse((await runMain(["review", FIXTURES, "--json"])).stdout).events
        .map(
          (e: Record<string, number | string>) => [e.id, e],
        ),
    );
    // Measure the layout with a copy that reports it (the report itself
    // has no scripts).
    const page = await Deno.readTextFile(report);
    const probe = join(dir.path, "probe.html");
    await Deno.writeTextFile(
      probe,
      page.replace("</body>", MEASURE + "</body>"),
    );
    const dom = await chromium(CHROMIUM, [
      "--window-size=1100,900",
      "--dump-dom",
      `file://${probe}`,
    ], dir.path);
    const json = /<pre id="measure">(.*?)<\/pre>/s.exec(dom)?.[1];
    assert.ok(json, "the probe ran");
    const m = JSON.parse(
      json.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll(
        "&amp;",
        "&",
      ),
    );
    assert.equal(m.charts.length, events);
    assert.ok(
      m.timeline.w > 500 && m.timeline.h > 100,
      JSON.stringify(m.timeline),
    );
    // Every event is on the timeline: a bar of its own, or in a bar
    // with the events its bar would touch ("#4 to #5 ...: 2 events").
    const onTimeline = m.bars.map((b: { title: string }) =>
      Number(/: (\d+) events \(/.exec(b.title)?.[1] ?? 1)
    );
    assert.equal(
      onTimeline.reduce((a: number, b: number) => a + b, 0),
      events,
    );
    for (const bar of m.bars) assert.ok(bar.w >= 3 && bar.h > 5);
    for (const c of m.charts) {
      const e = facts.get(c.id)!;
      assert.ok(c.box.w > 500 && c.box.h > 250, JSON.stringify(c.box));
      for (const part of [c.value, c.rate, c.start]) {
        assert.ok(part && part.w + part.h > 10, JSON.stringify(c));
        assert.ok(
          part.x >= c.box.x - 1 && part.x + part.w <= c.box.x + c.box.w + 1,
        );
      }
      // The marks where the data puts them: the start on the start
      // sample (the last row of the history), the end on the end sample
      // (the last row of the window), as the browser laid them out.
      const center = (b: Box) => b.x + b.w / 2;
      const history = e.history_rows as number;
      assert.equal(c.vertices.length, history + (e.rows as number));
      const near = (a: number, b: number, what: string) =>
        assert.ok(Math.abs(a - b) <= 1, `#${c.id} ${what}: ${a} vs ${b}`);
      near(center(c.start), c.vertices[history - 1], "start mark");
      near(c.value.x, c.vertices[0], "first row");
      if (e.state === "ended") {
        assert.ok(c.end, `#${c.id} has an end mark`);
        near(center(c.end), c.vertices[c.vertices.length - 1], "end mark");
        near(center(c.end), c.value.x + c.value.w, "end of the value line");
        // The start's place between the first and last rows is the
        // share of the window before it: from the sample times (the
        // fixtures sample evenly, so a sample is the duration over the
        // samples during, dropped ones included).
        const first = -(history - 1) * (e.duration_s as number) /
          (e.samples as number);
        const fraction = -first / (e.duration_s as number - first);
        near(
          center(c.start),
          c.value.x + fraction * c.value.w,
          "start mark from the sample times",
        );
      } else assert.equal(c.end, null, `#${c.id} (${e.state}) has no end`);
    }

    // The pixels: every chart shows its value line, its rate line and
    // its start marker in their colours.
    const shot = join(dir.path, "shot.png");
    await chromium(CHROMIUM, [
      `--window-size=1100,${Math.min(m.height, 16000)}`,
      `--screenshot=${shot}`,
      `file://${report}`,
    ], dir.path);
    const img = await decodePng(await Deno.readFile(shot));
    assert.equal(img.width, 1100);
    for (const [i, c] of m.charts.entries()) {
      const blue = colorPixels(img, c.value, [0x1d, 0x4e, 0xd8]);
      const orange = colorPixels(img, c.rate, [0xc2, 0x41, 0x0c]);
      const red = colorPixels(img, {
        ...c.start,
        x: c.start.x - 1,
        w: c.start.w + 2,
      }, [0xdc, 0x26, 0x26]);
      assert.ok(blue >= 15, `chart ${i + 1}: ${blue} value-line pixels`);
      assert.ok(orange >= 15, `chart ${i + 1}: ${orange} rate-line pixels`);
      assert.ok(red >= 100, `chart ${i + 1}: ${red} start-marker pixels`);
      if (c.end) {
        // Dashed: about 5 in 8 of its length drawn.
        const end = colorPixels(img, {
          ...c.end,
          x: c.end.x - 1,
          w: c.end.w + 2,
        }, [0xdc, 0x26, 0x26]);
        assert.ok(end >= 100, `chart ${i + 1}: ${end} end-marker pixels`);
      }
    }
    // And the timeline's bars.
    const bars = colorPixels(img, m.timeline, [0x25, 0x63, 0xeb]);
    assert.ok(bars >= 50, `${bars} timeline bar pixels`);
  },
});
