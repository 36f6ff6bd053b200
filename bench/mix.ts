/**
 * The benchmark workload, defined once: the 16 synthetic columns, the
 * deterministic data generator's parameters and the 16-rule mixes of each
 * case. `engine.ts` imports it; `run.ts` hands the same definition to
 * `engine.c` as text ({@linkcode specText}), so the two engines cannot drift
 * apart in what they are fed or which rules they run. The signal-rule
 * cases (`signal`, `both`) run in Deno only: `engine.c` knows the five
 * reference types and nothing else.
 *
 * Run it to print a case's spec for driving `engine.c` by hand:
 *
 * ```sh
 * deno run bench/mix.ts idle > /tmp/idle.spec
 * /tmp/engine /tmp < /tmp/idle.spec
 * ```
 *
 * @module
 */

import {
  type ComparisonType,
  isReferenceRule,
  type SignalRuleConfig,
} from "../config/types.ts";

/** A column the generator keeps a running total for (a counter). */
export const COUNTER = 0;
/** A column the generator overwrites each sample (a gauge). */
export const GAUGE = 1;

/**
 * One synthetic column. Each sample draws `base + (xorshift32() & mask)`:
 * a counter adds it to its running total (wrapping mod 2^64), a gauge
 * takes it as its value.
 */
export interface BenchColumn {
  readonly name: string;
  readonly dataId: string;
  readonly kind: typeof COUNTER | typeof GAUGE;
  /** Counter value before the first sample (ignored for gauges). */
  readonly start: bigint;
  readonly base: number;
  readonly mask: number;
}

/** One rule of a case's mix. */
export interface BenchRule {
  readonly name: string;
  readonly column: number;
  readonly comparisonType: ComparisonType;
  readonly comparisonValue: bigint;
}

/** Everything one case runs: depth, sample counts and the rule mix. */
export interface BenchCase {
  readonly name: string;
  /** What the case shows, for the report. */
  readonly description: string;
  readonly depth: number;
  /** Samples of the untimed warm-up repetition. */
  readonly warmupSamples: number;
  /** Samples fed before each timed loop, untimed (fills the ring). */
  readonly prefillSamples: number;
  /** Samples per timed loop. */
  readonly samples: number;
  readonly reps: number;
  /** Samples between yields to the event loop (Deno only; C never yields). */
  readonly batch: number;
  /** Reference rules ({@linkcode BenchRule}) and, Deno only, signal rules. */
  readonly rules: readonly (BenchRule | SignalRuleConfig)[];
  /** Keep the events log so run.ts can compare the two files. */
  readonly keepLog: boolean;
  /**
   * No rule may start: the case measures the path with no event active,
   * so a rule that fires would measure something else. run.ts fails if
   * one does, and engine.ts measures the allocation of the per-sample path.
   */
  readonly quiet: boolean;
}

/** Sample period in ns: the timestamp column's fixed step. */
export const PERIOD_NS = 100_000;

/**
 * Records in the generator's draw table. A power of two so the generator
 * wraps with a mask; the table is filled once, before anything is timed.
 */
export const TABLE_RECORDS = 4096;

/** Seed of the generator's xorshift32 (Marsaglia's example seed). */
export const SEED = 2463534242;

/**
 * Samples a collector delivers between yields to the event loop in the
 * throughput cases: the reference polls up to `depth` samples per call.
 */
export const BATCH = 1024;

/**
 * The timestamp, then 16 data columns shaped like a busy 100 GbE port's diag
 * counters after weeks of uptime: several counters are above 2^53 (exact-u64
 * paths in comparisons and formatting), `port_1_rx_bytes` wraps through
 * 2^64 after about 44,000 samples, and the last four are gauges.
 * Counters come first: the generator relies on that order.
 */
