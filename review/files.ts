/**
 * Which files a review reads: one log, or every events log of a directory
 * grouped by monitor, each monitor's files oldest first. Rotated files
 * are the agent's (`PATH.1` .. `PATH.N`) and logrotate's dateext ones
 * (`PATH-YYYYMMDD`, `PATH-YYYYMMDD-EPOCH`, either maybe `.gz`).
 *
 * @module
 */

import { basename, join } from "node:path";
import { ioReason } from "./errors.ts";
import { openLogSource, readLines } from "./lines.ts";
import { parseRow } from "./row.ts";
import {
  detectTimeFormat,
  isWallClock,
  TimeDecoder,
} from "./reference_time.ts";

/** The log files of one monitor, oldest first. */
export interface LogFamily {
  /** The live file's name without rotation suffix (`nic-events.log`). */
  readonly base: string;
  /** From the name (`nic-events.log`: `nic`), or undefined (`events.log`: from the header). */
  readonly monitor?: string;
  /** Name stem used when neither the name nor the header names the monitor (`events`). */
  readonly stem: string;
  /** Paths of the monitor's files, oldest first (rotated ones, then the live one). */
  readonly files: readonly string[];
}

const ROTATED = /^(.+?\.log)(?:\.(\d+)|-(\d{8})(?:-(\d+))?)?(\.gz)?$/;

/** What a log file's name says. */
export interface LogName {
  /** The live file's name (`events.log` for `events.log-20261121.gz`). */
  readonly base: string;
  /** Agent rotation number (`events.log.3`: 3), 0 otherwise. */
  readonly generation: number;
  /** logrotate's date and epoch suffix as one sortable string, "" otherwise. */
  readonly dated: string;
}

/**
 * Splits a log file name into the live name and its rotation suffix;
 * undefined if it does not end in `.log` (and a rotation suffix).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLogName } from "./files.ts";
 *
 * assert.equal(parseLogName("nic-events.log-20261121-1795272600.gz")?.base, "nic-events.log");
 * assert.equal(parseLogName("events.log.2")?.generation, 2);
 * ```
 */
export function parseLogName(name: string): LogName | undefined {
  const m = ROTATED.exec(name);
  if (!m) return undefined;
  return {
    base: m[1],
    generation: m[2] === undefined ? 0 : Number(m[2]),
    dated: m[3] === undefined ? "" : `${m[3]}-${m[4] ?? ""}`,
  };
}

/**
 * The monitor a log's name gives: `nic-events.log` is `nic`'s, like the
 * agent names the logs of several monitors; `events.log` (one monitor)
 * gives none, and the header's device names it.
 */
export function monitorFromName(base: string): string | undefined {
  const m = /^(.+)-events\.log$/.exec(base);
  return m ? m[1] : undefined;
}

/** Whether a directory entry is an events log the review reads. */
export function isEventsLogName(name: string): boolean {
  const parsed = parseLogName(name);
  return parsed !== undefined &&
    (parsed.base === "events.log" || parsed.base.endsWith("-events.log"));
}

/**
 * The families to read for the given paths: a file is read alone (even if
 * rotated siblings exist); a directory contributes every
 * `events.log`, `<monitor>-events.log` and their rotated files. A file
 * named twice (itself and in its directory) is read once. A path that is
 * missing, unreadable or a directory without events logs is named to
 * `onSkip` with why, or without it throws an Error `Cannot review PATH:
 * why`.
 */
export async function resolveInputs(
  paths: readonly string[],
  onSkip?: (path: string, reason: string) => void,
): Promise<LogFamily[]> {
  const families: LogFamily[] = [];
  const seen = new Set<string>();
  const skip = (path: string, reason: string) => {
    if (onSkip === undefined) {
      throw new Error(`Cannot review ${path}: ${reason}`);
    }
    onSkip(path, reason);
  };
  // The same file by another path (DIR and DIR/events.log): read once.
  const firstTime = async (path: string) => {
    let real = path;
    try {
      real = await Deno.realPath(path);
    } catch {
      // Compared by the path given.
    }
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  };
  for (const path of paths) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (error) {
      skip(path, ioReason(error));
      continue;
    }
    if (info.isFile) {
      if (!await firstTime(path)) continue;
      const base = parseLogName(basename(path))?.base ?? basename(path);
      families.push(family(base, [path]));
      continue;
    }
    if (!info.isDirectory) {
      skip(path, "not a file or directory");
      continue;
    }
    const groups = new Map<string, string[]>();
    try {
      for await (const entry of Deno.readDir(path)) {
        if (!entry.isFile || !isEventsLogName(entry.name)) continue;
        const file = join(path, entry.name);
        if (!await firstTime(file)) continue;
        const base = parseLogName(entry.name)!.base;
        const list = groups.get(base) ?? [];
        list.push(file);
        groups.set(base, list);
      }
    } catch (error) {
      skip(path, ioReason(error));
      continue;
    }
    if (groups.size === 0) {
      skip(
        path,
        "no events logs in it (looked for events.log, *-events.log and their rotated files)",
      );
      continue;
    }
    for (const base of [...groups.keys()].sort()) {
      families.push(family(base, await oldestFirst(groups.get(base)!)));
    }
  }
  return families;
}

