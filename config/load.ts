/**
 * Loading a configuration file in either form into an
 * {@linkcode AgentConfig}.
 *
 * The form is told by structure, not by file name: a top-level `monitors`
 * key means our agent form, anything else is the reference app's rules
 * JSON, accepted verbatim. The text is parsed once (document.ts), validated
 * once by the zod schemas (schema.ts) and normalized once (normalize.ts).
 * Every failure is a built-in error class with a one-line message naming
 * the file, the line, the path as written with the rule or column named,
 * and the value found there, e.g. `Cannot load config rules.json:9:
 * rules[2] ("drops").comparison_type must be one of gt, lt, dt_gt, dt_lt,
 * inc_gt (or their long forms), got "gte"; did you mean "gt"?`.
 *
 * @module
 */

import type { z } from "zod";
import { type ConfigDocument, parseDocumentText } from "./document.ts";
import { configError, fileError, issueError } from "./errors.ts";
import {
  type ExternalColumns,
  normalizeAgent,
  normalizeReference,
} from "./normalize.ts";
import {
  agentSchema,
  columnsSchema,
  dataIdsObjectSchema,
  referenceSchema,
} from "./schema.ts";
import { readConfigText } from "./read_text.ts";
import type { AgentConfig } from "./types.ts";
import { describeIssue } from "./values.ts";

/** Options of {@linkcode loadConfig}. */
export interface LoadConfigOptions {
  /**
   * A `--data-ids` file supplying the reference form's data IDs: a list of
   * `{name, data_id}` or an object with a `data-ids` list, in JSON or YAML.
   */
  readonly dataIdsFile?: string;
}

/** Options of {@linkcode parseConfig}. */
export interface ParseConfigOptions {
  /** Text of a `--data-ids` file (see {@linkcode LoadConfigOptions}). */
  readonly dataIdsText?: string;
  /**
   * Name of that file, for messages and to pick JSON (`.json`) or YAML;
   * defaults to `--data-ids`.
   */
  readonly dataIdsFile?: string;
}

/**
 * Reads and validates a configuration file (and a `--data-ids` file, if
 * given).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./load.ts";
 *
 * const path = await Deno.makeTempFile({ suffix: ".yaml" });
 * await Deno.writeTextFile(
 *   path,
 *   `listen: "off"
 * monitors:
 *   - name: nic
 *     source: sim
 *     columns: [{ name: rx, data_id: "0x1020000100000000" }]
 *     rules: [{ name: busy, column: rx, comparison_type: gt, comparison_value: 5 }]
 * `,
 * );
 * const config = await loadConfig(path);
 * assert.equal(config.form, "agent");
 * assert.deepEqual(config.monitors.map((m) => m.name), ["nic"]);
 * assert.deepEqual(config.monitors[0].rules[0], {
 *   name: "busy", column: 0, comparisonType: "gt", comparisonValue: 5n, severity: "warning",
 * });
 *
 * await Deno.remove(path);
 * await assert.rejects(loadConfig(path), Deno.errors.NotFound);
 * ```
 *
 * @param path The configuration file, YAML or JSON.
 * @param options Where to read the reference form's data IDs from instead.
 * @returns The normalized configuration.
 * @throws {TypeError | RangeError | SyntaxError} When the configuration is
 * invalid or past a bound of `limits.ts` (a file reads at most 1 MiB);
 * `Deno.errors.NotFound` when a file does not exist.
 */
export async function loadConfig(
  path: string,
  options: LoadConfigOptions = {},
): Promise<AgentConfig> {
  const text = await readConfigText(path);
  if (options.dataIdsFile === undefined) return parseConfig(text, path);
  const dataIdsText = await readConfigText(options.dataIdsFile);
  return parseConfig(text, path, {
    dataIdsText,
    dataIdsFile: options.dataIdsFile,
  });
}

