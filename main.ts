/**
 * `dpu-traceback`: the command-line entry. Parses the command line and
 * hands it to the command it names; a {@linkcode UsageError} exits 2, any
 * other failure 1 (`--log-level debug` adds the stack).
 *
 * @module
 */

import { errorMessage } from "./base/error_message.ts";
import { type Command, parseCommand, USAGE } from "./cli/args.ts";
import { checkConfig } from "./cli/check_config.ts";
import { runCounters } from "./cli/counters.ts";
import { reviewCommand } from "./cli/review.ts";
import { demoCommand, runCommand } from "./cli/run.ts";
import { EXIT_OK, exitCodeOf, withHelpHint } from "./cli/usage_error.ts";
import { versionText } from "./cli/version.ts";
import { Logger, type LogLevel, underJournald } from "./logging/logger.ts";

const PROGRAM = "dpu-traceback";

/** Runs the CLI with `args` and returns the process exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(args);
  } catch (error) {
    logger().error(withHelpHint(errorMessage(error), `${PROGRAM} --help`));
    return exitCodeOf(error);
  }
  const log = logger(
    command.kind === "run" || command.kind === "demo"
      ? command.options.logLevel
      : undefined,
  );
  try {
    switch (command.kind) {
      case "help":
        console.log(USAGE);
        return EXIT_OK;
      case "version":
        console.log(versionText());
        return EXIT_OK;
      case "check-config":
        return await checkConfig(command, log);
      case "demo":
        return await demoCommand(command.options, log);
      case "run":
        return await runCommand(command.options, log);
      case "review":
        return await reviewCommand(command.args, log);
      case "counters":
        return await runCounters(command.args, {
          out: (text) => console.log(text.replace(/\n$/, "")),
          error: (message) => log.error(message),
        });
    }
  } catch (error) {
    log.failed(error);
    return exitCodeOf(error);
  }
}

/** Operational messages at `level`, with journald priorities under systemd. */
function logger(level?: LogLevel): Logger {
  return new Logger({
    program: PROGRAM,
    level,
    journald: underJournald(Deno.env.get("JOURNAL_STREAM")),
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
