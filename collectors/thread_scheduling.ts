/**
 * A sampling thread's own scheduling: raised above the host's other work
 * where the process is allowed to, so that a busy host delays its samples
 * less. What it got is said once, at start.
 *
 * @module
 */

import { type LibcClock, PRIO_PROCESS, SCHED_FIFO } from "../ffi/libc_clock.ts";
import { errnoName } from "../ffi/libc_file.ts";

/**
 * The real-time priority the sampler asks for: the lowest there is. It
 * runs before every ordinary thread of the host and after every real-time
 * one (the kernel's own, an operator's); the thread sleeps between samples,
 * so it takes a few per cent of a core at most, and the kernel's real-time
 * throttling bounds it even if it spun.
 */
export const SAMPLER_FIFO_PRIORITY = 1;

/** The nice value asked for when real-time scheduling is refused. */
export const SAMPLER_NICE = -10;

/** What {@linkcode raiseThreadScheduling} got. */
export interface ThreadScheduling {
  /** `fifo` (SCHED_FIFO), `nice` (a negative nice) or `default` (neither allowed). */
  readonly kind: "fifo" | "nice" | "default";
  /** One line for the operator: what it runs at, and why not more. */
  readonly text: string;
}

/**
 * Gives the calling thread SCHED_FIFO at {@linkcode SAMPLER_FIFO_PRIORITY},
 * or failing that a nice of {@linkcode SAMPLER_NICE}, or leaves it; says
 * which and, when refused, with which error. Never throws for a refusal.
 *
 * @example Refused everything (a process without CAP_SYS_NICE or rlimits)
 * ```ts
 * import assert from "node:assert/strict";
 * import { raiseThreadScheduling } from "./thread_scheduling.ts";
 * import type { LibcClock } from "../ffi/libc_clock.ts";
 *
 * const errno = new Int32Array([1]); // EPERM
 * const refusing = {
 *   sched_setscheduler: () => -1,
 *   setpriority: () => -1,
 *   __errno_location: () => Deno.UnsafePointer.of(errno),
 * } as unknown as LibcClock["symbols"];
 * const got = raiseThreadScheduling(refusing);
 * assert.equal(got.kind, "default");
 * assert.match(got.text, /SCHED_FIFO refused: EPERM; nice -10 refused: EPERM/);
 * ```
 */
export function raiseThreadScheduling(
  libc: LibcClock["symbols"],
): ThreadScheduling {
  const errno = () =>
    errnoName(new Deno.UnsafePointerView(libc.__errno_location()!).getInt32());
  const param = new Int32Array([SAMPLER_FIFO_PRIORITY]);
  if (libc.sched_setscheduler(0, SCHED_FIFO, param) === 0) {
    return {
      kind: "fifo",
      text: `SCHED_FIFO priority ${SAMPLER_FIFO_PRIORITY}`,
    };
  }
  const fifo = `SCHED_FIFO refused: ${errno()}`;
  if (libc.setpriority(PRIO_PROCESS, 0, SAMPLER_NICE) === 0) {
    return { kind: "nice", text: `nice ${SAMPLER_NICE} (${fifo})` };
  }
  return {
    kind: "default",
    text:
      `the default priority (${fifo}; nice ${SAMPLER_NICE} refused: ${errno()}); a busy host can delay its samples: grant LimitRTPRIO=1 (docs/service.md)`,
  };
}
