/**
 * Helpers for tests/deploy_test.ts and tests/e2e/deploy_tools_test.ts: the system tools it drives
 * (systemd-analyze, logrotate, shellcheck), a temporary root that
 * deploy/install.sh installs into, and snapshots of a directory tree.
 *
 * @module
 */

import { join } from "node:path";
import { ROOT } from "./cli_util.ts";

/** The repository's deploy/ directory. */
export const DEPLOY: string = join(ROOT, "deploy");

/** Where install.sh puts things, relative to its root (see the script). */
export const PATHS = {
  bin: "usr/local/bin/dpu-traceback",
  unit: "etc/systemd/system/dpu-traceback.service",
  logrotate: "etc/logrotate.d/dpu-traceback",
  confDir: "etc/dpu-traceback",
  config: "etc/dpu-traceback/config.yaml",
  defaults: "etc/default/dpu-traceback",
  logDir: "var/log/dpu-traceback",
} as const;

/** A finished command. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// Debian keeps logrotate in /usr/sbin, which a non-root PATH may lack.
const EXTRA_DIRS = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/**
 * The absolute path of `name`, or an error saying which Debian package to
 * install: a missing tool fails the test rather than skipping it, so CI
 * cannot pass without checking the deploy files.
 */
export function tool(name: string, debianPackage: string): string {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":"), ...EXTRA_DIRS];
  for (const dir of dirs) {
    if (dir === "") continue;
    const path = join(dir, name);
    try {
      const info = Deno.statSync(path);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return path;
    } catch {
      // not in this directory
    }
  }
  throw new Error(
    `${name} not found: this test needs it; install the Debian package ` +
      `"${debianPackage}" (apt-get install -y ${debianPackage}), as .ci/run must`,
  );
}

/** Runs `cmd args` and collects its exit code and output. */
export async function run(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; clearEnv?: boolean } =
    {},
): Promise<Ran> {
  const out = await new Deno.Command(cmd, {
    args: [...args],
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.clearEnv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

/** Runs deploy/install.sh with `args` (as `sh install.sh`, as dash would). */
export function installSh(args: readonly string[]): Promise<Ran> {
  return run("sh", [join(DEPLOY, "install.sh"), ...args], { cwd: ROOT });
}

/**
 * Writes a stand-in for the compiled agent: a shell script that answers
 * `--version` (install.sh runs it to catch a binary for another machine).
 * `tag` makes two builds differ.
 */
export async function fakeBinary(dir: string, tag = "0.1.0"): Promise<string> {
  const path = join(dir, "dpu-traceback");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho "dpu-traceback ${tag}"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/**
 * A temporary root with dpu-traceback installed by install.sh (and a fake
 * binary), plus what `systemd-analyze verify --root` needs to load the unit:
 * the host's own unit files (for multi-user.target, network-online.target
 * and the rest of the start transaction) and /bin/kill (ExecReload=).
 * Verifying the tree install.sh wrote, with the unit unchanged, also checks
 * that the unit's ExecStart= names the path install.sh installs to.
 */
export async function installedRoot(tmp: string): Promise<string> {
  const root = join(tmp, "root");
  await Deno.mkdir(root);
  const installed = await installSh(["--root", root, await fakeBinary(tmp)]);
  if (installed.code !== 0) {
    throw new Error(`install.sh failed: ${installed.stderr}`);
  }
  const hostUnits = ["/usr/lib/systemd/system", "/lib/systemd/system"].find(
    (dir) => isDirectory(dir),
  );
  if (hostUnits === undefined) {
    throw new Error(
      'no /usr/lib/systemd/system: install the Debian package "systemd"',
    );
  }
  await Deno.mkdir(join(root, "usr/lib/systemd"), { recursive: true });
  const copied = await run("cp", [
    "-a",
    hostUnits,
    join(root, "usr/lib/systemd/system"),
  ]);
  if (copied.code !== 0) throw new Error(`cp failed: ${copied.stderr}`);
  await Deno.mkdir(join(root, "bin"), { recursive: true });
  await Deno.copyFile(tool("kill", "procps"), join(root, "bin/kill"));
  await Deno.chmod(join(root, "bin/kill"), 0o755);
  return root;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** One entry of a tree snapshot. */
export interface Entry {
  readonly kind: "file" | "dir" | "link";
  /** Permission bits, e.g. 0o644. */
  readonly mode: number;
  readonly ino: number | null;
  readonly mtimeMs: number | null;
  /** File content, or a link's target. */
  readonly content?: string;
}

/**
 * Every path under `root` (relative) with kind, mode, inode, mtime and
 * content: equal snapshots mean nothing was rewritten, not even with the
 * same bytes.
 */
export async function snapshot(root: string): Promise<Record<string, Entry>> {
  const out: Record<string, Entry> = {};
  async function walk(rel: string): Promise<void> {
    for await (const e of Deno.readDir(join(root, rel))) {
      const path = rel === "" ? e.name : `${rel}/${e.name}`;
      const full = join(root, path);
      const info = await Deno.lstat(full);
      const base = {
        mode: (info.mode ?? 0) & 0o7777,
        ino: info.ino,
        mtimeMs: info.mtime?.getTime() ?? null,
      };
      if (info.isSymlink) {
        out[path] = {
          kind: "link",
          ...base,
          content: await Deno.readLink(full),
        };
      } else if (info.isDirectory) {
        out[path] = { kind: "dir", ...base };
        await walk(path);
      } else {
        out[path] = {
          kind: "file",
          ...base,
          content: await Deno.readTextFile(full),
        };
      }
    }
  }
  await walk("");
  return out;
}

/** Permission bits of `path`, e.g. 0o755. */
export async function modeOf(path: string): Promise<number> {
  return ((await Deno.stat(path)).mode ?? 0) & 0o7777;
}

/** Whether `path` exists (without following a final symlink). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * The `[Service]` (or other section's) settings of a unit file: each key
 * with its values in order (a key may repeat, e.g. DeviceAllow=).
 */
export function unitSettings(
  text: string,
  section: string,
): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = header[1];
      continue;
    }
    if (current !== section) continue;
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

/**
 * ExecStart= expanded as systemd does it: `${VAR}` is one argument, a word
 * that is just `$VAR` splits at whitespace (zero or more arguments).
 */
export function expandExec(
  line: string,
  env: Record<string, string>,
): string[] {
  const args: string[] = [];
  for (const word of line.trim().split(/\s+/)) {
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (bare) {
      args.push(...(env[bare[1]] ?? "").split(/\s+/).filter((w) => w !== ""));
      continue;
    }
    args.push(
      word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, v) => env[v] ?? ""),
    );
  }
  return args;
}

/**
 * `NAME=value` assignments of an EnvironmentFile (comments and blank lines
 * skipped). Throws on a line systemd would not read as an assignment.
 */
export function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not NAME=value: ${raw}`);
    env[m[1]] = m[2];
  }
  return env;
}
