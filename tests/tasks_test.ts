/**
 * deno.json's tasks as a fresh machine runs them: none may stop at a
 * permission question, and the README's first command, `deno task demo`,
 * runs with its own flags (read from deno.json, never copied here) and
 * needs no permission they do not grant.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startedAgent } from "./agent_util.ts";
import { ROOT } from "./cli_util.ts";
import { tempDir } from "./temp_dir.ts";

const TASKS = (JSON.parse(
  await Deno.readTextFile(join(ROOT, "deno.json")),
) as { tasks: Record<string, string> }).tasks;

/** The `deno <subcommand> ...` commands of a task, as words. */
function denoCommands(task: string): string[][] {
  return task.split("&&").map((c) => withoutEnv(c.trim().split(/\s+/)))
    .filter((words) => words[0] === "deno");
}

/** `words` without the NAME=value words that set the command's environment. */
function withoutEnv(words: string[]): string[] {
  return words.slice(words.findIndex((w) => !/^\w+=/.test(w)));
}

Deno.test("every task that runs code says --no-prompt: none stops at a question on a terminal", () => {
  for (const [name, task] of Object.entries(TASKS)) {
    for (const words of denoCommands(task)) {
      if (!["run", "test", "compile", "bench"].includes(words[1])) continue;
      assert.ok(
        words.includes("--no-prompt"),
        `task "${name}": ${words.slice(0, 2).join(" ")} without --no-prompt`,
      );
    }
  }
});

/** One line of DENO_AUDIT_PERMISSIONS's JSONL: a permission Deno checked. */
interface Audited {
  readonly permission: string;
  /** The path, host, variable... checked; null for the whole permission. */
  readonly value: string | null;
}

/**
 * Whether `flags` (`--allow-read`, `--allow-net=127.0.0.1`, ...) grant
 * `entry`: its permission unscoped, or a scope that is the value or holds
 * it (a directory above a path, a host before `:port`).
 */
function granted(flags: readonly string[], entry: Audited): boolean {
  if (flags.includes("-A") || flags.includes("--allow-all")) return true;
  const flag = `--allow-${entry.permission}`;
  if (flags.includes(flag)) return true;
  const scoped = flags.find((f) => f.startsWith(`${flag}=`));
  if (scoped === undefined) return false;
  // A null value is Deno checking a Worker's permissions against the
  // parent's; a Worker asking beyond them fails to start, and the run with it.
  if (entry.value === null) return true;
  const value = entry.value;
  return scoped.slice(flag.length + 1).split(",").some((scope) =>
    value === scope || value.startsWith(`${scope}/`) ||
    value.startsWith(`${scope}:`)
  );
}

Deno.test("the demo task's own flags run the demo with no terminal: no question, no permission refused, and a SIGXFSZ does not end it", async () => {
  const all = TASKS.demo.split(/\s+/);
  const words = withoutEnv(all);
  // The environment the task sets (MALLOC_ARENA_MAX), as it sets it.
  const taskEnv: Record<string, string> = Object.fromEntries(
    all.slice(0, all.length - words.length).map((w) => [
      w.slice(0, w.indexOf("=")),
      w.slice(w.indexOf("=") + 1),
    ]),
  );
  assert.deepEqual(words.slice(0, 2), ["deno", "run"], TASKS.demo);
  const main = words.indexOf("main.ts");
  assert.ok(main > 2, TASKS.demo);
  const flags = words.slice(2, main);
  assert.ok(flags.includes("--no-prompt"), TASKS.demo);
  // In a directory of its own, so that demo-out/ lands there, not in the tree.
  await using dir = await tempDir("tasks_test_");
  const audit = join(dir.path, "audit.jsonl");
  // The endpoint on a free port (the test default), not the demo's 9477.
  const agent = await startedAgent(
    [...words.slice(main + 1), "--duration", "2"],
    {
      flags,
      cwd: dir.path,
      env: { ...taskEnv, DENO_AUDIT_PERMISSIONS: audit },
    },
  );
  // What the agent keeps SIGXFSZ from doing (events/file_size_signal.ts):
  // ending the process, with its rows unwritten. The endpoint's line comes
  // after runAgent() has dealt with the signal.
  agent.signal("SIGXFSZ");
  const { code, stdout, stderr } = await agent.ended();
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /requests|NotCapable|PermissionDenied/);
  assert.match(stdout, /events log demo-out\/events\.log/);
  assert.ok((await Deno.stat(join(dir.path, "demo-out/events.log"))).size > 0);
  // Refused permissions can be caught and go unsaid (a prompt without
  // --no-prompt, on a terminal): every one Deno checked must be granted.
  const checked = (await Deno.readTextFile(audit)).trimEnd().split("\n")
    .map((line) => JSON.parse(line) as Audited);
  assert.ok(checked.length > 0);
  const refused = checked.filter((entry) => !granted(flags, entry))
    .map((e) => `${e.permission} ${e.value}`);
  assert.deepEqual([...new Set(refused)], [], `the demo task's flags refuse`);
});
