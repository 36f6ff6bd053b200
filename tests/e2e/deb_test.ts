/**
 * The Debian package, end to end: `deno task deb`'s build (deploy/deb/),
 * lintian without errors, and on this machine, as root: `dpkg -i`, the
 * command's `--version`, `check-config` on the shipped configuration, a
 * replay run through /usr/bin/dpu-traceback under the binary's
 * permissions, an upgrade over itself and to a newer version with an edited
 * conffile kept, `dpkg -r` (configuration and logs kept) and `dpkg -P`
 * (nothing left). A second build of the same sources must give the same
 * bytes. The machine is restored (the package purged) even when a
 * step fails; a machine that already has dpu-traceback installed is refused,
 * never overwritten. The arm64 package is built and checked by its file
 * list, its binary's ELF header and `deno --version` under qemu-user.
 *
 * Needs root, and Debian's `dpkg-dev` (dpkg-deb), `lintian` and
 * `qemu-user` (`apt-get install dpkg-dev lintian qemu-user`); `.ci/run`
 * installs them before this suite. Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { buildDeb } from "../../deploy/deb/build.ts";
import {
  MAX_BUNDLE_BYTES,
  writeGpuBundle,
} from "../../deploy/gpu_bundle/bundle.ts";
import { buildNvmlSim } from "../fixtures/libnvml_sim/build.ts";
import {
  APP_DIR,
  DENO_BIN,
  DENO_CACHE_DIR,
  DENO_VERSION,
  LIB_DIR,
  UNIT,
  WRAPPER,
} from "../../deploy/deb/layout.ts";
import { elfMachine } from "../../deploy/deb/runtime.ts";
import { exists, type Ran, run, tool } from "../deploy_util.ts";
import { tempDir } from "../temp_dir.ts";
import { ROOT } from "../cli_util.ts";

const CONF_DIR = "/etc/dpu-traceback";
const CONFIG = `${CONF_DIR}/config.yaml`;
const DEFAULTS = "/etc/default/dpu-traceback";
const LOGROTATE = "/etc/logrotate.d/dpu-traceback";
const LOG_DIR = "/var/log/dpu-traceback";
const VERSION = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
).version as string;

/** dpkg without a terminal: it must never ask. */
const DPKG_ENV = { DEBIAN_FRONTEND: "noninteractive" };

function ok(r: Ran, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

/** dpkg's status of the package ("ii", "rc"), or "" when it knows none. */
async function status(): Promise<string> {
  const r = await run("dpkg-query", [
    "-W",
    "-f=${db:Status-Abbrev}",
    "dpu-traceback",
  ]);
  return r.code === 0 ? r.stdout.trim() : "";
}

/**
 * `deb` repacked as version `version` with `config.yaml` changed: an
 * upgrade where both the administrator and the package changed the conffile.
 */
async function newerDeb(deb: string, dir: string, version: string) {
  const tree = join(dir, "tree");
  await Deno.mkdir(dir, { recursive: true });
  ok(await run("dpkg-deb", ["-R", deb, tree]), "dpkg-deb -R");
  const control = join(tree, "DEBIAN", "control");
  const text = await Deno.readTextFile(control);
  await Deno.writeTextFile(
    control,
    text.replace(`Version: ${VERSION}\n`, `Version: ${version}\n`),
  );
  const config = join(tree, CONFIG);
  await Deno.writeTextFile(
    config,
    (await Deno.readTextFile(config)) + "# a newer default\n",
  );
  const sum = ok(
    await run("md5sum", [CONFIG.slice(1)], { cwd: tree }),
    "md5sum",
  );
  const md5sums = join(tree, "DEBIAN", "md5sums");
  await Deno.writeTextFile(
    md5sums,
    (await Deno.readTextFile(md5sums)).split("\n")
      .map((line) => line.endsWith(`  ${CONFIG.slice(1)}`) ? sum.trim() : line)
      .join("\n"),
  );
  const out = join(dir, `dpu-traceback_${version}_amd64.deb`);
  ok(
    await run("dpkg-deb", [
      "--root-owner-group",
      "-Zgzip",
      "--build",
      tree,
      out,
    ]),
    "dpkg-deb --build",
  );
  return out;
}

/**
 * The package's libc floor (`Depends: libc6 (>= X)`) is the newest glibc
 * symbol version its `deno` binary needs (readelf -V), so that dpkg refuses
 * a system the runtime could not start on rather than install it.
 */
async function assertGlibcFloor(deb: string, deno: string): Promise<void> {
  const depends = ok(
    await run("dpkg-deb", ["-f", deb, "Depends"]),
    "dpkg-deb -f Depends",
  );
  const floor = /libc6 \(>= ([\d.]+)\)/.exec(depends)?.[1];
  assert.ok(floor !== undefined, depends);
  const needed = [
    ...ok(await run("readelf", ["-V", deno]), "readelf -V")
      .matchAll(/GLIBC_(\d+)\.(\d+)/g),
  ].map((m) => [Number(m[1]), Number(m[2])])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]).at(-1);
  assert.equal(floor, needed?.join("."), `${deno} needs glibc ${needed}`);
}

