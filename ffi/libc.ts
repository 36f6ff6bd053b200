/**
 * libc's `signal(2)`, to set a signal's disposition at the OS level, and
 * `usleep(3)` for a wait off the event loop. Declarations only: which
 * signal, how long and why are the caller's call. The file calls that read
 * sysfs counters in place are in libc_file.ts.
 *
 * @module
 */

/** `SIGXFSZ` on Linux (x86_64 and aarch64 alike). */
export const SIGXFSZ = 25;
/** `SIG_DFL` as a handler address: the default action. */
export const SIG_DFL = 0n;
/** `SIG_IGN` as a handler address: the kernel discards the signal. */
export const SIG_IGN = 1n;

/** The symbols of libc the agent binds. */
export const LIBC_SYMBOLS = {
  /** `sighandler_t signal(int signum, sighandler_t handler)`. */
  signal: { parameters: ["i32", "pointer"], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The C library's soname on glibc systems (the DPU's Ubuntu and hosts alike). */
export const LIBC_SONAME = "libc.so.6";

/**
 * libc's `usleep`, called on a thread of Deno's pool (`nonblocking`): a
 * wait that does not go through the event loop's timers.
 */
export const LIBC_SLEEP_SYMBOLS = {
  /** `int usleep(useconds_t usec)`. */
  usleep: { parameters: ["u32"], result: "i32", nonblocking: true },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc opened with {@linkcode LIBC_SLEEP_SYMBOLS}. */
export type LibcSleep = Deno.DynamicLibrary<typeof LIBC_SLEEP_SYMBOLS>;

/** Opens libc with `usleep`. Throws without FFI permission. */
export function openLibcSleep(): LibcSleep {
  return Deno.dlopen(LIBC_SONAME, LIBC_SLEEP_SYMBOLS);
}

/**
 * Sets the disposition of `signum` to `handler` (an address: `SIG_IGN`,
 * `SIG_DFL`, or what an earlier call returned) and returns the previous
 * one. Throws when libc cannot be opened (no FFI permission, another libc).
 *
 * @example Ignore a signal, then put the previous disposition back
 * ```ts
 * import assert from "node:assert/strict";
 * import { setSignalDisposition, SIG_IGN, SIGXFSZ } from "./libc.ts";
 *
 * const previous = setSignalDisposition(SIGXFSZ, SIG_IGN);
 * assert.equal(setSignalDisposition(SIGXFSZ, previous), SIG_IGN);
 * ```
 */
export function setSignalDisposition(signum: number, handler: bigint): bigint {
  const libc = Deno.dlopen(LIBC_SONAME, LIBC_SYMBOLS);
  try {
    const previous = libc.symbols.signal(
      signum,
      Deno.UnsafePointer.create(handler),
    );
    return Deno.UnsafePointer.value(previous);
  } finally {
    libc.close();
  }
}
