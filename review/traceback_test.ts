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
    "time, offset_s, port_0_rx_ecn_packets/s, port_0_rx_bytes, port_0_rx_ecn_packets",
    "2026-11-21T14:50:00.999700000Z, -0.000300, , 10000, 10",
    "2026-11-21T14:50:00.999800000Z, -0.000200, 100000, 11000, 20",
    "2026-11-21T14:50:00.999900000Z, -0.000100, 100000, 12000, 30",
    // Written one second early by the reference; decoded in place.
    "2026-11-21T14:50:01.000000000Z, 0.000000, 2700000, 13000, 300",
    '<<Event start>> Time: 2026-11-21T14:50:01Z, Rule: "ECN > 100 per 2 samples"',
    "2026-11-21T14:50:01.000100000Z, 0.000100, 3000000, 14000, 600",
    "2026-11-21T14:50:01.000200000Z, 0.000200, 100000, 15000, 610",
    "2026-11-21T14:50:01.000300000Z, 0.000300, 50000, 15200, 615",
    "2026-11-21T14:50:01.000400000Z, 0.000400, 50000, 15400, 620",
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
    "port_0_rx_ecn_packets/s",
    "port_0_rx_bytes",
    "port_0_rx_ecn_packets",
  ]);
  assert.deepEqual(csv.slice(1).map((r) => r[4]), [
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
    doc.rows.map((r: unknown[]) => r[4]),
    csv.slice(1).map((r) => r[4]),
  );
  assert.deepEqual(doc.rows[3].slice(1, 3), [0, 1300000]);
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
  const firstOfSecond = rows.findIndex((r) => r[4] === "0");
  assert.ok(firstOfSecond > 0);
  // Rates start afresh with the new dump: none across the restart.
  assert.equal(rows[firstOfSecond][2], "");
  assert.equal(rows[firstOfSecond + 1][2], "50000");
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
    `'${HOSTILE.column}/s`,
    `'${HOSTILE.column}`,
  ]);
  // Negative offsets and rates are numbers: no ' before them.
  assert.deepEqual(rows.slice(1).map((r) => r.slice(1, 3)), [
    ["-0.300000", ""],
    ["-0.200000", "40"],
    ["-0.100000", "20"],
    ["0.000000", "20"],
    ["0.100000", "20"],
    ["-0.100000", ""],
  ]);

  const json = await capture((w) => writeTraceback(e, 1, "json", w));
  assert.doesNotMatch(json, TERMINAL_CONTROL);
  const doc = JSON.parse(json);
  assert.equal(doc.event.rule, HOSTILE.rule);
  assert.equal(doc.columns[3], HOSTILE.column);
  assert.equal(
    doc.markers[0].text,
    `<<Event start>> Time: 2026-11-21T14:50:50Z, Rule: "${HOSTILE.rule}"`,
  );
});
