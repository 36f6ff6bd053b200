/**
 * `deno task deb [--arch amd64|arm64] [--out DIR]`: builds the Debian
 * package dist/dpu-traceback_VERSION_ARCH.deb. Deno's runtime for the
 * architecture comes from npm (deploy/deb/runtime.ts), the application and
 * its locked npm dependencies are vendored (deploy/deb/vendor.ts) and the
 * result is checked to run offline before it is packed. Needs `npm`,
 * `tar`, `gzip` and `dpkg-deb`; network only for npm, at build time.
 *
 * The same sources build the same bytes: every file carries the date of
 * deploy/deb/changelog's newest entry (or `SOURCE_DATE_EPOCH` where it is
 * set), and nothing the registry serves at build time but the pinned
 * packages goes in.
 *
 * The package's layout is deploy/deb/layout.ts; its maintainer scripts
 * are deploy/deb/postinst, prerm and postrm. Prints the .deb's path.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { lutimes } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { parseArgs } from "node:util";
import { newestRelease, type Release } from "./changelog.ts";
import { controlFile } from "./control.ts";
import {
  APP_DIR,
  type Arch,
  ARCHES,
  CONFFILES,
  DENO_BIN,
  DENO_CACHE_DIR,
  DENO_VERSION,
  DOC_DIR,
  LIB_DIR,
  UNIT,
  WRAPPER,
} from "./layout.ts";
import { fetchDeno, mustRun } from "./runtime.ts";
import { copyApp, installDependencies } from "./vendor.ts";
import { wrapperFlags, wrapperScript } from "./wrapper.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repository. */
export const ROOT: string = join(HERE, "..", "..");
const DEPLOY = join(ROOT, "deploy");

/**
 * The release being packaged: deploy/deb/changelog's newest entry, whose
 * version must be deno.json's (the agent's `--version`).
 */
export async function packageRelease(): Promise<Release> {
  const release = newestRelease(
    await Deno.readTextFile(join(HERE, "changelog")),
  );
  const json = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  if (release.version !== json.version) {
    throw new Error(
      `deploy/deb/changelog's newest entry is version ${release.version}, but deno.json's version is ${json.version}: add an entry for ${json.version}`,
    );
  }
  return release;
}

/**
 * The time every file in the package carries, in seconds: `given` (the
 * reproducible-builds convention's SOURCE_DATE_EPOCH) where it is set,
 * else the release's date.
 */
function sourceDateEpoch(release: Release, given?: string): number {
  if (given === undefined) return release.epochSeconds;
  if (!/^\d{1,12}$/.test(given)) {
    throw new Error(
      `SOURCE_DATE_EPOCH must be whole seconds since the epoch, got ${
        JSON.stringify(given)
      }`,
    );
  }
  return Number(given);
}

/** Writes `text` to `root` + `path` with `mode`, creating directories. */
async function put(
  root: string,
  path: string,
  text: string | Uint8Array,
  mode: number,
): Promise<void> {
  const to = join(root, path);
  await Deno.mkdir(dirname(to), { recursive: true });
  if (typeof text === "string") await Deno.writeTextFile(to, text);
  else await Deno.writeFile(to, text);
  await Deno.chmod(to, mode);
}

/** Every regular file under `dir`, relative to it, sorted. */
async function filesUnder(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await filesUnder(path, base));
    else if (entry.isFile) out.push(relative(base, path));
  }
  return out.sort();
}

/**
 * Sets the time of `dir` and of everything under it, links included, to
 * `seconds`. dpkg-deb only clamps times to SOURCE_DATE_EPOCH, which leaves
 * a build's own times where the release date is later than the build.
 */
async function stampTimes(dir: string, seconds: number): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await stampTimes(path, seconds);
    else await lutimes(path, seconds, seconds);
  }
  await lutimes(dir, seconds, seconds);
}

/** Directories 0755 and files 0644 under `dir` (executables set after). */
async function normalizeModes(dir: string): Promise<void> {
  await Deno.chmod(dir, 0o755);
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await normalizeModes(path);
    else if (entry.isFile) await Deno.chmod(path, 0o644);
  }
}

/**
 * The unit, running the packaged command instead of /usr/local/bin's, with
 * a cache directory for the packaged Deno (DENO_CACHE_DIR) that
 * ProtectSystem=strict leaves writable.
 */
