/**
 * Operational messages (not events): one line each on stderr, with a level.
 * Under systemd the lines carry the kernel-style priority prefix (`<3>`
 * error ... `<7>` debug) that journald turns into the entry's priority, so
 * `journalctl -p warning -u dpu-traceback` shows what matters.
 *
 * @module
 */

import { fstatSync } from "node:fs";
import { errorMessage } from "../base/error_message.ts";

/** Message levels, most severe first. */
export type LogLevel = "error" | "warning" | "info" | "debug";

/** The levels, in the order `--log-level` lists them. */
export const LOG_LEVELS: readonly LogLevel[] = [
  "error",
  "warning",
  "info",
  "debug",
];

// syslog(3) priorities, as journald reads them from a `<N>` prefix.
const PRIORITY: Readonly<Record<LogLevel, number>> = {
  error: 3,
  warning: 4,
  info: 6,
  debug: 7,
};

/** What a {@linkcode Logger} is built from. */
export interface LoggerOptions {
  /** Program name, prefixed to each line when not under journald. */
  readonly program: string;
  /** The least severe level written; default `info`. */
  readonly level?: LogLevel;
  /** Write `<N>` priority prefixes instead of the program name. */
  readonly journald?: boolean;
  /**
   * Where lines go; default stderr, where a line that cannot be written
   * (EPIPE, ENOSPC, EAGAIN) is dropped rather than thrown.
   */
  readonly write?: (line: string) => void;
}

/**
 * Writes operational messages, one line each.
 *
 * @example Plain and under journald
 * ```ts
 * import assert from "node:assert/strict";
 * import { Logger } from "./logger.ts";
 *
 * const lines: string[] = [];
 * const plain = new Logger({ program: "dpu-traceback", write: (l) => lines.push(l) });
 * plain.warn("device rounded the period");
 * plain.debug("not shown at the default level");
 * const journal = new Logger({ program: "dpu-traceback", journald: true, write: (l) => lines.push(l) });
 * journal.error("query_counters failed");
 * assert.deepEqual(lines, [
 *   "dpu-traceback: warning: device rounded the period",
 *   "<3>query_counters failed",
 * ]);
 * ```
 */
export class Logger {
  /** The least severe level written. */
  readonly level: LogLevel;
  /** Whether lines carry journald priority prefixes. */
  readonly journald: boolean;
  readonly #program: string;
  readonly #write: (line: string) => void;
  readonly #threshold: number;

  /** A logger for `options.program`, at `options.level` (default info). */
  constructor(options: LoggerOptions) {
    this.level = options.level ?? "info";
    this.journald = options.journald ?? false;
    this.#program = options.program;
    this.#write = options.write ?? writeStderr;
    this.#threshold = PRIORITY[this.level];
  }

  /** Something failed: the run or a request cannot go on as asked. */
  error(message: string): void {
    this.#log("error", message);
  }

  /** Something an operator should look at; the agent carries on. */
  warn(message: string): void {
    this.#log("warning", message);
  }

  /** What the agent is doing (start-up, where it listens). */
  info(message: string): void {
    this.#log("info", message);
  }

  /** Detail for a developer chasing a problem. */
  debug(message: string): void {
    this.#log("debug", message);
  }

  /**
   * A caught failure: its one-line message as an error and, at `debug`,
   * its stack and those of its causes, one line each, so an operator sees
   * what went wrong and `--log-level debug` shows where.
   */
  failed(error: unknown): void {
    this.error(errorMessage(error));
    if (PRIORITY.debug > this.#threshold) return;
    // A cause chain may loop back on itself; each error is told once.
    const told = new Set<unknown>();
    for (
      let e: unknown = error;
      e instanceof Error && !told.has(e);
      e = e.cause
    ) {
      told.add(e);
      for (const line of (e.stack ?? `${e.name}: ${e.message}`).split("\n")) {
        this.debug(e === error ? line : `caused by: ${line}`);
      }
    }
  }

  #log(level: LogLevel, message: string): void {
    const priority = PRIORITY[level];
    if (priority > this.#threshold) return;
    // One message, one line: a journal entry per line would split it.
    const text = message.replace(/\s*\n\s*/g, " ");
    if (this.journald) {
      this.#write(`<${priority}>${text}`);
    } else {
      const tag = level === "warning" || level === "debug" ? `${level}: ` : "";
      this.#write(`${this.#program}: ${tag}${text}`);
    }
  }
}

const encoder = new TextEncoder();

// The default writer: a line lost to a broken stderr is better than an
// agent stopped by it.
function writeStderr(line: string): void {
  writeQuietly(Deno.stderr, `${line}\n`);
}

/** What {@linkcode writeQuietly} writes to: `Deno.stderr`, `Deno.stdout`. */
export interface SyncWriter {
  /** Writes some of `p`; returns how many bytes. */
  writeSync(p: Uint8Array): number;
}

/**
 * Writes all of `text` to `to` (again after a partial write) and says
 * whether it could; never throws. For the agent's own output on stderr and
 * stdout, which may be a pipe whose reader has gone (EPIPE), a full device
 * (ENOSPC) or a non-blocking pipe that is full (EAGAIN): what is lost then
 * is a message, while a throw would stop sampling and cost rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writeQuietly } from "./logger.ts";
 *
 * // A reader that has gone: the text is lost, and nothing is thrown.
 * const broken = {
 *   writeSync(): number {
 *     throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
 *   },
 * };
 * assert.equal(writeQuietly(broken, "dpu-traceback: stopping\n"), false);
 *
 * // A pipe that takes three bytes at a time still gets all of it.
 * const got: number[] = [];
 * const narrow = {
 *   writeSync(p: Uint8Array): number {
 *     got.push(...p.subarray(0, 3));
 *     return Math.min(3, p.length);
 *   },
 * };
 * assert.equal(writeQuietly(narrow, "0123456789\n"), true);
 * assert.equal(new TextDecoder().decode(new Uint8Array(got)), "0123456789\n");
 * ```
 */
export function writeQuietly(to: SyncWriter, text: string): boolean {
  const bytes = encoder.encode(text);
  try {
    for (let done = 0; done < bytes.length;) {
      const n = to.writeSync(bytes.subarray(done));
      if (n <= 0) return false; // never seen; but looping on it would hang
      done += n;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether stderr is the journal stream systemd gave the service: set
 * `JOURNAL_STREAM` (`device:inode`) and the same file as stderr. A child
 * that inherited the variable but writes elsewhere (a pipe, a terminal)
 * gets plain lines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { underJournald } from "./logger.ts";
 *
 * assert.equal(underJournald(undefined), false); // not started by systemd
 * ```
 */
export function underJournald(journalStream: string | undefined): boolean {
  if (journalStream === undefined) return false;
  const match = /^(\d+):(\d+)$/.exec(journalStream);
  if (match === null) return false;
  try {
    const stat = fstatSync(2); // fd 2 is stderr
    return stat.dev === Number(match[1]) && stat.ino === Number(match[2]);
  } catch {
    return false;
  }
}
