/**
 * The endpoint's thread is a V8 isolate of its own: every module it loads
 * at run time is resident a second time there. zod and yaml (the
 * configuration's, about 2.7 MB of that isolate's heap and 5 MB resident
 * for zod alone) are the main thread's; a value import that pulls them
 * onto the endpoint's thread (a constant or a helper kept beside a schema)
 * costs that memory for nothing. Type-only imports load nothing and are
 * not counted. The test walks the graph `deno info --json` resolves.
 *
 * @module
 */

import assert from "node:assert/strict";
import { moduleGraph, ROOT_URL } from "./module_graph.ts";

/** npm packages the worker must not load at run time. */
const MAIN_THREAD_ONLY = ["npm:/zod@", "npm:/yaml@"];

/** Each module `root` loads at run time, with the module that imports it. */
async function runtimeModules(root: string): Promise<Map<string, string>> {
  const graph = await moduleGraph(root);
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const resolve = (s: string) => {
    for (let i = 0; i < 10 && graph.redirects?.[s] !== undefined; i++) {
      s = graph.redirects[s];
    }
    return s;
  };
  const parent = new Map<string, string>([[resolve(graph.roots[0]), ""]]);
  const queue = [...parent.keys()];
  for (let i = 0; i < queue.length; i++) {
    for (const d of modules.get(queue[i])?.dependencies ?? []) {
      if (d.code === undefined || d.isDynamic) continue;
      const to = resolve(d.code.specifier);
      if (!parent.has(to)) {
        parent.set(to, queue[i]);
        queue.push(to);
      }
    }
  }
  return parent;
}

Deno.test("the endpoint's thread loads neither zod nor yaml", async () => {
  const loaded = await runtimeModules("endpoint/worker.ts");
  const chain = (s: string) => {
    const names = [];
    for (let at = s; at !== ""; at = loaded.get(at)!) {
      names.push(at.replace(ROOT_URL.href, ""));
    }
    return names.join(" <- ");
  };
  const wrong = [...loaded.keys()].filter((s) =>
    MAIN_THREAD_ONLY.some((p) => s.startsWith(p))
  );
  assert.deepEqual(wrong.map(chain), []);
});
