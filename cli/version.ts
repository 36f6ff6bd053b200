/**
 * What `--version` prints: ours, the runtime's, and the device libraries
 * this machine would load.
 *
 * @module
 */

import { libraryVersions } from "../collectors/versions.ts";
import { VERSION } from "../config/version.ts";

/**
 * The `--version` text, one item per line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { versionText } from "./version.ts";
 *
 * const lines = versionText().split("\n");
 * assert.match(lines[0], /^dpu-traceback \d+\.\d+\.\d+/);
 * assert.ok(lines[1].startsWith(`deno: ${Deno.version.deno} (v8 `));
 * ```
 */
export function versionText(): string {
  return [
    `dpu-traceback ${VERSION}`,
    `deno: ${Deno.version.deno} (v8 ${Deno.version.v8}, ${Deno.build.target})`,
    ...libraryVersions(),
  ].join("\n");
}
