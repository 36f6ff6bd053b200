/**
 * Parsers for single configuration values: exact u64 thresholds, data IDs,
 * names, counts. Each takes a raw parsed value and returns the normalized
 * value or a problem phrased to follow the field's path in a message
 * (`rules[0].comparison_value` + ` must not be negative`).
 *
 * Raw documents hold integer literals that a `number` cannot represent
 * exactly as `bigint` (see `document.ts`), so these parsers can tell
 * `9007199254740993` from `9007199254740992` and say which the file had.
 *
 * @module
 */

import { cutText, type ProblemKind } from "./errors.ts";
import { parseGpuColumn } from "./gpu_readings.ts";
import {
  MAX_EVENT_LOG_KEEP,
  MAX_METRICS_WINDOW_S,
  MAX_SAMPLE_PERIOD_NS,
  MAX_TEXT_CHARS,
  MIN_EVENT_LOG_MAX_BYTES,
  MIN_METRICS_WINDOW_S,
} from "./limits.ts";
import type {
  ColumnKind,
  ComparisonType,
  GpuMode,
  SourceKind,
} from "./types.ts";

/** The outcome of parsing one value. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | {
    readonly ok: false;
    readonly problem: string;
    readonly kind: ProblemKind;
  };

/** The most columns one monitor may sample (the diag interface's limit). */
export const MAX_COLUMNS = 1024;

const U64_LIMIT = 1n << 64n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The ten accepted spellings of the five rule types. */
const COMPARISON_TYPES: Readonly<Record<string, ComparisonType>> = {
  gt: "gt",
  greater_than: "gt",
  lt: "lt",
  less_than: "lt",
  dt_gt: "dt_gt",
  differential_greater_than: "dt_gt",
  dt_lt: "dt_lt",
  differential_less_than: "dt_lt",
  inc_gt: "inc_gt",
  incremental_greater_than: "inc_gt",
};

const SOURCES: readonly SourceKind[] = ["doca", "sim", "replay", "nvml"];

const MONITOR_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const COLUMN_KINDS: readonly ColumnKind[] = ["counter", "gauge"];

/** The listen address that turns the metrics endpoint off. */
export const LISTEN_OFF = "off";
const DATA_ID = /^0[xX]([0-9a-fA-F]+)$/;
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Digits of a number shown inside a problem; the `got` part has them all. */
const SHOWN_DIGITS = 30;

/**
 * Wraps a parsed value as a success.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ok } from "./values.ts";
 *
 * assert.deepEqual(ok(3), { ok: true, value: 3 });
 * ```
 */
export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

/**
 * Wraps a problem as a failure; `kind` picks TypeError ("type", the default)
 * or RangeError ("range") for the message built from it.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { bad } from "./values.ts";
 *
 * assert.deepEqual(bad("must not be negative", "range"), {
 *   ok: false,
 *   problem: "must not be negative",
 *   kind: "range",
 * });
 * ```
 */
export function bad<T>(problem: string, kind: ProblemKind = "type"): Parsed<T> {
  return { ok: false, problem, kind };
}

const REQUIRED = bad<never>("is required");

/**
 * Parses an unsigned 64-bit threshold exactly. Accepts a non-negative
 * integer number up to 2^53 - 1, or a string of decimal digits below 2^64.
 * A larger unquoted number is refused with the quoted spelling to use,
 * because a JSON or YAML number above 2^53 may already have been rounded.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseU64 } from "./values.ts";
 *
 * assert.deepEqual(parseU64("18446744073709551615"), { ok: true, value: 18446744073709551615n });
 * assert.equal(parseU64(9007199254740993n).ok, false); // quote it as "9007199254740993"
 * ```
 */
