/**
 * Deno's runtime for the package, from npm: Deno publishes its Linux
 * binaries as `@deno/linux-x64-glibc` and `@deno/linux-arm64-glibc`, which
 * the npm registry serves where dl.deno.land (and so `denort`) cannot be
 * reached. `npm pack` fetches the tarball and the `deno` binary is taken
 * out of it.
 *
 * @module
 */

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
 * Puts Deno's binary for `arch` at `dest` (mode 0755), checking that it is
 * built for that architecture. The tarball is kept in `cacheDir`, so a
 * second build fetches nothing.
 */
export async function fetchDeno(
  arch: Arch,
  dest: string,
  cacheDir: string,
): Promise<void> {
  const { npm, elfMachine: machine } = ARCHES[arch];
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
  const unpacked = await Deno.makeTempDir({ dir: cacheDir });
  try {
    await mustRun("tar", ["-xzf", tarball, "-C", unpacked, "package/deno"]);
    await Deno.copyFile(join(unpacked, "package", "deno"), dest);
    await Deno.chmod(dest, 0o755);
  } finally {
    await Deno.remove(unpacked, { recursive: true });
  }
  const found = await elfMachine(dest);
  if (found !== machine) {
    throw new Error(
      `${npm}'s deno is for ELF machine 0x${found.toString(16)}, not ${arch}`,
    );
  }
}
