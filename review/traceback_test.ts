import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import {
  FIXTURES,
  gzip,
  HOSTILE,
  hostileLogText,
  readFixtures,
  TERMINAL_CONTROL,
} from "./test_util.ts";
import { writeTraceback } from "./traceback.ts";
import { parseSliceBound, SliceError } from "./slice.ts";
import { resolveInputs } from "./files.ts";
import { readReview } from "./read.ts";
import { tempDir } from "../tests/temp_dir.ts";

async function capture(
  fn: (write: (t: string) => Promise<void>) => Promise<void>,
): Promise<string> {
  let out = "";
  await fn((t) => {
    out += t;
    return Promise.resolve();
  });
  return out;
}

Deno.test("--event: the window from the history to the end, times decoded, offsets and rates", async () => {
  const { events } = await readFixtures(["reference-events.log"]);
  const text = await capture((w) => writeTraceback(events[0], 2, "text", w));
  const lines = text.trimEnd().split("\n");
  assert.equal(
    lines[0],
    'Event 1 of 2: reference, rule "ECN > 100 per 2 samples"',
  );
  const table = lines.slice(lines.indexOf("") + 1);
  assert.deepEqual(table, [
    "time, offset_s, port_0_rx_ecn_packets rise/2 samples, port_0_rx_ecn_packets rate/sample (/s), port_0_rx_bytes, port_0_rx_ecn_packets",
    // The rise over 2 records (H = depth): unknown until a row 2 back.
    "2026-11-21T14:50:00.999700000Z, -0.000300, -, -, 10000, 10",
    "2026-11-21T14:50:00.999800000Z, -0.000200, -, 100000, 11000, 20",
    "2026-11-21T14:50:00.999900000Z, -0.000100, 20, 100000, 12000, 30",
    // Written one second early by the reference; decoded in place. The
    // rule started here: 300 - 20 > 100.
    "2026-11-21T14:50:01.000000000Z, 0.000000, 280, 2700000, 13000, 300",
    '<<Event start>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100 per 2 samples"',
    "2026-11-21T14:50:01.000100000Z, 0.000100, 570, 3000000, 14000, 600",
    "2026-11-21T14:50:01.000200000Z, 0.000200, 310, 100000, 15000, 610",
    // Two rises of 100 or less: the rule ended.
    "2026-11-21T14:50:01.000300000Z, 0.000300, 15, 50000, 15200, 615",
    "2026-11-21T14:50:01.000400000Z, 0.000400, 10, 50000, 15400, 620",
    '<<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100 per 2 samples"',
  ]);
});

Deno.test("--event --csv and --json carry the same rows; u64 values stay exact", async () => {
  const { events } = await readFixtures(["nic-events.log"]);
  const csv = parse(
    await capture((w) => writeTraceback(events[0], 3, "csv", w)),
  ) as string[][];
  assert.deepEqual(csv[0], [
    "time",
    "offset_s",
    "port_0_rx_ecn_packets rise/2 samples",
    "port_0_rx_ecn_packets rate/sample (/s)",
    "port_0_rx_bytes",
    "port_0_rx_ecn_packets",
  ]);
  assert.deepEqual(csv.slice(1).map((r) => r[5]), [
    "9007199254740800",
    "9007199254740810",
    "9007199254740820",
    "9007199254740950",
    "9007199254740993",
    "9007199254740993",
    "9007199254740993",
  ]);
  const doc = JSON.parse(
    await capture((w) => writeTraceback(events[0], 3, "json", w)),
  );
  assert.equal(doc.event.id, 1);
  assert.deepEqual(doc.columns, csv[0]);
  assert.deepEqual(
    doc.rows.map((r: unknown[]) => r[5]),
    csv.slice(1).map((r) => r[5]),
  );
  // The start row: offset 0, a rise of 140 over 2 records (exact text,
  // as u64 values are), 130 in its one sample: 1.3M/s.
  assert.deepEqual(doc.rows[3].slice(1, 4), [0, "140", 1300000]);
  // The rises the <<Peak>> line's 173 is the largest of; across the
  // dropped samples the rule still compares with the record 2 back.
  assert.deepEqual(csv.slice(1).map((r) => r[2]), [
    "",
    "",
    "20",
    "140",
    "173",
    "43",
    "0",
  ]);
  assert.equal(doc.event.peak, 173);
  assert.equal(doc.slice, null);
  assert.deepEqual(
    doc.markers.map((m: { text: string }) => m.text.slice(0, 13)),
    [
      "<<Event start",
      "<<Gap>> Time:",
      "<<Peak>> Rule",
      "<<Event end>>",
    ],
  );
});

