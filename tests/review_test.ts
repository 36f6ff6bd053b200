import assert from "node:assert/strict";
import { join } from "node:path";
import { LOG_DIR, PERMISSION_FLAGS } from "../deploy/permissions.ts";
import { runMain } from "./cli_util.ts";
import {
  gzip,
  HOSTILE,
  hostileLogText,
  TERMINAL_CONTROL,
} from "../review/test_util.ts";
import { copyNicRotation, REVIEW_FIXTURES as FIXTURES } from "./review_util.ts";
import { tempDir } from "./temp_dir.ts";
import type { MonitorConfig } from "../config/types.ts";
import { fedMonitor } from "../metrics/metrics_test_util.ts";
import type { Monitor } from "../rules/monitor.ts";

/** `from` gzip-compressed to `to`, as logrotate leaves it. */
async function gzipFile(from: string, to: string): Promise<void> {
  await Deno.writeFile(to, await gzip(await Deno.readFile(from)));
}

Deno.test("review DIR merges every monitor's logs, rotated and compressed, into one timeline", async () => {
  await using dir = await tempDir();
  // events.log: the reference app's log (named by its header's device);
  // gpu: compressed by logrotate (dateext); nic: two agent rotations,
  // the oldest ending inside an event that the restart in the next cuts.
  await Deno.copyFile(
    join(FIXTURES, "reference-events.log"),
    join(dir.path, "events.log"),
  );
  await gzipFile(
    join(FIXTURES, "gpu-events.log"),
    join(dir.path, "gpu-events.log-20261121-1795272700.gz"),
  );
  await copyNicRotation(dir.path);
  await Deno.copyFile(
    join(FIXTURES, "rotated", "nic-events.log"),
    join(dir.path, "nic-events.log"),
  );
  await Deno.writeTextFile(join(dir.path, "README"), "not a log");

  const r = await runMain(["review", dir.path, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(
    doc.events.map((
      e: Record<string, unknown>,
    ) => [e.id, e.monitor, e.rule, e.start, e.state]),
    [
      [
        1,
        "03:00.0",
        "ECN > 100 per 2 samples",
        "2026-11-21T14:50:01.000000Z",
        "ended",
      ],
      [
        2,
        "03:00.0",
        "Rx < 1000 per 2 samples",
        "2026-11-21T14:50:01.000400Z",
        "ended",
      ],
      [3, "gpu", "GPU hot > 85 C", "2026-11-21T14:50:50.300000Z", "ended"],
      [
        4,
        "nic",
        "ECN > 100 per 2 samples",
        "2026-11-21T14:51:40.000300Z",
        "ended",
      ],
      [
        5,
        "nic",
        "ECN > 100 per 2 samples",
        "2026-11-21T14:51:40.001500Z",
        "interrupted",
      ],
      // Open at the end of nic-events.log.2; the next file restarts.
      [
        6,
        "nic",
        "ECN > 100 per 2 samples",
        "2026-11-21T14:53:20.000300Z",
        "interrupted",
      ],
      // Started in nic-events.log.1, ended in nic-events.log.
      [
        7,
        "nic",
        "ECN > 100 per 2 samples",
        "2026-11-21T14:55:00.000300Z",
        "ended",
      ],
    ],
  );
  assert.equal(doc.events[6].file, join(dir.path, "nic-events.log.1"));
  assert.deepEqual(
    doc.files.map((
      f: { path: string; gzip: boolean },
    ) => [f.path.slice(dir.path.length + 1), f.gzip]),
    [
      ["events.log", false],
      ["gpu-events.log-20261121-1795272700.gz", true],
      ["nic-events.log.2", false],
      ["nic-events.log.1", false],
      ["nic-events.log", false],
    ],
  );
  // The truncated last line of nic-events.log.2 is a warning, not an error.
  assert.match(
    r.stderr,
    /^dpu-traceback: warning: \S+nic-events\.log\.2: line 78: the file ends in the middle of a line; ignored$/m,
  );

  // --event N across the rotation: rows from both files.
  const w = await runMain(["review", dir.path, "--event", "7", "--csv"]);
  assert.equal(w.code, 0, w.stderr);
  assert.deepEqual(
    w.stdout.trim().split("\n").slice(1).map((l) => l.split(",").at(-1)),
    ["0", "10", "20", "200", "300", "310", "320"],
  );
});

Deno.test("review: one-line errors and exit codes, through main.ts", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "capture.json"), '{"rules": []}\n');
  const notLog = await runMain(["review", join(dir.path, "capture.json")]);
  assert.equal(notLog.code, 1);
  assert.equal(
    notLog.stderr,
    `dpu-traceback: Cannot review ${
      join(dir.path, "capture.json")
    }: line 1: not an events log: expected "Telemetry monitor : ..." or a "timestamp, ..." row, got "{"rules": []}"\n`,
  );
  const missing = await runMain(["review", join(dir.path, "nope.log")]);
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /^dpu-traceback: Cannot review \S+nope\.log: no such file or directory\n$/,
  );
  const usage = await runMain([
    "review",
    join(FIXTURES, "gpu-events.log"),
    "--until",
    "noon",
  ]);
  assert.equal(usage.code, 2);
  assert.match(
    usage.stderr,
    /^dpu-traceback: --until "noon": not a time; .* Try 'dpu-traceback review --help'\.\n$/,
  );
  const ok = await runMain(["review", join(FIXTURES, "gpu-events.log")]);
  assert.equal(ok.code, 0);
  assert.match(ok.stdout, /^# {2}MONITOR {2}RULE {12}START \(UTC\)/);
  assert.equal(ok.stderr, "");
  const help = await runMain(["--help"]);
  assert.match(help.stdout, /dpu-traceback review \[FILE\|DIR\] \[options\]/);
});