export function parseU64(value: unknown): Parsed<bigint> {
  switch (typeof value) {
    case "undefined":
      return REQUIRED;
    case "bigint":
      if (value < 0n) return bad("must not be negative", "range");
      if (value >= U64_LIMIT) return bad(notBelow2To64(value), "range");
      if (value > MAX_SAFE) {
        return bad(
          `${value} ${tooBigForNumber(`quote it as a string: "${value}"`)}`,
          "range",
        );
      }
      return ok(value);
    case "number":
      if (!Number.isInteger(value)) {
        return bad("must be a whole number");
      }
      if (value < 0) return bad("must not be negative", "range");
      if (!Number.isSafeInteger(value)) {
        return bad(
          tooBigForNumber("quote it as a string of decimal digits"),
          "range",
        );
      }
      return ok(BigInt(value));
    case "string": {
      if (/^[0-9]+$/.test(value)) {
        const n = BigInt(value);
        if (n >= U64_LIMIT) return bad(notBelow2To64(value), "range");
        return ok(n);
      }
      if (/^-[0-9]+$/.test(value)) return bad("must not be negative", "range");
      return bad("must be a whole number written with the digits 0-9 only");
    }
    default:
      return bad(
        "must be an unsigned integer: a number, or a quoted string of decimal digits",
      );
  }
}

function notBelow2To64(value: bigint | string): string {
  return `${cutText(String(value), SHOWN_DIGITS)} is not below 2^64`;
}

function tooBigForNumber(advice: string): string {
  return `is not below 2^53, so a JSON or YAML number cannot hold it exactly; ${advice}`;
}

/**
 * Parses a 64-bit diag data ID written as `0x` and 1 to 16 hex digits, and
 * normalizes it to `0x` + 16 lowercase digits. A bare number is refused
 * (YAML reads `0x1020000100000000` unquoted as an integer) with the quoted
 * spelling to use.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDataId } from "./values.ts";
 *
 * assert.deepEqual(parseDataId("0x1020000100000000"), { ok: true, value: "0x1020000100000000" });
 * assert.deepEqual(parseDataId("0xABC"), { ok: true, value: "0x0000000000000abc" });
 * ```
 */
export function parseDataId(value: unknown): Parsed<string> {
  if (value === undefined) return REQUIRED;
  if (typeof value === "string") {
    const match = DATA_ID.exec(value);
    if (match === null) {
      return bad(
        'must be a hex string such as "0x1020000100000000" (0x and up to 16 hex digits)',
      );
    }
    const digits = match[1];
    if (digits.length > 16) {
      return bad(
        `has ${digits.length} hex digits; a data ID has at most 16`,
        "range",
      );
    }
    return ok("0x" + digits.toLowerCase().padStart(16, "0"));
  }
  if (
    (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) ||
    (typeof value === "bigint" && value >= 0n && value < U64_LIMIT)
  ) {
    const hex = value.toString(16).padStart(16, "0");
    return bad(`must be a quoted hex string; write it as "0x${hex}"`);
  }
  return bad('must be a quoted hex string such as "0x1020000100000000"');
}

/**
 * Parses a rule type, accepting the short and long spellings and returning
 * the short one.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseComparisonType } from "./values.ts";
 *
 * assert.deepEqual(parseComparisonType("differential_greater_than"), { ok: true, value: "dt_gt" });
 * ```
 */
export function parseComparisonType(value: unknown): Parsed<ComparisonType> {
  if (value === undefined) return REQUIRED;
  if (typeof value === "string" && Object.hasOwn(COMPARISON_TYPES, value)) {
    return ok(COMPARISON_TYPES[value]);
  }
  return bad(
    "must be one of gt, lt, dt_gt, dt_lt, inc_gt (or their long forms)",
  );
}

/**
 * Parses a monitor's source kind.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSource } from "./values.ts";
 *
 * assert.deepEqual(parseSource("sim"), { ok: true, value: "sim" });
 * ```
 */
export function parseSource(value: unknown): Parsed<SourceKind> {
  if (value === undefined) return REQUIRED;
  const found = SOURCES.find((s) => s === value);
  return found === undefined
    ? bad(`must be one of ${SOURCES.join(", ")}`)
    : ok(found);
}

