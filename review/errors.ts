/**
 * What can go wrong with one input file, told apart from the review's own
 * bugs: a file that is not an events log, a damaged compressed file, and
 * the operating system's I/O errors. A directory review skips such a file
 * with a warning and goes on; anything else (a RangeError from the engine,
 * say) is a bug and stops the review.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";

/**
 * The file is not an events log: its first lines are something else, or
 * a line is far too long to be a row. The message names the line.
 *
 * A SyntaxError (the input does not parse), with its own name, so that
 * the engine's own RangeErrors (a stack overflow, a string too long) are
 * never taken for one.
 */
export class NotAnEventsLogError extends SyntaxError {
  /** `message`: one line, e.g. `line 1: not an events log: ...`. */
  constructor(message: string) {
    super(message);
    this.name = "NotAnEventsLogError";
  }
}

/**
 * A gzipped file whose compressed data ends early (a copy taken while
 * logrotate compressed it, a full disk) or is corrupt. The lines before
 * the damage were read.
 */
export class DamagedFileError extends SyntaxError {
  /**
   * `message`: one line, e.g. `truncated (corrupt gzip stream ...)`;
   * `options.cause`: the decompressor's own error, when there is one.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DamagedFileError";
  }
}

/** What the review is doing with a file when an I/O error comes. */
export type IoOperation = "read" | "write";

/**
 * The reason in an I/O error, without Deno's syscall decoration and never
 * telling the user to pass a Deno flag the installed binary cannot take.
 */
export function ioReason(
  error: unknown,
  operation: IoOperation = "read",
): string {
  if (error instanceof Deno.errors.NotFound) return "no such file or directory";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotCapable) {
    return operation === "read"
      ? "not readable by this binary (it may read only /etc/dpu-traceback and /var/log/dpu-traceback; run from source with deno run -A for other paths)"
      : "not writable by this binary (it may write only /var/log/dpu-traceback)";
  }
  if (error instanceof Deno.errors.IsADirectory) return "is a directory";
  return errorMessage(error);
}

/**
 * Why reading a file failed, in words, if the failure belongs to the file
 * (not an events log, damaged, an I/O error); undefined for anything
 * else, which is a bug to report as such.
 */
export function fileProblem(error: unknown): string | undefined {
  if (
    error instanceof NotAnEventsLogError || error instanceof DamagedFileError
  ) {
    return error.message;
  }
  // Deno's classes of the operating system's errors (ENOENT, EACCES, EIO,
  // a stale NFS handle, ...) and of its permission checks.
  if (Object.values(Deno.errors).some((c) => error instanceof c)) {
    return ioReason(error);
  }
  return undefined;
}
