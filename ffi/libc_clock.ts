/**
 * libc's monotonic clock, its absolute-deadline sleep and the calls that
 * set a thread's scheduling. Declarations and the `timespec` layout only:
 * which deadline, which policy and what to do when refused are the
 * sampler's call (collectors/sampler_loop.ts, collectors/thread_scheduling.ts).
 *
 * @module
 */

/** `CLOCK_REALTIME` on Linux: wall time, ns since the Unix epoch. */
export const CLOCK_REALTIME = 0;
/** `CLOCK_MONOTONIC` on Linux. */
export const CLOCK_MONOTONIC = 1;
/** `TIMER_ABSTIME`: `clock_nanosleep`'s request is a deadline, not a length. */
export const TIMER_ABSTIME = 1;
/** `SCHED_FIFO` on Linux. */
export const SCHED_FIFO = 1;
/** `PRIO_PROCESS`: `setpriority`'s `who` is a thread (0: the caller). */
export const PRIO_PROCESS = 0;

/**
 * The symbols the sampler thread binds. Every call blocks the calling
 * thread (none is `nonblocking`): the sampler's thread is meant to sleep in
 * `clock_nanosleep`, outside any event loop.
 */
export const LIBC_CLOCK_SYMBOLS = {
  /** `int clock_gettime(clockid_t clock, struct timespec *tp)`. */
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
  /**
   * `int clock_nanosleep(clockid_t clock, int flags, const struct timespec
   * *request, struct timespec *remain)`: returns 0 or an errno (EINTR when
   * a signal handler ran on this thread).
   */
  clock_nanosleep: {
    parameters: ["i32", "i32", "buffer", "pointer"],
    result: "i32",
  },
  /**
   * `int sched_setscheduler(pid_t pid, int policy, const struct
   * sched_param *param)`: pid 0 is the calling thread on Linux.
   */
  sched_setscheduler: {
    parameters: ["i32", "i32", "buffer"],
    result: "i32",
  },
  /** `int setpriority(int which, id_t who, int prio)`: who 0 is the calling thread. */
  setpriority: { parameters: ["i32", "u32", "i32"], result: "i32" },
  /** `int *__errno_location(void)`: the calling thread's errno. */
  __errno_location: { parameters: [], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc opened with {@linkcode LIBC_CLOCK_SYMBOLS}. */
export type LibcClock = Deno.DynamicLibrary<typeof LIBC_CLOCK_SYMBOLS>;

/** Opens libc with the clock symbols. Throws without FFI permission. */
export function openLibcClock(): LibcClock {
  return Deno.dlopen("libc.so.6", LIBC_CLOCK_SYMBOLS);
}

/**
 * Nanoseconds of a `struct timespec` held as four 32-bit words (`tv_sec`
 * then `tv_nsec`, each a little-endian 64-bit `long` on x86_64 and
 * aarch64), as a float: exact to the ns for 104 days of uptime, to 2 ns
 * after that, which is ample for deadlines and intervals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { setTimespecNs, timespecNs } from "./libc_clock.ts";
 *
 * const ts = new Uint32Array(4);
 * setTimespecNs(ts, 3_000_000_123);
 * assert.deepEqual([...ts], [3, 0, 123, 0]);
 * assert.equal(timespecNs(ts), 3_000_000_123);
 * ```
 */
export function timespecNs(ts: Uint32Array): number {
  return (ts[0] + ts[1] * 4294967296) * 1e9 + ts[2];
}

/** Writes `ns` (0 or more) into a four-word `struct timespec`; see {@linkcode timespecNs}. */
export function setTimespecNs(ts: Uint32Array, ns: number): void {
  const sec = Math.floor(ns / 1e9);
  ts[0] = sec % 4294967296;
  ts[1] = Math.floor(sec / 4294967296);
  ts[2] = ns - sec * 1e9;
  ts[3] = 0;
}
