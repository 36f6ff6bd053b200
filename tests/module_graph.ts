/**
 * The module graph Deno itself resolves from one of our files
 * (`deno info --json`), for the tests that check what imports what.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

/** The repository root, as a URL. */
export const ROOT_URL: URL = new URL("../", import.meta.url);

/** What `deno info --json` says of a graph, as far as the tests read it. */
export interface ModuleGraph {
  roots: string[];
  redirects?: Record<string, string>;
  modules: {
    specifier: string;
    dependencies?: {
      code?: { specifier: string };
      type?: { specifier: string };
      isDynamic?: boolean;
    }[];
  }[];
}

/** The graph from `root` (root-relative); fails the test when Deno cannot resolve it. */
export async function moduleGraph(root: string): Promise<ModuleGraph> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: fileURLToPath(ROOT_URL),
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  assert.equal(
    out.code,
    0,
    `deno info failed: ${new TextDecoder().decode(out.stderr)}`,
  );
  return JSON.parse(new TextDecoder().decode(out.stdout));
}
