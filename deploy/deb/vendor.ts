/**
 * The application for the package, vendored: the local modules main.ts and
 * every `--include`d worker import (from `deno info --json`), the other
 * `--include`d files, deno.json and deno.lock, and a DENO_DIR holding the
 * locked npm dependencies. The package's Deno runs it with
 * `--cached-only`, so nothing is fetched at run time.
 *
 * @module
 */

import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { INCLUDES } from "../permissions.ts";
import { mustRun } from "./runtime.ts";

/** The entry points: main.ts and every `--include`d module. */
export const ENTRY_POINTS: readonly string[] = [
  "main.ts",
  ...INCLUDES.filter((file) => /\.[cm]?[jt]sx?$/.test(file)),
];

/**
 * The files of the application under `root`, relative to it and sorted:
 * every local module the entry points import, the other `--include`d files,
 * deno.json and deno.lock. What `deno compile` embeds, as source.
 */
export async function appFiles(root: string): Promise<string[]> {
  const files = new Set<string>(["deno.json", "deno.lock"]);
  for (const file of INCLUDES) files.add(file);
  for (const entry of ENTRY_POINTS) {
    const json = await mustRun(Deno.execPath(), [
      "info",
      "--json",
      "--config",
      join(root, "deno.json"),
      join(root, entry),
    ]);
    const graph = JSON.parse(json) as { modules: { specifier: string }[] };
    for (const { specifier } of graph.modules) {
      if (!specifier.startsWith("file://")) continue;
      const path = relative(root, fileURLToPath(specifier));
      if (path.startsWith("..")) {
        throw new Error(`${entry} imports ${specifier}, outside ${root}`);
      }
      files.add(path);
    }
  }
  return [...files].sort();
}

/** Copies the application's files from `root` into `dest` (0644, dirs 0755). */
export async function copyApp(root: string, dest: string): Promise<string[]> {
  const files = await appFiles(root);
  for (const file of files) {
    const to = join(dest, file);
    await Deno.mkdir(dirname(to), { recursive: true, mode: 0o755 });
    await Deno.copyFile(join(root, file), to);
    await Deno.chmod(to, 0o644);
  }
  return files;
}

/**
 * Fills `cacheDir` (a DENO_DIR) with the npm packages deno.lock pins for the
 * application in `appDir`, and keeps only them: the type-checking and
 * analysis caches Deno writes beside them are rebuilt at run time (in
 * memory where the directory is read-only) and hold build paths.
 */
export async function fillCache(
  appDir: string,
  cacheDir: string,
): Promise<void> {
  await Deno.mkdir(cacheDir, { recursive: true });
  await mustRun(Deno.execPath(), [
    "cache",
    "--frozen",
    "--config",
    join(appDir, "deno.json"),
    "--lock",
    join(appDir, "deno.lock"),
    ...ENTRY_POINTS.map((entry) => join(appDir, entry)),
  ], { env: { DENO_DIR: cacheDir, NO_COLOR: "1" } });
  for await (const entry of Deno.readDir(cacheDir)) {
    if (entry.name !== "npm") {
      await Deno.remove(join(cacheDir, entry.name), { recursive: true });
    }
  }
}