Deno.test("review of a hostile log directory prints no terminal control in any output form or message", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    join(dir.path, `${HOSTILE.monitor}-events.log`),
    hostileLogText(),
  );
  // Not a log: its name is in the warning that it was skipped.
  await Deno.writeTextFile(
    join(dir.path, "\u202e\x9b-events.log"),
    "not a log\n",
  );
  const rule =
    "GPU \\u202ehot\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 \\u009b31m";
  const outputs = new Map<string, string>();
  for (
    const form of [
      [],
      ["--json"],
      ["--csv"],
      ["--html", "-"],
      ["--event", "1"],
      ["--event", "1", "--csv"],
      ["--event", "1", "--json"],
    ]
  ) {
    const r = await runMain(["review", dir.path, ...form]);
    const name = form.join(" ") || "table";
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
    assert.doesNotMatch(r.stdout, TERMINAL_CONTROL, name);
    assert.doesNotMatch(r.stderr, TERMINAL_CONTROL, name);
    assert.match(
      r.stderr,
      /^dpu-traceback: warning: skipped \S+\/\\u202e\\u009b-events\.log: /m,
    );
    outputs.set(name, r.stdout);
  }
  assert.match(
    outputs.get("table")!,
    new RegExp(
      `^1 +=1\\+1\\\\u001b\\[2J +${
        RegExp.escape(rule)
      } +2026-11-21 14:50:50\\.300 `,
      "m",
    ),
  );
  assert.ok(outputs.get("--html -")!.includes(`<td>${rule}</td>`));
  assert.ok(outputs.get("--event 1")!.includes(`rule "${rule}"`));
  // JSON: the escapes are JSON's own, so the names read back exactly.
  const doc = JSON.parse(outputs.get("--json")!);
  assert.deepEqual(
    [doc.events[0].monitor, doc.events[0].rule, doc.events[0].column],
    [HOSTILE.monitor, HOSTILE.rule, HOSTILE.column],
  );
  assert.equal(
    JSON.parse(outputs.get("--event 1 --json")!).event.rule,
    HOSTILE.rule,
  );
  // CSV: formulas are text; a negative duration is still a number.
  const csv = outputs.get("--csv")!.split("\n");
  assert.ok(csv[1].startsWith(`1,'=1+1\\u001b[2J,${rule},"'=HYPERLINK(`));
  assert.ok(csv[1].includes(",-0.1,"));
  assert.ok(
    outputs.get("--event 1 --csv")!.startsWith(
      `time,offset_s,"'=HYPERLINK(""http://evil.example/"",""click"") value","'=HYPERLINK(""http://evil.example/"",""click"") rate/sample (/s)",`,
    ),
  );
});

