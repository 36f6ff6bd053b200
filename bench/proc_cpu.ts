/**
 * A process's CPU as /proc counts it, and the min / median / max of
 * repeated figures: what the side-by-side benches (sampler.ts,
 * doca_compare.ts) measure an agent and its C reference with.
 *
 * @module
 */

/** The load average line, as /proc/loadavg has it. */
export const loadavg = (): string =>
  Deno.readTextFileSync("/proc/loadavg").trim();

/** utime + stime of `pid`, s (fields 14 and 15 of /proc/PID/stat). */
export function cpuSeconds(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Run time of each live thread of `pid`, ns, with its name, by TID. */
export function threadRunNs(
  pid: number,
): Map<number, { comm: string; ns: number }> {
  const threads = new Map<number, { comm: string; ns: number }>();
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const at = `/proc/${pid}/task/${task.name}`;
      const ns = Number(Deno.readTextFileSync(`${at}/schedstat`).split(" ")[0]);
      const comm = Deno.readTextFileSync(`${at}/comm`).trim();
      threads.set(Number(task.name), { comm, ns });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}

/** The median of `xs` (not empty). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** `min / median / max` of `xs`, to `digits` decimals. */
export function range(xs: readonly number[], digits = 2): string {
  return `${Math.min(...xs).toFixed(digits)} / ${
    median(xs).toFixed(digits)
  } / ${Math.max(...xs).toFixed(digits)}`;
}
