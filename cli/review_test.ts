import assert from "node:assert/strict";
import { join } from "node:path";
import type { ReviewIo } from "../review/review.ts";
import { runReview } from "./review.ts";
import { parseReviewArgs } from "./review_args.ts";
import { FIXTURES, gzip } from "../review/test_util.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { ROOT } from "../tests/cli_util.ts";
import { EventJournal } from "../events/event_journal.ts";
import { EventsLog } from "../events/log.ts";
import { traceCommand } from "../events/trace_command.ts";
import { nicConfig } from "../metrics/metrics_test_util.ts";
import type { MonitorConfig } from "../config/types.ts";
import { Monitor } from "../rules/monitor.ts";
import { writeRecord } from "../rules/rules_test_util.ts";

interface Captured {
  code: number;
  out: string;
  errors: string[];
  warnings: string[];
  infos: string[];
  files: Map<string, string>;
}

async function review(args: string[]): Promise<Captured> {
  const c = {
    out: "",
    errors: [] as string[],
    warnings: [] as string[],
    infos: [] as string[],
    files: new Map<string, string>(),
  };
  const io: ReviewIo = {
    out: (t) => {
      c.out += t;
      return Promise.resolve();
    },
    error: (m) => c.errors.push(m),
    warn: (m) => c.warnings.push(m),
    info: (m) => c.infos.push(m),
    writeFile: (path, chunks) => {
      c.files.set(path, [...chunks].join(""));
      return Promise.resolve();
    },
  };
  const code = await runReview(args, io);
  return { code, ...c };
}

const nic = join(FIXTURES, "nic-events.log");
const ref = join(FIXTURES, "reference-events.log");

Deno.test("usage errors exit 2 with one line naming the problem", async () => {
  const TRY = " Try 'dpu-traceback review --help'\\.$";
  const cases: [string[], RegExp][] = [
    [
      [nic, "--json", "--csv"],
      new RegExp(
        "^--json and --csv are two outputs; give one of them\\." + TRY,
      ),
    ],
    [[nic, "--event", "0"], /^--event must be an event number from the table/],
    [[nic, "--event", "x"], /^--event must be an event number/],
    [[nic, "--since", "yesterday"], /^--since "yesterday": not a time; /],
    [
      [nic, "--since", "2026-11-22", "--until", "2026-11-21"],
      new RegExp("^--until is before --since\\." + TRY),
    ],
    [
      [nic, "--timestamps", "us"],
      new RegExp(
        '^--timestamps must be one of auto, ns, reference, counter, got "us"\\.' +
          TRY,
      ),
    ],
    [[nic, "--bogus"], new RegExp("^Unknown option '--bogus'\\." + TRY)],
    [[nic, "-x"], new RegExp("^Unknown option '-x'\\." + TRY)],
    [[nic, "--since"], new RegExp("^--since needs a value\\." + TRY)],
    [[nic, "--json=yes"], new RegExp("^--json takes no value\\." + TRY)],
    [[nic, "--html", "-", "--json"], /^--html - writes the report to stdout/],
    [[nic, "--event", "9"], /^--event 9: there are 3 events in /],
    [
      [nic, "--from", "+1s"],
      new RegExp(
        "^--from cuts an event's traceback window; give the event too \\(--event N or --event TIME\\)\\." +
          TRY,
      ),
    ],
    [
      [nic, "--event", "1", "--from", "+2ms", "--to", "-1ms"],
      new RegExp("^--to is before --from\\." + TRY),
    ],
    [
      [nic, "--event", "1", "--to", "+1 fortnight"],
      /^--to "\+1 fortnight": an offset has an unknown unit "fortnight"/,
    ],
    [
      [nic, "--event", "1", "--from", "noon"],
      /^--from "noon": not a time; .* or an offset from the event's start \(\+1\.5s, -200ms\)\./,
    ],
    // A negative number is the option's value, refused for what it is.
    [
      [nic, "--event", "-1"],
      new RegExp(
        '^--event must be an event number from the table \\(1, 2, \\.\\.\\.\\) or its start time \\(ISO-8601 or Unix seconds\\), got "-1"\\.' +
          TRY,
      ),
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = await review(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], pattern);
    assert.equal(r.out, "");
  }
});

