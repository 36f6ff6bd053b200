/**
 * The shell command an operator runs on the device to see an event's
 * traceback: what alerts and the events API both hand out.
 *
 * @module
 */

import { formatTimePoint } from "../base/time_point.ts";

/**
 * `dpu-traceback review` of the event's events.log, the event picked by
 * its start sample's time to the ns (the time of its row in events.log,
 * so no other event of the rule can share it, however close) and its
 * rule's name, both quoted for a POSIX shell where needed. Any rule name
 * and path reads back as itself: the name is joined to its option
 * (`--rule='-x'`: after a separate `--rule`, a word starting with `-` would
 * be taken for an option), and a relative path starting with `-` is
 * written `./-...`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { traceCommand } from "./trace_command.ts";
 *
 * assert.equal(
 *   traceCommand("/var/log/x.log", 1_795_272_600_300_000_001n, "it's hot"),
 *   "dpu-traceback review /var/log/x.log --event 2026-11-21T14:50:00.300000001Z --rule='it'\\''s hot'",
 * );
 * assert.equal(
 *   traceCommand("/var/log/my logs/e.log", 0n, "a"),
 *   "dpu-traceback review '/var/log/my logs/e.log' --event 1970-01-01T00:00:00.000000000Z --rule='a'",
 * );
 * assert.equal(
 *   traceCommand("-e.log", 0n, "-a"),
 *   "dpu-traceback review ./-e.log --event 1970-01-01T00:00:00.000000000Z --rule='-a'",
 * );
 * ```
 */
export function traceCommand(
  eventsLog: string,
  startNs: bigint,
  rule: string,
): string {
  // review would take `-x.log` for an option; `./-x.log` is the same file.
  const file = eventsLog.startsWith("-") ? `./${eventsLog}` : eventsLog;
  const path = /^[A-Za-z0-9_./-]+$/.test(file) ? file : shellQuote(file);
  return `dpu-traceback review ${path} --event ${
    formatTimePoint(startNs)
  } --rule=${shellQuote(rule)}`;
}

/** `text` in single quotes for a POSIX shell, each `'` written `'\''`. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