Deno.test("review DIR goes on past a truncated gzip, an unreadable file and NUL padding, names them, and exits 1", async () => {
  await using dir = await tempDir();
  // nic's three files (oldest .2), the middle one unreadable; the live
  // one padded with NULs after a crash, then the restart's rows.
  await copyNicRotation(dir.path);
  const live = await Deno.readTextFile(
    join(FIXTURES, "rotated", "nic-events.log"),
  );
  const lines = live.split("\n");
  await Deno.writeTextFile(
    join(dir.path, "nic-events.log"),
    [...lines.slice(0, 26), "\u0000".repeat(4096), ...lines.slice(26)]
      .join("\n"),
  );
  // gpu's log compressed by logrotate, and cut short.
  const gz = join(dir.path, "gpu-events.log-20261121.gz");
  await gzipFile(join(FIXTURES, "gpu-events.log"), gz);
  const zipped = await Deno.readFile(gz);
  await Deno.writeFile(gz, zipped.subarray(0, zipped.length - 10));

  const r = await runMain(["review", dir.path, "--json"], {
    flags: ["-A", `--deny-read=${join(dir.path, "nic-events.log.1")}`],
  });
  assert.equal(r.code, 1, r.stderr);
  const warnings = r.stderr.trimEnd().split("\n");
  assert.ok(
    warnings.includes(
      `dpu-traceback: warning: skipped ${gz}: truncated (corrupt gzip stream does not have a matching checksum)`,
    ) ||
      warnings.some((w) =>
        w.startsWith(`dpu-traceback: warning: skipped ${gz}: truncated (`) &&
        w.includes("; the lines before it are reviewed")
      ),
    r.stderr,
  );
  assert.ok(
    warnings.some((w) =>
      w.startsWith(
        `dpu-traceback: warning: skipped ${
          join(dir.path, "nic-events.log.1")
        }: not readable`,
      )
    ),
    r.stderr,
  );
  assert.ok(
    warnings.includes(
      `dpu-traceback: warning: ${
        join(dir.path, "nic-events.log")
      }: line 27: not an events log line: "${
        "\\u0000".repeat(40)
      }..."; skipped`,
    ),
    r.stderr,
  );
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\x00-\x08]/.test(r.stderr), "no raw control bytes");
  // The review itself: nic's files in rotation order; the events of
  // nic-events.log.2, the last still open when the file after it was
  // skipped, and the end whose start was in the skipped file.
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(
    doc.files.map((f: { path: string }) => f.path.slice(dir.path.length + 1)),
    ["nic-events.log.2", "nic-events.log"],
  );
  const states = (monitor: string) =>
    doc.events.filter((e: { monitor: string }) => e.monitor === monitor)
      .map((e: Record<string, unknown>) => [e.state, e.start_known]);
  assert.deepEqual(states("nic"), [
    ["ended", true],
    ["interrupted", true],
    ["open", true],
    ["ended", false],
  ]);
  // What the cut gzip held before the cut: its event, whole.
  assert.deepEqual(states("gpu"), [["ended", true]]);
  // The event left open by the skip: its window ends with its file.
  const open = doc.events.find((e: { state: string }) => e.state === "open");
  const w = await runMain(["review", dir.path, "--event", String(open.id)], {
    flags: ["-A", `--deny-read=${join(dir.path, "nic-events.log.1")}`],
  });
  assert.equal(w.code, 1, w.stderr);
  assert.match(
    w.stdout,
    /\n {2}window {4}\S+nic-events\.log\.2 line 70 to the end of what could be read of \S+nic-events\.log\.2: 4 rows before the start, 2 during\n/,
  );
  assert.equal(
    w.stdout.split("\n").filter((l) => /^\d{4}-/.test(l)).length,
    4 + 2,
  );
});

Deno.test("with the installed binary's permissions: no ./events.log falls back to the log directory; --html FILE says how to write it", async () => {
  await using dir = await tempDir();
  const none = await runMain(["review"], {
    flags: PERMISSION_FLAGS,
    cwd: dir.path,
  });
  assert.equal(none.code, 1);
  assert.equal(
    none.stderr,
    `dpu-traceback: Cannot review events.log: no such file or directory, and no ${LOG_DIR} either; name a FILE or DIR\n`,
  );
  // The binary may also read the fixtures here; it still writes only
  // its log directory.
  const flags = PERMISSION_FLAGS.map((f) =>
    f.startsWith("--allow-read=") ? `${f},${FIXTURES}` : f
  );
  const report = join(dir.path, "r.html");
  const html = await runMain(
    ["review", join(FIXTURES, "gpu-events.log"), "--html", report],
    { flags, cwd: dir.path },
  );
  assert.equal(html.code, 1);
  assert.equal(
    html.stderr,
    `dpu-traceback: Cannot write ${report}: not writable by this binary (it may write only ${LOG_DIR}); write the report through stdout instead: --html - > ${report}\n`,
  );
  const piped = await runMain(
    ["review", join(FIXTURES, "gpu-events.log"), "--html", "-"],
    { flags, cwd: dir.path },
  );
  assert.equal(piped.code, 0, piped.stderr);
  assert.ok(piped.stdout.startsWith("<!doctype html>"));
});

