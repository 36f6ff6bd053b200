/**
 * Imports point one way. The table below is the architecture: each folder
 * (or top-level file) may import only from itself and the folders it
 * lists. The test walks the module graph Deno itself resolves
 * (`deno info --json`) from the entry points, the workers that no static
 * import reaches and the public API, and fails on any import against the
 * table or any cycle between folders. Tests and benchmarks are not in the
 * graph: they may import anything.
 *
 * @module
 */

import assert from "node:assert/strict";
import { INCLUDES } from "../deploy/permissions.ts";
import { moduleGraph, ROOT_URL } from "./module_graph.ts";

/** Everything under the CLI: what the CLI and the public API may use. */
const BELOW_CLI = [
  "base",
  "logging",
  "deploy",
  "config",
  "ffi",
  "rules",
  "events",
  "collectors",
  "review",
  "metrics",
  "alerts",
  "endpoint",
  "agent",
];

/**
 * Who may import whom, lowest layer first. `base` is what every layer may
 * use (exact u64 arithmetic, errorMessage); the device-facing layers sit
 * above the configuration; the Agent wires them; the CLI is the top.
 */
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  "base": [],
  "logging": ["base"],
  "deploy": ["base"],
  "config": ["base", "deno.json"],
  "ffi": ["base"],
  "rules": ["base", "config"],
  "events": ["base", "config", "ffi", "rules"],
  "collectors": ["base", "config", "ffi", "rules"],
  "review": ["base", "config", "events"],
  "metrics": ["base", "config", "rules", "events", "collectors"],
  "alerts": ["base", "config", "rules", "events", "collectors", "metrics"],
  "endpoint": [
    "base",
    "logging",
    "config",
    "rules",
    "events",
    "collectors",
    "review",
    "metrics",
    "alerts",
  ],
  "agent": [
    "base",
    "logging",
    "config",
    "rules",
    "events",
    "collectors",
    "metrics",
    "alerts",
    "endpoint",
  ],
  "cli": BELOW_CLI,
  "main.ts": ["cli", "base", "logging"],
  "mod.ts": BELOW_CLI,
};

/** One import: the importing module and the imported one, root-relative. */
interface Edge {
  readonly from: string;
  readonly to: string;
}

/** The folder of a root-relative path, or the file itself at the top. */
function placeOf(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? path : path.slice(0, slash);
}

/** Every import between two of our files, from `roots` (root-relative). */
async function moduleEdges(roots: readonly string[]): Promise<Edge[]> {
  const edges = await Promise.all(roots.map(rootEdges));
  return edges.flat();
}

/** Every import between two of our files reachable from `root`. */
async function rootEdges(root: string): Promise<Edge[]> {
  const graph = await moduleGraph(root);
  const ours = (specifier: string) =>
    specifier.startsWith(ROOT_URL.href)
      ? decodeURIComponent(specifier.slice(ROOT_URL.href.length))
      : undefined;
  const edges: Edge[] = [];
  for (const module of graph.modules) {
    const from = ours(module.specifier);
    if (from === undefined) continue;
    for (const dependency of module.dependencies ?? []) {
      for (const resolved of [dependency.code, dependency.type]) {
        const to = resolved === undefined
          ? undefined
          : ours(resolved.specifier);
        if (to !== undefined) edges.push({ from, to });
      }
    }
  }
  return edges;
}

/** Imports the table does not allow, one line each. */
function violations(
  edges: readonly Edge[],
  layers: Readonly<Record<string, readonly string[]>>,
): string[] {
  const found = new Set<string>();
  for (const { from, to } of edges) {
    const a = placeOf(from);
    const b = placeOf(to);
    if (a === b) continue;
    const allowed = layers[a];
    if (allowed === undefined) {
      found.add(`${from}: ${a} is not in the layering table`);
    } else if (!allowed.includes(b)) {
      found.add(
        `${from} imports ${to}: ${a} may import only ${
          allowed.join(", ") || "nothing else"
        }`,
      );
    }
  }
  return [...found].sort();
}

/** Cycles between places (folders), each as `a -> b -> a`. */
function cycles(edges: readonly { from: string; to: string }[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const a = placeOf(from);
    const b = placeOf(to);
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    next.get(a)!.add(b);
  }
  const found = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (place: string) => {
    state.set(place, "open");
    path.push(place);
    for (const b of [...(next.get(place) ?? [])].sort()) {
      if (state.get(b) === "open") {
        found.add([...path.slice(path.indexOf(b)), b].join(" -> "));
      } else if (state.get(b) === undefined) {
        visit(b);
      }
    }
    path.pop();
    state.set(place, "done");
  };
  for (const place of [...next.keys()].sort()) {
    if (state.get(place) === undefined) visit(place);
  }
  return [...found];
}

Deno.test("the layering table itself has no cycle", () => {
  const edges = Object.entries(LAYERS).flatMap(([from, tos]) =>
    tos.map((to) => ({ from: `${from}/x`, to: `${to}/x` }))
  );
  assert.deepEqual(cycles(edges), []);
});

Deno.test("the checks catch an import against the table and a cycle", () => {
  const edges: Edge[] = [
    { from: "rules/monitor.ts", to: "collectors/collector.ts" },
    { from: "collectors/sim.ts", to: "rules/sample_sink.ts" },
    { from: "rules/ring.ts", to: "rules/reference_rule.ts" },
  ];
  assert.deepEqual(violations(edges, LAYERS), [
    "rules/monitor.ts imports collectors/collector.ts: rules may import only base, config",
  ]);
  assert.deepEqual(cycles(edges), ["collectors -> rules -> collectors"]);
  assert.deepEqual(
    violations([{ from: "x/a.ts", to: "base/u64.ts" }], LAYERS),
    [
      "x/a.ts: x is not in the layering table",
    ],
  );
});

Deno.test("every import in the agent, its workers and mod.ts follows the layering table", async () => {
  const workers = INCLUDES.filter((path) => path.endsWith(".ts"));
  const edges = await moduleEdges(["main.ts", "mod.ts", ...workers]);
  // The walk must reach every layer, or it checked nothing.
  const places = new Set(
    edges.flatMap((e) => [placeOf(e.from), placeOf(e.to)]),
  );
  for (const place of Object.keys(LAYERS)) {
    assert.ok(places.has(place), `the module graph never reaches ${place}`);
  }
  assert.deepEqual(violations(edges, LAYERS), []);
  assert.deepEqual(cycles(edges), []);
});