Deno.test("--event of an event cut by a restart stops at the next dump; across a rotation it goes on", async () => {
  const { events } = await readFixtures(["nic-events.log"]);
  const cut = await capture((w) => writeTraceback(events[1], 3, "csv", w));
  assert.equal(parse(cut).length, 1 + 5); // 4 rows of history and 1 during
  // The header says where it stops: at the restart's header block.
  const cutText = await capture((w) => writeTraceback(events[1], 3, "text", w));
  const head = cutText.split("\n\n")[0];
  assert.match(head, /\n {2}duration {2}>= 100 µs, 1 sample\n/);
  assert.match(
    head,
    /\n {2}window {4}\S+nic-events\.log line 38 up to the restart at line 45: 4 rows before the start, 1 during$/,
  );
  assert.ok(!cutText.includes("a new header block"), "stops at the restart");
  const open = await capture((w) => writeTraceback(events[2], 3, "text", w));
  assert.match(open, /\n {2}window {4}\S+ line 70 to the end of the log:/);
  const rotated = await readFixtures(["rotated"]);
  const text = await capture((w) =>
    writeTraceback(rotated.events[0], 1, "text", w)
  );
  assert.match(
    text,
    /a new header block \(log rotated, reopened or agent restarted\)/,
  );
  assert.deepEqual(
    text.split("\n").filter((l) => /^\d{4}-/.test(l)).map((l) =>
      l.split(", ").at(-1)
    ),
    ["0", "10", "20", "200", "300", "310", "320"],
  );
});

Deno.test("--event reads a gzipped log from its start and prints the same window", async () => {
  await using dir = await tempDir();
  const plain = join(FIXTURES, "reference-events.log");
  const gz = join(dir.path, "reference-events.log.1.gz");
  await Deno.writeFile(gz, await gzip(await Deno.readFile(plain)));
  const a = (await readFixtures(["reference-events.log"])).events[1];
  const b = (await readReview(await resolveInputs([gz]))).events.at(1)!;
  const textA = await capture((w) => writeTraceback(a, 2, "csv", w));
  const textB = await capture((w) => writeTraceback(b, 2, "csv", w));
  assert.equal(textB, textA);
  assert.equal(parse(textA).length, 1 + 4 + 3);
});

