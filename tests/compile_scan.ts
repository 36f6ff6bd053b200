/**
 * Where the agent's sources locate files at run time, which `deno compile`
 * must be told about with `--include` (see tests/compile_test.ts for why).
 *
 * @module
 */

import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ROOT } from "./cli_util.ts";
/** Folders that hold no source of the binary. */
const SKIPPED_DIRS = new Set(["tests", "bench", "node_modules", "dist"]);

/** Tests, and the test helpers kept beside the sources (`*test_util.ts`). */
function isTestFile(name: string): boolean {
  return name.endsWith("_test.ts") || name.endsWith("test_util.ts");
}

/** One file that a source locates at run time. */
export interface Located {
  /** Where: `source:line`, root-relative. */
  readonly at: string;
  /** The file located, root-relative with `/`. */
  readonly file: string;
}

/** What {@linkcode locatedFiles} found in one source. */
export interface Scan {
  readonly located: Located[];
  /** Workers whose module the scan cannot see, one line each. */
  readonly problems: string[];
}

const MODULE = /\.(ts|mts|tsx|js|mjs|jsx)$/;
const LOCATIONS = [
  /\bnew\s+URL\s*\(\s*(["'`])([^"'`$\n]+)\1\s*,\s*import\.meta\.url\s*\)/g,
  /\bimport\.meta\.resolve\s*\(\s*(["'`])([^"'`$\n]+)\1\s*\)/g,
];
const WORKER = /\bnew\s+Worker\s*\(/g;

/**
 * The files that `text`, the source at root-relative path `source`,
 * locates relative to itself. A Worker that does not get its module that
 * way is reported. Comment lines are skipped, so doc examples do not
 * count.
 */
export function locatedFiles(source: string, text: string): Scan {
  // Comment lines blanked, so line numbers still hold.
  const code = text.replace(/^[ \t]*(\/\/|\/\*|\*).*$/gm, "");
  const lineOf = (index: number) => code.slice(0, index).split("\n").length;
  const base = pathToFileURL(join(ROOT, source));
  const located: Located[] = [];
  for (const pattern of LOCATIONS) {
    for (const match of code.matchAll(pattern)) {
      const path = fileURLToPath(new URL(match[2], base));
      located.push({
        at: `${source}:${lineOf(match.index)}`,
        file: relative(ROOT, path).split(sep).join("/"),
      });
    }
  }
  const problems: string[] = [];
  const locatesModule = located.some(({ file }) => MODULE.test(file));
  for (const match of code.matchAll(WORKER)) {
    if (locatesModule) continue;
    problems.push(
      `${source}:${
        lineOf(match.index)
      } starts a Worker on a module it does not locate with ` +
        'new URL("./module.ts", import.meta.url): name the module that ' +
        "way, so that this test can check it is --include'd",
    );
  }
  return { located, problems };
}

/** {@linkcode locatedFiles} over every source of the binary in the repository. */
export async function scanRepository(): Promise<Scan> {
  const located: Located[] = [];
  const problems: string[] = [];
  const walk = async (dir: string, top: boolean): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) {
        if (entry.name.startsWith(".") || entry.name === "node_modules") {
          continue;
        }
        if (top && SKIPPED_DIRS.has(entry.name)) continue;
        await walk(path, false);
      } else if (
        entry.isFile && entry.name.endsWith(".ts") && !isTestFile(entry.name)
      ) {
        const source = relative(ROOT, path).split(sep).join("/");
        const scan = locatedFiles(source, await Deno.readTextFile(path));
        located.push(...scan.located);
        problems.push(...scan.problems);
      }
    }
  };
  await walk(ROOT, true);
  return { located, problems };
}

/** What to do after changing `INCLUDES`. */
export const PASTE =
  "then paste the tasks `deno run deploy/permissions.ts` prints " +
  "into deno.json";