export async function packagedUnit(): Promise<string> {
  let unit = await Deno.readTextFile(join(DEPLOY, "dpu-traceback.service"));
  const edits: [string, string][] = [
    [
      [
        "# Installed by deploy/install.sh as /etc/systemd/system/dpu-traceback.service",
        "# (an administrator's unit, not a package's). Change it with a drop-in",
        "# (`systemctl edit dpu-traceback`), not by editing this file: install.sh",
        "# replaces it on upgrade. The device and extra options come from",
        "# /etc/default/dpu-traceback (see deploy/default).",
      ].join("\n"),
      [
        "# Installed by the dpu-traceback Debian package as",
        `# ${UNIT}. Change it with a drop-in`,
        "# (`systemctl edit dpu-traceback`), not by editing this file: dpkg",
        "# replaces it on upgrade. The device and extra options come from",
        "# /etc/default/dpu-traceback (a conffile).",
      ].join("\n"),
    ],
    ["ExecStart=/usr/local/bin/dpu-traceback ", `ExecStart=${WRAPPER} `],
    [
      "ConfigurationDirectoryMode=0750\n",
      [
        "ConfigurationDirectoryMode=0750",
        `# The packaged Deno's compiled modules (DENO_DIR=${DENO_CACHE_DIR}):`,
        "# kept between starts, so that only the first start compiles the agent.",
        "CacheDirectory=dpu-traceback",
        "CacheDirectoryMode=0700",
        "",
      ].join("\n"),
    ],
  ];
  for (const [from, to] of edits) {
    if (unit.split(from).length !== 2) {
      throw new Error(
        `deploy/dpu-traceback.service: no single ${JSON.stringify(from)}`,
      );
    }
    unit = unit.replace(from, to);
  }
  return unit;
}

/**
 * The agent in package tree `tree` (the build's stage, or a package
 * unpacked with `dpkg-deb -x`) with `args`, as the wrapper runs it but from
 * that tree, with DENO_DIR `denoDir` and every HTTP(S) request sent to a
 * closed port.
 */
