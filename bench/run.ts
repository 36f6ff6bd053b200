/**
 * `deno task bench`: compiles bench/engine.c, runs it and bench/engine.ts
 * on the same workload, checks that they did the same work, and prints a
 * comparison table with the machine it ran on.
 *
 * ```sh
 * deno task bench                # 3 rounds
 * deno task bench --rounds 5
 * deno task bench --cases idle,signal,both   # only these cases
 * deno task bench --check       # only prove C and Deno do the same work (tests run this)
 * ```
 *
 * The signal-rule cases (`signal`, `both`) run in Deno only (engine.c has
 * the five reference types alone); they are reported against the reference
 * mix (`idle`) of the same round.
 *
 * Throughput on a shared machine drifts by tens of percent within seconds,
 * so each round runs C and Deno back to back (alternating which goes
 * first) and the C/Deno ratio is taken per round, from runs that saw the
 * same machine. Raw JSON lines of the last run go to bench/out/last-run.jsonl.
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";
import { errorMessage } from "../base/error_message.ts";
import { CASES, runsInC, specText } from "./mix.ts";
import type { BenchCase } from "./mix.ts";
import { PEAK } from "../events/markers.ts";

const HERE = new URL("./", import.meta.url);
const decoder = new TextDecoder();

/** Throughput targets the engine is reported against. */
const TARGET_IDLE_SAMPLES_PER_S = 1_000_000;
const TARGET_MAX_RATIO = 3;
/** The cases the targets apply to; `base` is context, not a goal. */
const TARGET_CASES = ["idle", "event"];
/** The cases a plain `deno task bench` runs, in this order each round. */
const DEFAULT_CASES = ["idle", "event", "base", "signal", "both"];
/** The no-event targets: >= 1,000,000 samples/s for each. */
const QUIET_TARGET_CASES = ["idle", "signal"];

/** A summary line as both engines print it. */
interface Summary {
  readonly engine: "deno" | "c";
  readonly case: string;
  readonly median_samples_per_s: number;
  readonly median_close_s: number;
  readonly median_samples_per_s_with_close: number;
  readonly max_heap_growth_bytes?: number;
  readonly max_heap_retained_bytes?: number | null;
  readonly max_alloc_bytes_per_sample?: number | null;
  readonly checksum: Record<string, unknown> & { transitions?: number };
  readonly log_path: string | null;
  readonly log_header_bytes: number;
  readonly runtime?: string;
}

/** A per-repetition line. */
interface Rep {
  readonly engine: "deno" | "c";
  readonly case: string;
  readonly samples: number;
  readonly samples_per_s: number;
  readonly close_s: number;
  readonly heap_growth_bytes?: number;
}

/** What one engine process printed. */
interface EngineRun {
  readonly summary: Summary;
  readonly reps: Rep[];
  readonly lines: string[];
}