Deno.test("--until with a date alone keeps that whole day", async () => {
  // nic's events are on 2026-11-21; the day before keeps none.
  const day = await review([nic, "--until", "2026-11-21", "--json"]);
  assert.equal(JSON.parse(day.out).events.length, 3);
  const before = await review([nic, "--until", "2026-11-20", "--json"]);
  assert.equal(JSON.parse(before.out).events.length, 0);
  assert.match(
    (await review(["--help"])).out,
    /a date alone is its first moment for --since and its\s+last for --until/,
  );
});

Deno.test("unreadable input and non-logs exit 1 with one line", async () => {
  await using dir = await tempDir();
  const notLog = join(dir.path, "events.log");
  await Deno.writeTextFile(notLog, "hello\n");
  for (
    const [args, pattern] of [
      [
        [join(dir.path, "missing.log")],
        /^Cannot review \S+missing\.log: no such file or directory$/,
      ],
      [[notLog], /^Cannot review \S+events\.log: line 1: not an events log/],
      [
        [nic, "--html", join(dir.path, "no", "such", "dir", "r.html")],
        /^Cannot write \S+r\.html: no such file or directory$/,
      ],
    ] as [string[], RegExp][]
  ) {
    const r = await runReview(args, {
      out: () => Promise.resolve(),
      error: (m) => {
        assert.match(m, pattern);
        assert.ok(!m.includes("\n"));
      },
      warn: () => {},
      info: () => {},
    });
    assert.equal(r, 1, args.join(" "));
  }
});

Deno.test("the table, with filters; numbers stay those of the whole timeline", async () => {
  const all = await review([nic, ref]);
  assert.equal(all.code, 0);
  assert.match(all.out, /^ ?# {2}MONITOR/);
  assert.match(
    all.out,
    /5 events, 1 open at the end of the log, 1 cut by a restart; 2 files read/,
  );
  assert.deepEqual(all.warnings, [
    `${nic}: line 78: the file ends in the middle of a line; ignored`,
  ]);
  const some = await review([
    nic,
    ref,
    "--rule",
    "rx <",
    "--monitor",
    "REFERENCE",
  ]);
  const rows = some.out.split("\n").filter((l) => /^\s*\d+ {2}/.test(l));
  assert.deepEqual(rows.map((l) => l.trim().split(/\s+/)[0]), ["2"]);
  assert.match(some.out, /1 of 5 events/);
  const late = await review([
    nic,
    ref,
    "--since",
    "2026-11-21T14:53:00Z",
    "--json",
  ]);
  assert.deepEqual(
    JSON.parse(late.out).events.map((e: { id: number }) => e.id),
    [5],
  );
});

Deno.test("--html writes the report for the shown events; --html - prints it", async () => {
  const r = await review([nic, "--rule", "ECN", "--html", "r.html"]);
  assert.equal(r.code, 0);
  const page = r.files.get("r.html")!;
  assert.equal((page.match(/<svg class="chart"/g) ?? []).length, 3);
  assert.deepEqual(r.infos, ["report written to r.html (3 events)"]);
  assert.match(r.out, /# {2}MONITOR/); // the table still goes to stdout
  const piped = await review([nic, "--html", "-"]);
  assert.ok(piped.out.startsWith("<!doctype html>"));
});

Deno.test("--event N prints that event's window; --help prints the usage", async () => {
  const r = await review([ref, "--event", "2"]);
  assert.equal(r.code, 0);
  assert.match(
    r.out,
    /^Event 2 of 2: reference, rule "Rx < 1000 per 2 samples"/,
  );
  assert.match(
    r.out,
    /<<Event end>> Time: 2026-11-21T14:50:01Z, Rule: "Rx < 1000 per 2 samples"\n$/,
  );
  const help = await review(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage:\n {2}dpu-traceback review \[FILE\|DIR\]/);
});

Deno.test("a directory with a damaged file: the others are reviewed, the file is named, exit 1", async () => {
  await using dir = await tempDir();
  await Deno.copyFile(nic, join(dir.path, "nic-events.log"));
  await Deno.writeTextFile(join(dir.path, "gpu-events.log"), "not a log\n");
  const r = await review([dir.path, "--json"]);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.out).events.length, 3);
  assert.deepEqual(r.warnings.filter((w) => w.startsWith("skipped")), [
    `skipped ${
      join(dir.path, "gpu-events.log")
    }: line 1: not an events log: expected "Telemetry monitor : ..." or a "timestamp, ..." row, got "not a log"`,
  ]);
  // Named alone, the same file is an error and nothing is printed.
  const alone = await review([join(dir.path, "gpu-events.log")]);
  assert.equal(alone.code, 1);
  assert.equal(alone.out, "");
  assert.match(
    alone.errors[0],
    /^Cannot review \S+gpu-events\.log: line 1: not an events log/,
  );
  // Among several paths, a missing one is skipped too.
  const two = await review([nic, join(dir.path, "missing.log")]);
  assert.equal(two.code, 1);
  assert.match(two.out, /3 events/);
  assert.deepEqual(two.warnings.filter((w) => w.startsWith("skipped")), [
    `skipped ${join(dir.path, "missing.log")}: no such file or directory`,
  ]);
});