export function treeAgent(
  tree: string,
  denoDir: string,
  args: readonly string[],
): Deno.Command {
  const app = join(tree, APP_DIR);
  return new Deno.Command(join(tree, DENO_BIN), {
    args: [
      "run",
      ...wrapperFlags().map((flag) => flag.replaceAll(APP_DIR, app)),
      join(app, "main.ts"),
      ...args,
    ],
    env: {
      DENO_DIR: denoDir,
      HTTP_PROXY: "http://127.0.0.1:9",
      HTTPS_PROXY: "http://127.0.0.1:9",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * `--version` of the staged agent with an empty DENO_DIR, offline
 * ({@linkcode treeAgent}): it must work without fetching anything and
 * without anything of the builder's.
 */
async function checkOffline(stage: string): Promise<void> {
  const denoDir = await Deno.makeTempDir({ prefix: "dpu-traceback-deb-dir-" });
  try {
    const out = await treeAgent(stage, denoDir, ["--version"]).output();
    if (!out.success) {
      throw new Error(
        `the staged agent's --version failed offline (${out.code}): ${
          new TextDecoder().decode(out.stderr)
        }`,
      );
    }
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
}

/** The host's Debian architecture, where it is one we build. */
function hostArch(): Arch | undefined {
  return Deno.build.arch === "x86_64"
    ? "amd64"
    : Deno.build.arch === "aarch64"
    ? "arm64"
    : undefined;
}

/** The copyright file: the agent's and what the package bundles. */
function copyright(): string {
  return [
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
    "Upstream-Name: dpu-traceback",
    "",
    "Files: *",
    "Copyright: the dpu-traceback authors",
    "License: unspecified",
    " The dpu-traceback sources state no license yet.",
    "",
    "Files: usr/lib/dpu-traceback/deno",
    "Copyright: 2018-2026 the Deno authors",
    "License: MIT",
    ` Deno ${DENO_VERSION}, from the npm packages @deno/linux-x64-glibc and`,
    " @deno/linux-arm64-glibc. The MIT license's text is in",
    " /usr/share/common-licenses/ on no Debian system; see",
    " https://github.com/denoland/deno/blob/main/LICENSE.md",
    "",
    "Files: usr/lib/dpu-traceback/app/node_modules/*",
    "Copyright: their authors (each package's LICENSE file beside it)",
    "License: various",
    " zod (MIT), yaml (ISC), csv-parse and csv-stringify (MIT), bcryptjs",
    " (BSD-3-Clause); the texts are in the packages' directories.",
    "",
  ].join("\n");
}

/** Lintian's overrides, installed where lintian looks for them. */
const LINTIAN_OVERRIDES = "/usr/share/lintian/overrides/dpu-traceback";
const LINTIAN_OVERRIDE_TEXT = [
  "# Deno's binary is Deno's release build, linked statically with its own",
  "# libraries (lcms2 through its image decoding); it is shipped as Deno",
  "# publishes it, not rebuilt against Debian's.",
  "dpu-traceback: embedded-library lcms2 [usr/lib/dpu-traceback/deno]",
  "",
].join("\n");

/**
 * `text` compressed as `gzip -9n` does it: no name, and time 0 in the
 * header (node:zlib writes neither).
 */
function gzipped(text: string): Uint8Array {
  return gzipSync(new TextEncoder().encode(text), { level: 9 });
}

/** How {@linkcode buildDeb} packs. */
export interface BuildOptions {
  /** `xz` (the default: the smallest package) or `gzip` (fast, for tests). */
  readonly compression?: "xz" | "gzip";
  /**
   * SOURCE_DATE_EPOCH: the time, in whole seconds since the epoch, that
   * every file carries. The newest changelog entry's date where unset.
   */
  readonly sourceDateEpoch?: string;
}

/** Builds the package for `arch` into `outDir`; returns the .deb's path. */
export async function buildDeb(
  arch: Arch,
  outDir: string,
  options: BuildOptions = {},
): Promise<string> {
  const release = await packageRelease();
  const epoch = sourceDateEpoch(release, options.sourceDateEpoch);
  await Deno.mkdir(outDir, { recursive: true });
  const stage = await Deno.makeTempDir({ prefix: "dpu-traceback-deb-" });
  try {
    await Deno.chmod(stage, 0o755);
    // The runtime and the application.
    await Deno.mkdir(join(stage, LIB_DIR), { recursive: true });
    await fetchDeno(arch, join(stage, DENO_BIN), join(outDir, "npm-cache"));
    await copyApp(ROOT, join(stage, APP_DIR));
    await installDependencies(join(stage, APP_DIR));
    if (arch === hostArch()) await checkOffline(stage);
    await normalizeModes(join(stage, LIB_DIR));
    await Deno.chmod(join(stage, DENO_BIN), 0o755);
    // The command, the unit, the configuration, logrotate.
    await put(stage, WRAPPER, wrapperScript(), 0o755);
    await put(stage, UNIT, await packagedUnit(), 0o644);
    const text = (name: string) => Deno.readTextFile(join(DEPLOY, name));
    await put(
      stage,
      "/etc/dpu-traceback/config.yaml",
      await text("example-config.yaml"),
      0o644,
    );
    await Deno.chmod(join(stage, "etc/dpu-traceback"), 0o750);
    await put(
      stage,
      "/etc/default/dpu-traceback",
      await text("default"),
      0o644,
    );
    await put(
      stage,
      "/etc/logrotate.d/dpu-traceback",
      await text("dpu-traceback.logrotate"),
      0o644,
    );
    await put(stage, `${DOC_DIR}/copyright`, copyright(), 0o644);
    await put(stage, LINTIAN_OVERRIDES, LINTIAN_OVERRIDE_TEXT, 0o644);
    await put(
      stage,
      `${DOC_DIR}/changelog.gz`,
      gzipped(await Deno.readTextFile(join(HERE, "changelog"))),
      0o644,
    );
    for (
      const dir of [
        "usr",
        "usr/bin",
        "usr/share",
        "usr/share/doc",
        "etc",
        "lib",
      ]
    ) {
      await Deno.chmod(join(stage, dir), 0o755);
    }
    // DEBIAN/: md5sums over what the package installs, before DEBIAN exists.
    const files = await filesUnder(stage);
    let md5sums = "";
    let bytes = 0;
    for (const file of files) {
      const content = await Deno.readFile(join(stage, file));
      md5sums += `${
        createHash("md5").update(content).digest("hex")
      }  ${file}\n`;
      bytes += content.length;
    }
    const debian = join(stage, "DEBIAN");
    await Deno.mkdir(debian, { mode: 0o755 });
    await Deno.chmod(debian, 0o755);
    await put(
      debian,
      "control",
      controlFile(release, arch, Math.ceil(bytes / 1024)),
      0o644,
    );
    await put(debian, "conffiles", CONFFILES.join("\n") + "\n", 0o644);
    await put(debian, "md5sums", md5sums, 0o644);
    for (const script of ["postinst", "prerm", "postrm"]) {
      await put(
        debian,
        script,
        await Deno.readTextFile(join(HERE, script)),
        0o755,
      );
    }
    await stampTimes(stage, epoch);
    const deb = join(
      outDir,
      `dpu-traceback_${release.version}_${arch}.deb`,
    );
    await mustRun("dpkg-deb", [
      "--root-owner-group",
      // xz is what the archive ships; gzip -1 builds in a tenth of the
      // time, for tests that install the package and throw it away.
      ...(options.compression === "gzip" ? ["-Zgzip", "-z1"] : ["-Zxz"]),
      "--build",
      stage,
      deb,
    ], { env: { SOURCE_DATE_EPOCH: String(epoch) } });
    return deb;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      arch: { type: "string", default: hostArch() ?? "amd64" },
      out: { type: "string", default: join(ROOT, "dist") },
    },
  });
  const arch = values.arch as Arch;
  if (!(arch in ARCHES)) {
    console.error(
      `deb: --arch must be one of ${Object.keys(ARCHES).join(", ")}`,
    );
    Deno.exit(2);
  }
  console.log(
    await buildDeb(arch, values.out, {
      sourceDateEpoch: Deno.env.get("SOURCE_DATE_EPOCH"),
    }),
  );
}
