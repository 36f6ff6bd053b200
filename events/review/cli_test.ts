import assert from "node:assert/strict";
import { join } from "node:path";
import { type ReviewIo, runReview } from "./cli.ts";
import { FIXTURES } from "./test_util.ts";

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
  const cases: [string[], RegExp][] = [
    [
      [nic, "--json", "--csv"],
      /^--json and --csv are two outputs; give one of them Try 'dpu-traceback review --help'\.$/,
    ],
    [[nic, "--event", "0"], /^--event must be an event number from the table/],
    [[nic, "--event", "x"], /^--event must be an event number/],
    [[nic, "--since", "yesterday"], /^--since must be an ISO-8601 time/],
    [
      [nic, "--since", "2026-11-22", "--until", "2026-11-21"],
      /^--until is before --since/,
    ],
    [
      [nic, "--timestamps", "us"],
      /^--timestamps must be one of auto, ns, reference, counter, got "us"/,
    ],
    [[nic, "--bogus"], /Unknown option '--bogus'/],
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

Deno.test("unreadable input and non-logs exit 1 with one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const notLog = join(dir, "events.log");
    await Deno.writeTextFile(notLog, "hello\n");
    for (
      const [args, pattern] of [
        [
          [join(dir, "missing.log")],
          /^Cannot review \S+missing\.log: no such file or directory$/,
        ],
        [[notLog], /^Cannot review \S+events\.log: line 1: not an events log/],
        [
          [nic, "--html", join(dir, "no", "such", "dir", "r.html")],
          /^Cannot write/,
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
  } finally {
    await Deno.remove(dir, { recursive: true });
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
