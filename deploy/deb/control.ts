/**
 * DEBIAN/control of the package: its name, version (deno.json's),
 * architecture, dependencies and description.
 *
 * @module
 */

import type { Arch } from "./layout.ts";

/** Who answers for the package (Debian's Maintainer field). */
export const MAINTAINER =
  "dpu-traceback maintainers <maintainers@users.noreply.a-seed-c8a17677.example>";

/**
 * The control file. `installedSizeKiB` is the unpacked size (dpkg's
 * Installed-Size, in KiB).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { controlFile } from "./control.ts";
 *
 * const text = controlFile("0.1.0", "arm64", 120000);
 * assert.ok(text.includes("\nArchitecture: arm64\n"));
 * assert.ok(text.endsWith("\n"));
 * ```
 */
export function controlFile(
  version: string,
  arch: Arch,
  installedSizeKiB: number,
): string {
  if (!/^[0-9][A-Za-z0-9.+~-]*$/.test(version)) {
    throw new Error(`not a Debian version: ${version}`);
  }
  return [
    "Package: dpu-traceback",
    `Version: ${version}`,
    `Architecture: ${arch}`,
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${installedSizeKiB}`,
    // The Deno runtime links glibc (and libgcc_s for unwinding).
    "Depends: libc6 (>= 2.27), libgcc-s1",
    "Recommends: systemd, logrotate",
    "Section: admin",
    "Priority: optional",
    "Description: telemetry agent for BlueField DPUs and their GPUs",
    " dpu-traceback samples a DPU's diagnostic counters (DOCA Telemetry Diag or",
    " the kernel's), and a GPU's through NVML, evaluates rules over them,",
    " writes each event's samples to an events log and serves Prometheus",
    " metrics. The package carries its own Deno runtime and locked",
    " dependencies, runs offline, and installs a hardened systemd unit that",
    " it never enables or starts by itself.",
    "",
  ].join("\n");
}
