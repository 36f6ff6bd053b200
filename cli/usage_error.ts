/**
 * The one error class that means "the operator asked for something this
 * program cannot do as asked", and the exit codes every command uses.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";

/** The command succeeded. */
export const EXIT_OK = 0;
/** The command failed while running (a device, a disk, the network). */
export const EXIT_FAILURE = 1;
/** The command line or the configuration it names is wrong. */
export const EXIT_USAGE = 2;

/**
 * A usage or configuration error: the process exits with
 * {@linkcode EXIT_USAGE}, any other failure with {@linkcode EXIT_FAILURE}.
 * The message is one line saying what was wrong and where.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   asUsageError,
 *   EXIT_FAILURE,
 *   EXIT_USAGE,
 *   exitCodeOf,
 *   UsageError,
 * } from "./usage_error.ts";
 *
 * const error = new UsageError('--gpu must be one of auto, off, got "on"');
 * assert.ok(error instanceof TypeError);
 * assert.equal(exitCodeOf(error), EXIT_USAGE);
 * assert.equal(exitCodeOf(new Error("disk full")), EXIT_FAILURE);
 * const unreadable = new Error("Cannot load config rules.json: no such file");
 * assert.equal(asUsageError(unreadable).cause, unreadable);
 * assert.equal(asUsageError(error), error);
 * ```
 */
export class UsageError extends TypeError {
  /** Always `"UsageError"`, so a printed stack says which kind it was. */
  override readonly name = "UsageError";
}

/**
 * `error` as a usage error: itself if it is one, else a {@linkcode UsageError}
 * with its message and `error` as the cause. For failures that are the
 * operator's to fix: a file they named that cannot be read or is wrong.
 */
export function asUsageError(error: unknown): UsageError {
  return error instanceof UsageError
    ? error
    : new UsageError(errorMessage(error), { cause: error });
}

/** The exit code a command that threw `error` ends with. */
export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
}

/**
 * A usage error's message as a sentence, followed by where to read more.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withHelpHint } from "./usage_error.ts";
 *
 * assert.equal(
 *   withHelpHint("Unknown option '--bogus'", "dpu-traceback --help"),
 *   "Unknown option '--bogus'. Try 'dpu-traceback --help'.",
 * );
 * assert.equal(withHelpHint("No FILE given.", "x --help"), "No FILE given. Try 'x --help'.");
 * ```
 */
export function withHelpHint(message: string, help: string): string {
  const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
  return `${sentence} Try '${help}'.`;
}
