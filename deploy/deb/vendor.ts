/**
 * The application for the package, vendored: the local modules main.ts and
 * every `--include`d worker import (from `deno info --json`), the other
 * `--include`d files, deno.json and deno.lock, and node_modules/ holding the
 * locked npm dependencies. The package's Deno runs it with `--cached-only`
 * and `--node-modules-dir=manual`, so nothing is fetched at run time.
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
 * Installs into `appDir`/node_modules exactly the npm packages deno.lock
 * pins for the application (`deno install --frozen`, fetching through the
 * builder's own DENO_DIR), for the packaged Deno to run with
 * `--node-modules-dir=manual`. The npm commands' links in node_modules/.bin
 * are dropped: the agent runs none. Returns the packages, `name@version`.
 */
export async function installDependencies(appDir: string): Promise<string[]> {
  await mustRun(Deno.execPath(), [
    "install",
    "--frozen",
    "--node-modules-dir=auto",
    "--config",
    join(appDir, "deno.json"),
    "--lock",
    join(appDir, "deno.lock"),
    "--entrypoint",
    ...ENTRY_POINTS.map((entry) => join(appDir, entry)),
  ], { cwd: appDir, env: { NO_COLOR: "1" } });
  const modules = join(appDir, "node_modules");
  await Deno.remove(join(modules, ".bin"), { recursive: true }).catch(
    (error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    },
  );
  const lock = JSON.parse(await Deno.readTextFile(join(appDir, "deno.lock")));
  const pinned = Object.keys(lock.npm ?? {}).sort();
  const installed: string[] = [];
  for await (const entry of Deno.readDir(join(modules, ".deno"))) {
    if (entry.isDirectory && entry.name !== "node_modules") {
      installed.push(entry.name);
    }
  }
  installed.sort();
  if (installed.join(" ") !== pinned.join(" ")) {
    throw new Error(
      `deno install put ${installed.join(", ")} in ${modules}; deno.lock pins ${
        pinned.join(", ")
      }`,
    );
  }
  return installed;
}
