/**
 * `dpu-traceback review` on big logs, as an operator runs it (`main.ts`,
 * a child process): wall time and peak resident memory (VmHWM) for
 *
 * 1. a 1 GB events.log with few, long events (history dumps of 2048 rows,
 *    100,000-row bursts, restarts), reviewed as a table, as JSON, and as
 *    JSON plus the HTML report;
 * 2. a flapping rule: 200,000 short events (about 58 MB), as a table, as
 *    JSON and as HTML;
 *
 * after a tiny fixture, whose figure is the floor every run pays.
 *
 * The logs come from the same generators as tests/review_test.ts.
 *
 * ```sh
 * deno run -A bench/review.ts [--gb 1] [--events 200000]
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  runWithPeakRss,
  writeBigLog,
  writeFlappingLog,
} from "../tests/review_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    gb: { type: "string", default: "1" },
    events: { type: "string", default: "200000" },
  },
});
const ROOT = new URL("../", import.meta.url).pathname;

async function review(label: string, args: string[]): Promise<void> {
  const started = performance.now();
  const { output, peakRssBytes } = await runWithPeakRss(
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(ROOT, "main.ts"), "review", ...args],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (output.code !== 0) {
    throw new Error(
      `${label}: exit ${output.code}: ${
        new TextDecoder().decode(output.stderr)
      }`,
    );
  }
  console.log(
    `| ${label} | ${seconds.toFixed(1)} s | ${
      (peakRssBytes / 2 ** 20).toFixed(0)
    } MiB |`,
  );
}

const dir = await Deno.makeTempDir({ prefix: "bench_review_" });
try {
  console.log(`Deno ${Deno.version.deno}\n`);
  console.log("| log, output | wall time | peak RSS |");
  console.log("| ----------- | --------- | -------- |");
  // The floor: the runtime and the agent's code, whatever the log.
  await review("a 2 KB fixture (the floor), table", [
    join(ROOT, "tests", "fixtures", "review", "nic-events.log"),
  ]);
  const big = join(dir, "big-events.log");
  const written = await writeBigLog(big, Number(values.gb) * 1e9);
  const gb = (written.bytes / 1e9).toFixed(2);
  await review(`${gb} GB, table`, [big]);
  await review(`${gb} GB, --json`, [big, "--json"]);
  await review(`${gb} GB, --json --html`, [
    big,
    "--json",
    "--html",
    join(dir, "big.html"),
  ]);
  await Deno.remove(big);
  const flapping = join(dir, "flap-events.log");
  const flap = await writeFlappingLog(flapping, Number(values.events));
  const mb = (flap.bytes / 1e6).toFixed(0);
  await review(`${flap.events} events (${mb} MB), table`, [flapping]);
  await review(`${flap.events} events (${mb} MB), --json`, [
    flapping,
    "--json",
  ]);
  await review(`${flap.events} events (${mb} MB), --html`, [
    flapping,
    "--html",
    join(dir, "flap.html"),
  ]);
} finally {
  await Deno.remove(dir, { recursive: true });
}