/**
 * Parses a count such as a depth or a period: a whole number from 1 to
 * 2^53 - 1. Quoted numbers are refused so that a typo cannot hide in a
 * string.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePositiveInteger } from "./values.ts";
 *
 * assert.deepEqual(parsePositiveInteger(10000), { ok: true, value: 10000 });
 * assert.equal(parsePositiveInteger(0).ok, false);
 * ```
 */
export function parsePositiveInteger(value: unknown): Parsed<number> {
  const parsed = parseInteger(value);
  if (parsed.ok && parsed.value < 1) return bad("must be at least 1", "range");
  return parsed;
}

/**
 * Parses a size or count that may be 0 (meaning "off"): a whole number
 * from 0 to 2^53 - 1.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseNonNegativeInteger } from "./values.ts";
 *
 * assert.deepEqual(parseNonNegativeInteger(0), { ok: true, value: 0 });
 * assert.equal(parseNonNegativeInteger(-1).ok, false);
 * ```
 */
export function parseNonNegativeInteger(value: unknown): Parsed<number> {
  const parsed = parseInteger(value);
  if (parsed.ok && parsed.value < 0) return bad("must be at least 0", "range");
  return parsed;
}

/**
 * Parses a whole number that a `number` holds exactly.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseInteger } from "./values.ts";
 *
 * assert.deepEqual(parseInteger(-7), { ok: true, value: -7 });
 * ```
 */
export function parseInteger(value: unknown): Parsed<number> {
  if (value === undefined) return REQUIRED;
  if (typeof value === "bigint") {
    return bad(
      `must be at most ${Number.MAX_SAFE_INTEGER} in magnitude`,
      "range",
    );
  }
  if (typeof value !== "number") {
    return bad(
      typeof value === "string"
        ? "must be a whole number, written without quotes"
        : "must be a whole number",
    );
  }
  if (!Number.isInteger(value)) return bad("must be a whole number");
  if (!Number.isSafeInteger(value)) {
    return bad(
      `must be at most ${Number.MAX_SAFE_INTEGER} in magnitude`,
      "range",
    );
  }
  return ok(value);
}

/**
 * Parses `true` or `false`. YAML 1.2 reads `yes`/`on` as strings, so those
 * are refused rather than guessed.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseBoolean } from "./values.ts";
 *
 * assert.deepEqual(parseBoolean(true), { ok: true, value: true });
 * ```
 */
export function parseBoolean(value: unknown): Parsed<boolean> {
  if (value === undefined) return REQUIRED;
  return typeof value === "boolean" ? ok(value) : bad("must be true or false");
}

/**
 * Parses free text that ends up in logs, labels or paths: a non-empty
 * string without line breaks or other control characters (one would break
 * the line-oriented events.log and metrics formats).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseText } from "./values.ts";
 *
 * assert.deepEqual(parseText("Rx Bytes/s > 1MeBs"), { ok: true, value: "Rx Bytes/s > 1MeBs" });
 * assert.equal(parseText("").ok, false);
 * ```
 */
export function parseText(value: unknown): Parsed<string> {
  if (value === undefined) return REQUIRED;
  if (typeof value !== "string") return bad("must be a string");
  if (value === "") return bad("must not be empty");
  if (CONTROL.test(value)) {
    return bad("must not contain line breaks or other control characters");
  }
  // UTF-8 cannot carry it: a path would name another file.
  if (LONE_SURROGATE.test(value)) {
    return bad("must not contain a lone surrogate (half a UTF-16 pair)");
  }
  if (value.length > MAX_TEXT_CHARS) {
    return bad(`must be at most ${MAX_TEXT_CHARS} characters long`, "range");
  }
  return ok(value);
}

/**
 * Parses a sample period in nanoseconds: a whole number from 1 to
 * {@linkcode MAX_SAMPLE_PERIOD_NS} (one hour).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSamplePeriod } from "./values.ts";
 *
 * assert.deepEqual(parseSamplePeriod(100_000), { ok: true, value: 100_000 });
 * assert.equal(parseSamplePeriod(2 ** 53 - 1).ok, false); // past an hour
 * ```
 */