Deno.test("--event ends a header block where the reader does: a quoted column-name row after it starts a new dump", async () => {
  // A log with a dump and an event, a restart (header block) and a second
  // dump with an event, its column-name row written as `"timestamp", ...`.
  const log = await Deno.readTextFile(join(FIXTURES, "nic-events.log"));
  const lines = log.split("\n");
  const header = lines.slice(
    0,
    lines.indexOf("timestamp, port_0_rx_bytes, port_0_rx_ecn_packets"),
  );
  const ended = lines.slice(
    header.length,
    lines.indexOf(
      '<<Event end>> Time: 2026-11-21T14:51:40Z, Rule: "ECN > 100 per 2 samples"',
    ) + 1,
  );
  const second = [
    "1795272800000000000, 1000, 0",
    "1795272800000100000, 2000, 5",
    "1795272800000200000, 3000, 10",
    "1795272800000300000, 4000, 500",
    '<<Event start>> Time: 2026-11-21T14:53:20Z, Rule: "ECN > 100 per 2 samples"',
    "1795272800000400000, 5000, 600",
    "1795272800000500000, 6000, 600",
    "1795272800000600000, 7000, 600",
    '<<Event end>> Time: 2026-11-21T14:53:20Z, Rule: "ECN > 100 per 2 samples"',
  ];
  await using dir = await tempDir();
  // The same log twice, the second dump's column-name row plain and quoted.
  const windows: string[] = [];
  for (
    const row of [
      "timestamp, port_0_rx_bytes, port_0_rx_ecn_packets",
      '"timestamp", "port_0_rx_bytes", "port_0_rx_ecn_packets"',
    ]
  ) {
    const path = join(dir.path, "events.log");
    await Deno.writeTextFile(
      path,
      [...header, ...ended, ...header, row, ...second, ""].join("\n"),
    );
    const { events } = await readReview(await resolveInputs([path]));
    const [first, last] = [...events];
    assert.equal(last.window.startLine, 2 * header.length + ended.length + 1);
    // A window from the first dump to the second event's end: it crosses
    // the restart's header block and the second dump.
    const e = {
      ...last,
      window: {
        ...last.window,
        startLine: first.window.startLine,
        startOffset: first.window.startOffset,
      },
    };
    windows.push(await capture((w) => writeTraceback(e, 2, "csv", w)));
  }
  assert.equal(windows[1], windows[0]);
  const rows = parse(windows[1]) as string[][];
  const firstOfSecond = rows.findIndex((r) => r[5] === "0");
  assert.ok(firstOfSecond > 0);
  // Rates and rises start afresh with the new dump: none across the restart.
  assert.deepEqual(rows[firstOfSecond].slice(2, 4), ["", ""]);
  assert.deepEqual(rows[firstOfSecond + 1].slice(2, 4), ["", "50000"]);
  assert.deepEqual(rows[firstOfSecond + 2].slice(2, 4), ["10", "50000"]);
});

Deno.test("--event of a hostile log: names and markers escaped in text, CSV and JSON; formula headings quoted in CSV", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, `${HOSTILE.monitor}-events.log`);
  await Deno.writeTextFile(path, hostileLogText());
  const e = (await readReview(await resolveInputs([path]))).events.at(0)!;
  const rule =
    "GPU \\u202ehot\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 \\u009b31m";

  const text = await capture((w) => writeTraceback(e, 1, "text", w));
  assert.doesNotMatch(text, TERMINAL_CONTROL);
  const lines = text.trimEnd().split("\n");
  assert.equal(lines[0], `Event 1 of 1: =1+1\\u001b[2J, rule "${rule}"`);
  assert.ok(lines.includes(
    `<<Event start>> Time: 2026-11-21T14:50:50Z, Rule: "${rule}"`,
  ));
  assert.ok(lines.some((l) =>
    l.startsWith("  window    ") && l.includes(
      "=1+1\\u001b[2J-events.log line",
    )
  ));

  const csv = await capture((w) => writeTraceback(e, 1, "csv", w));
  assert.doesNotMatch(csv, TERMINAL_CONTROL);
  const rows = parse(csv) as string[][];
  assert.deepEqual(rows[0], [
    "time",
    "offset_s",
    `'${HOSTILE.column} value`,
    `'${HOSTILE.column} rate/sample (/s)`,
    `'${HOSTILE.column}`,
  ]);
  // Negative offsets and rates are numbers: no ' before them.
  assert.deepEqual(rows.slice(1).map((r) => r.slice(1, 4)), [
    ["-0.300000", "80", ""],
    ["-0.200000", "84", "40"],
    ["-0.100000", "86", "20"],
    ["0.000000", "88", "20"],
    ["0.100000", "90", "20"],
    ["-0.100000", "84", ""],
  ]);

  const json = await capture((w) => writeTraceback(e, 1, "json", w));
  assert.doesNotMatch(json, TERMINAL_CONTROL);
  const doc = JSON.parse(json);
  assert.equal(doc.event.rule, HOSTILE.rule);
  assert.equal(doc.columns[4], HOSTILE.column);
  assert.equal(
    doc.markers[0].text,
    `<<Event start>> Time: 2026-11-21T14:50:50Z, Rule: "${HOSTILE.rule}"`,
  );
});

