/**
 * What loading a module costs a process in anonymous memory (issue 32's
 * 40 MB goal): for each case, a child Deno process under the demo's V8
 * flag and MALLOC_ARENA_MAX imports it and then idles; its RssAnon is read
 * from /proc/PID/status `--settle` seconds later. The cases: nothing, zod,
 * yaml, config/values.ts, config/load.ts, agent/agent.ts, cli/run.ts, one
 * idle Worker, and config/load.ts loaded in a Worker that parses
 * deploy/demo.yaml, posts the result and is terminated (whether a
 * short-lived Worker gives its memory back).
 *
 * Run: deno run -A bench/import_cost.ts [--settle 7]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { ROOT } from "../tests/cli_util.ts";
import { integerOption } from "./options.ts";
import { loadavg } from "./proc_cpu.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { settle: { type: "string", default: "7" } },
});
const SETTLE_S = integerOption(values, "settle", 1);

// The child: `import` a module, or start a Worker, then idle.
const CHILD = `
const [kind, what] = Deno.args;
if (kind === "import") await import(what);
if (kind === "worker" || kind === "config-worker") {
  const source = kind === "worker"
    ? "self.onmessage = () => {};"
    : \`import { loadConfig } from \${JSON.stringify(what)};
       self.onmessage = async (e) => self.postMessage(await loadConfig(e.data));\`;
  const url = "data:application/javascript," + encodeURIComponent(source);
  const worker = new Worker(url, { type: "module" });
  if (kind === "config-worker") {
    await new Promise((r) => {
      worker.onmessage = r;
      worker.postMessage(Deno.args[2]);
    });
    worker.terminate();
  }
}
console.log("ready");
setInterval(() => {}, 1000);
`;

const module = (path: string) => new URL(`../${path}`, import.meta.url).href;
const CASES: [string, string[]][] = [
  ["nothing", ["none"]],
  ["zod", ["import", "zod"]],
  ["yaml", ["import", "yaml"]],
  ["config/values.ts", ["import", module("config/values.ts")]],
  ["config/load.ts", ["import", module("config/load.ts")]],
  ["agent/agent.ts", ["import", module("agent/agent.ts")]],
  ["cli/run.ts", ["import", module("cli/run.ts")]],
  ["one idle Worker", ["worker"]],
  [
    "config/load.ts in a Worker that ended",
    ["config-worker", module("config/load.ts"), join(ROOT, "deploy/demo.yaml")],
  ],
];

async function rssAnonMb(args: string[]): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "dpu-traceback-import-" });
  try {
    const child = join(dir, "child.ts");
    await Deno.writeTextFile(child, CHILD);
    const process = new Deno.Command(Deno.execPath(), {
      // The repository's config, so that zod and yaml resolve as the agent's.
      args: [
        "run",
        "-A",
        "--config",
        join(ROOT, "deno.json"),
        "--v8-flags=--max-semi-space-size=1",
        child,
        ...args,
      ],
      env: { MALLOC_ARENA_MAX: "2" },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = process.stdout.getReader();
    await reader.read(); // "ready"
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const status = await Deno.readTextFile(`/proc/${process.pid}/status`);
    process.kill("SIGKILL");
    reader.releaseLock();
    await process.stdout.cancel();
    await process.status;
    return Number(/^RssAnon:\s+(\d+) kB$/m.exec(status)![1]) / 1024;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

console.log(`load average at start: ${loadavg()}`);
let bare = NaN;
console.log("| loaded | RssAnon (MB) | over nothing |");
console.log("| --- | --- | --- |");
for (const [name, args] of CASES) {
  const mb = await rssAnonMb(args);
  if (name === "nothing") bare = mb;
  const over = name === "nothing" ? "-" : `+${(mb - bare).toFixed(1)}`;
  console.log(`| ${name} | ${mb.toFixed(1)} | ${over} |`);
}
console.log(`load average at end: ${loadavg()}`);
