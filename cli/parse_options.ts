/**
 * The strict option parser every command uses: node:util's `parseArgs`,
 * with its errors turned into one-line {@linkcode UsageError}s.
 *
 * @module
 */

import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { errorMessage } from "../base/error_message.ts";
import { UsageError } from "./usage_error.ts";

/**
 * Parses `args` against `options`, strictly (an unknown option or a
 * missing value is an error) and allowing positionals. Throws a
 * {@linkcode UsageError} whose message is one line of our own, the node
 * error kept as its cause.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseOptions } from "./parse_options.ts";
 * import { UsageError } from "./usage_error.ts";
 *
 * const options = { since: { type: "string" }, json: { type: "boolean" } } as const;
 * const { values, positionals } = parseOptions(["events.log", "--json"], options);
 * assert.equal(values.json, true);
 * assert.deepEqual(positionals, ["events.log"]);
 * assert.throws(() => parseOptions(["--bogus"], options), UsageError);
 * assert.throws(() => parseOptions(["--since"], options), /^UsageError: --since needs a value$/);
 * ```
 */
export function parseOptions<const T extends ParseArgsOptionsConfig>(
  args: readonly string[],
  options: T,
): ReturnType<
  typeof parseArgs<{
    args: string[];
    options: T;
    strict: true;
    allowPositionals: true;
  }>
> {
  try {
    return parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(argsProblem(error), { cause: error });
  }
}

/**
 * node:util's problem in one line of our own: its messages run on with
 * advice about `--` that is cut off mid-quote on one line.
 */
function argsProblem(error: unknown): string {
  const message = errorMessage(error);
  const code = (error as { code?: unknown } | null)?.code;
  // node quotes the option as typed ('--bogus'), with its value
  // ('--rules <value>') or with both names ('-q, --quiet'): the long one.
  const option = /'([^']*)'/.exec(message)?.[1]
    .split(/[\s,]+/)
    .filter((word) => word.startsWith("-"))
    .at(-1);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined) {
    return `Unknown option '${option}'`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option !== undefined) {
    // "does not take an argument" for a flag given a value; "argument
    // missing" or "is ambiguous" (the next word is an option) otherwise.
    return /does not take an argument/.test(message)
      ? `${option} takes no value`
      : `${option} needs a value`;
  }
  return message.split("\n")[0].split(". ")[0];
}