/**
 * Validates configuration text. Pure: reads no files.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseConfig } from "./load.ts";
 *
 * const config = parseConfig(
 *   `{"data-ids": [{"name": "port_0_rx_bytes", "data_id": "0x1020000100000000"}],
 *     "rules": [{"name": "Rx Bytes/s > 1MeBs", "data_id": "0x1020000100000000",
 *                "comparison_type": "differential_greater_than", "comparison_value": 1048576}]}`,
 *   "rules.json",
 * );
 * assert.equal(config.form, "reference");
 * assert.equal(config.monitors[0].name, "nic");
 * assert.deepEqual(config.monitors[0].rules[0], {
 *   name: "Rx Bytes/s > 1MeBs", column: 0, comparisonType: "dt_gt", comparisonValue: 1048576n,
 *   severity: "warning",
 * });
 *
 * assert.throws(
 *   () =>
 *     parseConfig(
 *       `{"data-ids": [{"name": "rx", "data_id": "0x1"}],
 *         "rules": [{"name": "r", "data_id": "0x1", "comparison_type": "gte", "comparison_value": 1}]}`,
 *       "rules.json",
 *     ),
 *   {
 *     name: "TypeError",
 *     message: 'Cannot load config rules.json:2: rules[0] ("r").comparison_type must be one of ' +
 *       'gt, lt, dt_gt, dt_lt, inc_gt (or their long forms), got "gte"; did you mean "gt"?',
 *   },
 * );
 * ```
 *
 * @param text The file's text.
 * @param file The file's name: for messages, and `.json` selects JSON.
 * @param options The text of a `--data-ids` file, if any.
 * @returns The normalized configuration.
 * @throws {TypeError | RangeError | SyntaxError} When the configuration is
 * invalid.
 */
export function parseConfig(
  text: string,
  file: string,
  options: ParseConfigOptions = {},
): AgentConfig {
  if (options.dataIdsFile !== undefined && options.dataIdsText === undefined) {
    throw new TypeError(
      "parseConfig: options.dataIdsFile needs options.dataIdsText (loadConfig reads the file)",
    );
  }
  const source = parseDocumentText(text, file);
  const doc = source.value;
  if (doc === null || doc === undefined) {
    throw configError(source, [], `is empty; expected ${FORMS}`, "type");
  }
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw configError(source, [], `must be an object: ${FORMS}`, "type");
  }
  if (Object.hasOwn(doc, "monitors")) {
    if (options.dataIdsText !== undefined) {
      throw fileError(
        TypeError,
        file,
        0,
        `a --data-ids file (${
          options.dataIdsFile ?? "--data-ids"
        }) applies only to the reference form; in this file each monitor lists its own columns`,
      );
    }
    return normalizeAgent(validate(agentSchema, source), source);
  }
  const external = options.dataIdsText === undefined
    ? undefined
    : parseDataIds(options.dataIdsText, options.dataIdsFile ?? "--data-ids");
  return normalizeReference(
    validate(referenceSchema, source),
    source,
    external,
  );
}

const FORMS = "monitors (agent form) or data-ids and rules (reference form)";

/** A `--data-ids` file: a bare list or an object with a `data-ids` list. */
function parseDataIds(text: string, file: string): ExternalColumns {
  const source = parseDocumentText(text, file);
  if (Array.isArray(source.value)) {
    return { columns: validate(columnsSchema, source), source, path: [] };
  }
  if (typeof source.value === "object" && source.value !== null) {
    return {
      columns: validate(dataIdsObjectSchema, source)["data-ids"],
      source,
      path: ["data-ids"],
    };
  }
  throw configError(
    source,
    [],
    "must be a list of {name, data_id} or an object with a data-ids list",
    "type",
  );
}

/** Validates a document once; on failure throws its first problem in the file. */
function validate<T>(schema: z.ZodType<T>, source: ConfigDocument): T {
  const result = schema.safeParse(source.value, { error: describeIssue });
  if (!result.success) throw issueError(source, result.error.issues);
  return result.data;
}
