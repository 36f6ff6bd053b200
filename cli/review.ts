/**
 * The `review` command: parse its arguments, then review the logs they
 * name, writing to the process's streams and the operator's log.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { LOG_DIR } from "../deploy/permissions.ts";
import type { Logger } from "../logging/logger.ts";
import {
  DEFAULT_REVIEW_FILE,
  type ReviewDefaults,
  type ReviewIo,
  reviewLogs,
  stdio,
} from "../review/review.ts";
import { parseReviewArgs, REVIEW_USAGE } from "./review_args.ts";
import {
  EXIT_OK,
  EXIT_USAGE,
  UsageError,
  withHelpHint,
} from "./usage_error.ts";

/**
 * Runs `review` with `args` (the words after `review`) and returns the exit
 * code: 0; 1 if a file was skipped or a single FILE cannot be read or is
 * not an events log; 2 on a usage error. `defaults`: where to look without
 * paths (for tests).
 *
 * @example A usage error is one line and exit code 2
 * ```ts
 * import assert from "node:assert/strict";
 * import { runReview } from "./review.ts";
 *
 * const errors: string[] = [];
 * const io = { out: async () => {}, error: (m: string) => errors.push(m), warn: () => {}, info: () => {} };
 * assert.equal(await runReview(["--json", "--csv"], io), 2);
 * assert.deepEqual(errors, [
 *   "--json and --csv are two outputs; give one of them. Try 'dpu-traceback review --help'.",
 * ]);
 * ```
 */
export async function runReview(
  args: readonly string[],
  io: ReviewIo,
  defaults: ReviewDefaults = { file: DEFAULT_REVIEW_FILE, dir: LOG_DIR },
): Promise<number> {
  try {
    let request;
    try {
      request = parseReviewArgs(args);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.error(
        withHelpHint(errorMessage(error), "dpu-traceback review --help"),
      );
      return EXIT_USAGE;
    }
    if (request.help) {
      await io.out(REVIEW_USAGE);
      return EXIT_OK;
    }
    return await reviewLogs(request, io, defaults);
  } finally {
    await io.flush?.();
  }
}

/**
 * `review` as the CLI runs it: output to stdout, messages to `log`.
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