Deno.test("review reads a signal rule's event: its definition from the header, a minimum peak for a rule that fires below", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  // rx rises 1000 a sample (1 ms apart: 1,000,000/s), 200 a sample on
  // samples 20..39, 1000 again after. The rate over 4 ms (the last 4
  // increases x 250/s) is 400,000/s on sample 22 (below 500,000: the rule
  // starts) and 800,000/s on sample 42 (at the clear level: it ends).
  const config = (eventLog: string): MonitorConfig => ({
    name: "nic",
    source: "sim",
    samplePeriodNs: 1_000_000,
    depth: 8,
    columns: [
      { name: "rx", dataId: "0x0000000000000001", kind: "counter" },
      { name: "lat", dataId: "0x0000000000000002", kind: "gauge" },
    ],
    rules: [{
      name: "rx slow",
      signal: "rate",
      column: 0,
      windowNs: 4_000_000,
      direction: "below",
      threshold: 500_000,
      clear: 800_000,
      forNs: 0,
      keepFiringForNs: 0,
      severity: "critical",
      summary: "rx below 500k/s",
    }],
    eventLog,
    seed: 1,
  });
  const fed = await fedMonitor(1e9, () => config(path));
  const t0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z
  let rx = 0n;
  try {
    for (let i = 0; i < 60; i++) {
      if (i > 0) rx += i >= 20 && i < 40 ? 200n : 1000n;
      fed.feed(t0 + BigInt(i) * 1_000_000n, rx, 7n);
    }
    assert.equal(fed.agentMonitor.monitor.rules[0].peak, 200_000);
  } finally {
    await fed.close(); // closes the log (at our path) and its own empty dir
  }

  const json = await runMain(["review", path, "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const [e] = JSON.parse(json.stdout).events;
  assert.deepEqual(
    {
      rule: e.rule,
      column: e.column,
      comparison_type: e.comparison_type,
      comparison_value: e.comparison_value,
      signal: e.signal,
      window_ns: e.window_ns,
      direction: e.direction,
      threshold: e.threshold,
      clear: e.clear,
      for_ns: e.for_ns,
      m_of_n: e.m_of_n,
      keep_firing_for_ns: e.keep_firing_for_ns,
      severity: e.severity,
      summary: e.summary,
      start: e.start,
      end: e.end,
      state: e.state,
      samples: e.samples,
      peak: e.peak,
      peak_kind: e.peak_kind,
      peak_unit: e.peak_unit,
      column_peak: e.column_peak,
      column_peak_rate_per_s: e.column_peak_rate_per_s,
    },
    {
      rule: "rx slow",
      column: "rx",
      comparison_type: null,
      comparison_value: null,
      signal: "rate",
      window_ns: 4_000_000,
      direction: "below",
      threshold: "500000",
      clear: "800000",
      for_ns: 0,
      m_of_n: null,
      keep_firing_for_ns: 0,
      severity: "critical",
      summary: "rx below 500k/s",
      start: "2026-11-21T14:50:00.022000Z",
      end: "2026-11-21T14:50:00.042000Z",
      state: "ended",
      samples: 20,
      // The rule's own peak, as the engine kept it: the lowest rate over
      // 4 ms (the window of 200-a-sample increases).
      peak: 200_000,
      peak_kind: "min",
      peak_unit: "/s",
      // rx on its start sample (19,000 + 3 x 200): the column's lowest.
      column_peak: "19600",
      // 200 a sample, 1 ms apart.
      column_peak_rate_per_s: 200_000,
    },
  );

  const table = await runMain(["review", path]);
  assert.equal(table.code, 0, table.stderr);
  const row = table.stdout.split("\n")[1];
  assert.match(
    row,
    /rx slow +2026-11-21 14:50:00\.022 +14:50:00\.042 .* min 200000\/s +\S+$/,
  );

  const traceback = await runMain(["review", path, "--event", "1"]);
  assert.equal(traceback.code, 0, traceback.stderr);
  assert.match(
    traceback.stdout,
    // The rule in check-config's words (config/rule_description.ts).
    /\n {2}rule {6}"rx slow" \(critical\): starts when the rate of rx over 4 ms goes below 500000\/s; ends when it is at or above 800000\/s, history depth 8\n {2}summary {3}rx below 500k\/s\n/,
  );
  assert.match(
    traceback.stdout,
    /\n {2}peak {6}min 200000\/s \(the rule's rate per second\)\n {2}column {4}column min 19600 at /,
  );

  const html = await runMain(["review", path, "--html", "-"]);
  assert.equal(html.code, 0, html.stderr);
  assert.ok(
    html.stdout.includes(
      "<dt>Rule</dt><dd>&quot;rx slow&quot; (critical): starts when the rate of rx over 4 ms goes below 500000/s; ends when it is at or above 800000/s</dd>",
    ),
  );
  assert.ok(
    html.stdout.includes(
      "<dt>Peak (the rule&#39;s rate per second)</dt><dd>min 200000/s</dd>",
    ),
  );
  assert.ok(
    html.stdout.includes("<dt>Column&#39;s lowest value</dt><dd>19600 at "),
  );
  // The threshold is drawn on the rate panel, per second.
  assert.ok(html.stdout.includes("threshold 500000/s (over 4 ms)"));
});

Deno.test("the traceback's signal column reads as the engine: above the threshold on the start row, the <<Peak>> line's value at the peak, unknown across dropped samples", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "events.log");
  // 1 ms a sample, depth 8 (a ring of 16). rx rises 1000 a sample, then
  // 2000, 2100, ..., 2900 on samples 20..29 and 2500 on 31..39; the
  // source drops 3 samples before sample 30, over which rx rose 50,000.
  // `rx burst`: the rate over 3 ms above 1.5M/s (clear 1.2M/s): starts
  // on sample 21 (5100 in 3 ms), peaks at 2.8M/s on 29 (8400), is unknown
  // on 30..32 (the window spans the loss: across it, 50,000 in 4 ms would
  // read 12.5M/s), ends on 42 (1M/s). `rx jump`: dt_gt 12000 over the
  // depth: starts on 23 (12,600), peaks at 68,500 (the jump is in the
  // rise: the reference types count records, not lost samples).
  const config = (eventLog: string): MonitorConfig => ({
    name: "nic",
    source: "sim",
    samplePeriodNs: 1_000_000,
    depth: 8,
    columns: [
      { name: "rx", dataId: "0x0000000000000001", kind: "counter" },
      { name: "lat", dataId: "0x0000000000000002", kind: "gauge" },
    ],
    rules: [{
      name: "rx burst",
      signal: "rate",
      column: 0,
      windowNs: 3_000_000,
      direction: "above",
      threshold: 1_500_000,
      clear: 1_200_000,
      forNs: 0,
      keepFiringForNs: 0,
    }, {
      name: "rx jump",
      column: 0,
      comparisonType: "dt_gt",
      comparisonValue: 12_000n,
    }],
    eventLog,
    seed: 1,
  });
  const fed = await fedMonitor(1e9, () => config(path));
  const t0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z
  let rx = 0n;
  let t = t0;
  try {
    for (let i = 0; i < 70; i++) {
      if (i === 30) {
        // The engine's own Monitor (served as a read-only view).
        (fed.agentMonitor.monitor as Monitor).gap(3);
        t += 3_000_000n;
      }
      if (i > 0) {
        rx += i < 20
          ? 1000n
          : i < 30
          ? 2000n + 100n * BigInt(i - 20)
          : i === 30
          ? 50_000n
          : i < 40
          ? 2500n
          : 1000n;
      }
      fed.feed(t, rx, 7n);
      t += 1_000_000n;
    }
  } finally {
    await fed.close(); // closes the log (at our path) and its own empty dir
  }
  const log = await Deno.readTextFile(path);
  assert.ok(log.includes('<<Peak>> Rule: "rx burst", Peak: 2800000/s'), log);
  assert.ok(log.includes('<<Peak>> Rule: "rx jump", Peak: 68500'), log);

  const expected = [
    { rule: "rx burst", heading: "rx rate/3ms (/s)", threshold: 1_500_000 },
    { rule: "rx jump", heading: "rx rise/8 samples", threshold: 12_000 },
  ];
  for (const [k, want] of expected.entries()) {
    const r = await runMain([
      "review",
      path,
      "--event",
      String(k + 1),
      "--json",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.event.rule, want.rule);
    assert.equal(doc.columns[2], want.heading);
    // The event's rows: from its start sample (offset 0) to its end.
    const during = (doc.rows as [string, number, number | string | null][])
      .filter((row) => row[1] >= 0);
    const signal = during.map((row) => row[2] === null ? null : Number(row[2]));
    assert.ok(signal[0]! > want.threshold, `${want.rule}: ${signal[0]}`);
    const known = signal.filter((x) => x !== null);
    assert.equal(Math.max(...known), doc.event.peak, want.rule);
    if (want.rule === "rx burst") {
      // Samples 30..32, right after the loss: unknown, as the engine had it.
      const afterGap = during.findIndex((row) =>
        row[0] === "2026-11-21T14:50:00.033000000Z"
      );
      assert.deepEqual(signal.slice(afterGap, afterGap + 4), [
        null,
        null,
        null,
        2_500_000,
      ]);
    }
  }
});
