import assert from "node:assert/strict";
import { join } from "node:path";
import { ReplayCollector } from "../../collectors/replay.ts";
import type {
  ColumnConfig,
  ComparisonType,
  RuleConfig,
  SignalRuleConfig,
} from "../../config/types.ts";
import { EventsLog } from "../../events/log.ts";
import { Monitor } from "../../rules/monitor.ts";
import { tempDir } from "../temp_dir.ts";

const SAMPLES = 1_000_000;
const COLUMNS = 16;
const DEPTH = 1024;

// The heap is measured after a full collection: the slow tier's task runs
// with --v8-flags=--expose-gc, and without it this file fails rather than
// skips.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  throw new Error("replay_memory_test.ts needs --v8-flags=--expose-gc");
}

const columns: ColumnConfig[] = Array.from({ length: COLUMNS }, (_, i) => ({
  name: `counter_${i}`,
  dataId: `0x10200001000000${i.toString(16).padStart(2, "0")}`,
}));

// All five types over every column, tuned so that events start and end at
// each burst and quiet spell (about 4 of each) rather than run throughout:
// gt/lt on absolute counters would stay active and log every sample.
const TYPES: ComparisonType[] = ["dt_gt", "inc_gt", "dt_lt", "gt", "lt"];
const rules: RuleConfig[] = columns.map((_, c) => {
  const type = TYPES[c % TYPES.length];
  const step = BigInt(c + 1);
  const value = {
    dt_gt: step * 10_000n, // normal rise over 1024 samples is step * 1024
    inc_gt: step * 50n, // normal step is `step`, bursts 100 x step
    dt_lt: step * 100n, // only a quiet spell rises this little
    gt: 1n << 63n, // never: the cost of evaluating without firing
    lt: 0n, // never
  }[type];
  return {
    name: `rule_${c}`,
    column: c,
    comparisonType: type,
    comparisonValue: value,
  };
});

/**
 * Writes the capture: counters rising by a column-specific step, with a
 * 2,000-sample burst (100 x) and a 2,000-sample quiet spell (no rise) in
 * every 250,000 samples. With `shift`, column c's pattern runs c x shift
 * samples ahead of column 0's, so columns burst and rest at different
 * times and their ratios move.
 */
async function writeCapture(path: string, shift = 0): Promise<void> {
  const file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const encoder = new TextEncoder();
  const writer = file.writable.getWriter();
  await writer.write(
    encoder.encode(
      ["timestamp", ...columns.map((c) => c.name)].join(",") + "\n",
    ),
  );
  const values = new Array<number>(COLUMNS).fill(0);
  let lines: string[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    for (let c = 0; c < COLUMNS; c++) {
      const phase = (i + c * shift) % 250_000;
      const factor = phase < 2000
        ? 0
        : phase >= 100_000 && phase < 102_000
        ? 100
        : 1;
      values[c] += (c + 1) * factor;
    }
    lines.push(
      `${1795272600000000000n + BigInt(i) * 100000n},${values.join(",")}`,
    );
    if (lines.length === 10_000) {
      await writer.write(encoder.encode(lines.join("\n") + "\n"));
      lines = [];
    }
  }
  await writer.write(encoder.encode(lines.join("\n") + "\n"));
  await writer.close();
}

/**
 * Replays `capture` into a monitor with `rules` and an events log in
 * `dir`, and reads the heap after a full GC before and after the replay.
 */
async function replayMeasured(
  dir: string,
  capture: string,
  rules: readonly RuleConfig[],
) {
  const log = await EventsLog.open({
    path: join(dir, "events.log"),
    version: "memory test",
    device: "replay",
    depth: DEPTH,
    samplePeriodNs: 100000,
    columns,
    rules,
  });
  const monitor = new Monitor(
    { name: "nic", depth: DEPTH, columns, rules },
    log,
  );
  const replay = new ReplayCollector({ path: capture, columns });
  gc!();
  const before = Deno.memoryUsage().heapUsed;
  await replay.run(monitor, new AbortController().signal);
  gc!();
  const after = Deno.memoryUsage().heapUsed;
  await log.close();
  return { monitor, log, before, after };
}

