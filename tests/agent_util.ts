/**
 * A running agent for endpoint tests: started through the CLI, its
 * endpoint address read from the line it prints, stopped with SIGTERM.
 *
 * @module
 */

import { spawnMain } from "./cli_util.ts";

/** A started agent and how to talk to it. */
export interface StartedAgent {
  /** The endpoint, e.g. `http://127.0.0.1:41234/`. */
  readonly url: string;
  /** GET `path` (e.g. `/metrics`) with optional headers. */
  get(path: string, headers?: HeadersInit): Promise<Response>;
  /** Polls `/readyz` until it answers 200 (at most `timeoutMs`). */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Polls `path` until `accept` holds for its body; returns that body. */
  waitFor(
    path: string,
    accept: (body: string) => boolean,
    timeoutMs?: number,
  ): Promise<string>;
  /** Sends `signal` to the agent. */
  signal(signal: Deno.Signal): void;
  /** `dpu_traceback_samples_total` of its first monitor, from the snapshot. */
  samples(): Promise<number>;
  /** SIGTERM, then the exit code and everything printed. */
  stop(): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Waits for the agent to end by itself (`--duration`), then as stop(). */
  ended(): Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * Spawns the CLI with `args` and waits for its `metrics on URL` line.
 * `client` sets how requests are made (e.g. trusting a test CA).
 */
export async function startedAgent(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    client?: Deno.HttpClient;
    authorization?: string;
    /** Deno's flags (default `-A`) and the working directory, as spawnMain. */
    flags?: readonly string[];
    cwd?: string;
  } = {},
): Promise<StartedAgent> {
  const child = spawnMain(args, {
    env: options.env,
    flags: options.flags,
    cwd: options.cwd,
  });
  const stderrChunks: string[] = [];
  const decoder = new TextDecoder();
  const reader = child.stderr.getReader();
  let url: string | undefined;
  let seen = "";
  const deadline = Date.now() + 30_000;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) {
      // An agent that exited on its own (a bad config) cannot be killed;
      // its stderr is what the error must show.
      try {
        child.kill("SIGKILL");
      } catch {
        // already ended
      }
      await child.status;
      throw new Error(`agent printed no endpoint address; stderr: ${seen}`);
    }
    seen += decoder.decode(value, { stream: true });
    url = /metrics on (\S+)/.exec(seen)?.[1];
  }
  stderrChunks.push(seen);
  // Keep draining stderr so the child never blocks on a full pipe.
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      stderrChunks.push(decoder.decode(value, { stream: true }));
    }
  })();
  const endpoint = url;

  const get = (path: string, headers: HeadersInit = {}) =>
    fetch(new URL(path.replace(/^\//, ""), endpoint), {
      headers: {
        ...(options.authorization === undefined
          ? {}
          : { authorization: options.authorization }),
        ...headers,
      },
      client: options.client,
    });

  const waitFor = async (
    path: string,
    accept: (body: string) => boolean,
    timeoutMs = 20_000,
  ): Promise<string> => {
    const end = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < end) {
      const res = await get(path);
      last = `${res.status} ${await res.text()}`;
      const body = last.slice(last.indexOf(" ") + 1);
      if (res.ok && accept(body)) return body;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `${path} never matched; last answer: ${last.slice(0, 500)}`,
    );
  };

  const ended = async () => {
    const [status, stdout] = await Promise.all([
      child.status,
      new Response(child.stdout).text(),
    ]);
    await drained;
    return { code: status.code, stdout, stderr: stderrChunks.join("") };
  };

  return {
    url: endpoint,
    get,
    waitFor,
    async waitReady(timeoutMs = 20_000) {
      await waitFor("/readyz", () => true, timeoutMs);
    },
    signal(signal: Deno.Signal) {
      child.kill(signal);
    },
    async samples() {
      const snapshot = await (await get("/api/v1/snapshot")).json();
      return snapshot.monitors[0].samples;
    },
    stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone: its status says how it ended.
      }
      return ended();
    },
    ended,
  };
}