export function parseSamplePeriod(value: unknown): Parsed<number> {
  const parsed = parsePositiveInteger(value);
  if (parsed.ok && parsed.value > MAX_SAMPLE_PERIOD_NS) {
    return bad(
      `must be at most ${MAX_SAMPLE_PERIOD_NS} (one hour); collectors wait for it with timers`,
      "range",
    );
  }
  return parsed;
}

/**
 * Parses the size at which events logs rotate: 0 (never) or from
 * {@linkcode MIN_EVENT_LOG_MAX_BYTES} to 2^53 - 1 bytes.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEventLogMaxBytes } from "./values.ts";
 *
 * assert.deepEqual(parseEventLogMaxBytes(0), { ok: true, value: 0 });
 * assert.equal(parseEventLogMaxBytes(1).ok, false);
 * ```
 */
export function parseEventLogMaxBytes(value: unknown): Parsed<number> {
  const parsed = parseNonNegativeInteger(value);
  if (parsed.ok && parsed.value > 0 && parsed.value < MIN_EVENT_LOG_MAX_BYTES) {
    return bad(
      `must be 0 (never rotate) or at least ${MIN_EVENT_LOG_MAX_BYTES} (64 KiB); a header block alone can be that large`,
      "range",
    );
  }
  return parsed;
}

/**
 * Parses how many rotated events logs are kept: 1 to
 * {@linkcode MAX_EVENT_LOG_KEEP}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseEventLogKeep } from "./values.ts";
 *
 * assert.deepEqual(parseEventLogKeep(4), { ok: true, value: 4 });
 * assert.equal(parseEventLogKeep(1e15).ok, false);
 * ```
 */
export function parseEventLogKeep(value: unknown): Parsed<number> {
  const parsed = parsePositiveInteger(value);
  if (parsed.ok && parsed.value > MAX_EVENT_LOG_KEEP) {
    return bad(
      `must be at most ${MAX_EVENT_LOG_KEEP}; each rotation renames every kept file`,
      "range",
    );
  }
  return parsed;
}

/**
 * Parses the metrics window in seconds: from
 * {@linkcode MIN_METRICS_WINDOW_S} to {@linkcode MAX_METRICS_WINDOW_S}
 * (a day), fractions allowed.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMetricsWindow } from "./values.ts";
 *
 * assert.deepEqual(parseMetricsWindow(2.5), { ok: true, value: 2.5 });
 * assert.equal(parseMetricsWindow(1e300).ok, false);
 * assert.equal(parseMetricsWindow(1e-12).ok, false);
 * ```
 */
export function parseMetricsWindow(value: unknown): Parsed<number> {
  const parsed = parsePositiveNumber(value);
  if (!parsed.ok) return parsed;
  if (
    parsed.value < MIN_METRICS_WINDOW_S || parsed.value > MAX_METRICS_WINDOW_S
  ) {
    return bad(
      `must be from ${MIN_METRICS_WINDOW_S} to ${MAX_METRICS_WINDOW_S} seconds (a day)`,
      "range",
    );
  }
  return parsed;
}

/**
 * Parses a monitor name: 1 to 64 letters, digits, `_`, `.` or `-`, because
 * it appears in file names and metric labels.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMonitorName } from "./values.ts";
 *
 * assert.deepEqual(parseMonitorName("nic"), { ok: true, value: "nic" });
 * ```
 */
export function parseMonitorName(value: unknown): Parsed<string> {
  if (value === undefined) return REQUIRED;
  if (typeof value !== "string") return bad("must be a string");
  return MONITOR_NAME.test(value)
    ? ok(value)
    : bad("must be 1 to 64 letters, digits, '_', '.' or '-'");
}

/**
 * Parses a listen address `HOST:PORT`, with IPv6 hosts in brackets
 * (`[::1]:9477`) and a port from 0 (any free port) to 65535, or
 * {@linkcode LISTEN_OFF} for no metrics endpoint. The text is kept as
 * written.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseListen } from "./values.ts";
 *
 * assert.deepEqual(parseListen("[::1]:9477"), { ok: true, value: "[::1]:9477" });
 * assert.deepEqual(parseListen("off"), { ok: true, value: "off" }); // no endpoint
 * assert.equal(parseListen("0.0.0.0:99999").ok, false);
 * ```
 */