Deno.test("--from and --to: the slice in text, CSV and JSON; the header says what was left out; markers beside shown rows stay", async () => {
  const { events } = await readFixtures(["reference-events.log"]);
  const e = events[0];
  // Offsets from the start sample (14:50:01.000000), as offset_s counts.
  const slice = {
    from: parseSliceBound("--from", "-100us"),
    to: parseSliceBound("--to", "+0.0002"),
  };
  const text = await capture((w) => writeTraceback(e, 2, "text", w, { slice }));
  const [head, table] = text.split("\n\n");
  assert.match(
    head,
    /\n {2}slice {5}--from -100us --to \+0\.0002: 4 rows shown \(offset -0\.000100 s to 0\.000200 s, 2026-11-21 14:50:00\.999900000 to 2026-11-21 14:50:01\.000200000 UTC\); 2 before and 2 after left out$/,
  );
  assert.deepEqual(table.trimEnd().split("\n").slice(1), [
    "2026-11-21T14:50:00.999900000Z, -0.000100, 20, 100000, 12000, 30",
    "2026-11-21T14:50:01.000000000Z, 0.000000, 280, 2700000, 13000, 300",
    '<<Event start>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100 per 2 samples"',
    // The rise still reaches back to rows the slice leaves out.
    "2026-11-21T14:50:01.000100000Z, 0.000100, 570, 3000000, 14000, 600",
    "2026-11-21T14:50:01.000200000Z, 0.000200, 310, 100000, 15000, 610",
  ]);

  // Times, as --since takes them: --to names all of its 100 µs.
  const byTime = {
    from: parseSliceBound("--from", "2026-11-21T14:50:01.0001Z"),
    to: parseSliceBound("--to", "2026-11-21T14:50:01.0003"),
  };
  const csv = parse(
    await capture((w) => writeTraceback(e, 2, "csv", w, { slice: byTime })),
  ) as string[][];
  assert.deepEqual(csv.slice(1).map((r) => r.slice(0, 3)), [
    ["2026-11-21T14:50:01.000100000Z", "0.000100", "570"],
    ["2026-11-21T14:50:01.000200000Z", "0.000200", "310"],
    ["2026-11-21T14:50:01.000300000Z", "0.000300", "15"],
  ]);

  const doc = JSON.parse(
    await capture((w) => writeTraceback(e, 2, "json", w, { slice: byTime })),
  );
  assert.deepEqual(doc.slice, {
    from: "2026-11-21T14:50:01.0001Z",
    to: "2026-11-21T14:50:01.0003",
    rows: 3,
    rows_before: 4,
    rows_after: 1,
  });
  assert.deepEqual(doc.rows.map((r: unknown[]) => r[2]), ["570", "310", "15"]);
  // The start marker comes just before the first row shown; the end
  // marker after the first row left out.
  assert.deepEqual(doc.markers.map((m: { text: string }) => m.text), [
    '<<Event start>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100 per 2 samples"',
  ]);
});

Deno.test("a slice that keeps no row throws a one-line SliceError before anything is written", async () => {
  const { events } = await readFixtures(["reference-events.log"]);
  let written = "";
  await assert.rejects(
    () =>
      writeTraceback(events[0], 2, "json", (t) => {
        written += t;
        return Promise.resolve();
      }, {
        slice: {
          from: parseSliceBound("--from", "+0.00005"),
          to: parseSliceBound("--to", "+0.00009"),
        },
      }),
    (error: Error) => {
      assert.ok(error instanceof SliceError);
      assert.equal(
        error.message,
        "--from +0.00005 --to +0.00009: no row of event 1's window is in that slice; its 8 rows run from 2026-11-21T14:50:00.999700000Z (-0.000300 s) to 2026-11-21T14:50:01.000400000Z (+0.000400 s)",
      );
      return true;
    },
  );
  assert.equal(written, "");
});