Deno.test({
  name:
    "replaying 1,000,000 samples x 16 data IDs x 16 rules leaves the heap within 2 MB",
  async fn() {
    await using dir = await tempDir();
    const capture = join(dir.path, "capture.csv");
    await writeCapture(capture);
    const { monitor, log, before, after } = await replayMeasured(
      dir.path,
      capture,
      rules,
    );
    assert.equal(monitor.samples, SAMPLES);
    assert.ok(
      monitor.events >= 8,
      `the capture fires rules (${monitor.events} events)`,
    );
    assert.equal(log.stats.droppedRows, 0);
    assert.ok(
      Math.abs(after - before) < 2 * 1024 * 1024,
      `heap before ${before} B, after ${after} B (${monitor.events} events)`,
    );
  },
});

// Sixteen signal rules, two of each of eight kinds, over column c with
// step s = c + 1 a sample (a rate of s x 10,000/s; 100 x in a burst, 0 in
// a quiet spell). All but the value rules fire at each burst or quiet
// spell of their column (or a neighbour's, for ratios), 4 times in all.
const MS = 1_000_000;
const US = 1_000;
const signalRules: RuleConfig[] = columns.map((_, c): SignalRuleConfig => {
  const s = c + 1;
  const base = {
    name: `signal_${c}`,
    column: c,
    windowNs: 0,
    forNs: 0,
    keepFiringForNs: 0,
  };
  const kinds: SignalRuleConfig[] = [
    // A burst, by rate with a clear level, for and keep_firing_for.
    {
      ...base,
      signal: "rate",
      windowNs: 1 * MS,
      direction: "above",
      threshold: s * 500_000,
      clear: s * 200_000,
      forNs: 500 * US,
      keepFiringForNs: 2 * MS,
    },
    // A quiet spell, by rate.
    {
      ...base,
      signal: "rate",
      windowNs: 1 * MS,
      direction: "below",
      threshold: s * 5_000,
      clear: s * 8_000,
      forNs: 200 * US,
      keepFiringForNs: 1 * MS,
    },
    // This column bursting while the next does not.
    {
      ...base,
      signal: "ratio",
      denominator: (c + 1) % COLUMNS,
      windowNs: 1 * MS,
      direction: "above",
      threshold: 2,
      clear: 1.5,
      keepFiringForNs: 1 * MS,
    },
    // This column resting, or the previous one bursting.
    {
      ...base,
      signal: "ratio",
      denominator: (c + COLUMNS - 1) % COLUMNS,
      windowNs: 1 * MS,
      direction: "below",
      threshold: 0.1,
      clear: 0.5,
    },
    // A burst, by increase, 3 of the last 5 samples.
    {
      ...base,
      signal: "increase",
      direction: "above",
      threshold: BigInt(10 * s),
      clear: BigInt(10 * s),
      mOfN: { m: 3, n: 5 },
    },
    // A quiet spell, by increase, for 1 ms.
    {
      ...base,
      signal: "increase",
      direction: "below",
      threshold: 1n,
      clear: 1n,
      forNs: 1 * MS,
      keepFiringForNs: 500 * US,
    },
    // Never: the cost of a value rule that does not fire.
    {
      ...base,
      signal: "value",
      direction: "above",
      threshold: 1n << 63n,
      clear: 1n << 62n,
    },
    // A burst, by rate, 5 of the last 10 samples.
    {
      ...base,
      signal: "rate",
      windowNs: 1 * MS,
      direction: "above",
      threshold: s * 300_000,
      clear: s * 300_000,
      mOfN: { m: 5, n: 10 },
      keepFiringForNs: 1 * MS,
    },
  ];
  return kinds[c % kinds.length];
});

Deno.test({
  name:
    "replaying 1,000,000 samples x 16 data IDs x 16 signal rules leaves the heap within 2 MB",
  async fn() {
    await using dir = await tempDir();
    const capture = join(dir.path, "capture.csv");
    await writeCapture(capture, 3000);
    const { monitor, log, before, after } = await replayMeasured(
      dir.path,
      capture,
      signalRules,
    );
    assert.equal(monitor.samples, SAMPLES);
    const activations = monitor.rules.map((r) => r.activations);
    activations.forEach((n, c) => {
      const firing = c % 8 !== 6; // the value rules never fire
      assert.ok(
        firing ? n >= 4 : n === 0,
        `rule ${c} started ${n} times: ${activations.join(" ")}`,
      );
    });
    assert.equal(log.stats.droppedRows, 0);
    assert.ok(
      after - before <= 2 * 1024 * 1024,
      `heap before ${before} B, after ${after} B (${monitor.events} events)`,
    );
  },
});
