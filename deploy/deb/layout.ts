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
/**
 * The application's sources: main.ts, every module it or a worker imports,
 * deno.json, deno.lock, and node_modules/ holding exactly the npm packages
 * deno.lock pins, so that nothing is fetched at run time.
 */
export const APP_DIR = `${LIB_DIR}/app`;
/**
 * DENO_DIR at run time: the modules Deno has transpiled and V8's code
 * caches, so that a start after the first does not compile the agent again.
 * Not the package's: the unit's CacheDirectory= makes it, writable under
 * ProtectSystem=strict, and postrm removes it. A user who cannot write it
 * runs the agent all the same, compiling in memory.
 */
export const DENO_CACHE_DIR = "/var/cache/dpu-traceback";
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

/** Where the package's Deno runtime comes from, for one architecture. */
export interface DenoRuntime {
  /** Deno's npm package holding the `deno` binary. */
  readonly npm: string;
  /**
   * The Subresource Integrity of that package's DENO_VERSION tarball
   * (`npm view PACKAGE@VERSION dist.integrity`): the build refuses any other
   * bytes, whatever the registry serves.
   */
  readonly integrity: string;
  /** The ELF e_machine of the binary (0x3e x86-64, 0xb7 aarch64). */
  readonly elfMachine: number;
}

/** Per architecture: where its Deno runtime comes from. */
export const ARCHES: Readonly<Record<Arch, DenoRuntime>> = {
  amd64: {
    npm: "@deno/linux-x64-glibc",
    integrity:
      "sha512-3md4TKLCuzsLDmfOoC5KN7NAZaxSVkMgm64vg6foD00JBADCpYS2/5QqXfzgnP5ZQz3iLP9vBQJtEgc116OAoQ==",
    elfMachine: 0x3e,
  },
  arm64: {
    npm: "@deno/linux-arm64-glibc",
    integrity:
      "sha512-poqhoH9B3nYloigEMPT5t8HY+wBeiuea1An5Q7fqgJzP0SYmWsoS/oUnWO/pEiA4ofzIBy1Elt/in58xKtxEoQ==",
    elfMachine: 0xb7,
  },
};

/** The Deno version the package ships: the one the project is built and tested with. */
export const DENO_VERSION = "2.9.6";
