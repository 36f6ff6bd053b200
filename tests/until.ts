/**
 * Waiting for a condition that something else makes true (a Worker, a
 * timer, a child process), looking every few milliseconds. The time limit
 * is a backstop that turns a hang into a failure naming what never came,
 * not a bound on how fast it must come: give it minutes' worth of room.
 *
 * @module
 */

/** Resolves once `ok()` holds; throws `timed out waiting for WHAT` after `ms`. */
export async function until(
  what: string,
  ok: () => boolean,
  ms = 30_000,
): Promise<void> {
  const end = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > end) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * `promise`'s outcome, or a failure naming `what` once `ms` have passed
 * without one: for a step that must not hang (a read that must be refused
 * at once), so that a regression fails the test instead of stalling it.
 * The timer is cleared as soon as `promise` settles.
 */
export async function settles<T>(
  what: string,
  promise: Promise<T>,
  ms = 30_000,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${what}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
