import assert from "node:assert/strict";
import { join } from "node:path";
import type { ReviewIo } from "../review/review.ts";
import { runReview } from "./review.ts";
import { FIXTURES, gzip } from "../review/test_util.ts";
import { tempDir } from "../tests/temp_dir.ts";

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
    [[nic, "--since", "yesterday"], /^--since must be an ISO-8601 time/],
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
    `${nic}: line 77: the file ends in the middle of a line; ignored`,
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
  // Unix seconds, any fraction of that second, and a --rule that only
  // contains the text (case aside) find it as well.
  for (const time of ["1795272601", "1795272601.9", "2026-11-21T14:50:01.5"]) {
    const r = await review([ref, "--event", time, "--rule", "rx <"]);
    assert.equal(r.code, 0, time);
    assert.equal(r.out, rx.out, time);
  }
  // Without --rule, or with text both rules contain: the first.
  for (const rules of [[], ["--rule", "per 2 samples"]]) {
    const r = await review([ref, "--event", "2026-11-21T14:50:01Z", ...rules]);
    assert.equal(r.code, 0);
    assert.match(
      r.out,
      /^Event 1 of 2: reference, rule "ECN > 100 per 2 samples"/,
    );
  }
  // Two events of one rule in one second: the first of them.
  const twice = await review([
    nic,
    "--event",
    "2026-11-21T14:51:40Z",
    "--rule",
    "ECN > 100 per 2 samples",
    "--json",
  ]);
  assert.equal(twice.code, 0);
  assert.equal(JSON.parse(twice.out).event.id, 1);
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
  const bad = await review([ref, "--event", "2026-11-21T25:00:00Z"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.errors[0],
    /^--event must be an event number from the table \(1, 2, \.\.\.\) or its start time \(ISO-8601 or Unix seconds\), got "2026-11-21T25:00:00Z"/,
  );
});
