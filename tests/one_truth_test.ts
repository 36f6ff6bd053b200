import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "./cli_util.ts";
import { tempDir } from "./temp_dir.ts";

// One capture, replayed: the agent's closing table and every view review
// gives of the same log (the table, --json, --csv, --html, --event) must tell the
// same start, duration, sample count and peak for each event. The journal
// behind /api/v1/events and the alerts is held to the closing table by
// agent/agent_test.ts.

const T0 = 1_795_272_600_000_000_000n; // 2026-11-21T14:50:00Z, in ns
const PERIOD = 100_000n;

/** rx rises 1000 a sample, 5000 on samples 20-39; lat is 300, 900 on 50-59. */
function capture(): string {
  const lines = ["timestamp,rx,lat"];
  let rx = 10n ** 15n;
  for (let i = 0; i < 100; i++) {
    if (i > 0) rx += i >= 20 && i < 40 ? 5000n : 1000n;
    const lat = i >= 50 && i < 60 ? 900 : 300;
    lines.push(`${T0 + BigInt(i) * PERIOD},${rx},${lat}`);
  }
  return lines.join("\n") + "\n";
}

const CONFIG = (log: string) => `
monitors:
  - name: nic
    source: replay
    sample_period_ns: 100000
    depth: 8
    event_log: ${JSON.stringify(log)}
    columns:
      - { name: rx, data_id: "0x1020000100000000" }
      - { name: lat, data_id: "0x1160000d00000000", kind: gauge }
    rules:
      - name: rx fast
        rate: rx
        window: 300us
        above: 20M/s
      - name: rx rises
        column: rx
        comparison_type: dt_gt
        comparison_value: 12000
      - name: lat high
        value: lat
        above: 500
        for: 200us
      - name: lat low
        value: lat
        below: 400
`;

Deno.test("one capture: the closing table and review's table, JSON, CSV, report and traceback tell each event alike", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const input = join(dir.path, "capture.csv");
  const config = join(dir.path, "config.yaml");
  await Deno.writeTextFile(input, capture());
  await Deno.writeTextFile(config, CONFIG(log));

  const run = await runMain([
    "run",
    "--config",
    config,
    "--input",
    input,
    "--listen",
    "off",
  ]);
  assert.equal(run.code, 0, run.stderr);
  // MONITOR RULE START DURATION SAMPLES PEAK SEVERITY
  const closing = run.stdout.split("\n").filter((l) => l.startsWith("nic "))
    .map((l) => l.split(/\s{2,}/));
  assert.deepEqual(closing.map((c) => c[1]), [
    "lat low", // from the first sample to 50, then from 60 to the end
    "rx fast",
    "rx rises",
    "lat high",
    "lat low",
  ]);

  const table = await runMain(["review", log]);
  assert.equal(table.code, 0, table.stderr);
  // # MONITOR RULE START END DURATION SAMPLES PEAK ROWS
  const rows = table.stdout.split("\n").filter((l) => /^\s*\d+ {2}/.test(l))
    .map((l) => l.trim().split(/\s{2,}/));
  // An event still open at the end has no end, duration or sample count in
  // the closing table ("active"); review bounds them (">= ..."). Its start
  // and its peak so far are the same in both.
  const open = (c: string[]) => c[3] === "active";
  assert.deepEqual(
    rows.map((r, i) =>
      open(closing[i])
        ? [r[1], r[2], r[3], r[7]]
        : [r[1], r[2], r[3], r[5], r[6], r[7]]
    ),
    closing.map((c) => open(c) ? [c[0], c[1], c[2], c[5]] : c.slice(0, 6)),
  );
  assert.deepEqual(closing.filter(open).map((c) => c[1]), ["lat low"]);

  // The numbers behind the cells, worked out from the capture (d_i is
  // rx's increase on sample i: 1000, 5000 on 20-39):
  // - rx fast: d over the last 3 samples > 6000 (20M/s x 300 µs). 7000 on
  //   20 starts it; 3000 on 42 ends it; at most 15,000: 50M/s.
  // - rx rises (depth 8): rx over 8 samples > 12,000. 16,000 on 21 starts
  //   it; 12,000 on 46 is the first of 8 samples not over, so it ends on
  //   53; at most 8 x 5000 = 40,000.
  // - lat high: 900 on 50-59 for 200 µs starts on 52, ends on 60 (500 and
  //   below); peak 900.
  const json = await runMain(["review", log, "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const events = JSON.parse(json.stdout).events as {
    rule: string;
    start_ns: string;
    end_ns: string;
    samples: number;
    peak: number;
    peak_unit: string;
    duration_s: number;
  }[];
  assert.deepEqual(
    events.map((e) => [e.rule, e.start_ns, e.end_ns, e.samples, e.peak]),
    [
      ["lat low", ns(0), ns(50), 50, 300],
      ["rx fast", ns(20), ns(42), 22, 50_000_000],
      ["rx rises", ns(21), ns(53), 32, 40_000],
      ["lat high", ns(52), ns(60), 8, 900],
      // Open at the end: its peak so far, written as the agent stopped.
      ["lat low", ns(60), null, 39, 300],
    ],
  );
  assert.equal(events[1].peak_unit, "/s"); // rx fast, a rate

  const csv = await runMain(["review", log, "--csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  const [head, ...lines] = csv.stdout.trimEnd().split("\n");
  const at = (name: string) => head.split(",").indexOf(name);
  assert.deepEqual(
    lines.map((l) => {
      const cells = l.split(",");
      return [cells[at("start_ns")], Number(cells[at("peak")])];
    }),
    events.map((e) => [e.start_ns, e.peak]),
  );

  // The HTML report states each event's peak as the closing table does.
  const html = await runMain(["review", log, "--html", "-"]);
  assert.equal(html.code, 0, html.stderr);
  for (const c of closing) {
    assert.ok(
      html.stdout.includes(`</dt><dd>${c[5]}</dd>`),
      `the report's peak for ${c[1]}: ${c[5]}`,
    );
  }

  for (const [i, e] of events.entries()) {
    const text = await runMain(["review", log, "--event", String(i + 1)]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      new RegExp(
        `\\n {2}peak {6}${RegExp.escape(closing[i][5])} \\(the rule's`,
      ),
      e.rule,
    );
  }
});

/** The timestamp of sample `i`, as review's JSON writes it. */
function ns(i: number): string {
  return String(T0 + BigInt(i) * PERIOD);
}