export const COLUMNS: readonly BenchColumn[] = [
  // Index 0 is the timestamp (ns since the epoch, 2026-05-28), not a data ID.
  timestamp(),
  counter(
    "port_0_rx_bytes",
    0x1020000100000000n,
    20_000_000_000_000_000n,
    1_000_000,
    0x3ffff,
  ),
  counter(
    "port_0_tx_bytes",
    0x1140000100000000n,
    18_000_000_000_000_000n,
    900_000,
    0x3ffff,
  ),
  counter(
    "port_0_rx_packets",
    0x1020000300000000n,
    5_000_000_000_000n,
    800,
    0x1ff,
  ),
  counter(
    "port_0_tx_packets",
    0x1140000300000000n,
    4_500_000_000_000n,
    700,
    0x1ff,
  ),
  counter("port_0_rx_discard", 0x1020000500000000n, 80_000_000n, 0, 0x1),
  counter("port_0_ecn_marked", 0x1080000400000000n, 30_000_000_000n, 0, 0xf),
  counter("port_0_cnp_handled", 0x1080000500000000n, 12_000_000_000n, 0, 0x7),
  counter("port_0_cnp_sent", 0x1100000100000000n, 8_000_000_000n, 0, 0x7),
  counter("port_0_prio3_rx_pause", 0x1020000603000000n, 3_000_000_000n, 0, 0x3),
  counter("port_0_prio3_tx_pause", 0x1140000503000000n, 1_500_000_000n, 0, 0x3),
  counter(
    "port_1_rx_bytes",
    0x1020000101000000n,
    (1n << 64n) - (1n << 36n),
    1 << 20,
    (1 << 20) - 1,
  ),
  counter(
    "port_1_tx_bytes",
    0x1140000101000000n,
    1n << 55n,
    1_000_000,
    0x3ffff,
  ),
  gauge("max_read_latency_ns", 0x1160000d00000000n, 500, 0x3ff),
  gauge("rx_buffer_occupancy", 0x1020000700000000n, 0, 0xffff),
  gauge("tx_buffer_occupancy", 0x1140000700000000n, 0, 0xffff),
  gauge("pcie_latency_ns", 0x1160000e00000000n, 200, 0xff),
];

function timestamp(): BenchColumn {
  return {
    name: "timestamp",
    dataId: "",
    kind: COUNTER,
    start: 1_780_000_000_000_000_000n,
    base: PERIOD_NS,
    mask: 0,
  };
}

function counter(
  name: string,
  id: bigint,
  start: bigint,
  base: number,
  mask: number,
): BenchColumn {
  return { name, dataId: hexId(id), kind: COUNTER, start, base, mask };
}

function gauge(
  name: string,
  id: bigint,
  base: number,
  mask: number,
): BenchColumn {
  return { name, dataId: hexId(id), kind: GAUGE, start: 0n, base, mask };
}

function hexId(id: bigint): string {
  return "0x" + id.toString(16).padStart(16, "0");
}

// Column indices as rules see them (data columns, timestamp excluded).
const RX_BYTES = 0;
const TX_BYTES = 1;
const RX_PACKETS = 2;
const TX_PACKETS = 3;
const RX_DISCARD = 4;
const ECN = 5;
const CNP_SENT = 7;
const PRIO3_RX_PAUSE = 8;
const PRIO3_TX_PAUSE = 9;
const P1_RX_BYTES = 10;
const P1_TX_BYTES = 11;
const LATENCY = 12;
const RX_OCCUPANCY = 13;
const TX_OCCUPANCY = 14;
const PCIE_LATENCY = 15;

function rule(
  comparisonType: ComparisonType,
  column: number,
  value: bigint,
  name: string,
): BenchRule {
  return { name, column, comparisonType, comparisonValue: value };
}

/**
 * The idle mix: 3 gt, 3 lt, 4 dt_gt, 3 dt_lt, 3 inc_gt over 12 different
 * columns, every threshold just outside what the generator can produce, so
 * every rule runs its full comparison on every sample and none ever fires.
 * (An inc_gt on a monotonic counter always fires eventually, because its
 * target only moves on a match; the idle inc_gt rules watch gauges.)
 */