function family(base: string, files: string[]): LogFamily {
  return {
    base,
    monitor: monitorFromName(base),
    stem: base.replace(/\.log$/, "") || base,
    files,
  };
}

/**
 * Orders one monitor's files oldest first by one kind of key for all of
 * them, never a mix: the time of their first row or marker (so copies
 * that lost their modification times still sort) if every file has one;
 * else their modification times if every file has one; else their names
 * (higher agent generations and earlier dates are older, the live file
 * newest). Ties go by name.
 */
export async function oldestFirst(paths: readonly string[]): Promise<string[]> {
  const keyed = await Promise.all(paths.map(async (path) => {
    let mtime: number | undefined;
    try {
      mtime = (await Deno.stat(path)).mtime?.getTime();
    } catch {
      // Without one, no file is sorted by modification time.
    }
    return {
      path,
      first: await firstTimeMs(path),
      mtime,
      name: parseLogName(basename(path)) ??
        { base: basename(path), generation: 0, dated: "" },
    };
  }));
  const key = keyed.every((k) => k.first !== undefined)
    ? (k: typeof keyed[number]) => k.first!
    : keyed.every((k) => k.mtime !== undefined)
    ? (k: typeof keyed[number]) => k.mtime!
    : () => 0;
  keyed.sort((a, b) =>
    key(a) - key(b) || nameOrder(a.name) - nameOrder(b.name) ||
    a.name.dated.localeCompare(b.name.dated)
  );
  return keyed.map((k) => k.path);
}

// Agent generations before dated files before the live file.
function nameOrder(name: LogName): number {
  if (name.generation > 0) return -1e6 - name.generation;
  return name.dated !== "" ? -1 : 0;
}

const PEEK_LINES = 20_000;

/**
 * Wall time (ms) of the first data row or marker in the first lines of
 * `path`, or undefined if there is none there (or it cannot be read:
 * the review itself will say why).
 */
export async function firstTimeMs(path: string): Promise<number | undefined> {
  let source;
  try {
    source = await openLogSource(path);
  } catch {
    return undefined;
  }
  let found: number | undefined;
  const fields = new Float64Array(2 * 4096);
  const decoder = new TextDecoder();
  try {
    await readLines(source.chunks, (buf, start, end, line) => {
      if (line > PEEK_LINES) return false;
      const c = buf[start];
      if (c >= 48 && c <= 57) {
        if (parseRow(buf, start, end, fields) < 1) return;
        const format = detectTimeFormat(fields[0], fields[1]);
        if (!isWallClock(format)) return;
        const t = new TimeDecoder(format);
        t.decode(fields[0], fields[1]);
        found = t.sec * 1000 + t.ns / 1e6;
        return false;
      }
      if (c === 60) { // '<': a marker
        const m = / Time: (\S+?),/.exec(
          decoder.decode(buf.subarray(start, end)),
        );
        const ms = m ? Date.parse(m[1]) : NaN;
        if (Number.isFinite(ms)) {
          found = ms;
          return false;
        }
      }
    });
  } catch {
    // Not a log, or unreadable: the review reports it.
  } finally {
    source.close();
  }
  return found;
}

/**
 * The family of the log at `log` (the path a monitor's `event_log`
 * names): that file and its rotated siblings in its directory, oldest
 * first by their names alone (higher agent generations, then earlier
 * logrotate dates, then the live file), reading nothing but the
 * directory. The live file is listed even when it is missing (a reader
 * may find it gone); a missing or unreadable directory throws what
 * `Deno.readDir` throws.
 *
 * @example Usage
 * ```ts ignore
 * const family = await rotatedFamily("/var/log/dpu-traceback/nic-events.log");
 * family.files; // [".../nic-events.log.2.gz", ".../nic-events.log.1", ".../nic-events.log"]
 * ```
 */
export async function rotatedFamily(log: string): Promise<LogFamily> {
  const base = basename(log);
  const dir = log.slice(0, log.length - base.length) || ".";
  const names: { path: string; name: LogName }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || entry.name === base) continue;
    const name = parseLogName(entry.name);
    if (name === undefined || name.base !== base) continue;
    names.push({ path: join(dir, entry.name), name });
  }
  names.sort((a, b) =>
    nameOrder(a.name) - nameOrder(b.name) ||
    a.name.dated.localeCompare(b.name.dated)
  );
  return family(base, [...names.map((n) => n.path), log]);
}