Deno.test("a single gzipped FILE cut short: what could be read is reviewed, with a warning, exit 1", async () => {
  await using dir = await tempDir();
  const zipped = await gzip(await Deno.readFile(nic));
  const gz = join(dir.path, "nic-events.log.1.gz");
  await Deno.writeFile(gz, zipped.subarray(0, zipped.length - 10));
  const r = await review([gz, "--json"]);
  assert.equal(r.code, 1);
  assert.ok(JSON.parse(r.out).events.length > 0);
  const skipped = r.warnings.filter((w) => w.startsWith("skipped"));
  assert.equal(skipped.length, 1);
  assert.match(
    skipped[0],
    /^skipped \S+\.gz: truncated \(corrupt gzip stream does not have a matching checksum\) after line \d+; the lines before it are reviewed$/,
  );
});

Deno.test("a file named twice (alone and in its directory) is read once", async () => {
  const r = await review([nic, join(FIXTURES, "nic-events.log"), "--json"]);
  assert.equal(JSON.parse(r.out).events.length, 3);
  // Its warning once, not once per name.
  assert.equal(r.warnings.length, 1);
});

Deno.test("no paths: ./events.log, else the log directory, saying which", async () => {
  await using dir = await tempDir();
  await Deno.copyFile(nic, join(dir.path, "nic-events.log"));
  const io = (c: Captured): ReviewIo => ({
    out: (t) => {
      c.out += t;
      return Promise.resolve();
    },
    error: (m) => c.errors.push(m),
    warn: (m) => c.warnings.push(m),
    info: (m) => c.infos.push(m),
  });
  const fresh = (): Captured => ({
    code: 0,
    out: "",
    errors: [],
    warnings: [],
    infos: [],
    files: new Map(),
  });
  const fallback = fresh();
  fallback.code = await runReview([], io(fallback), {
    file: join(dir.path, "events.log"),
    dir: dir.path,
  });
  assert.equal(fallback.code, 0);
  assert.deepEqual(fallback.infos, [
    `no ${join(dir.path, "events.log")} here: reviewing ${dir.path}`,
  ]);
  assert.match(fallback.out, /3 events/);
  // With the file there, it is read and nothing is said.
  const here = fresh();
  here.code = await runReview([], io(here), { file: ref, dir: dir.path });
  assert.deepEqual([here.code, here.infos], [0, []]);
  assert.match(here.out, /2 events/);
  // Neither: one line.
  const none = fresh();
  none.code = await runReview([], io(none), {
    file: join(dir.path, "events.log"),
    dir: join(dir.path, "nope"),
  });
  assert.equal(none.code, 1);
  assert.match(
    none.errors[0],
    /^Cannot review \S+events\.log: no such file or directory, and no \S+nope either; name a FILE or DIR$/,
  );
});

Deno.test("--html FILE the binary may not write: the reason, and how to write it anyway", async () => {
  let message = "";
  const code = await runReview([nic, "--html", "/tmp/r.html"], {
    out: () => Promise.resolve(),
    error: (m) => message = m,
    warn: () => {},
    info: () => {},
    writeFile: () => {
      throw new Deno.errors.NotCapable(
        'Requires write access to "/tmp/r.html", run again with the --allow-write flag',
      );
    },
  });
  assert.equal(code, 1);
  assert.equal(
    message,
    "Cannot write /tmp/r.html: not writable by this binary (it may write only /var/log/dpu-traceback); write the report through stdout instead: --html - > /tmp/r.html",
  );
});