/** Rows 0..99 of a replay capture: rx rises 1000 a sample, 5000 on 20-39. */
function capture(): string {
  const t0 = 1_795_272_600_000_000_000n;
  const lines = ["timestamp,rx"];
  let rx = 10n ** 15n;
  for (let i = 0; i < 100; i++) {
    if (i > 0) rx += i >= 20 && i < 40 ? 5000n : 1000n;
    lines.push(`${t0 + BigInt(i) * 100_000n},${rx}`);
  }
  return lines.join("\n") + "\n";
}

const REPLAY_CONFIG = (eventLog: string) => `
monitors:
  - name: nic
    source: replay
    sample_period_ns: 100000
    depth: 8
    event_log: ${eventLog}
    columns:
      - { name: rx, data_id: "0x1020000100000000" }
    rules:
      - name: rx rises
        column: rx
        comparison_type: dt_gt
        comparison_value: 12000
`;

Deno.test("the amd64 package: lintian, install, run, upgrade with an edited conffile kept, remove, purge", async () => {
  assert.equal(Deno.uid(), 0, "dpkg -i needs root");
  tool("dpkg-deb", "dpkg-dev");
  const lintian = tool("lintian", "lintian");
  assert.equal(
    await status(),
    "",
    "dpu-traceback is installed here already; this test would replace it",
  );
  assert.ok(
    !await exists(CONF_DIR),
    `${CONF_DIR} exists; refusing to touch it`,
  );
  await using tmp = await tempDir("deb_test_");
  // Reproducible: built again, seconds later, from the same sources, the
  // package is the same, byte for byte, every file of it dated
  // SOURCE_DATE_EPOCH. A year ahead: dpkg-deb's clamping to it would leave
  // each build's own times, so only the build's stamping can pass this.
  const epoch = Math.floor(Date.now() / 1000) + 365 * 86_400;
  const options = {
    compression: "gzip",
    sourceDateEpoch: String(epoch),
  } as const;
  const deb = await buildDeb("amd64", tmp.path, options);
  const first = join(tmp.path, "first.deb");
  await Deno.rename(deb, first);
  assert.equal(await buildDeb("amd64", tmp.path, options), deb);
  ok(await run("cmp", [first, deb]), "the second build differs: cmp");
  const stamp = new Date(epoch * 1000).toISOString().slice(0, 16)
    .replace("T", " ");
  const entries = ok(
    await run("dpkg-deb", ["-c", deb], { env: { TZ: "UTC" } }),
    "dpkg-deb -c",
  )
    .split("\n").filter((line) => line !== "");
  assert.ok(entries.length > 100, `${entries.length} entries`);
  for (const line of entries) assert.ok(line.includes(` ${stamp} `), line);

  // Lintian: no errors (its warnings are listed in docs/building.md).
  const lint = await run(lintian, ["--tag-display-limit", "0", deb]);
  const errors = (lint.stdout + lint.stderr).split("\n")
    .filter((line) => line.startsWith("E: "));
  assert.deepEqual(errors, [], lint.stdout + lint.stderr);
  const tree = join(tmp.path, "tree");
  ok(await run("dpkg-deb", ["-x", deb, tree]), "dpkg-deb -x");
  await assertGlibcFloor(deb, join(tree, DENO_BIN));

  // The same package as the GPU truth check's bundle: run.py unpacks it
  // and runs the check with its Deno, with no Deno on PATH, against the
  // NVML simulator and its fake nvidia-smi.
  await gpuBundleRuns(deb, tmp.path);

  try {
    // Install: the files are there, the service is neither enabled nor started.
    const installed = ok(
      await run("dpkg", ["-i", deb], { env: DPKG_ENV }),
      "dpkg -i",
    );
    assert.match(installed, /installed; the service is not enabled or started/);
    assert.match(installed, /systemctl enable --now dpu-traceback.service/);
    assert.equal(await status(), "ii");
    for (
      const path of [
        WRAPPER,
        DENO_BIN,
        `${APP_DIR}/main.ts`,
        UNIT,
        CONFIG,
        DEFAULTS,
        LOGROTATE,
      ]
    ) {
      assert.ok(await exists(path), path);
    }
    assert.ok(await exists(`${APP_DIR}/node_modules/zod/package.json`));
    assert.equal((await Deno.stat(LOG_DIR)).mode! & 0o777, 0o750);
    assert.equal((await Deno.stat(CONF_DIR)).mode! & 0o777, 0o750);
    // systemd accepts the installed unit as it is (its ExecStart exists).
    const analyze = tool("systemd-analyze", "systemd");
    const verify = await run(analyze, ["verify", UNIT]);
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(verify.stdout + verify.stderr, "");
    const unit = await Deno.readTextFile(UNIT);
    assert.match(unit, new RegExp(`^ExecStart=${WRAPPER} run `, "m"));
    assert.ok(
      !await exists(
        "/etc/systemd/system/multi-user.target.wants/dpu-traceback.service",
      ),
    );

    // The command: offline (every HTTP(S) request to a closed port), on the
    // packaged runtime.
    const offline = {
      HTTP_PROXY: "http://127.0.0.1:9",
      HTTPS_PROXY: "http://127.0.0.1:9",
    };
    const version = ok(
      await run(WRAPPER, ["--version"], { env: offline }),
      "--version",
    );
    assert.match(
      version,
      new RegExp(`^dpu-traceback ${VERSION.replaceAll(".", "\\.")}$`, "m"),
    );
    assert.match(
      version,
      new RegExp(`^deno: ${DENO_VERSION.replaceAll(".", "\\.")} `, "m"),
    );
    ok(
      await run(WRAPPER, ["check-config", CONFIG], { env: offline }),
      "check-config",
    );
    // Run as root, Deno kept its compiled modules in DENO_CACHE_DIR and
    // wrote nothing into the package's tree: every file there is dpkg's.
    assert.ok(await exists(`${DENO_CACHE_DIR}/gen`), DENO_CACHE_DIR);
    const owned = new Set(
      ok(await run("dpkg-query", ["-L", "dpu-traceback"]), "dpkg-query -L")
        .split("\n"),
    );
    const stray = ok(await run("find", [LIB_DIR]), `find ${LIB_DIR}`)
      .split("\n").filter((path) => path !== "" && !owned.has(path));
    assert.deepEqual(stray, [], `not the package's, under ${LIB_DIR}`);
    // ... and changed none of dpkg's (node_modules included: Deno must not
    // touch it with --node-modules-dir=manual).
    assert.equal(
      ok(await run("dpkg", ["--verify", "dpu-traceback"]), "dpkg --verify"),
      "",
    );

    // A replay run: its files where the permissions allow them.
    await Deno.writeTextFile(`${CONF_DIR}/deb-test-capture.csv`, capture());
    await Deno.writeTextFile(
      `${CONF_DIR}/deb-test.yaml`,
      REPLAY_CONFIG(`${LOG_DIR}/deb-test-events.log`),
    );
    const replay = ok(
      await run(WRAPPER, [
        "run",
        "-c",
        `${CONF_DIR}/deb-test.yaml`,
        "--input",
        `${CONF_DIR}/deb-test-capture.csv`,
        "--listen",
        "off",
      ], { env: offline, cwd: "/" }),
      "replay run",
    );
    assert.match(replay, /^nic +rx rises /m);
    assert.ok((await Deno.stat(`${LOG_DIR}/deb-test-events.log`)).size > 0);
    // ... and only there: a capture outside /etc/dpu-traceback is refused,
    // naming the path.
    const outside = join(tmp.path, "capture.csv");
    await Deno.writeTextFile(outside, capture());
    const refused = await run(WRAPPER, [
      "run",
      "-c",
      `${CONF_DIR}/deb-test.yaml`,
      "--input",
      outside,
      "--listen",
      "off",
    ], { env: offline, cwd: "/" });
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.ok(refused.stderr.includes(outside), refused.stderr);

    // The administrator edits the configuration; the same package again
    // keeps the edit and never asks.
    const edited = (await Deno.readTextFile(CONFIG)) + "# edited by deb_test\n";
    await Deno.writeTextFile(CONFIG, edited);
    const again = ok(
      await run("dpkg", ["-i", deb], { env: DPKG_ENV }),
      "dpkg -i again",
    );
    assert.match(again, /upgraded/);
    assert.equal(await Deno.readTextFile(CONFIG), edited);
    // A newer version whose default changed too: with --force-confold
    // (what an unattended fleet upgrade passes) the edit stays and the
    // new default lands beside it.
    const newer = await newerDeb(deb, join(tmp.path, "newer"), `${VERSION}+1`);
    ok(
      await run("dpkg", ["--force-confold", "-i", newer], { env: DPKG_ENV }),
      "dpkg -i newer",
    );
    assert.equal(await Deno.readTextFile(CONFIG), edited);
    assert.match(
      await Deno.readTextFile(`${CONFIG}.dpkg-dist`),
      /# a newer default\n$/,
    );
    assert.equal(await status(), "ii");

    // Remove: the program goes; configuration and logs stay.
    ok(
      await run("dpkg", ["-r", "dpu-traceback"], { env: DPKG_ENV }),
      "dpkg -r",
    );
    assert.equal(await status(), "rc");
    for (const path of [WRAPPER, LIB_DIR, UNIT, DENO_CACHE_DIR]) {
      assert.ok(!await exists(path), `${path} is left after dpkg -r`);
    }
    assert.equal(await Deno.readTextFile(CONFIG), edited);
    for (
      const path of [DEFAULTS, LOGROTATE, `${LOG_DIR}/deb-test-events.log`]
    ) {
      assert.ok(await exists(path), `${path} is gone after dpkg -r`);
    }

    // Purge: nothing is left.
    ok(
      await run("dpkg", ["-P", "dpu-traceback"], { env: DPKG_ENV }),
      "dpkg -P",
    );
    assert.equal(await status(), "");
    for (const path of [CONF_DIR, DEFAULTS, LOGROTATE, LOG_DIR, LIB_DIR]) {
      assert.ok(!await exists(path), `${path} is left after dpkg -P`);
    }
  } finally {
    if (await status() !== "") {
      await run("dpkg", ["-P", "dpu-traceback"], { env: DPKG_ENV });
    }
  }
});

