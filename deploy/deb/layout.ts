/**
 * Where the Debian package puts things, and the two architectures it is
 * built for: the one list that deploy/deb/build.ts, the wrapper, the tests
 * and docs/service.md follow.
 *
 * @module
 */

/** The package's own tree: the Deno runtime, the application, its cache. */
export const LIB_DIR = "/usr/lib/dpu-traceback";
/** The packaged Deno runtime (the `deno` binary of the npm package). */
export const DENO_BIN = `${LIB_DIR}/deno`;
/** The application's sources: main.ts, every module it or a worker imports, deno.json, deno.lock. */
export const APP_DIR = `${LIB_DIR}/app`;
/** DENO_DIR: the locked npm dependencies, so that nothing is fetched at run time. */
export const CACHE_DIR = `${LIB_DIR}/cache`;
/** The command: a POSIX sh wrapper that runs main.ts with the binary's permissions. */
export const WRAPPER = "/usr/bin/dpu-traceback";
/** The systemd unit, where units that belong to packages go. */
export const UNIT = "/lib/systemd/system/dpu-traceback.service";
/** Conffiles: dpkg keeps an edited one on upgrade. */
export const CONFFILES: readonly string[] = [
  "/etc/dpu-traceback/config.yaml",
  "/etc/default/dpu-traceback",
  "/etc/logrotate.d/dpu-traceback",
];
/** The package's documentation directory (copyright, changelog). */
export const DOC_DIR = "/usr/share/doc/dpu-traceback";

/** A Debian architecture the package is built for. */
export type Arch = "amd64" | "arm64";

/** Per architecture: Deno's npm package and the ELF e_machine of its binary. */
export const ARCHES: Readonly<
  Record<Arch, { readonly npm: string; readonly elfMachine: number }>
> = {
  amd64: { npm: "@deno/linux-x64-glibc", elfMachine: 0x3e },
  arm64: { npm: "@deno/linux-arm64-glibc", elfMachine: 0xb7 },
};

/** The Deno version the package ships: the one the project is built and tested with. */
export const DENO_VERSION = "2.9.6";
