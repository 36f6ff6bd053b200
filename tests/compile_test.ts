/**
 * The compile tasks build a binary that holds everything the agent loads
 * at run time.
 *
 * `deno compile` embeds main.ts's module graph and nothing else. Modules
 * and files the sources only *locate*, with
 * `new URL("./x.ts", import.meta.url)` (every Worker: the bcrypt, NVML and
 * endpoint workers) or `import.meta.resolve("./x.ts")`, must be named with
 * `--include` (`INCLUDES` in deploy/permissions.ts). Otherwise the build
 * succeeds and the binary fails when it starts the Worker. The first tests
 * read the sources for these locations and compare them with `INCLUDES`.
 *
 * The last ones run each compile task's command from deno.json. They change
 * one thing, `--output`, which goes to a temporary directory rather than
 * dist/: dist/ may hold a real build (made where denort could be
 * downloaded) that this one must not replace, and two test runs must not
 * race for it. `deno compile` normally downloads its base binary, denort,
 * from dl.deno.land, which test machines cannot reach. DENORT_BIN names
 * this test's own deno binary instead, and deno uses it as-is. The result
 * is a deno CLI with the program appended, which it ignores (only denort
 * runs an embedded program), so it is not run. The build still checks what
 * matters here: main.ts's graph type-checks and resolves offline (npm
 * packages come from Deno's cache), every `--include` exists, the flags and
 * `--target` parse. The listing of embedded files it prints must name every
 * located file. With a warm type-check cache each task takes a few seconds
 * and writes about 110 MB, which is removed afterwards.
 *
 * @module
 */

import assert from "node:assert/strict";
import { basename, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { COMPILE_TASKS, INCLUDES } from "../deploy/permissions.ts";
import { ROOT } from "./cli_util.ts";
import { run } from "./deploy_util.ts";
import { tempDir } from "./temp_dir.ts";

/** Folders that hold no source of the binary. */
const SKIPPED_DIRS = new Set(["tests", "bench", "node_modules", "dist"]);

/** Tests, and the test helpers kept beside the sources (`*test_util.ts`). */
function isTestFile(name: string): boolean {
  return name.endsWith("_test.ts") || name.endsWith("test_util.ts");
}

/** One file that a source locates at run time. */
interface Located {
  /** Where: `source:line`, root-relative. */
  readonly at: string;
  /** The file located, root-relative with `/`. */
  readonly file: string;
}

/** What {@linkcode locatedFiles} found in one source. */
interface Scan {
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
function locatedFiles(source: string, text: string): Scan {
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
async function scanRepository(): Promise<Scan> {
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
const PASTE = "then paste the tasks `deno run deploy/permissions.ts` prints " +
  "into deno.json";

Deno.test("the scan finds a Worker's module, directly or through a variable, and skips comments", () => {
  const scan = locatedFiles(
    "metrics/x.ts",
    [
      "/**",
      ' * new Worker(new URL("./in_a_comment.ts", import.meta.url));',
      " */",
      "const worker = new Worker(",
      '  new URL("./direct_worker.ts", import.meta.url),',
      '  { type: "module" },',
      ");",
      'const url = options.url ?? new URL("../agent/w.ts", import.meta.url);',
      "new Worker(url);",
      "const demo = new URL('../deploy/demo.yaml', import.meta.url);",
      'const r = import.meta.resolve("./resolved.ts");',
      "// new Worker(somewhere);",
    ].join("\n"),
  );
  assert.deepEqual(scan, {
    located: [
      { at: "metrics/x.ts:5", file: "metrics/direct_worker.ts" },
      { at: "metrics/x.ts:8", file: "agent/w.ts" },
      { at: "metrics/x.ts:10", file: "deploy/demo.yaml" },
      { at: "metrics/x.ts:11", file: "metrics/resolved.ts" },
    ],
    problems: [],
  });
  // A Worker whose module cannot be seen fails, naming where it starts.
  const hidden = locatedFiles(
    "agent/y.ts",
    "const a = 1;\nnew Worker(import.meta.resolve(`./${name}.ts`), {});\n",
  );
  assert.deepEqual(hidden.located, []);
  assert.equal(hidden.problems.length, 1);
  assert.match(hidden.problems[0], /^agent\/y\.ts:2 starts a Worker /);
});

Deno.test("every Worker module and file the sources locate is --include'd", async () => {
  const { located, problems } = await scanRepository();
  assert.deepEqual(problems, []);
  // The known ones are found (the scan works on this tree).
  for (
    const file of ["metrics/bcrypt_worker.ts", "collectors/nvml/worker.ts"]
  ) {
    assert.ok(
      located.some((l) => l.file === file),
      `the scan did not find ${file}: ${JSON.stringify(located)}`,
    );
  }
  const missing = located.filter(({ file }) => !INCLUDES.includes(file));
  assert.deepEqual(
    missing.map(({ at, file }) =>
      `${at} locates ${file}, which the binary does not embed: add ` +
      `"${file}" to INCLUDES in deploy/permissions.ts, ${PASTE}`
    ),
    [],
  );
});

Deno.test("every --include exists and is located by a source", async () => {
  const { located } = await scanRepository();
  for (const file of INCLUDES) {
    const info = await Deno.stat(join(ROOT, file)).catch(() => undefined);
    assert.ok(
      info?.isFile,
      `INCLUDES names ${file}, which is not a file: fix or remove it in ` +
        `deploy/permissions.ts, ${PASTE}`,
    );
    assert.ok(
      located.some((l) => l.file === file),
      `INCLUDES names ${file}, but no source locates it (new URL(..., ` +
        `import.meta.url)): the binary does not need it; remove it in ` +
        `deploy/permissions.ts, ${PASTE}`,
    );
  }
});

/**
 * The root-relative files in `deno compile`'s listing of what it embedded
 * (printed on stderr), e.g. `metrics/bcrypt_worker.ts`. Lines look like
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