Deno.test("the arm64 package: its files, an aarch64 deno, and deno --version under qemu-user", async () => {
  tool("dpkg-deb", "dpkg-dev");
  const qemu = tool("qemu-aarch64", "qemu-user");
  // qemu-user runs the binary with the aarch64 loader and libraries from here.
  const sysroot = "/usr/aarch64-linux-gnu";
  assert.ok(
    await exists(`${sysroot}/lib/ld-linux-aarch64.so.1`) &&
      await exists(`${sysroot}/lib/libgcc_s.so.1`),
    `no aarch64 libraries in ${sysroot}: install the Debian packages ` +
      `"libc6-arm64-cross" and "libgcc-s1-arm64-cross", as .ci/run must`,
  );
  await using tmp = await tempDir("deb_test_arm64_");
  const deb = await buildDeb("arm64", tmp.path, { compression: "gzip" });
  const info = ok(
    await run("dpkg-deb", ["-f", deb, "Architecture", "Version"]),
    "dpkg-deb -f",
  );
  assert.equal(info, `Architecture: arm64\nVersion: ${VERSION}\n`);
  const list = ok(await run("dpkg-deb", ["-c", deb]), "dpkg-deb -c");
  const paths = list.split("\n").filter((l) => l !== "")
    .map((l) => l.split(/\s+/).slice(5).join(" ").replace(/^\./, ""));
  for (
    const path of [
      WRAPPER,
      DENO_BIN,
      `${APP_DIR}/main.ts`,
      `${APP_DIR}/deno.lock`,
      UNIT,
      CONFIG,
      DEFAULTS,
      LOGROTATE,
    ]
  ) {
    assert.ok(paths.includes(path), `${path} not in the arm64 package`);
  }
  assert.ok(
    paths.some((p) => p.startsWith(`${APP_DIR}/node_modules/.deno/yaml@`)),
  );

  const tree = join(tmp.path, "tree");
  ok(await run("dpkg-deb", ["-x", deb, tree]), "dpkg-deb -x");
  const deno = join(tree, DENO_BIN);
  assert.equal(await elfMachine(deno), 0xb7, "not an aarch64 ELF file");
  await assertGlibcFloor(deb, deno);
  const version = ok(
    await run(qemu, ["-L", sysroot, deno, "--version"]),
    "qemu-aarch64 deno --version",
  );
  assert.match(
    version,
    new RegExp(`^deno ${DENO_VERSION.replaceAll(".", "\\.")} .*aarch64`, "m"),
  );
  // The application too, on that runtime, offline, from the package's
  // node_modules (the wrapper's flags with the package's paths moved into
  // tree) and an empty DENO_DIR.
  const script = await Deno.readTextFile(join(tree, WRAPPER));
  const flags = [...script.matchAll(/^\t(--\S+) \\$/gm)].map((m) =>
    m[1].replaceAll(LIB_DIR, join(tree, LIB_DIR))
  );
  assert.ok(flags.includes("--cached-only"), script);
  const app = ok(
    await run(qemu, [
      "-L",
      sysroot,
      deno,
      "run",
      ...flags,
      join(tree, APP_DIR, "main.ts"),
      "--version",
    ], {
      env: {
        DENO_DIR: join(tmp.path, "deno-dir"),
        HTTP_PROXY: "http://127.0.0.1:9",
        HTTPS_PROXY: "http://127.0.0.1:9",
      },
    }),
    "qemu-aarch64: dpu-traceback --version",
  );
  assert.match(
    app,
    new RegExp(`^dpu-traceback ${VERSION.replaceAll(".", "\\.")}$`, "m"),
  );
  assert.match(app, /^deno: .*aarch64-unknown-linux-gnu/m);
});

