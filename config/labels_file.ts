/**
 * The labels file: topology labels rendered per DPU by a provisioning
 * system (DOCA Platform Framework writes one per DPU), in the
 * `level_labels.ini` style this module accepts:
 *
 * - UTF-8 text, at most {@linkcode MAX_LABELS_FILE_BYTES} (64 KiB); a byte
 *   order mark and CRLF line ends are fine;
 * - one `key=value` per line, spaces and tabs around `=` and at the ends
 *   of the line trimmed; the value may be in double quotes (kept as is
 *   inside them, no escapes), which keeps spaces at its ends;
 * - blank lines and lines starting with `#` or `;` are comments; a
 *   comment after a value is part of the value;
 * - `[section]` lines are allowed and ignored: keys are global, so a key
 *   in two sections is a repeated key;
 * - a repeated key is an error naming both lines;
 * - names and values follow the rules of `labels:` (topology_labels.ts),
 *   at most 10 labels.
 *
 * Every problem is one line naming the file, the line and what is wrong,
 * and never the text: a labels file pointed at the wrong file (a token,
 * `/etc/shadow`) must not put that file's lines in a log:
 * `Cannot read labels file /etc/x.ini: line 3 is not key=value`.
 *
 * @module
 */

import {
  MAX_KEY_CHARS,
  MAX_LABELS_FILE_BYTES,
  MAX_TOPOLOGY_LABELS,
} from "./limits.ts";
import { readConfigText } from "./read_text.ts";
import {
  labelNameProblem,
  labelValue,
  tooManyLabels,
} from "./topology_labels.ts";
import { parseValue } from "./values.ts";
import { terminalSafe } from "../base/terminal_text.ts";

/** A labels file's problem, as a one-line error of `kind`. */
function problem(
  path: string,
  what: string,
  kind: "type" | "range" = "type",
): TypeError | RangeError {
  const message = `Cannot read labels file ${terminalSafe(path)}: ${what}`;
  return kind === "range" ? new RangeError(message) : new TypeError(message);
}

/**
 * Parses a labels file's text (see the module for the format) into
 * labels, in file order.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLabelsFile } from "./labels_file.ts";
 *
 * const text = `# rendered by DPF
 * [topology]
 * rack = r12
 * rail="3"
 * switch_port = Ethernet12
 * `;
 * assert.deepEqual(parseLabelsFile(text, "/etc/x.ini"), { rack: "r12", rail: "3", switch_port: "Ethernet12" });
 * assert.throws(() => parseLabelsFile("rack r12\n", "/etc/x.ini"), {
 *   name: "TypeError",
 *   message: "Cannot read labels file /etc/x.ini: line 1 is not key=value",
 * });
 * ```
 *
 * @param text The file's text.
 * @param path The file, for messages.
 * @returns The labels.
 * @throws {TypeError | RangeError} At the first problem.
 */
export function parseLabelsFile(
  text: string,
  path: string,
): Record<string, string> {
  const labels: Record<string, string> = {};
  const lineOf = new Map<string, number>();
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const nul = body.indexOf("\0");
  if (nul !== -1) {
    const line = body.slice(0, nul).split("\n").length;
    throw problem(
      path,
      `line ${line} contains a NUL character; a labels file is text`,
    );
  }
  const lines = body.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const at = `line ${i + 1}`;
    const line = lines[i].replace(/\r$/, "").replace(/^[ \t]+|[ \t]+$/g, "");
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (line.startsWith("[")) {
      if (/^\[[^\]]*\]$/.test(line)) continue;
      throw problem(path, `${at} starts with [ but is not a [section]`);
    }
    const eq = line.indexOf("=");
    if (eq === -1) {
      throw problem(path, `${at} is not key=value`);
    }
    const name = line.slice(0, eq).replace(/[ \t]+$/, "");
    let raw = line.slice(eq + 1).replace(/^[ \t]+/, "");
    if (name === "") {
      throw problem(path, `${at} has no key before =`);
    }
    if (name.length > MAX_KEY_CHARS) {
      throw problem(
        path,
        `${at}: the key is longer than ${MAX_KEY_CHARS} characters`,
        "range",
      );
    }
    const nameIssue = labelNameProblem(name);
    if (nameIssue !== undefined) {
      throw problem(path, `${at}: the key ${nameIssue}`);
    }
    if (raw.startsWith('"')) {
      if (raw.length < 2 || !raw.endsWith('"')) {
        throw problem(path, `${at}: the value has an unclosed "`);
      }
      raw = raw.slice(1, -1);
    }
    const value = parseValue(labelValue, raw);
    if (!value.ok) {
      throw problem(path, `${at}: the value ${value.problem}`, value.kind);
    }
    const earlier = lineOf.get(name);
    if (earlier !== undefined) {
      throw problem(
        path,
        `${at}: the key is already set on line ${earlier}; give each key once (sections do not separate keys)`,
      );
    }
    lineOf.set(name, i + 1);
    labels[name] = value.value;
    if (lineOf.size > MAX_TOPOLOGY_LABELS) {
      throw problem(path, `${at}: ${tooManyLabels(lineOf.size)}`, "range");
    }
  }
  return labels;
}

/**
 * Reads and parses a labels file: only a regular file, at most
 * {@linkcode MAX_LABELS_FILE_BYTES} of it (config/read_text.ts).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLabelsFile } from "./labels_file.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".ini" });
 * await Deno.writeTextFile(path, "rack=r12\r\nplane = a\r\n");
 * assert.deepEqual(await readLabelsFile(path), { rack: "r12", plane: "a" });
 * await Deno.remove(path);
 * await assert.rejects(readLabelsFile(path), Deno.errors.NotFound);
 * ```
 *
 * @param path The file.
 * @returns Its labels.
 * @throws {TypeError | RangeError} When it is not a valid labels file
 * or not a regular file; `Deno.errors.NotFound` when there is no such
 * file, `Error` when it cannot be read.
 */
export async function readLabelsFile(
  path: string,
): Promise<Record<string, string>> {
  const text = await readConfigText(path, {
    maxBytes: MAX_LABELS_FILE_BYTES,
    prefix: `Cannot read labels file ${terminalSafe(path)}`,
    kind: "a labels file",
  });
  return parseLabelsFile(text, path);
}