function idleRules(): BenchRule[] {
  return [
    rule("gt", LATENCY, 1_000_000n, "read latency > 1 ms"),
    rule("gt", RX_OCCUPANCY, 65_535n, "rx buffer overflow"),
    rule("gt", P1_TX_BYTES, 1n << 63n, "port 1 tx bytes > 2^63"),
    rule("lt", PCIE_LATENCY, 200n, "pcie latency < 200 ns"),
    rule("lt", RX_BYTES, 1_000n, "rx bytes < 1000"),
    rule("lt", RX_PACKETS, 1_000n, "rx packets < 1000"),
    // Per 1024 samples (102.4 ms) the counters move by at most
    // 1024 * (base + mask): these sit just above or below that range.
    rule("dt_gt", RX_BYTES, 1_400_000_000n, "rx > 109 Gb/s"),
    rule("dt_gt", RX_DISCARD, 1_024n, "rx discards > 1 per sample"),
    rule("dt_gt", P1_RX_BYTES, 1n << 32n, "port 1 rx > 335 Gb/s"),
    rule("dt_gt", ECN, 16_384n, "ecn marks > 16 per sample"),
    rule("dt_lt", TX_BYTES, 921_600_000n, "tx < 72 Gb/s"),
    rule("dt_lt", TX_PACKETS, 716_800n, "tx packets < 700 per sample"),
    rule("dt_lt", P1_RX_BYTES, 1n << 30n, "port 1 rx < 82 Gb/s"),
    rule("inc_gt", RX_OCCUPANCY, 70_000n, "rx buffer jumps by 70000"),
    rule("inc_gt", TX_OCCUPANCY, 70_000n, "tx buffer jumps by 70000"),
    rule("inc_gt", LATENCY, 2_000n, "read latency jumps by 2 us"),
  ];
}

/**
 * The event mix: the idle mix with rule 13 moved to rx bytes and a
 * threshold every sample meets (each sample adds at least 1,000,000), so it
 * fires on the second sample and stays active: every later sample is a row
 * in events.log. Same kinds, same count.
 */
function eventRules(): BenchRule[] {
  const rules = idleRules();
  rules[13] = rule("inc_gt", RX_BYTES, 1_000_000n, "rx bytes rising");
  return rules;
}

/**
 * The cross-check mix: depth 8 and thresholds near the middle of each
 * column's range, so rules start and end thousands of times (history
 * dumps, overlapping events, the 2^64 wrap). Not a throughput case: it
 * proves the two engines make the same decisions and write the same log.
 */
function churnRules(): BenchRule[] {
  const at = (samples: number, step: number, start: bigint) =>
    start + BigInt(samples * step);
  return [
    // Medians: about one start per 500 samples (8 matches in a row).
    rule("gt", LATENCY, 1_011n, "read latency above median"),
    rule("gt", RX_OCCUPANCY, 32_767n, "rx buffer above half"),
    // Counters crossing a line once: one long event each.
    rule("gt", P1_TX_BYTES, at(50_000, 1_131_072, 1n << 55n), "port 1 tx late"),
    rule("lt", PCIE_LATENCY, 328n, "pcie latency below median"),
    rule("lt", RX_BYTES, at(30_000, 1_131_072, COLUMNS[1].start), "rx early"),
    rule("lt", RX_PACKETS, at(1_000, 1_056, COLUMNS[3].start), "rx pk early"),
    // About 2.5 standard deviations from the mean change over 8 samples.
    rule("dt_gt", RX_BYTES, 9_583_672n, "rx burst"),
    rule("dt_gt", RX_DISCARD, 6n, "discard burst"),
    rule("dt_gt", P1_RX_BYTES, 14_723_358n, "port 1 rx burst"),
    rule("dt_gt", ECN, 93n, "ecn burst"),
    rule("dt_lt", TX_BYTES, 7_713_472n, "tx dip"),
    rule("dt_lt", TX_PACKETS, 6_599n, "tx packets dip"),
    // Across the 2^64 wrap of port_1_rx_bytes, too.
    rule("dt_lt", P1_RX_BYTES, 10_442_458n, "port 1 rx dip"),
    // The target stays put until reached: one short event per ~200 samples.
    rule("inc_gt", RX_DISCARD, 100n, "100 discards since target"),
    // Gauges: the first target may be out of reach for good.
    rule("inc_gt", TX_OCCUPANCY, 40_000n, "tx buffer jumps"),
    rule("inc_gt", LATENCY, 900n, "read latency jumps"),
  ];
}

