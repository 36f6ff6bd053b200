// The Debian package's /usr/bin/dpu-traceback (deploy/deb/wrapper.ts): the
// compiled binary's permissions exactly, plus read access to the packaged
// application (what the binary embeds), offline and locked. The package
// itself is built, installed and run in tests/e2e/deb_test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { PERMISSION_FLAGS } from "../deploy/permissions.ts";
import { APP_DIR, DENO_BIN, DENO_CACHE_DIR } from "../deploy/deb/layout.ts";
import { packagedUnit } from "../deploy/deb/build.ts";
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
  for (const f of ["--cached-only", "--frozen", "--node-modules-dir=manual"]) {
    assert.ok(flags.includes(f));
  }
  assert.ok(flags.includes(`--lock=${APP_DIR}/deno.lock`));
  assert.ok(flags.includes(`--config=${APP_DIR}/deno.json`));
});

Deno.test("the package's wrapper is POSIX sh that execs the packaged deno on main.ts with the arguments", async () => {
  await using tmp = await tempDir("deb_wrapper_test_");
  const script = wrapperScript();
  assert.ok(script.includes(`DENO_DIR=${DENO_CACHE_DIR}\n`));
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
    DENO_CACHE_DIR,
    "run",
    ...wrapperFlags(),
    `${APP_DIR}/main.ts`,
    "run",
    "-c",
    "/etc/dpu-traceback/a b.yaml",
  ]);
});

Deno.test("the package's unit is deploy's, running the wrapper, with the wrapper's DENO_DIR as its cache directory", async () => {
  const source = await Deno.readTextFile(
    new URL("../deploy/dpu-traceback.service", import.meta.url),
  );
  const unit = await packagedUnit();
  assert.equal(DENO_CACHE_DIR, "/var/cache/dpu-traceback");
  assert.match(unit, /^ExecStart=\/usr\/bin\/dpu-traceback run -q /m);
  assert.match(
    unit,
    /^CacheDirectory=dpu-traceback\nCacheDirectoryMode=0700$/m,
  );
  assert.match(
    unit,
    /^# Installed by the dpu-traceback Debian package as\n# \/lib\/systemd\/system\/dpu-traceback\.service\. /m,
  );
  assert.ok(
    !unit.includes("install.sh"),
    "the package's unit names install.sh",
  );
  // Nothing else changed: the hardening is the unit's, line for line.
  const removed = source.split("\n").filter((line) => !unit.includes(line));
  assert.deepEqual(removed, [
    "# Installed by deploy/install.sh as /etc/systemd/system/dpu-traceback.service",
    "# (an administrator's unit, not a package's). Change it with a drop-in",
    "# (`systemctl edit dpu-traceback`), not by editing this file: install.sh",
    "# /etc/default/dpu-traceback (see deploy/default).",
    "ExecStart=/usr/local/bin/dpu-traceback run -q -c ${DPU_TRACEBACK_CONFIG} $DPU_TRACEBACK_OPTS",
  ]);
  const added = unit.split("\n").filter((line) => !source.includes(line));
  assert.equal(added.length, 9, added.join("\n"));
});