/**
 * Our log of one signal rule, hand-worked: the rate of ecn over 300 µs
 * above 1,000,000/s (clear at the same level, no for, no keep_firing_for),
 * depth 2, so the ring holds 4 samples, 100 µs apart.
 *
 * | row | t (µs) | ecn  | rate over 300 µs                           |
 * | r0  | 0      | 0    | unknown (no row 300 µs back)               |
 * | r1  | 100    | 150  | unknown                                    |
 * | r2  | 200    | 300  | unknown                                    |
 * | r3  | 300    | 750  | j = r0: 750 in 300 µs = 2,500,000/s: start |
 * | r4  | 400    | 1050 | j = r1: 900 = 3,000,000/s, the peak        |
 * |     |        |      | 2 samples dropped (500, 600 µs)            |
 * | r5  | 700    | 1200 | j = r4: the window spans the loss: unknown |
 * | r6  | 800    | 1230 | j = r4: unknown                            |
 * | r7  | 900    | 1260 | j = r4: unknown                            |
 * | r8  | 1000   | 1290 | j = r5: 90 = 300,000/s: cleared, the end   |
 */
function rateLogText(): string {
  const S = 1795272600n * 1_000_000_000n;
  const rows = [
    [0, 0],
    [100, 150],
    [200, 300],
    [300, 750],
    [400, 1050],
    [700, 1200],
    [800, 1230],
    [900, 1260],
    [1000, 1290],
  ].map(([us, ecn]) => `${S + BigInt(us) * 1000n}, ${ecn}`);
  const marker = (kind: string) =>
    `<<Event ${kind}>> Time: 2026-11-21T14:50:00Z, Rule: "ECN storm"`;
  return [
    "Telemetry monitor : dpu-traceback 0.1.0",
    "Configuration: ",
    '\tDevice: "03:00.0"',
    '\tMonitor: "nic"',
    "\tSample history depth: 2",
    "\tDiag sample period: 100000ns",
    "\tData IDs: [",
    "\t\t{",
    '\t\t\tName: "ecn",',
    "\t\t\tData ID: 0x1080000400000000",
    "\t\t},",
    "\t]",
    "\tRules: [",
    "\t\t{",
    '\t\t\tName: "ECN storm",',
    "\t\t\tData ID: 0x1080000400000000",
    "\t\t\tSignal: rate over 300000ns",
    "\t\t\tCondition: above 1000000, clear 1000000, for 0ns, keep_firing_for 0ns",
    "\t\t\tSeverity: critical",
    "\t\t},",
    "\t]",
    "",
    "",
    "timestamp, ecn",
    ...rows.slice(0, 4),
    marker("start"),
    rows[4],
    "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 2",
    ...rows.slice(5),
    '<<Peak>> Rule: "ECN storm", Peak: 3000000/s',
    marker("end"),
    "",
  ].join("\n");
}