const US = 1_000;
const MS = 1_000_000;

/** A signal rule with the configuration's defaults for what `config` leaves out. */
function signalRule(
  config:
    & Pick<
      SignalRuleConfig,
      "name" | "signal" | "column" | "direction" | "threshold"
    >
    & Partial<SignalRuleConfig>,
): SignalRuleConfig {
  return {
    windowNs: 0,
    clear: config.threshold,
    forNs: 0,
    keepFiringForNs: 0,
    severity: "warning",
    ...config,
  };
}

/**
 * The signal mix: 16 rules in the operator's terms (docs/spec/signal-rules.md),
 * built as the loader would normalize them: 7 rates over 1 ms with `for`
 * and `keep_firing_for`, 4 ratios over 1 ms, 3 M-of-N rules on the
 * per-sample increase and 2 value rules, over 13 columns. No threshold is
 * ever reached, so none starts and no row is written (the case is
 * `quiet`), but every rule computes its signal and tracks its raise and
 * clear runs on every sample.
 *
 * A 1 ms window is 10 samples (the period is 100 us), so a rate is the sum
 * of the last 10 draws x 1,000 per second; each draw lies in
 * [base, base + mask] of its column (see {@linkcode COLUMNS}). Some clear
 * levels sit inside the column's range on purpose: the clear run then
 * starts and stops as the data moves, as it does on a live port.
 */
