/**
 * What waking up costs a Deno program on this machine, whatever it then
 * does: the loops a sampler could wait in, each for `--seconds` (default 5)
 * at a 10 ms and a 1 ms period (each case run once unmeasured before),
 * CPU (`process.cpuUsage()`, every thread of the process) per wake-up and
 * wake-ups per second:
 *
 * - `pollOnSchedule` on `setTimeout` (the agent's loop at 5 ms and up);
 * - `setInterval`;
 * - `pollOnSchedule` waiting in libc's `usleep` on a thread of Deno's pool
 *   (`nonblocking` FFI: the kernel source's loop under 5 ms);
 * - a Worker blocked in `Atomics.wait` until each due time;
 *
 * and the first three again reading `lo`'s netdev statistics files each
 * wake-up (`SysfsCounterSet`, as the kernel source reads them).
 *
 * Run: deno run -A bench/wakeup.ts [--seconds 5]
 *
 * @module
 */

import process from "node:process";
import { parseArgs } from "node:util";
import {
  netdevCounterFiles,
  SysfsCounterSet,
} from "../collectors/kernel/sysfs_counters.ts";
import { pollOnSchedule } from "../collectors/schedule.ts";
import { openLibcSleep } from "../ffi/libc.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { seconds: { type: "string", default: "5" } },
});
const SECONDS = Number(values.seconds);
if (!(SECONDS >= 1)) {
  throw new RangeError(`--seconds must be at least 1, got "${values.seconds}"`);
}

const files = netdevCounterFiles("lo");
const counters = SysfsCounterSet.open(files);
const record = new Uint32Array(2 * files.length);
/** One wake-up's work: nothing, or every netdev file of `lo`. */
const WORK = {
  nothing: () => {},
  reads: () => {
    for (let i = 0; i < counters.count; i++) {
      counters.readOne(i, record, 2 * i);
    }
  },
};
type Work = keyof typeof WORK;

/** Runs `loop` for SECONDS: wake-ups a second and CPU µs a wake-up. */
async function measure(
  loop: (
    periodMs: number,
    work: () => void,
    signal: AbortSignal,
  ) => Promise<number>,
  periodMs: number,
  work: Work,
): Promise<{ perSecond: number; cpuUs: number }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), SECONDS * 1000);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const wakeups = await loop(periodMs, WORK[work], stop.signal);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearTimeout(timer);
  return {
    perSecond: wakeups / seconds,
    cpuUs: (cpu.user + cpu.system) / wakeups,
  };
}

const LOOPS: Record<
  string,
  (periodMs: number, work: () => void, signal: AbortSignal) => Promise<number>
> = {
  "pollOnSchedule, setTimeout": async (periodMs, work, signal) => {
    let n = 0;
    await pollOnSchedule({
      periodMs,
      signal,
      poll: () => {
        n++;
        work();
      },
    });
    return n;
  },
  "setInterval": (periodMs, work, signal) =>
    new Promise((resolve) => {
      let n = 0;
      const id = setInterval(() => {
        n++;
        work();
      }, periodMs);
      signal.addEventListener("abort", () => {
        clearInterval(id);
        resolve(n);
      });
    }),
  "pollOnSchedule, usleep on Deno's pool": async (periodMs, work, signal) => {
    const libc = openLibcSleep();
    let n = 0;
    let sleeping: Promise<unknown> = Promise.resolve();
    try {
      await pollOnSchedule({
        periodMs,
        signal,
        wait: (ms) => sleeping = libc.symbols.usleep(Math.round(ms * 1000)),
        poll: () => {
          n++;
          work();
        },
      });
      await sleeping;
    } finally {
      libc.close();
    }
    return n;
  },
};

/** A Worker that waits in Atomics.wait to each due time, for SECONDS. */
async function atomicsWorker(
  periodMs: number,
): Promise<{ perSecond: number; cpuUs: number }> {
  const code = `
    self.onmessage = ({ data }) => {
      const cell = new Int32Array(new SharedArrayBuffer(4));
      self.postMessage("started");
      const end = performance.now() + data.seconds * 1000;
      let due = performance.now();
      let n = 0;
      while (due < end) {
        due += data.periodMs;
        const ms = due - performance.now();
        if (ms > 0) Atomics.wait(cell, 0, 0, ms);
        n++;
      }
      self.postMessage(n);
    };`;
  const worker = new Worker(
    URL.createObjectURL(new Blob([code], { type: "text/javascript" })),
    { type: "module" },
  );
  try {
    // Counted from the worker's first wait: its start-up is not a wake-up.
    let cpu0 = process.cpuUsage();
    let t0 = performance.now();
    const done = new Promise<number>((resolve) => {
      worker.onmessage = (e) => {
        if (e.data === "started") {
          cpu0 = process.cpuUsage();
          t0 = performance.now();
        } else resolve(e.data);
      };
    });
    worker.postMessage({ periodMs, seconds: SECONDS });
    const n = await done;
    const cpu = process.cpuUsage(cpu0);
    return {
      perSecond: n / ((performance.now() - t0) / 1000),
      cpuUs: (cpu.user + cpu.system) / n,
    };
  } finally {
    worker.terminate();
  }
}

const rows: string[] = [];
const row = (
  loop: string,
  periodMs: number,
  work: Work,
  r: { perSecond: number; cpuUs: number },
) =>
  rows.push(
    `| ${loop} | ${periodMs} ms | ${
      work === "nothing" ? "-" : `${files.length} netdev files`
    } | ${r.perSecond.toFixed(1)} | ${r.cpuUs.toFixed(0)} |`,
  );

// Each case once unmeasured first, so that the figures are not V8's
// compiling the loop.
for (const periodMs of [10, 1]) {
  for (const [name, loop] of Object.entries(LOOPS)) {
    for (const work of ["nothing", "reads"] as const) {
      await measure(loop, periodMs, work);
      row(name, periodMs, work, await measure(loop, periodMs, work));
    }
  }
  row(
    "a Worker in Atomics.wait",
    periodMs,
    "nothing",
    await atomicsWorker(periodMs),
  );
}
counters.close();

console.log(`Deno ${Deno.version.deno}, ${SECONDS} s a case`);
console.log(
  "| loop | period | each wake-up reads | wake-ups/s | CPU µs a wake-up |",
);
console.log("| --- | --- | --- | --- | --- |");
for (const r of rows) console.log(r);
