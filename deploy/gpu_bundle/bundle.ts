/**
 * The GPU truth check, ready for a bare GPU machine (no Deno, no network;
 * Python 3 and nvidia-smi): `deno task gpu-bundle [--out DIR]` writes into
 * DIR (default `gpu-bundle/`, ignored by git) the amd64 Debian package
 * (deploy/deb: Deno, the agent, its locked dependencies), the check
 * (bench/gpu_truth.ts) and `run.py`, which unpacks the package into a
 * temporary directory and runs the check with the package's Deno, offline.
 * The folder stays under the device machine's 64 MiB.
 *
 * ```sh
 * deno task gpu-bundle
 * # on the GPU machine, with gpu-bundle carried there:
 * python3 gpu-bundle/run.py --seconds 60 --out "$OUT"
 * ```
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildDeb, type BuildOptions, ROOT } from "../deb/build.ts";

/** What a device machine takes with it, at most. */
export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;

/** Removes `path` and what is under it; only its absence is not an error. */
async function removeIfThere(path: string): Promise<void> {
  try {
    await Deno.remove(path, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * Writes the bundle into `dir` (emptied first) from `deb`, or from an amd64
 * package built here; returns its size in bytes. Throws, naming the size,
 * when it would not fit in {@linkcode MAX_BUNDLE_BYTES}.
 */
export async function writeGpuBundle(
  dir: string,
  options: { readonly deb?: string } & BuildOptions = {},
): Promise<number> {
  await removeIfThere(dir);
  await Deno.mkdir(dir, { recursive: true });
  const deb = options.deb ??
    await buildDeb("amd64", join(dir, ".build"), options);
  await Deno.copyFile(deb, join(dir, "dpu-traceback_amd64.deb"));
  await removeIfThere(join(dir, ".build"));
  // Files of this repository, copied at build time (not read by the agent).
  await Deno.copyFile(
    join(ROOT, "bench", "gpu_truth.ts"),
    join(dir, "gpu_truth.ts"),
  );
  await Deno.copyFile(
    join(ROOT, "deploy", "gpu_bundle", "run.py"),
    join(dir, "run.py"),
  );
  await Deno.chmod(join(dir, "run.py"), 0o755);
  let bytes = 0;
  for await (const entry of Deno.readDir(dir)) {
    bytes += (await Deno.stat(join(dir, entry.name))).size;
  }
  if (bytes > MAX_BUNDLE_BYTES) {
    throw new Error(
      `Cannot make the GPU bundle: it is ${bytes} bytes, more than the ${MAX_BUNDLE_BYTES} a device machine takes`,
    );
  }
  return bytes;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string", default: "gpu-bundle" } },
  });
  const bytes = await writeGpuBundle(values.out!);
  console.log(
    `${values.out}: ${
      (bytes / 1024 / 1024).toFixed(1)
    } MiB; on the GPU machine: python3 ${values.out}/run.py --seconds 60 --out "$OUT"`,
  );
}
