/**
 * The `review` command: its arguments go to the review tool, its messages
 * to the operator's log.
 *
 * @module
 */

import type { Logger } from "../logging/logger.ts";
import { runReview, stdio } from "../review/cli.ts";

/**
 * Reviews the events logs `args` name and returns the exit code (see
 * `review --help`).
 *
 * @example
 * ```ts ignore
 * const code = await reviewCommand(["/var/log/dpu-traceback", "--rule", "ECN"], log);
 * ```
 */
export function reviewCommand(
  args: readonly string[],
  log: Logger,
): Promise<number> {
  return runReview(
    args,
    stdio({
      error: (m) => log.error(m),
      warn: (m) => log.warn(m),
      info: (m) => log.info(m),
    }),
  );
}
