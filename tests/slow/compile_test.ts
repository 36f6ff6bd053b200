// Each compile task from deno.json, run for real (tests/compile_test.ts says
// why and how: DENORT_BIN, --output in a temporary directory). About 110 MB
// written per task, so they run in the slow tier (`deno task test:slow`).

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { COMPILE_TASKS, INCLUDES } from "../../deploy/permissions.ts";
import { ROOT } from "../cli_util.ts";
import { PASTE, scanRepository } from "../compile_scan.ts";
import { run } from "../deploy_util.ts";
import { tempDir } from "../temp_dir.ts";

/**
 * The root-relative files in `deno compile`'s listing of what it embedded
 * (printed on stderr), e.g. `endpoint/bcrypt_worker.ts`. Lines look like
 * `│ ├─┬ nvml (160KB)` (a folder) or `├── logging/logger.ts (11.7KB)`.
 */
function embeddedFiles(listing: string): Set<string> {
  const files = new Set<string>();
  const path: string[] = [];
  for (const line of listing.split("\n")) {
    const match = /^((?:[│ ] )*)[├└]─([┬─]) (.+?) \([^()]*\)$/.exec(line);
    if (match === null) continue;
    const depth = match[1].length / 2;
    path.length = depth;
    path.push(match[3]);
    if (match[2] === "─") files.add(path.join("/"));
  }
  return files;
}

/** The outcome of {@linkcode compileTask}. */
interface Compiled {
  readonly code: number;
  /** What it printed (stdout, then stderr). */
  readonly log: string;
  /** The binary's path. */
  readonly output: string;
}

/**
 * Runs deno.json's task `task` (its command line) with `--output` moved
 * into `dir` and DENORT_BIN set to this deno.
 */
async function compileTask(task: string, dir: string): Promise<Compiled> {
  // Only words deno task's shell passes on unchanged: no quotes, variables,
  // globs or redirections, so splitting on spaces gives its arguments.
  assert.match(task, /^deno compile( [\w.,=/:-]+)+$/, task);
  const words = task.split(" ");
  const at = words.indexOf("--output");
  assert.ok(at > 0 && words.lastIndexOf("--output") === at, task);
  assert.ok(!words.includes("-o") && !task.includes("--output="), task);
  const output = join(dir, basename(words[at + 1]));
  words[at + 1] = output;
  const deno = await Deno.realPath(Deno.execPath());
  const out = await run(deno, words.slice(1), {
    cwd: ROOT,
    env: { DENORT_BIN: deno, NO_COLOR: "1" },
  });
  return {
    code: out.code,
    log: out.stdout + out.stderr,
    output,
  };
}

for (const name of Object.keys(COMPILE_TASKS)) {
  Deno.test(`deno task ${name} compiles offline (DENORT_BIN=deno) and embeds every located file`, async () => {
    const { tasks } = JSON.parse(
      await Deno.readTextFile(join(ROOT, "deno.json")),
    ) as { tasks: Record<string, string> };
    assert.ok(tasks[name] !== undefined, `deno.json has no task ${name}`);
    await using dir = await tempDir("dpu_traceback_compile_");
    const compiled = await compileTask(tasks[name], dir.path);
    assert.equal(compiled.code, 0, compiled.log);
    const info = await Deno.stat(compiled.output);
    assert.ok(info.isFile && info.size > 0, compiled.output);
    assert.ok(((info.mode ?? 0) & 0o100) !== 0, "the binary is not executable");
    const embedded = embeddedFiles(compiled.log);
    assert.ok(embedded.has("main.ts"), `no listing in:\n${compiled.log}`);
    const { located } = await scanRepository();
    const wanted = new Set([...INCLUDES, ...located.map((l) => l.file)]);
    const missing = [...wanted].filter((file) => !embedded.has(file)).sort();
    assert.deepEqual(
      missing,
      [],
      `deno task ${name} does not embed ${missing.join(", ")}: add ` +
        `to INCLUDES in deploy/permissions.ts, ${PASTE}`,
    );
  });
}
