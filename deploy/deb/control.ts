/**
 * DEBIAN/control of the package: its name, version and maintainer (the
 * changelog's newest entry), architecture, dependencies and description.
 *
 * @module
 */

import type { Release } from "./changelog.ts";
import type { Arch } from "./layout.ts";

/**
 * The control file. `installedSizeKiB` is the unpacked size (dpkg's
 * Installed-Size, in KiB).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { controlFile } from "./control.ts";
 *
 * const text = controlFile(
 *   { version: "0.1.0", maintainer: "A <a@example.org>", epochSeconds: 0 },
 *   "arm64",
 *   120000,
 * );
 * assert.ok(text.includes("\nArchitecture: arm64\nMaintainer: A <a@example.org>\n"));
 * assert.ok(text.endsWith("\n"));
 * ```
 */
export function controlFile(
  { version, maintainer }: Release,
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
    `Maintainer: ${maintainer}`,
    `Installed-Size: ${installedSizeKiB}`,
    // The Deno runtime links glibc (and libgcc_s for unwinding); 2.27 is
    // the newest glibc symbol version Deno 2.9.6 needs on either
    // architecture (tests/e2e/deb_test.ts reads it with readelf -V).
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