function signalRules(): SignalRuleConfig[] {
  const window = { windowNs: MS };
  return [
    // At most 15 marks a sample: 150,000/s, under even the clear level.
    signalRule({
      name: "ECN storm",
      signal: "rate",
      column: ECN,
      ...window,
      direction: "above",
      threshold: 1_000_000,
      clear: 200_000,
      forNs: 500 * US,
      keepFiringForNs: 10 * MS,
      severity: "critical",
      summary: "ECN marks above 1M/s on port 0",
    }),
    // At most 1 a sample: 10,000/s.
    signalRule({
      name: "rx discard rate",
      signal: "rate",
      column: RX_DISCARD,
      ...window,
      direction: "above",
      threshold: 100_000,
      clear: 50_000,
      forNs: 200 * US,
      keepFiringForNs: 5 * MS,
    }),
    // 1.0e10 to 1.262e10 B/s; the clear level 1.25e10 is inside the range.
    signalRule({
      name: "rx above 104 Gb/s",
      signal: "rate",
      column: RX_BYTES,
      ...window,
      direction: "above",
      threshold: 13e9,
      clear: 12.5e9,
      forNs: 500 * US,
      keepFiringForNs: MS,
    }),
    // Up to 2.1e10 B/s, across the column's wrap through 2^64.
    signalRule({
      name: "port 1 rx above 176 Gb/s",
      signal: "rate",
      column: P1_RX_BYTES,
      ...window,
      direction: "above",
      threshold: 22e9,
      forNs: MS,
      keepFiringForNs: MS,
    }),
    // At least 9e9 B/s.
    signalRule({
      name: "tx below 64 Gb/s",
      signal: "rate",
      column: TX_BYTES,
      ...window,
      direction: "below",
      threshold: 8e9,
      clear: 8.5e9,
      forNs: 500 * US,
      keepFiringForNs: 2 * MS,
    }),
    // At most 70,000/s.
    signalRule({
      name: "CNP storm",
      signal: "rate",
      column: CNP_SENT,
      ...window,
      direction: "above",
      threshold: 100_000,
      forNs: 500 * US,
      keepFiringForNs: 10 * MS,
    }),
    // At least 8,000,000/s.
    signalRule({
      name: "rx packet rate collapse",
      signal: "rate",
      column: RX_PACKETS,
      ...window,
      direction: "below",
      threshold: 5_000_000,
      forNs: MS,
      keepFiringForNs: MS,
    }),
    // At most 10 of at least 8,000 packets: 0.125 %.
    signalRule({
      name: "rx discards over 0.2 %",
      signal: "ratio",
      column: RX_DISCARD,
      denominator: RX_PACKETS,
      ...window,
      direction: "above",
      threshold: 0.002,
      forNs: 500 * US,
    }),
    // At most 150 of at least 8,000: 1.9 %; the clear level 1 % is inside.
    signalRule({
      name: "ECN-marked share over 5 %",
      signal: "ratio",
      column: ECN,
      denominator: RX_PACKETS,
      ...window,
      direction: "above",
      threshold: 0.05,
      clear: 0.01,
      forNs: MS,
      keepFiringForNs: 5 * MS,
    }),
    // At least 7,000 of at most 13,110: 0.53.
    signalRule({
      name: "tx/rx packets below 0.25",
      signal: "ratio",
      column: TX_PACKETS,
      denominator: RX_PACKETS,
      ...window,
      direction: "below",
      threshold: 0.25,
      forNs: 500 * US,
    }),
    // At most 30 of at least 7,000: 0.43 %.
    signalRule({
      name: "pauses sent over 1 % of tx packets",
      signal: "ratio",
      column: PRIO3_TX_PAUSE,
      denominator: TX_PACKETS,
      ...window,
      direction: "above",
      threshold: 0.01,
      keepFiringForNs: 2 * MS,
    }),
    // Increases of at most 3, 15 and 1 a sample: never above.
    signalRule({
      name: "pause bursts, 3 of 5",
      signal: "increase",
      column: PRIO3_RX_PAUSE,
      direction: "above",
      threshold: 3n,
      mOfN: { m: 3, n: 5 },
    }),
    signalRule({
      name: "ECN bursts, 2 of 4",
      signal: "increase",
      column: ECN,
      direction: "above",
      threshold: 15n,
      mOfN: { m: 2, n: 4 },
    }),
    signalRule({
      name: "discard bursts, 3 of 10",
      signal: "increase",
      column: RX_DISCARD,
      direction: "above",
      threshold: 1n,
      mOfN: { m: 3, n: 10 },
      keepFiringForNs: MS,
    }),
    // At most 1,523 ns.
    signalRule({
      name: "read latency above 1 ms",
      signal: "value",
      column: LATENCY,
      direction: "above",
      threshold: 1_000_000n,
      forNs: 500 * US,
    }),
    // At most 65,535; the clear level 60,000 is inside the range.
    signalRule({
      name: "rx buffer overflow",
      signal: "value",
      column: RX_OCCUPANCY,
      direction: "above",
      threshold: 65_535n,
      clear: 60_000n,
      keepFiringForNs: MS,
    }),
  ];
}

/** What the signal-rule cases (`signal`, `both`) share. */
const SIGNAL_CASE = {
  depth: 1024,
  warmupSamples: 1_000_000,
  prefillSamples: 4 * 1024,
  samples: 2_000_000,
  reps: 5,
  batch: BATCH,
  keepLog: false,
  quiet: true,
} as const;