Deno.test("--event TIME --rule NAME prints the event of that rule that started then", async () => {
  // Two rules start in the same second: the name decides.
  const rx = await review([
    ref,
    "--event",
    "2026-11-21T14:50:01Z",
    "--rule",
    "Rx < 1000 per 2 samples",
  ]);
  assert.equal(rx.code, 0, rx.errors.join("\n"));
  assert.match(
    rx.out,
    /^Event 2 of 2: reference, rule "Rx < 1000 per 2 samples"/,
  );
  // Unix seconds, a time to the ns or to a span that holds its start
  // sample (01.0004), and a --rule that only contains the text (case
  // aside) find it as well.
  for (
    const time of [
      "1795272601",
      "1795272601.000400000",
      "2026-11-21T14:50:01.0004",
      "2026-11-21T14:50:01.0Z",
      "2026-11-21T14:50",
    ]
  ) {
    const r = await review([ref, "--event", time, "--rule", "rx <"]);
    assert.equal(r.code, 0, time);
    assert.equal(r.out, rx.out, time);
  }
  // A fraction narrows the time: none of the rule started in 01.5..01.6.
  const later = await review([
    ref,
    "--event",
    "2026-11-21T14:50:01.5",
    "--rule",
    "rx <",
  ]);
  assert.equal(later.code, 2);
  assert.deepEqual(later.errors, [
    `--event 2026-11-21T14:50:01.5: no event of rule "rx <" started in the 100 ms from that time in ${ref}`,
  ]);
  // Without --rule, or with text both rules contain, the second names two
  // events: which, each by the time that names it alone.
  for (const rules of [[], ["--rule", "per 2 samples"]]) {
    const r = await review([ref, "--event", "2026-11-21T14:50:01Z", ...rules]);
    assert.equal(r.code, 2);
    assert.equal(r.out, "");
    assert.deepEqual(r.errors, [
      `--event 2026-11-21T14:50:01Z: 2 events started in that second in ${ref}: ` +
      `2026-11-21T14:50:01.000000000Z (event 1, rule "ECN > 100 per 2 samples"), ` +
      `2026-11-21T14:50:01.000400000Z (event 2, rule "Rx < 1000 per 2 samples"); ` +
      "give one of these times, or --event N with its number",
    ]);
    const first = await review([
      ref,
      "--event",
      "2026-11-21T14:50:01.000000000Z",
      ...rules,
    ]);
    assert.equal(first.code, 0);
    assert.match(
      first.out,
      /^Event 1 of 2: reference, rule "ECN > 100 per 2 samples"/,
    );
  }
  // Two events of one rule in one second: the second is ambiguous, their
  // exact start times are not.
  const twice = await review([
    nic,
    "--event",
    "2026-11-21T14:51:40Z",
    "--rule",
    "ECN > 100 per 2 samples",
    "--json",
  ]);
  assert.equal(twice.code, 2);
  assert.deepEqual(twice.errors, [
    `--event 2026-11-21T14:51:40Z: 2 events of rule "ECN > 100 per 2 samples" started in that second in ${nic}: ` +
    "2026-11-21T14:51:40.000300000Z (event 1), 2026-11-21T14:51:40.001500000Z (event 2); " +
    "give one of these times, or --event N with its number",
  ]);
  for (const [time, id] of [["40.000300000", 1], ["40.001500000", 2]]) {
    const one = await review([
      nic,
      "--event",
      `2026-11-21T14:51:${time}Z`,
      "--rule",
      "ECN > 100 per 2 samples",
      "--json",
    ]);
    assert.equal(one.code, 0, one.errors.join("\n"));
    assert.equal(JSON.parse(one.out).event.id, id);
  }
  // --event N is still a number from the table.
  const n = await review([ref, "--event", "2"]);
  assert.equal(n.out, rx.out);
});