/** Writes the GPU bundle from `deb` and runs its check for 2 s on the simulator. */
async function gpuBundleRuns(deb: string, dir: string): Promise<void> {
  const bundle = join(dir, "gpu-bundle");
  const bytes = await writeGpuBundle(bundle, { deb });
  assert.ok(bytes <= MAX_BUNDLE_BYTES, `${bytes} bytes`);
  const sim = await buildNvmlSim();
  try {
    const out = join(dir, "gpu-out");
    const checked = await new Deno.Command("python3", {
      args: [
        join(bundle, "run.py"),
        "--seconds",
        "2",
        "--period-ms",
        "1000",
        "--nvml-lib-dir",
        sim.dir,
        "--nvidia-smi",
        join(ROOT, "tests/fixtures/fake_nvidia_smi/nvidia-smi"),
        "--out",
        out,
      ],
      clearEnv: true,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: dir,
        NVML_SIM_GPUS: "2",
        NVML_SIM_TICKS: join(dir, "ticks"),
        // The fake nvidia-smi is a Deno script; the real one is not.
        FAKE_NVIDIA_SMI_DENO: Deno.execPath(),
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    const said = text.decode(checked.stdout) + text.decode(checked.stderr);
    assert.equal(checked.code, 0, said);
    assert.match(said, /No mismatch\./);
    assert.ok(await exists(join(out, "table.txt")));
  } finally {
    await sim.cleanup();
  }
}