/** The cases, by name. */
export const CASES: Readonly<Record<string, BenchCase>> = {
  idle: {
    name: "idle",
    description: "no event active (16 rules evaluated, no rows written)",
    depth: 1024,
    warmupSamples: 1_000_000,
    prefillSamples: 4 * 1024,
    samples: 5_000_000,
    reps: 5,
    batch: BATCH,
    rules: idleRules(),
    keepLog: false,
    quiet: true,
  },
  event: {
    name: "event",
    description:
      "event active all the time (every sample formatted into events.log)",
    depth: 1024,
    warmupSamples: 200_000,
    prefillSamples: 4 * 1024,
    samples: 1_000_000,
    reps: 5,
    batch: BATCH,
    rules: eventRules(),
    keepLog: false,
    quiet: false,
  },
  base: {
    name: "base",
    description: "no rules: the generator, claim() and commit() alone",
    depth: 1024,
    warmupSamples: 1_000_000,
    prefillSamples: 4 * 1024,
    samples: 5_000_000,
    reps: 5,
    batch: BATCH,
    rules: [],
    keepLog: false,
    quiet: true,
  },
  signal: {
    ...SIGNAL_CASE,
    name: "signal",
    description:
      "16 signal rules, no event active (rates, ratios, M of N, values; Deno only)",
    rules: signalRules(),
  },
  both: {
    ...SIGNAL_CASE,
    name: "both",
    description:
      "the idle reference mix and the signal mix together, 32 rules, no event active (Deno only)",
    rules: [...idleRules(), ...signalRules()],
  },
  churn: {
    name: "churn",
    description: "cross-check only: depth 8, rules start and end constantly",
    depth: 8,
    warmupSamples: 0,
    prefillSamples: 0,
    samples: 100_000,
    reps: 1,
    batch: BATCH,
    rules: churnRules(),
    keepLog: true,
    quiet: false,
  },
};

/**
 * Whether `engine.c` runs the case too: it implements the reference rules
 * only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CASES, runsInC } from "./mix.ts";
 *
 * assert.equal(runsInC(CASES.idle), true);
 * assert.equal(runsInC(CASES.signal), false);
 * ```
 */
export function runsInC(benchCase: BenchCase): boolean {
  return benchCase.rules.every(isReferenceRule);
}

const KIND_CODES: Readonly<Record<ComparisonType, number>> = {
  gt: 0,
  lt: 1,
  dt_gt: 2,
  dt_lt: 3,
  inc_gt: 4,
};

/**
 * The case as the line-oriented text `engine.c` reads on stdin. u64 values
 * travel as decimal strings (exact above 2^53); a name is the rest of its
 * line. Throws a TypeError for a case with signal rules, which `engine.c`
 * does not implement.
 */
export function specText(benchCase: BenchCase): string {
  const lines = [
    `case ${benchCase.name}`,
    `depth ${benchCase.depth}`,
    `samples ${benchCase.warmupSamples} ${benchCase.prefillSamples} ${benchCase.samples} ${benchCase.reps}`,
    `generator ${SEED} ${TABLE_RECORDS}`,
    `keep ${benchCase.keepLog ? 1 : 0}`,
  ];
  for (const c of COLUMNS) {
    lines.push(`column ${c.kind} ${c.start} ${c.base} ${c.mask} ${c.name}`);
  }
  for (const r of benchCase.rules) {
    if (!isReferenceRule(r)) {
      throw new TypeError(
        `Cannot describe case ${benchCase.name} to engine.c: rule "${r.name}" is a signal rule`,
      );
    }
    lines.push(
      `rule ${
        KIND_CODES[r.comparisonType]
      } ${r.column} ${r.comparisonValue} ${r.name}`,
    );
  }
  lines.push("end", "");
  return lines.join("\n");
}

/** The case named by the first command-line argument (default idle); exits 2 if unknown. */
export function caseFromArgs(): BenchCase {
  const name = Deno.args[0] ?? "idle";
  const benchCase = CASES[name];
  if (benchCase === undefined) {
    console.error(
      `Unknown case "${name}"; expected one of ${
        Object.keys(CASES).join(", ")
      }`,
    );
    Deno.exit(2);
  }
  return benchCase;
}

if (import.meta.main) {
  const benchCase = caseFromArgs();
  Deno.stdout.writeSync(new TextEncoder().encode(specText(benchCase)));
}
