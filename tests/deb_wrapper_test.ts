// The Debian package's /usr/bin/dpu-traceback (deploy/deb/wrapper.ts): the
// compiled binary's permissions exactly, plus read access to the packaged
// application (what the binary embeds), offline and locked. The package
// itself is built, installed and run in tests/e2e/deb_test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { PERMISSION_FLAGS } from "../deploy/permissions.ts";
import { APP_DIR, CACHE_DIR, DENO_BIN } from "../deploy/deb/layout.ts";
import { wrapperFlags, wrapperScript } from "../deploy/deb/wrapper.ts";
import { run } from "./deploy_util.ts";
import { tempDir } from "./temp_dir.ts";

Deno.test("the package's wrapper gives the binary's permissions, the app directory readable, offline", () => {
  const flags = wrapperFlags();
  const permissions = flags.filter((f) =>
    f.startsWith("--allow-") || f === "--no-prompt" ||
    f.startsWith("--v8-flags=")
  );
  assert.deepEqual(
    permissions,
    PERMISSION_FLAGS.map((f) =>
      f.startsWith("--allow-read=") ? `${f},${APP_DIR}` : f
    ),
  );
  assert.ok(!flags.some((f) => /^--allow-(all|run|import)|^-A$/.test(f)));
  for (const f of ["--cached-only", "--frozen"]) assert.ok(flags.includes(f));
  assert.ok(flags.includes(`--lock=${APP_DIR}/deno.lock`));
  assert.ok(flags.includes(`--config=${APP_DIR}/deno.json`));
});

Deno.test("the package's wrapper is POSIX sh that execs the packaged deno on main.ts with the arguments", async () => {
  await using tmp = await tempDir("deb_wrapper_test_");
  const script = wrapperScript();
  assert.ok(script.includes(`DENO_DIR=${CACHE_DIR}\n`));
  // Run with the packaged deno replaced by a stand-in that prints its
  // arguments, one a line.
  const fake = join(tmp.path, "deno");
  await Deno.writeTextFile(
    fake,
    '#!/bin/sh\nprintf "%s\\n" "$DENO_DIR" "$@"\n',
  );
  await Deno.chmod(fake, 0o755);
  const path = join(tmp.path, "dpu-traceback");
  await Deno.writeTextFile(
    path,
    script.replace(`exec ${DENO_BIN} `, `exec ${fake} `),
  );
  const r = await run("sh", [path, "run", "-c", "/etc/dpu-traceback/a b.yaml"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trimEnd().split("\n"), [
    CACHE_DIR,
    "run",
    ...wrapperFlags(),
    `${APP_DIR}/main.ts`,
    "run",
    "-c",
    "/etc/dpu-traceback/a b.yaml",
  ]);
});
