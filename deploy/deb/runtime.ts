/**
 * Deno's runtime for the package, from npm: Deno publishes its Linux
 * binaries as `@deno/linux-x64-glibc` and `@deno/linux-arm64-glibc`, which
 * the npm registry serves where dl.deno.land (and so `denort`) cannot be
 * reached. `npm pack` fetches the tarball, which must hash to the
 * integrity pinned in deploy/deb/layout.ts, and the `deno` binary is taken
 * out of it.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join } from "node:path";
import { type Arch, ARCHES, DENO_VERSION } from "./layout.ts";

/** Runs a command, throwing with its output when it fails. */
export async function mustRun(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const stdout = decoder.decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `${cmd} ${args.join(" ")} failed (${out.code}):\n${stdout}${
        decoder.decode(out.stderr)
      }`,
    );
  }
  return stdout;
}

/** The ELF e_machine of the file at `path` (0x3e x86-64, 0xb7 aarch64). */
export async function elfMachine(path: string): Promise<number> {
  using file = await Deno.open(path);
  const head = new Uint8Array(20);
  let got = 0;
  while (got < head.length) {
    const n = await file.read(head.subarray(got));
    if (n === null) break;
    got += n;
  }
  const magic = [0x7f, 0x45, 0x4c, 0x46];
  if (got < 20 || magic.some((b, i) => head[i] !== b)) {
    throw new Error(`${path} is not an ELF file`);
  }
  // EI_DATA 1: little-endian (both architectures here).
  return head[18] | (head[19] << 8);
}

/**
 * The Subresource Integrity string (`sha512-` and base64) of `bytes`, as
 * npm's `dist.integrity` gives it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { integrityOf } from "./runtime.ts";
 *
 * assert.ok(integrityOf(new Uint8Array()).startsWith("sha512-z4PhNX7vuL3x"));
 * ```
 */
export function integrityOf(bytes: Uint8Array): string {
  return `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
}

/**
 * Puts Deno's binary for `arch` at `dest` (mode 0755), checking that the
 * tarball it came from is the pinned one and the binary is built for that
 * architecture. The tarball is kept in `cacheDir`, so a second build
 * fetches nothing; a kept tarball that does not match is refused too.
 */
export async function fetchDeno(
  arch: Arch,
  dest: string,
  cacheDir: string,
): Promise<void> {
  const { npm, integrity, elfMachine: machine } = ARCHES[arch];
  await Deno.mkdir(cacheDir, { recursive: true });
  const tarball = join(
    cacheDir,
    `${npm.slice(1).replace("/", "-")}-${DENO_VERSION}.tgz`,
  );
  try {
    await Deno.stat(tarball);
  } catch {
    await mustRun("npm", [
      "pack",
      "--silent",
      `${npm}@${DENO_VERSION}`,
      "--pack-destination",
      cacheDir,
    ]);
  }
  const found = integrityOf(await Deno.readFile(tarball));
  if (found !== integrity) {
    throw new Error(
      `${tarball} is not ${npm}@${DENO_VERSION} as pinned in deploy/deb/layout.ts: its integrity is ${found}, not ${integrity}; delete it to fetch it again`,
    );
  }
  const unpacked = await Deno.makeTempDir({ dir: cacheDir });
  try {
    await mustRun("tar", ["-xzf", tarball, "-C", unpacked, "package/deno"]);
    await Deno.copyFile(join(unpacked, "package", "deno"), dest);
    await Deno.chmod(dest, 0o755);
  } finally {
    await Deno.remove(unpacked, { recursive: true });
  }
  const built = await elfMachine(dest);
  if (built !== machine) {
    throw new Error(
      `${npm}'s deno is for ELF machine 0x${built.toString(16)}, not ${arch}`,
    );
  }
}