async function output(
  command: string,
  args: string[],
  stdin?: string,
): Promise<string> {
  const child = new Deno.Command(command, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "inherit", // the engines' human lines show progress
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const { code, stdout } = await child.output();
  if (code !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with code ${code}`);
  }
  return decoder.decode(stdout);
}

function parseRun(stdout: string): EngineRun {
  const lines = stdout.split("\n").filter((l) => l.startsWith("{"));
  const parsed = lines.map((l) => JSON.parse(l));
  const summary = parsed.find((p) => p.summary === true);
  if (summary === undefined) throw new Error("Engine printed no summary");
  return { summary, reps: parsed.filter((p) => p.summary !== true), lines };
}

function runC(binary: string, benchCase: BenchCase, dir: string) {
  return output(binary, [dir], specText(benchCase)).then(parseRun);
}

function runDeno(benchCase: BenchCase, dir: string) {
  return output(Deno.execPath(), [
    "run",
    // For gc() around the timed loop: heap growth is measured, not guessed.
    "--v8-flags=--expose-gc",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    fromFileUrl(new URL("engine.ts", HERE)),
    benchCase.name,
    dir,
  ]).then(parseRun);
}

/**
 * Compares the two events logs of a kept case: the Deno one after its
 * header block and without its `<<Peak>>` lines (ours: the C loop keeps no
 * peaks), the C one whole, with marker times (wall clock, which differs
 * between the runs) skipped. Returns the number of bytes compared.
 */
async function compareLogs(deno: Summary, c: Summary): Promise<number> {
  const a = withoutLines(
    (await Deno.readFile(deno.log_path!)).subarray(deno.log_header_bytes),
    new TextEncoder().encode(PEAK),
  );
  const b = await Deno.readFile(c.log_path!);
  if (a.length !== b.length) {
    throw new Error(
      `Logs differ in length: Deno ${a.length} B, C ${b.length} B`,
    );
  }
  const time = new TextEncoder().encode("Time: ");
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    // Inside a marker's `Time: YYYY-MM-DDTHH:MM:SSZ`? Skip to its end.
    const line = a.lastIndexOf(10, i) + 1;
    let t = line;
    while (t < i && a[t] !== 84 /* T of "Time: " */) t++;
    const isTime = time.every((byte, j) => a[t + j] === byte) &&
      i < t + time.length + 20;
    if (!isTime) {
      const text = decoder.decode(a.subarray(line, a.indexOf(10, i)));
      throw new Error(`Logs differ at byte ${i}, in line: ${text}`);
    }
    i = t + time.length + 19;
  }
  return a.length;
}

/** `text` without the lines that begin with `prefix`. */
function withoutLines(text: Uint8Array, prefix: Uint8Array): Uint8Array {
  const out = new Uint8Array(text.length);
  let n = 0;
  for (let line = 0; line < text.length;) {
    let end = text.indexOf(10, line);
    end = end < 0 ? text.length : end + 1;
    if (!prefix.every((byte, j) => text[line + j] === byte)) {
      out.set(text.subarray(line, end), n);
      n += end - line;
    }
    line = end;
  }
  return out.subarray(0, n);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function millions(n: number): string {
  return `${(n / 1e6).toFixed(2)} M`;
}

async function machine(): Promise<Record<string, string>> {
  // Deno wants --allow-all to read /proc/cpuinfo itself; cat needs only
  // the --allow-run the task already has.
  const cpuinfo = await output("cat", ["/proc/cpuinfo"]).catch(() => "");
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? "unknown";
  const cores = cpuinfo.match(/^processor\s*:/gm)?.length ??
    navigator.hardwareConcurrency;
  const cc = (await output("cc", ["--version"])).split("\n")[0];
  return {
    cpu: model,
    cores: String(cores),
    os: `${Deno.build.os} ${Deno.osRelease()} ${Deno.build.arch}`,
    deno: `${Deno.version.deno} (v8 ${Deno.version.v8})`,
    cc,
  };
}

function parseCases(args: string[]): string[] {
  const i = args.indexOf("--cases");
  if (i < 0) return DEFAULT_CASES;
  const names = (args[i + 1] ?? "").split(",").filter((n) => n !== "");
  const unknown = names.filter((n) => !DEFAULT_CASES.includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new RangeError(
      `--cases needs a comma-separated list of ${
        DEFAULT_CASES.join(", ")
      }, got ${args[i + 1]}`,
    );
  }
  return names;
}

function parseRounds(args: string[]): number {
  const i = args.indexOf("--rounds");
  if (i < 0) return 3;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(
      `--rounds needs a positive integer, got ${args[i + 1]}`,
    );
  }
  return n;
}

async function main(): Promise<number> {
  const rounds = parseRounds(Deno.args);
  const caseNames = parseCases(Deno.args);
  const host = await machine();
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-bench-" });
  const lines: string[] = [];
  try {
    const binary = `${dir}/engine`;
    await output("cc", [
      "-O2",
      "-std=c99",
      "-Wall",
      "-Wextra",
      "-o",
      binary,
      fromFileUrl(new URL("engine.c", HERE)),
    ]);

    // Cross-check first: a mismatch makes every number below meaningless.
    const churn = CASES.churn;
    console.error(`cross-check: ${churn.description}`);
    const churnC = await runC(binary, churn, dir);
    const churnDeno = await runDeno(churn, dir);
    lines.push(...churnC.lines, ...churnDeno.lines);
    assertSameWork(churn.name, [churnC.summary, churnDeno.summary]);
    const comparedBytes = await compareLogs(churnDeno.summary, churnC.summary);
    await Deno.remove(churnDeno.summary.log_path!);
    await Deno.remove(churnC.summary.log_path!);
    if (Deno.args.includes("--check")) {
      // The test suite's differential check: the same work, no timing.
      console.log(
        `cross-check ok: ${JSON.stringify(churnDeno.summary.checksum)}, ` +
          `${comparedBytes} bytes of events.log identical`,
      );
      return 0;
    }

    const results = new Map<string, { c: EngineRun[]; deno: EngineRun[] }>();
    for (let round = 1; round <= rounds; round++) {
      for (const name of caseNames) {
        const benchCase = CASES[name];
        console.error(`round ${round}/${rounds}: ${benchCase.description}`);
        const entry = results.get(name) ?? { c: [], deno: [] };
        if (runsInC(benchCase)) {
          const cFirst = round % 2 === 1;
          const first = cFirst
            ? await runC(binary, benchCase, dir)
            : await runDeno(benchCase, dir);
          const second = cFirst
            ? await runDeno(benchCase, dir)
            : await runC(binary, benchCase, dir);
          const [c, deno] = cFirst ? [first, second] : [second, first];
          lines.push(...c.lines, ...deno.lines);
          entry.c.push(c);
          entry.deno.push(deno);
        } else {
          const deno = await runDeno(benchCase, dir);
          lines.push(...deno.lines);
          entry.deno.push(deno);
        }
        results.set(name, entry);
        assertSameWork(name, [...entry.c, ...entry.deno].map((r) => r.summary));
        // A rule that fired would make a no-event case measure events.
        const fired = entry.deno[0].summary.checksum.transitions;
        if (benchCase.quiet && fired !== 0) {
          throw new Error(
            `Case ${name} must have no event, but rules changed state ${fired} times`,
          );
        }
      }
    }

    await Deno.mkdir(new URL("out/", HERE), { recursive: true });
    await Deno.writeTextFile(
      new URL("out/last-run.jsonl", HERE),
      lines.join("\n") + "\n",
    );
    report(host, rounds, results, churnDeno.summary, comparedBytes);
    return 0;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Throws unless every summary of a case carries the same checksum. */
function assertSameWork(name: string, summaries: readonly Summary[]): void {
  const want = JSON.stringify(summaries[0].checksum);
  for (const s of summaries) {
    const got = JSON.stringify(s.checksum);
    if (got !== want) {
      throw new Error(
        `Checksums differ for case ${name}: ${s.engine} ${got}, expected ${want}`,
      );
    }
  }
}

/** A markdown table with padded columns, as lines. */
function markdownTable(rows: readonly string[][]): string[] {
  const widths = rows[0].map((_, i) =>
    Math.max(...rows.map((r) => r[i].length))
  );
  const line = (r: readonly string[]) =>
    "| " + r.map((cell, i) => cell.padEnd(widths[i])).join(" | ") + " |";
  return [
    line(rows[0]),
    "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|",
    ...rows.slice(1).map(line),
  ];
}

/** `median (min-max)` of some samples/s figures, in millions. */
function spread(values: readonly number[]): string {
  return `${millions(median(values))} (${millions(Math.min(...values))}-${
    millions(Math.max(...values))
  })`;
}

/** `median x (min-max)` of some ratios. */
function ratioSpread(values: readonly number[]): string {
  return `${median(values).toFixed(2)}x (${Math.min(...values).toFixed(2)}-${
    Math.max(...values).toFixed(2)
  })`;
}

function report(
  host: Record<string, string>,
  rounds: number,
  results: Map<string, { c: EngineRun[]; deno: EngineRun[] }>,
  churn: Summary,
  comparedBytes: number,
): void {
  const rates = (runs: EngineRun[]) =>
    runs.flatMap((r) => r.reps.map((rep) => rep.samples_per_s));
  const rows: string[][] = [[
    "case",
    "Deno samples/s",
    "C samples/s",
    "C/Deno",
    "close (drain+fsync) Deno / C",
  ]];
  const ratios = new Map<string, number>();
  const denoMedians = new Map<string, number>();
  for (const [name, { c, deno }] of results) {
    denoMedians.set(name, median(rates(deno)));
    if (c.length === 0) continue;
    const d = rates(deno);
    const k = rates(c);
    // Paired per round: both engines ran within seconds of each other.
    const paired = c.map((run, i) =>
      run.summary.median_samples_per_s / deno[i].summary.median_samples_per_s
    );
    ratios.set(name, median(paired));
    const closes = (runs: EngineRun[]) =>
      median(runs.flatMap((r) => r.reps.map((rep) => rep.close_s)));
    rows.push([
      name,
      spread(d),
      spread(k),
      ratioSpread(paired),
      `${(closes(deno) * 1000).toFixed(1)} ms / ${
        (closes(c) * 1000).toFixed(1)
      } ms`,
    ]);
  }

  // Signal-rule cases: Deno only, against the reference mix (idle) of the
  // same round, so both figures saw the same machine.
  const reference = results.get("idle")?.deno;
  const base = results.get("base")?.deno;
  const signalRows: string[][] = [[
    "case",
    "rules",
    "Deno samples/s",
    "vs reference mix",
    "ns per rule",
    "per-sample path",
  ]];
  for (const [name, { deno }] of results) {
    if (name !== "idle" && runsInC(CASES[name])) continue;
    const perRound = (runs: EngineRun[] | undefined) =>
      runs?.map((run, i) =>
        deno[i].summary.median_samples_per_s /
        run.summary.median_samples_per_s
      ) ?? [];
    const vsReference = perRound(reference);
    // (1/case - 1/base) / rules: what one rule costs a sample, per round.
    const nsPerRule = base?.map((run, i) =>
      (1 / deno[i].summary.median_samples_per_s -
        1 / run.summary.median_samples_per_s) *
      1e9 /
      CASES[name].rules.length
    ) ?? [];
    const alloc = Math.max(
      ...deno.map((r) =>
        r.summary.max_alloc_bytes_per_sample ?? NaN
      ),
    );
    signalRows.push([
      name,
      String(CASES[name].rules.length),
      spread(rates(deno)),
      vsReference.length > 0 ? ratioSpread(vsReference) : "-",
      nsPerRule.length > 0 ? median(nsPerRule).toFixed(1) : "-",
      Number.isNaN(alloc) ? "-" : `${alloc.toFixed(3)} B/sample`,
    ]);
  }

  const out: string[] = [];
  out.push(
    "",
    `Machine: ${host.cpu}, ${host.cores} cores, ${host.os}`,
    `Deno ${host.deno}; ${host.cc}`,
    `${rounds} round(s); each round: one process per engine per case, ` +
      "5 timed repetitions each after a warm-up.",
    "Samples/s: median over all timed repetitions (min-max); C/Deno: median " +
      "of per-round ratios of medians (min-max).",
    "",
  );
  if (rows.length > 1) out.push(...markdownTable(rows), "");
  if ([...results.keys()].some((name) => !runsInC(CASES[name]))) {
    out.push(
      "Signal rules (Deno only). vs reference mix: case / idle, median of " +
        "per-round ratios of medians (min-max). ns per rule: " +
        "(1/case - 1/base) / rules, median over rounds. Per-sample path: " +
        "heap bytes per sample fed synchronously, no yield (max over " +
        "repetitions; 0 means nothing is allocated).",
      "",
      ...markdownTable(signalRows),
      "",
    );
  }
  for (const [name, { deno }] of results) {
    const reps = deno.flatMap((r) => r.reps);
    const growth = Math.max(...reps.map((r) => r.heap_growth_bytes ?? 0));
    const retained = Math.max(
      ...deno.map((r) => r.summary.max_heap_retained_bytes ?? 0),
    );
    // The feeder yields once per batch (a promise and a MessageEvent):
    // per-batch bytes that match the rule-less base case mean the
    // per-sample path itself allocates nothing, unless a scavenge ran
    // inside the loop (the per-sample figure above cannot be fooled so).
    const batches = Math.ceil(reps[0].samples / CASES[name].batch);
    out.push(
      `Deno heap, ${name}: at most ${growth} B more heap after a timed loop ` +
        `of ${reps[0].samples} samples without a GC in between ` +
        `(${(growth / batches).toFixed(0)} B per ${CASES[name].batch}-sample ` +
        `batch, ${(growth / reps[0].samples).toFixed(3)} B/sample); ` +
        `${retained} B after gc().`,
    );
  }
  out.push(
    `Cross-check (${churn.case}): same checksum in C and Deno ` +
      `${JSON.stringify(churn.checksum)}; ${comparedBytes} bytes of ` +
      "events.log identical apart from marker times.",
    "",
  );
  for (const name of QUIET_TARGET_CASES) {
    const rate = denoMedians.get(name);
    if (rate === undefined) continue;
    out.push(
      `Target >= ${millions(TARGET_IDLE_SAMPLES_PER_S)} samples/s with no ` +
        `event, ${name}: ` +
        `${rate >= TARGET_IDLE_SAMPLES_PER_S ? "met" : "NOT met"} ` +
        `(${millions(rate)}).`,
    );
  }
  for (const [name, ratio] of ratios) {
    if (!TARGET_CASES.includes(name)) continue;
    out.push(
      `Target Deno within ${TARGET_MAX_RATIO}x of C, ${name}: ` +
        `${ratio <= TARGET_MAX_RATIO ? "met" : "NOT met"} ` +
        `(C/Deno ${ratio.toFixed(2)}).`,
    );
  }
  console.log(out.join("\n"));
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(
      `bench: ${errorMessage(error)}`,
    );
    Deno.exit(1);
  }
}
