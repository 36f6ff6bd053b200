/**
 * How long the Debian package's command takes to start: `dpu-traceback
 * --version` (which loads the whole agent) run from the package, unpacked,
 * with the wrapper's flags, in two cases, alternating:
 *
 * - cold: an empty DENO_DIR each time, so Deno compiles every module: the
 *   first start after an install, and every start of a user who cannot
 *   write /var/cache/dpu-traceback;
 * - warm: one DENO_DIR kept across runs (after one run to fill it): every
 *   later start of the service or of root's command.
 *
 * Wall time per start (median, min, max), and the highest peak RSS
 * (VmHWM, tests/review_util.ts's runWithPeakRss).
 *
 * Run: deno run -A bench/package_start.ts [--deb PATH] [--runs 15]
 * (without --deb it builds the amd64 package first, gzip, into a temp dir).
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildDeb, treeAgent } from "../deploy/deb/build.ts";
import { runWithPeakRss } from "../tests/review_util.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    deb: { type: "string" },
    runs: { type: "string", default: "15" },
  },
});
const RUNS = Number(values.runs);
if (!(Number.isInteger(RUNS) && RUNS >= 3)) {
  throw new RangeError(
    `--runs must be a whole number >= 3, got "${values.runs}"`,
  );
}

const work = await Deno.makeTempDir({ prefix: "bench_package_start_" });
try {
  const deb = values.deb ??
    await buildDeb("amd64", join(work, "dist"), { compression: "gzip" });
  const tree = join(work, "tree");
  const unpack = await new Deno.Command("dpkg-deb", { args: ["-x", deb, tree] })
    .output();
  if (!unpack.success) throw new Error(`dpkg-deb -x ${deb} failed`);
  /** One start: its wall time in ms and peak RSS in bytes. */
  const start = async (denoDir: string): Promise<[number, number]> => {
    const t0 = performance.now();
    // VmHWM is a high-water mark: polled every 5 ms, it misses at most the
    // growth of a start's last 5 ms.
    const { output, peakRssBytes } = await runWithPeakRss(
      treeAgent(tree, denoDir, ["--version"]),
      5,
    );
    const ms = performance.now() - t0;
    if (!output.success) {
      throw new Error(
        `--version failed: ${new TextDecoder().decode(output.stderr)}`,
      );
    }
    return [ms, peakRssBytes];
  };

  const warmDir = join(work, "warm");
  await start(warmDir);
  const cold: [number, number][] = [];
  const warm: [number, number][] = [];
  for (let i = 0; i < RUNS; i++) {
    const coldDir = join(work, `cold${i}`);
    cold.push(await start(coldDir));
    await Deno.remove(coldDir, { recursive: true });
    warm.push(await start(warmDir));
  }
  const row = (name: string, runs: [number, number][]) => {
    const ms = runs.map(([t]) => t).sort((a, b) => a - b);
    const bytes = Math.max(...runs.map(([, m]) => m));
    return `| ${name} | ${ms[ms.length >> 1].toFixed(0)} ms | ${
      ms[0].toFixed(0)
    }-${ms.at(-1)!.toFixed(0)} ms | ${(bytes / 2 ** 20).toFixed(1)} MiB |`;
  };
  console.log(`${RUNS} starts each, alternating, of ${deb}`);
  console.log("| DENO_DIR | median | min-max | peak RSS (max) |");
  console.log("| --- | --- | --- | --- |");
  console.log(row("cold (empty)", cold));
  console.log(row("warm (kept)", warm));
} finally {
  await Deno.remove(work, { recursive: true });
}
