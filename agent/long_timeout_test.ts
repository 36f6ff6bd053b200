import assert from "node:assert/strict";
import { spawnMain } from "../tests/cli_util.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { longTimeout } from "./long_timeout.ts";

Deno.test("longTimeout waits the whole delay, past the longest single timer", async () => {
  const started = Date.now();
  let calls = 0;
  const fired = await new Promise<number>((resolve) => {
    longTimeout(
      () => {
        calls++;
        resolve(Date.now() - started);
      },
      60,
      7,
    );
  });
  assert.ok(fired >= 60, `fired after ${fired} ms`);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(calls, 1);
});

Deno.test("longTimeout can be cancelled between chained timers", async () => {
  let fired = false;
  const timer = longTimeout(() => fired = true, 40, 10);
  await new Promise((r) => setTimeout(r, 15));
  timer.clear();
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(fired, false);
});

Deno.test("a --duration past 2^31 ms runs until the signal, not zero seconds", async () => {
  await using dir = await tempDir("long-duration");
  // 3,000,000 s is 3e9 ms: past what one setTimeout can wait.
  const child = spawnMain([
    "demo",
    "--duration",
    "3000000",
    "--listen",
    "off",
    "--event-log",
    `${dir.path}/events.log`,
  ]);
  const output = Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  await new Promise((r) => setTimeout(r, 1500));
  let exitedEarly = true;
  try {
    child.kill("SIGTERM");
    exitedEarly = false;
  } catch {
    // Already gone: the deadline fired at once.
  }
  const status = await child.status;
  const [stdout, stderr] = await output;
  assert.equal(exitedEarly, false, `ended by itself: ${stdout}${stderr}`);
  assert.equal(status.code, 0, stderr);
  const samples = Number(
    /nic: ([\d,]+) samples/.exec(stdout)?.[1].replaceAll(",", ""),
  );
  assert.ok(samples > 1000, stdout);
});
