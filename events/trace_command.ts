/**
 * The shell command an operator runs on the device to see an event's
 * traceback: what alerts and the events API both hand out.
 *
 * @module
 */

/**
 * `dpu-traceback review` of the event's events.log, the event picked by
 * its start marker's whole second (markers carry whole seconds) and its
 * rule's name, both quoted for a POSIX shell where needed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { traceCommand } from "./trace_command.ts";
 *
 * assert.equal(
 *   traceCommand("/var/log/x.log", Date.UTC(2026, 10, 21, 14, 50, 0, 999), "it's hot"),
 *   "dpu-traceback review /var/log/x.log --event 2026-11-21T14:50:00Z --rule 'it'\\''s hot'",
 * );
 * assert.equal(
 *   traceCommand("/var/log/my logs/e.log", 0, "a"),
 *   "dpu-traceback review '/var/log/my logs/e.log' --event 1970-01-01T00:00:00Z --rule 'a'",
 * );
 * ```
 */
export function traceCommand(
  eventsLog: string,
  startMs: number,
  rule: string,
): string {
  const second = new Date(Math.floor(startMs / 1000) * 1000).toISOString()
    .replace(".000Z", "Z");
  const path = /^[A-Za-z0-9_./-]+$/.test(eventsLog)
    ? eventsLog
    : shellQuote(eventsLog);
  return `dpu-traceback review ${path} --event ${second} --rule ${
    shellQuote(rule)
  }`;
}

/** `text` in single quotes for a POSIX shell, each `'` written `'\''`. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