Deno.test("the signal column of a rate rule: over its window, unknown before a row is a window back and while the window spans dropped samples", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "nic-events.log");
  await Deno.writeTextFile(path, rateLogText());
  const e = (await readReview(await resolveInputs([path]))).events.at(0)!;
  assert.equal(e.rulePeak, 3_000_000);

  const text = await capture((w) => writeTraceback(e, 1, "text", w));
  const [head, table] = text.split("\n\n");
  assert.match(
    head,
    /\n {2}signal {4}ecn rate\/300µs \(\/s\): what the rule tested, row by row, computed again from the rows \(- where they cannot tell\)\n/,
  );
  assert.deepEqual(
    table.trimEnd().split("\n").map((l) =>
      l.startsWith("<<") ? l : l.split(", ").slice(1, 4).join(" | ")
    ),
    [
      "offset_s | ecn rate/300µs (/s) | ecn rate/sample (/s)",
      "-0.000300 | - | -",
      "-0.000200 | - | 1500000",
      "-0.000100 | - | 1500000",
      "0.000000 | 2500000 | 4500000",
      '<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "ECN storm"',
      "0.000100 | 3000000 | 3000000",
      "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 2",
      "0.000400 | - | 500000",
      "0.000500 | - | 300000",
      "0.000600 | - | 300000",
      "0.000700 | 300000 | 300000",
      '<<Peak>> Rule: "ECN storm", Peak: 3000000/s',
      '<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "ECN storm"',
    ],
  );

  // From the first row after the gap: the gap before it shows, and its
  // rate is still unknown (the window reaches back across it).
  const slice = { from: parseSliceBound("--from", "+400us") };
  const doc = JSON.parse(
    await capture((w) => writeTraceback(e, 1, "json", w, { slice })),
  );
  assert.equal(doc.columns[2], "ecn rate/300µs (/s)");
  assert.deepEqual(doc.rows.map((r: unknown[]) => r[2]), [
    null,
    null,
    null,
    300_000,
  ]);
  assert.deepEqual(doc.markers.map((m: { text: string }) => m.text), [
    "<<Gap>> Time: 2026-11-21T14:50:00Z, Dropped samples: 2",
    '<<Peak>> Rule: "ECN storm", Peak: 3000000/s',
    '<<Event end>> Time: 2026-11-21T14:50:00Z, Rule: "ECN storm"',
  ]);
  const csv = parse(
    await capture((w) => writeTraceback(e, 1, "csv", w)),
  ) as string[][];
  assert.deepEqual(csv.slice(1).map((r) => r[2]), [
    "",
    "",
    "",
    "2500000",
    "3000000",
    "",
    "",
    "",
    "300000",
  ]);
});

Deno.test("a window of more than 10,000 rows is printed whole, its header saying how to slice it", async () => {
  // A gt rule (depth 2) on t: above 85 from the 3rd row for 12,000 rows.
  const S = 1795272600n * 1_000_000_000n;
  const row = (i: number, t: number) => `${S + BigInt(i) * 1_000_000n}, ${t}`;
  const marker = (kind: string) =>
    `<<Event ${kind}>> Time: 2026-11-21T14:50:00Z, Rule: "hot"`;
  const during = Array.from({ length: 12_000 }, (_, k) => row(4 + k, 90));
  const log = [
    "Telemetry monitor : dpu-traceback 0.1.0",
    "Configuration: ",
    "\tSample history depth: 2",
    "\tData IDs: [",
    "\t\t{",
    "\t\t\tName: t,",
    "\t\t\tData ID: nvml gpu0.temperature",
    "\t\t},",
    "\t]",
    "\tRules: [",
    "\t\t{",
    "\t\t\tName: hot,",
    "\t\t\tData ID: nvml gpu0.temperature",
    "\t\t\tComparison type: greater_than",
    "\t\t\tComparison value: 85",
    "\t\t},",
    "\t]",
    "",
    "timestamp, t",
    row(0, 80),
    row(1, 80),
    row(2, 90),
    row(3, 90),
    marker("start"),
    ...during,
    row(12_004, 80),
    row(12_005, 80),
    marker("end"),
    "",
  ].join("\n");
  await using dir = await tempDir();
  const path = join(dir.path, "gpu-events.log");
  await Deno.writeTextFile(path, log);
  const e = (await readReview(await resolveInputs([path]))).events.at(0)!;
  const text = await capture((w) => writeTraceback(e, 1, "text", w));
  const [head, table] = text.split("\n\n");
  assert.match(
    head,
    /\n {2}slice {5}all 12,006 rows; to show part of them, add --from and --to: offsets from the start sample \(--from -1ms --to \+5ms\) or times, as --since takes them$/,
  );
  assert.equal(
    table.trimEnd().split("\n").filter((l) => /^\d{4}-/.test(l)).length,
    12_006,
  );
  // Sliced, it says what it left out instead.
  const sliced = await capture((w) =>
    writeTraceback(e, 1, "text", w, {
      slice: {
        from: parseSliceBound("--from", "-1ms"),
        to: parseSliceBound("--to", "+1ms"),
      },
    })
  );
  assert.match(
    sliced.split("\n\n")[0],
    /\n {2}slice {5}--from -1ms --to \+1ms: 3 rows shown \(.*\); 2 before and 12,001 after left out$/,
  );
});
