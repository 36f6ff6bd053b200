import assert from "node:assert/strict";
import { join } from "node:path";
import type { ColumnConfig } from "../config/types.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import { ReplayCollector } from "./replay.ts";
import { tempDir } from "../tests/temp_dir.ts";

const U64_MAX = "18446744073709551615";
const TWO_53_PLUS_1 = "9007199254740993";

/**
 * A monitor stand-in: a ring of a few records (so offsets wrap) that keeps
 * every committed record as decimal strings, or only a count and the last
 * one when `keep` is off (for the large-file test, which must not hold rows).
 */
class FakeSink implements SampleSink {
  readonly words: Uint32Array;
  readonly columns: number;
  readonly committed: string[][] = [];
  last: string[] = [];
  commits = 0;
  claims = 0;
  onCommit: (() => void) | undefined;
  readonly #stride: number;
  readonly #capacity: number;
  readonly #keep: boolean;
  #at = -1;

  constructor(columns: number, keep = true, capacity = 3) {
    this.columns = columns;
    this.#stride = 2 * (columns + 1);
    this.#capacity = capacity;
    this.#keep = keep;
    this.words = new Uint32Array(this.#stride * capacity);
  }

  claim(): number {
    this.#at = (this.claims++ % this.#capacity) * this.#stride;
    return this.#at;
  }

  commit(): void {
    assert.equal(this.commits + 1, this.claims, "commit without claim");
    const record: string[] = [];
    for (let i = 0; i < this.#stride; i += 2) {
      const lo = BigInt(this.words[this.#at + i]);
      const hi = BigInt(this.words[this.#at + i + 1]);
      record.push(String((hi << 32n) | lo));
    }
    this.commits++;
    this.last = record;
    if (this.#keep) this.committed.push(record);
    this.onCommit?.();
  }

  gap(): void {
    throw new Error("replay never reports gaps");
  }
}

function cols(...names: string[]): ColumnConfig[] {
  return names.map((name, i) => ({
    name,
    dataId: `0x${i.toString(16).padStart(16, "0")}`,
  }));
}

/** Runs `fn` with the path of a temporary `capture.csv` holding `text`. */
async function withCsv(
  text: string,
  fn: (path: string) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir("replay_test_");
  const path = join(dir.path, "capture.csv");
  await Deno.writeTextFile(path, text);
  await fn(path);
}

async function replay(
  path: string,
  names: string[],
  sink = new FakeSink(names.length),
): Promise<{ sink: FakeSink; replay: ReplayCollector }> {
  const collector = new ReplayCollector({ path, columns: cols(...names) });
  await collector.run(sink, new AbortController().signal);
  return { sink, replay: collector };
}

/** Expects `run` to reject with exactly `Class` and `message`. */
async function assertFails(
  text: string,
  names: string[],
  Class: ErrorConstructor,
  message: (path: string) => string,
  committedBefore = 0,
): Promise<void> {
  await withCsv(text, async (path) => {
    const sink = new FakeSink(names.length);
    const collector = new ReplayCollector({ path, columns: cols(...names) });
    await assert.rejects(
      collector.run(sink, new AbortController().signal),
      (error: Error) => {
        assert.equal(error.constructor, Class);
        assert.equal(error.message, message(path));
        assert.ok(!error.message.includes("\n"));
        return true;
      },
    );
    assert.equal(sink.commits, committedBefore);
    assert.equal(
      sink.claims,
      committedBefore,
      "claimed a row it did not commit",
    );
    assert.equal(collector.rows, committedBefore);
  });
}

Deno.test("ReplayCollector round-trips u64 values exactly", async () => {
  const rows = [
    ["0", "0", "0"],
    ["1700000000000000000", TWO_53_PLUS_1, "4294967296"],
    [U64_MAX, U64_MAX, "4294967295"],
    ["1700000000000100000", "00000000000000000007", "9007199254740992"],
    ["18446744073000000000", "18446744073709551614", "1"],
  ];
  const text = "timestamp,a,b\n" + rows.map((r) => r.join(",")).join("\n") +
    "\n";
  await withCsv(text, async (path) => {
    const { sink, replay: collector } = await replay(path, ["a", "b"]);
    assert.deepEqual(sink.committed, [
      ...rows.slice(0, 3),
      ["1700000000000100000", "7", "9007199254740992"],
      rows[4],
    ]);
    assert.equal(collector.rows, rows.length);
    assert.equal(collector.source, "replay");
  });
});

Deno.test("ReplayCollector matches columns by name and ignores extras", async () => {
  const text = "extra,b,timestamp,junk,a\n" +
    "x,20,1000,y,10\n" +
    "x,21,2000,,11\n";
  await withCsv(text, async (path) => {
    const { sink } = await replay(path, ["a", "b"]);
    assert.deepEqual(sink.committed, [
      ["1000", "10", "20"],
      ["2000", "11", "21"],
    ]);
  });
});

Deno.test("ReplayCollector accepts events.log separators, quotes, CRLF and blank lines", async () => {
  const text = '\ufefftimestamp, "port 0, rx", "a ""q"""\r\n' +
    "\r\n" +
    "1, 2, 3\r\n" +
    "   \r\n" +
    '4 , "5",6\n' + // a mixed line ending, a quoted value
    "\n" +
    `7, ${U64_MAX}, 9`; // no final newline
  await withCsv(text, async (path) => {
    const { sink } = await replay(path, ['a "q"', "port 0, rx"]);
    assert.deepEqual(sink.committed, [
      ["1", "3", "2"],
      ["4", "6", "5"],
      ["7", "9", U64_MAX],
    ]);
  });
});

Deno.test("ReplayCollector replays a header-only file as no samples", async () => {
  await withCsv("timestamp,a\n", async (path) => {
    const { sink, replay: collector } = await replay(path, ["a"]);
    assert.equal(sink.commits, 0);
    assert.equal(collector.rows, 0);
  });
});

Deno.test("ReplayCollector rejects a bad value with its line and column, after the rows before it", async () => {
  await assertFails(
    "timestamp,a,b\n1,2,3\n\n4,5,6\n7,12x,9\n10,11,12\n",
    ["a", "b"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 5, column a: "12x" is not an unsigned 64-bit decimal`,
    2,
  );
  await assertFails(
    "timestamp, a\n1, 18446744073709551616\n",
    ["a"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 2, column a: "18446744073709551616" is not an unsigned 64-bit decimal (max ${U64_MAX})`,
  );
  await assertFails(
    "timestamp,a\n1,2\n-3,4\n",
    ["a"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 3, column timestamp: "-3" is not an unsigned 64-bit decimal`,
    1,
  );
  await assertFails(
    "timestamp,a\n1,\n",
    ["a"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 2, column a: "" is not an unsigned 64-bit decimal`,
  );
});

Deno.test("ReplayCollector rejects a row with the wrong number of fields", async () => {
  await assertFails(
    "timestamp,a,b,c\n1,2,3,4\n\n5,6,7\n",
    ["a"],
    SyntaxError,
    (p) => `Cannot replay ${p}: line 4: expected 4 fields, got 3`,
    1,
  );
  await assertFails(
    "timestamp,a\n1,2,3\n",
    ["a"],
    SyntaxError,
    (p) => `Cannot replay ${p}: line 2: expected 2 fields, got 3`,
  );
});

Deno.test("ReplayCollector rejects malformed CSV with its line and column", async () => {
  await assertFails(
    'timestamp,a,b\n1,2,3\n4,5"x,6\n',
    ["a", "b"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 3, column a: quote inside an unquoted field`,
    1,
  );
  await assertFails(
    'timestamp,a\n1,2\n3,"4\n5,6\n',
    ["a"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 4, column a: quoted field not closed before end of file`,
    1,
  );
  await assertFails(
    'timestamp,"a"b\n',
    ["a"],
    SyntaxError,
    (p) =>
      `Cannot replay ${p}: line 1, column field 2: unexpected character after a closing quote`,
  );
});

Deno.test("ReplayCollector rejects a header without a configured column", async () => {
  await assertFails(
    "timestamp,port_0_rx_bytes\n1,2\n",
    ["port_0_rx_bytes", "port_0_tx_bytes"],
    TypeError,
    (p) =>
      `Cannot replay ${p}: header has no column "port_0_tx_bytes" (has timestamp, port_0_rx_bytes)`,
  );
  await assertFails(
    "1700000000000000000,5\n",
    ["a"],
    TypeError,
    (p) =>
      `Cannot replay ${p}: header has no columns "timestamp", "a" (has 1700000000000000000, 5)`,
  );
  await assertFails(
    'timestamp,"a, b",a,a\n',
    ["a"],
    TypeError,
    (p) => `Cannot replay ${p}: header has column "a" twice (fields 3 and 4)`,
  );
});

Deno.test("ReplayCollector rejects an empty file", async () => {
  const message = (p: string) =>
    `Cannot replay ${p}: no header (the file is empty; expected "timestamp,<column>,...")`;
  await assertFails("", ["a"], TypeError, message);
  await assertFails("\n\r\n  \n", ["a"], TypeError, message);
});

Deno.test("ReplayCollector rejects a missing file or a directory", async () => {
  await using dir = await tempDir("replay_test_");
  const sink = new FakeSink(1);
  const missing = join(dir.path, "nope.csv");
  await assert.rejects(
    new ReplayCollector({ path: missing, columns: cols("a") })
      .run(sink, new AbortController().signal),
    (error: Error) => {
      assert.ok(error instanceof Deno.errors.NotFound);
      assert.equal(error.message, `Cannot replay ${missing}: no such file`);
      return true;
    },
  );
  await assert.rejects(
    new ReplayCollector({ path: dir.path, columns: cols("a") })
      .run(sink, new AbortController().signal),
    (error: Error) => {
      assert.ok(error instanceof Deno.errors.IsADirectory);
      assert.equal(error.message, `Cannot replay ${dir.path}: is a directory`);
      return true;
    },
  );
});

Deno.test("ReplayCollector checks its options and the sink", async () => {
  assert.throws(
    () => new ReplayCollector({ path: "x.csv", columns: [], yieldEvery: 0 }),
    RangeError,
  );
  await withCsv("timestamp,a\n1,2\n", async (path) => {
    await assert.rejects(
      new ReplayCollector({ path, columns: cols("a") })
        .run(new FakeSink(2), new AbortController().signal),
      {
        name: "RangeError",
        message:
          `Cannot replay ${path}: the sink has 2 columns, 1 are configured`,
      },
    );
  });
});

/** Writes `rows` rows of three columns, in chunks, to `path`. */
async function writeLargeCsv(path: string, rows: number): Promise<void> {
  using file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const encoder = new TextEncoder();
  await file.write(encoder.encode("timestamp, rx, tx, ignored\n"));
  const base = 1_700_000_000_000_000_000n;
  for (let start = 0; start < rows; start += 10_000) {
    let text = "";
    for (let i = start; i < Math.min(rows, start + 10_000); i++) {
      text += `${base + BigInt(i) * 100_000n}, ${i * 4096}, ${U64_MAX}, x\n`;
    }
    const bytes = encoder.encode(text);
    for (let off = 0; off < bytes.length;) {
      off += await file.write(bytes.subarray(off));
    }
  }
}

Deno.test("ReplayCollector yields to the event loop and stops when aborted", async () => {
  await using dir = await tempDir("replay_test_");
  const path = join(dir.path, "capture.csv");
  // 500 rows fit in one read, so only the replay's own yields can let
  // the timer run before the end.
  await writeLargeCsv(path, 500);
  const controller = new AbortController();
  const sink = new FakeSink(1, false);
  sink.onCommit = () => {
    if (sink.commits === 150) setTimeout(() => controller.abort(), 0);
  };
  const collector = new ReplayCollector({
    path,
    columns: cols("rx"),
    yieldEvery: 100,
  });
  await collector.run(sink, controller.signal);
  assert.equal(collector.rows, 200);
  assert.equal(sink.commits, 200);

  await writeLargeCsv(path, 50_000);
  // Aborting from within the sink stops at once.
  const again = new AbortController();
  const sink2 = new FakeSink(1, false);
  sink2.onCommit = () => {
    if (sink2.commits === 1234) again.abort();
  };
  await new ReplayCollector({ path, columns: cols("rx") })
    .run(sink2, again.signal);
  assert.equal(sink2.commits, 1234);

  // An already aborted signal reads nothing.
  const sink3 = new FakeSink(1);
  await new ReplayCollector({ path, columns: cols("rx") })
    .run(sink3, AbortSignal.abort());
  assert.equal(sink3.commits, 0);
});

Deno.test("ReplayCollector streams a large file without keeping rows", async () => {
  const rows = 200_000;
  await using dir = await tempDir("replay_test_");
  const path = join(dir.path, "capture.csv");
  await writeLargeCsv(path, rows);
  const gc = (globalThis as { gc?: () => void }).gc;
  const sink = new FakeSink(2, false);
  let heapEarly = 0;
  let heapLate = 0;
  sink.onCommit = () => {
    // Sampled well after start-up so the parser's steady state is in both.
    if (sink.commits === 20_000 || sink.commits === rows) {
      gc?.();
      const used = Deno.memoryUsage().heapUsed;
      if (sink.commits === 20_000) heapEarly = used;
      else heapLate = used;
    }
  };
  const collector = new ReplayCollector({ path, columns: cols("tx", "rx") });
  await collector.run(sink, new AbortController().signal);
  assert.equal(collector.rows, rows);
  assert.deepEqual(sink.last, [
    String(1_700_000_000_000_000_000n + BigInt(rows - 1) * 100_000n),
    U64_MAX,
    String((rows - 1) * 4096),
  ]);
  // Keeping 180k rows would take tens of MiB; garbage not yet collected
  // (no --expose-gc) stays within a few.
  const growth = heapLate - heapEarly;
  assert.ok(growth < 8 * 1024 * 1024, `heap grew ${growth} bytes`);
});
