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

import { setSignalDisposition, SIG_IGN, SIGXFSZ } from "../ffi/libc.ts";

/**
 * Ignores SIGXFSZ for the whole process (the kernel's `SIG_IGN`, through
 * libc, where FFI is granted; otherwise a Deno signal listener) until the
 * returned function is called, which puts the previous disposition back.
 * Call it once for a run that writes events logs; on Windows, which has no
 * such signal, it does nothing.
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
  // Ignored by the kernel, the signal never reaches the process, and the
  // failed write's EFBIG is what the writer acts on. A Deno signal
  // listener is not enough: under concurrent failing writes (several
  // threads) some SIGXFSZ still took the default action and ended the
  // process (2 runs in 10 on a 2-core machine; 0 in 10 with SIG_IGN).
  // Asked first, not tried: on a terminal, Deno.dlopen without FFI stops
  // the run at "Deno requests ffi access to libc.so.6. Allow?". Only the
  // unscoped permission will do: a scoped --allow-ffi=libc.so.6 is taken
  // as ./libc.so.6, and Deno.UnsafePointer needs the unscoped one anyway.
  if (Deno.permissions.querySync({ name: "ffi" }).state === "granted") {
    try {
      const previous = setSignalDisposition(SIGXFSZ, SIG_IGN);
      let restored = false;
      return () => {
        if (restored) return;
        restored = true;
        setSignalDisposition(SIGXFSZ, previous);
      };
    } catch {
      // No glibc (musl, another libc): fall back to the listener.
    }
  }
  // No FFI (the demo task's permissions) or no glibc: a listener is the
  // best Deno offers, and holds for writes that fail one at a time.
  const listener = () => {};
  Deno.addSignalListener("SIGXFSZ", listener);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    Deno.removeSignalListener("SIGXFSZ", listener);
  };
}
