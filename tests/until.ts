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