Deno.test("--event TIME that names no event exits 2 with one line", async () => {
  const none = await review([
    ref,
    "--event",
    "2026-11-21T14:50:02Z",
    "--rule",
    "Rx",
  ]);
  assert.equal(none.code, 2);
  assert.deepEqual(none.errors, [
    `--event 2026-11-21T14:50:02Z: no event of rule "Rx" started in that second in ${ref}`,
  ]);
  assert.equal(none.out, "");
  const other = await review([
    ref,
    "--event",
    "2026-11-21T14:50:01Z",
    "--rule",
    "GPU",
  ]);
  assert.equal(other.code, 2);
  const bad = await review([ref, "--event", "2026-11-21 14:50 UTC"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.errors[0],
    /^--event must be an event number from the table \(1, 2, \.\.\.\) or its start time \(ISO-8601 or Unix seconds\), got "2026-11-21 14:50 UTC"/,
  );
  // A time with a field out of range: which field.
  const hour = await review([ref, "--event", "2026-11-21T25:00:00Z"]);
  assert.equal(hour.code, 2);
  assert.match(
    hour.errors[0],
    /^--event "2026-11-21T25:00:00Z": there is no hour 25\./,
  );
});

Deno.test("--event N --from --to prints the slice; a slice that keeps no row exits 2 with one line and prints nothing", async () => {
  const r = await review([
    ref,
    "--event",
    "1",
    "--from",
    "-0.0001",
    "--to",
    "+0.0001",
    "--csv",
  ]);
  assert.equal(r.code, 0, r.errors.join("\n"));
  assert.deepEqual(
    r.out.trimEnd().split("\n").slice(1).map((l) => l.split(",").slice(1, 3)),
    [["-0.000100", "20"], ["0.000000", "280"], ["0.000100", "570"]],
  );
  const miss = await review([
    ref,
    "--event",
    "1",
    "--from",
    "2026-11-21T14:51Z",
  ]);
  assert.equal(miss.code, 2);
  assert.deepEqual(miss.errors, [
    "--from 2026-11-21T14:51Z: no row of event 1's window is in that slice; its 8 rows run from 2026-11-21T14:50:00.999700000Z (-0.000300 s) to 2026-11-21T14:50:01.000400000Z (+0.000400 s)",
  ]);
  assert.equal(miss.out, "");
  // By its start time, the same.
  const at = await review([
    ref,
    "--event",
    "2026-11-21T14:50:01.000000000Z",
    "--rule",
    "ECN",
    "--to",
    "-1ms",
  ]);
  assert.equal(at.code, 2);
  assert.match(at.errors[0], /^--to -1ms: no row of event 1's window/);
});

/**
 * An events log for `m` (nicConfig's, whatever its names and path)
 * holding two events of its first rule 300 ms apart, in one second;
 * returns them as the agent journals them.
 */
async function twoEventsLogged(m: MonitorConfig) {
  const log = await EventsLog.open({
    path: m.eventLog,
    version: "test",
    device: "sim",
    depth: m.depth,
    samplePeriodNs: m.samplePeriodNs,
    columns: m.columns,
    rules: m.rules,
  });
  // Journaled as the agent does: on the sample that changed the rule.
  const journal = EventJournal.create([m.rules.length]);
  const monitor = new Monitor(m, log, {
    onTransition: (mon, r, active, unixMs) => {
      const at = mon.ring.offsetBack(0);
      if (active) journal.started(0, r, mon.words, at, mon.samples, unixMs);
      else journal.ended(0, r, mon.words, at, mon.samples, 0, unixMs);
    },
  });
  // 1 ms samples from 14:50:00.1; lat is high on samples 10..14 and
  // 310..314: two events of one rule in one second, 300 ms apart.
  const t0 = 1_795_272_600_100_000_123n;
  try {
    for (let i = 0; i < 400; i++) {
      const high = (i >= 10 && i < 15) || (i >= 310 && i < 315);
      writeRecord(
        monitor.words,
        monitor.claim(),
        t0 + BigInt(i) * 1_000_000n,
        [BigInt(i) * 1000n, high ? 900n : 7n],
      );
      monitor.commit();
    }
  } finally {
    await log.close();
  }
  const events = journal.recent().reverse();
  // Depth 2: the rule fires on the second high sample.
  assert.deepEqual(events.map((e) => e.startNs - t0), [
    11_000_000n,
    311_000_000n,
  ]);
  return events;
}

Deno.test("the review command an alert hands out names its event alone, with another of the rule 300 ms after", async () => {
  await using dir = await tempDir();
  const m = nicConfig(join(dir.path, "events.log"));
  const rule = m.rules[0].name; // lat "high"
  const events = await twoEventsLogged(m);
  for (const [k, event] of events.entries()) {
    const command = traceCommand(m.eventLog, event.startNs, rule);
    // The arguments a POSIX shell hands the program.
    const printed = await new Deno.Command("sh", {
      args: ["-c", command.replace(/^dpu-traceback /, "printf '%s\\0' ")],
      stdout: "piped",
    }).output();
    const args = new TextDecoder().decode(printed.stdout).split("\0")
      .slice(1, -1);
    const r = await review([...args, "--json"]);
    assert.equal(r.code, 0, r.errors.join("\n"));
    const { event: shown } = JSON.parse(r.out);
    assert.deepEqual(
      [shown.id, shown.rule, shown.start_ns],
      [k + 1, rule, String(event.startNs)],
      command,
    );
  }
  // Typed to the second: both started then; the message names each exactly.
  const typed = await review([
    m.eventLog,
    "--event",
    "2026-11-21T14:50:00Z",
    "--rule",
    rule,
  ]);
  assert.equal(typed.code, 2);
  assert.equal(typed.out, "");
  assert.deepEqual(typed.errors, [
    `--event 2026-11-21T14:50:00Z: 2 events of rule "lat \\"high\\"" started in that second in ${m.eventLog}: ` +
    "2026-11-21T14:50:00.111000123Z (event 1), 2026-11-21T14:50:00.411000123Z (event 2); " +
    "give one of these times, or --event N with its number",
  ]);
});

/** Rule names a shell or an option parser could take for something else. */
const HOSTILE_NAMES = [
  "-x",
  "--json",
  "-5",
  "--rule=y",
  "-",
  "a=b",
  "it's",
  '$(touch pwned) `touch pwned` "q" \\ ;|&<>*?[a] ~ #',
  " spaced ",
];

/** The arguments a POSIX shell (`sh -c`) hands dpu-traceback for `command`. */
async function shellArgs(command: string, cwd?: string): Promise<string[]> {
  const printed = await new Deno.Command("sh", {
    args: ["-c", command.replace(/^dpu-traceback /, "printf '%s\\0' ")],
    cwd,
    stdout: "piped",
  }).output();
  assert.equal(printed.code, 0, command);
  return new TextDecoder().decode(printed.stdout).split("\0").slice(0, -1);
}

Deno.test("the review command reads back as its rule and log through a shell, whatever their names", async () => {
  await using dir = await tempDir();
  for (const path of ["/var/log/e.log", "-e.log", "-my log", "--"]) {
    for (const name of HOSTILE_NAMES) {
      const command = traceCommand(path, 0n, name);
      const [review, ...args] = await shellArgs(command, dir.path);
      assert.equal(review, "review");
      const request = parseReviewArgs(args);
      assert.deepEqual(request.rules, [name], command);
      // ./-e.log is -e.log, as an argument that is no option.
      assert.deepEqual(
        request.paths,
        [path.startsWith("-") ? `./${path}` : path],
        command,
      );
    }
  }
  // Nothing in a name was run.
  assert.deepEqual(await Array.fromAsync(Deno.readDir(dir.path)), []);
});

Deno.test("the review command, pasted into sh, reviews its event for a rule named like an option", async () => {
  await using dir = await tempDir();
  // A relative log starting with -, in the working directory.
  const m = nicConfig(join(dir.path, "-nic events.log"));
  const rule = `-x ${HOSTILE_NAMES.at(-2)}`;
  const events = await twoEventsLogged({
    ...m,
    rules: [{ ...m.rules[0], name: rule }, ...m.rules.slice(1)],
  });
  const command = traceCommand("-nic events.log", events[1].startNs, rule);
  // dpu-traceback as the operator's shell finds it, on the PATH: this
  // checkout's main.ts.
  await using bin = await tempDir();
  const program = join(bin.path, "dpu-traceback");
  await Deno.writeTextFile(
    program,
    `#!/bin/sh\nexec "$DENO" run -A "$MAIN" "$@" --json\n`,
  );
  await Deno.chmod(program, 0o755);
  const ran = await new Deno.Command("sh", {
    args: ["-c", command],
    cwd: dir.path,
    env: {
      PATH: `${bin.path}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      DENO: Deno.execPath(),
      MAIN: join(ROOT, "main.ts"),
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(ran.stderr);
  assert.equal(ran.code, 0, `${command}\n${stderr}`);
  const { event } = JSON.parse(new TextDecoder().decode(ran.stdout));
  assert.deepEqual(
    [event.id, event.rule, event.start_ns],
    [2, rule, String(events[1].startNs)],
  );
  assert.deepEqual(
    (await Array.fromAsync(Deno.readDir(dir.path))).map((e) => e.name),
    ["-nic events.log"],
  );
});
