/**
 * Finding one event for its page (review/event_lookup.ts): wall time,
 * bytes read and peak resident memory (VmHWM, each in a child process of
 * its own) to find and chart a 1 s and a 60 s event at 10 kHz in a log of
 * about 100 MB, and to stream the 60 s event's rows as CSV; beside them,
 * for scale, the whole-log review that `review --event TIME --rule NAME`
 * does to find the same event.
 *
 * The log comes from the real writer (tests/monitor_log.ts): 3 columns,
 * depth 1024 (2048 rows of history per event), 1 s events a minute apart
 * and one 60 s event in the middle.
 *
 * ```sh
 * deno run -A bench/event_lookup.ts [--mb 100]
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatTimePoint, parseTimePoint } from "../base/time_point.ts";
import { eventChartSvg } from "../review/event_chart.ts";
import { eventStartedAt } from "../review/event_at.ts";
import { findEvent } from "../review/event_lookup.ts";
import { eventRows } from "../review/event_rows.ts";
import { resolveInputs } from "../review/files.ts";
import { readReview } from "../review/read.ts";
import { type PlannedEvent, writeMonitorLog } from "../tests/monitor_log.ts";
import { runWithPeakRss } from "../tests/review_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    mb: { type: "string", default: "100" },
    child: { type: "string" }, // find | rows | review
    log: { type: "string" },
    rule: { type: "string" },
    start: { type: "string" },
  },
});

const T0 = 1_795_272_600_000_000_000n;
const SECOND = 1_000_000_000n;
const RULES = ["rx burst", "long burst"];

if (values.child !== undefined) {
  // One measurement, in a process of its own so that its peak RSS is its own.
  const log = values.log!;
  const key = {
    monitor: "nic",
    rule: values.rule!,
    startNs: BigInt(values.start!),
  };
  const started = performance.now();
  let line: Record<string, unknown>;
  if (values.child === "review") {
    const filter = { rules: [key.rule], monitors: [] };
    const all = await readReview(await resolveInputs([log]), {
      charts: filter,
    });
    const text = formatTimePoint(key.startNs);
    const e = eventStartedAt(
      all.events,
      { text, ...parseTimePoint("--event", text) },
      filter,
      log,
    );
    const svg = eventChartSvg(e);
    line = {
      rows: e.rows,
      svgBytes: svg.length,
      bytesRead: (await Deno.stat(log)).size,
    };
  } else {
    const found = await findEvent(log, key);
    if (found.kind !== "found") throw new Error(found.message);
    const svg = eventChartSvg(found.event);
    line = {
      rows: found.event.rows,
      svgBytes: svg.length,
      bytesRead: found.bytesRead,
    };
    if (values.child === "rows") {
      let bytes = 0;
      for await (const chunk of eventRows(found, "csv")) bytes += chunk.length;
      line.csvBytes = bytes;
    }
  }
  line.ms = Math.round(performance.now() - started);
  console.log(JSON.stringify(line));
  Deno.exit(0);
}

const dir = await Deno.makeTempDir({ prefix: "event_lookup_bench_" });
try {
  const log = join(dir, "nic-events.log");
  const target = Number(values.mb) * 1e6;
  // ~0.72 MB per 1 s event (12,048 rows), ~35 MB for the 60 s one.
  const short = Math.max(4, Math.round((target - 35e6) / 0.72e6));
  const events: PlannedEvent[] = [];
  let t = T0;
  for (let k = 0; k < short; k++) {
    if (k === Math.floor(short / 2)) {
      events.push({ rule: 1, startNs: t, samples: 600_000 });
      t += 120n * SECOND;
    }
    events.push({ rule: 0, startNs: t, samples: 10_000 });
    t += 60n * SECOND;
  }
  const writing = performance.now();
  await writeMonitorLog({
    path: log,
    monitor: "nic",
    depth: 1024,
    periodNs: 100_000n,
    rules: RULES,
    events,
  });
  const size = (await Deno.stat(log)).size;
  console.log(
    `log: ${(size / 1e6).toFixed(1)} MB, ${events.length} events, written in ${
      Math.round(performance.now() - writing)
    } ms`,
  );
  const oneSecond = events[Math.floor(short / 4)];
  const sixty = events.find((e) => e.rule === 1)!;
  const cases: [string, string, PlannedEvent][] = [
    ["find + chart, 1 s event", "find", oneSecond],
    ["find + chart, 60 s event", "find", sixty],
    ["find + chart + rows.csv, 60 s event", "rows", sixty],
    ["whole-log review --event, 1 s event", "review", oneSecond],
    ["whole-log review --event, 60 s event", "review", sixty],
  ];
  console.log(
    "| case | wall ms | bytes read | peak RSS MiB | rows | SVG bytes | CSV MB |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [label, child, e] of cases) {
    // Twice: the first run warms the page cache and Deno's module cache.
    let result: Record<string, number> = {};
    let peak = 0;
    for (let run = 0; run < 2; run++) {
      const { output, peakRssBytes } = await runWithPeakRss(
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            import.meta.filename!,
            `--child=${child}`,
            `--log=${log}`,
            `--rule=${RULES[e.rule]}`,
            `--start=${e.startNs}`,
          ],
          stdout: "piped",
          stderr: "piped",
        }),
        10,
      );
      if (!output.success) {
        throw new Error(new TextDecoder().decode(output.stderr));
      }
      result = JSON.parse(new TextDecoder().decode(output.stdout));
      peak = peakRssBytes;
    }
    console.log(
      `| ${label} | ${result.ms} | ${result.bytesRead.toLocaleString("en")} | ${
        (peak / 2 ** 20).toFixed(0)
      } | ${result.rows.toLocaleString("en")} | ${
        result.svgBytes.toLocaleString("en")
      } | ${
        result.csvBytes === undefined ? "" : (result.csvBytes / 1e6).toFixed(1)
      } |`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
