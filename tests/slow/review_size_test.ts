// Review at size scale: a 1 GB events.log and a flapping rule's 200,000
// events, each in a child process whose peak RSS is read from /proc. These
// take minutes, so they run in the slow tier (`deno task test:slow`).

import assert from "node:assert/strict";
import { join } from "node:path";
import { mainCommand } from "../cli_util.ts";
import {
  runWithPeakRss,
  writeBigLog,
  writeFlappingLog,
} from "../review_util.ts";
import { tempDir } from "../temp_dir.ts";
const RSS_LIMIT = 200 * 1024 * 1024;

Deno.test({
  name:
    "a 1 GB events.log is reviewed (table data, JSON and HTML) with peak RSS under 200 MB",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const log = await writeBigLog(path, 1_000_000_000);
    assert.ok(log.bytes >= 1_000_000_000);
    const started = performance.now();
    const { output, peakRssBytes } = await runWithPeakRss(
      mainCommand(
        ["review", path, "--json", "--html", join(dir.path, "report.html")],
        { noColor: false },
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    console.log(
      `reviewed ${(log.bytes / 1e9).toFixed(2)} GB in ${
        seconds.toFixed(1)
      } s, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
    assert.ok(peakRssBytes > 0, "the child's /proc status was read");
    assert.ok(peakRssBytes < RSS_LIMIT, `peak RSS ${peakRssBytes} B`);

    // And it read the log right: two events per segment, in order.
    const events = JSON.parse(new TextDecoder().decode(output.stdout)).events;
    assert.equal(events.length, 2 * log.segments);
    for (const k of [0, Math.floor(log.segments / 2), log.segments - 1]) {
      const burst = events[2 * k];
      assert.deepEqual(
        [
          burst.rule,
          burst.state,
          burst.start_ns,
          burst.end_ns,
          burst.rows,
          burst.samples,
          burst.dropped_samples,
          // The generated log has no <<Peak>> lines: the rule's peak is
          // not known, the column's extremes are.
          burst.peak,
          burst.column_peak,
          burst.column_peak_rate_per_s,
        ],
        [
          "counter_0 burst",
          "ended",
          String(log.startNs(k)),
          String(log.endNs(k)),
          log.eventRows,
          log.eventRows + log.dropped,
          log.dropped,
          null,
          String(log.peak(k)),
          log.peakRate,
        ],
        `segment ${k}`,
      );
      const latency = events[2 * k + 1];
      assert.deepEqual([latency.rule, latency.column_peak], [
        "latency > 5 us",
        String(log.latencyPeak(k)),
      ]);
    }
    const page = await Deno.readTextFile(join(dir.path, "report.html"));
    assert.equal(
      (page.match(/<svg class="chart"/g) ?? []).length,
      events.length,
    );
  },
});

Deno.test({
  name:
    "a flapping rule's 200,000 short events are reviewed (JSON and table) with peak RSS under 200 MB",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const path = join(dir.path, "events.log");
    const log = await writeFlappingLog(path, 200_000);
    // The two forms: `--json`, and the table (no flag: the default).
    const forms = [["json", ["--json"]], ["table", []]] as const;
    for (const [form, flags] of forms) {
      const started = performance.now();
      const { output, peakRssBytes } = await runWithPeakRss(
        mainCommand(["review", path, ...flags], { noColor: false }),
      );
      const seconds = (performance.now() - started) / 1000;
      const stderr = new TextDecoder().decode(output.stderr);
      assert.equal(output.code, 0, stderr);
      assert.equal(stderr, "");
      console.log(
        `${form}: ${log.events} events (${
          (log.bytes / 1e6).toFixed(0)
        } MB) in ${seconds.toFixed(1)} s, peak RSS ${
          (peakRssBytes / 2 ** 20).toFixed(0)
        } MiB`,
      );
      assert.ok(peakRssBytes > 0, "the child's /proc status was read");
      assert.ok(peakRssBytes < RSS_LIMIT, `peak RSS ${peakRssBytes} B`);
      const text = new TextDecoder().decode(output.stdout);
      if (form === "json") {
        const events = JSON.parse(text).events;
        assert.equal(events.length, log.events);
        for (const k of [0, 123_456, log.events - 1]) {
          assert.deepEqual(
            [events[k].id, events[k].start_ns, events[k].end_ns],
            [k + 1, String(log.startNs(k)), String(log.endNs(k))],
          );
        }
      } else {
        const lines = text.trimEnd().split("\n");
        assert.equal(lines.length, 1 + log.events + 2);
        assert.match(lines[lines.length - 1], /^200000 events; 1 file read/);
        assert.match(lines[log.events], /^200000 {2}03:00\.0 {2}ECN flaps /);
      }
    }
  },
});
