/**
 * Surviving the file size limit. A write that would take a file past
 * `RLIMIT_FSIZE` (`ulimit -f`, systemd's `LimitFSIZE=`) raises SIGXFSZ,
 * whose default action ends the process at once: every row still in the
 * events log's buffers is lost, and nothing says why. With the signal
 * handled, the write fails with EFBIG instead, and the events log treats
 * that as any other write error (counted, warned about, retried, rows kept
 * until its buffers are full).
 *
 * @module
 */

/**
 * Handles SIGXFSZ for the whole process, doing nothing with it, until the
 * returned function is called (which gives the signal its default action
 * back). Call it once for a run that writes events logs; not on Windows,
 * which has no such signal (there it does nothing).
 *
 * @example What a write past the limit raises no longer ends the process
 * ```ts
 * import assert from "node:assert/strict";
 * import { ignoreFileSizeSignal } from "./file_size_signal.ts";
 *
 * const restore = ignoreFileSizeSignal();
 * let survived = false;
 * try {
 *   if (Deno.build.os !== "windows") Deno.kill(Deno.pid, "SIGXFSZ");
 *   await new Promise((resolve) => setTimeout(resolve, 50));
 *   survived = true;
 * } finally {
 *   restore();
 * }
 * assert.equal(survived, true);
 * ```
 */
export function ignoreFileSizeSignal(): () => void {
  if (Deno.build.os === "windows") return () => {};
  // A listener, however empty, replaces the default action; the failed
  // write's EFBIG is what the writer acts on.
  const listener = () => {};
  Deno.addSignalListener("SIGXFSZ", listener);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    Deno.removeSignalListener("SIGXFSZ", listener);
  };
}
