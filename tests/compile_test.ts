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
 * tests/slow/compile_test.ts runs each compile task's command from deno.json. They change
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
import { join } from "node:path";
import { INCLUDES } from "../deploy/permissions.ts";
import { ROOT } from "./cli_util.ts";
import { locatedFiles, PASTE, scanRepository } from "./compile_scan.ts";
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
    const file of ["endpoint/bcrypt_worker.ts", "collectors/nvml/worker.ts"]
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
