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
 * missing value is an error) and allowing positionals. A negative number
 * after an option that takes a value is that value (`--seed -5` is
 * `--seed=-5`), for the option's own check to judge. Throws a
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
 * assert.equal(parseOptions(["--since", "-5"], options).values.since, "-5");
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
      args: negativeValuesJoined(args, options),
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(argsProblem(error), { cause: error });
  }
}

/** A negative number: `-5`, `-1.5`, `-.5`, `-1e3`. */
const NEGATIVE_NUMBER = /^-\.?[0-9]/;

/**
 * `args` with each option that takes a value and is followed by a negative
 * number written `--name=-5`. node:util takes any word that starts with
 * `-` for an option, and says the option "needs a value"; but no option's
 * name starts with a digit or a dot, so that word can only be the value,
 * and the option's own check can then say what it allows. Words after
 * `--` are positionals, left as they are.
 */
function negativeValuesJoined(
  args: readonly string[],
  options: ParseArgsOptionsConfig,
): string[] {
  const valued = new Map<string, string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== "string") continue;
    valued.set(`--${name}`, name);
    if (option.short !== undefined) valued.set(`-${option.short}`, name);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    const name = valued.get(arg);
    const next = args[i + 1];
    if (
      name !== undefined && next !== undefined && NEGATIVE_NUMBER.test(next)
    ) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
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