export function parseListen(value: unknown): Parsed<string> {
  if (value === undefined) return REQUIRED;
  if (typeof value !== "string") {
    return bad('must be a string "HOST:PORT" such as "0.0.0.0:9477"');
  }
  if (value === LISTEN_OFF) return ok(value);
  const match =
    /^(?:\[([0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?)\]|([A-Za-z0-9_.-]+)):([0-9]+)$/
      .exec(value);
  if (match === null) {
    const bareIpv6 = (value.match(/:/g)?.length ?? 0) > 1 &&
      !value.startsWith("[");
    return bad(
      bareIpv6
        ? 'must put an IPv6 host in brackets, as in "[::1]:9477"'
        : 'must be "HOST:PORT" such as "0.0.0.0:9477" (IPv6 as "[::1]:9477")',
    );
  }
  if (match[1] !== undefined && !match[1].includes(":")) {
    return bad("must use brackets only around an IPv6 address");
  }
  const port = Number(match[3]);
  // Port 0 asks the system for a free port (tests; the agent prints it).
  if (port > 65535) {
    return bad(`port ${match[3]} is not between 0 and 65535`, "range");
  }
  return ok(value);
}

/**
 * Parses a column kind: `counter` (only grows, reported as rates) or
 * `gauge` (a level, reported as min/max/mean).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseColumnKind } from "./values.ts";
 *
 * assert.deepEqual(parseColumnKind("gauge"), { ok: true, value: "gauge" });
 * ```
 */
export function parseColumnKind(value: unknown): Parsed<ColumnKind> {
  if (value === undefined) return REQUIRED;
  if (typeof value === "string" && (COLUMN_KINDS as string[]).includes(value)) {
    return ok(value as ColumnKind);
  }
  return bad(`must be one of ${COLUMN_KINDS.join(", ")}`);
}

/**
 * Parses a positive, finite number (fractions allowed), such as a window
 * length in seconds.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePositiveNumber } from "./values.ts";
 *
 * assert.deepEqual(parsePositiveNumber(2.5), { ok: true, value: 2.5 });
 * assert.equal(parsePositiveNumber(0).ok, false);
 * ```
 */
export function parsePositiveNumber(value: unknown): Parsed<number> {
  if (value === undefined) return REQUIRED;
  if (typeof value === "string") {
    return bad("must be a number, written without quotes");
  }
  if (typeof value !== "number" || !Number.isFinite(value)) {
    return bad("must be a number");
  }
  if (value <= 0) return bad("must be greater than 0", "range");
  return ok(value);
}

const GPU_MODES: readonly GpuMode[] = ["auto", "off"];

/**
 * Parses the `gpu` setting: `auto` or `off`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGpuMode } from "./values.ts";
 *
 * assert.deepEqual(parseGpuMode("off"), { ok: true, value: "off" });
 * ```
 */
export function parseGpuMode(value: unknown): Parsed<GpuMode> {
  if (value === undefined) return REQUIRED;
  const found = GPU_MODES.find((m) => m === value);
  return found === undefined
    ? bad(`must be one of ${GPU_MODES.join(", ")}`)
    : ok(found);
}

/**
 * Parses a GPU column name (`gpu0.temperature`, `gpu*.power`, `gpu1.*`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGpuColumnName } from "./values.ts";
 *
 * assert.deepEqual(parseGpuColumnName("gpu*.power"), { ok: true, value: "gpu*.power" });
 * ```
 */
export function parseGpuColumnName(value: unknown): Parsed<string> {
  if (typeof value !== "string") {
    return bad("must be a string such as gpu0.temperature");
  }
  const parsed = parseGpuColumn(value);
  return parsed.ok ? ok(value) : bad(parsed.problem);
}
