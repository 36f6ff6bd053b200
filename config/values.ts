/**
 * Single configuration values as zod schemas: exact u64 thresholds, data
 * IDs, counts, text, addresses. Their problems are phrased to follow the
 * field's path in a message (`rules[0].comparison_value` + ` must not be
 * negative`): {@linkcode describeIssue} words every kind of zod issue once,
 * and a schema gives its own words only where it has more to say.
 *
 * Parsed documents hold integer literals that a `number` cannot represent
 * exactly as `bigint` (see `document.ts`), so these schemas can tell
 * `9007199254740993` from `9007199254740992` and say which the file had.
 *
 * @module
 */

import { z } from "zod";
import {
  cutText,
  firstProblem,
  HINT,
  type ProblemKind,
  withHint,
} from "./errors.ts";
import { parseGpuColumn } from "./gpu_readings.ts";
import {
  MAX_EVENT_LOG_KEEP,
  MAX_METRICS_WINDOW_S,
  MAX_TEXT_CHARS,
  MIN_EVENT_LOG_MAX_BYTES,
  MIN_METRICS_WINDOW_S,
} from "./limits.ts";
import { nearest } from "./suggest.ts";
import { docaDataId } from "./doca_counters.ts";
import type { ComparisonType, GpuMode } from "./types.ts";
import { bad, ok, type Parsed } from "./parsed.ts";

export { bad, ok, type Parsed };

/**
 * The words for a zod issue, for every field that gives none of its own:
 * a missing value "is required", a string where a number belongs is
 * "written without quotes", an enum lists its values and the nearest one.
 * Passed to every parse as its error map.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { describeIssue } from "./values.ts";
 *
 * const issues = (schema: z.ZodType, value: unknown) =>
 *   schema.safeParse(value, { error: describeIssue }).error?.issues.map((i) => i.message);
 * assert.deepEqual(issues(z.number(), "5"), ["must be a number, written without quotes"]);
 * assert.deepEqual(issues(z.enum(["gt", "lt"]), "gte"), ['must be one of gt, lt\u001edid you mean "gt"?']);
 * assert.deepEqual(issues(z.number(), undefined), ["is required"]);
 * ```
 */
export function describeIssue(issue: z.core.$ZodRawIssue): string {
  const input = issue.input;
  if (input === undefined && issue.code !== "custom") return "is required";
  switch (issue.code) {
    case "invalid_type":
      return mustBe(issue.expected, input);
    case "too_small":
      return issue.origin === "array"
        ? `must list at least ${issue.minimum}`
        : issue.origin === "string"
        ? "must not be empty"
        : `must be ${
          issue.inclusive ? "at least" : "more than"
        } ${issue.minimum}`;
    case "too_big":
      return issue.origin === "array"
        ? `must list at most ${issue.maximum}`
        : issue.origin === "string"
        ? `must be at most ${issue.maximum} characters long`
        : `must be ${
          issue.inclusive ? "at most" : "less than"
        } ${issue.maximum}`;
    case "invalid_value": {
      const values = issue.values.map(String);
      return withHint(
        `must be one of ${values.join(", ")}`,
        didYouMean(input, values),
      );
    }
    case "unrecognized_keys":
      return "is not a known key";
    default:
      return "is not valid here";
  }
}

function mustBe(expected: string, input: unknown): string {
  const quoted = typeof input === "string" ? ", written without quotes" : "";
  switch (expected) {
    case "number":
      return `must be a number${quoted}`;
    case "int":
      return `must be a whole number${quoted}`;
    case "boolean":
      return "must be true or false";
    case "array":
      return "must be a list";
    case "object":
    case "record":
      return "must be an object (keys and values)";
    default:
      return `must be a ${expected}`;
  }
}

/**
 * `did you mean "x"?` when `input` is text near one of `options`, else "".
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { didYouMean } from "./values.ts";
 *
 * assert.equal(didYouMean("gte", ["gt", "lt"]), 'did you mean "gt"?');
 * assert.equal(didYouMean(7, ["gt", "lt"]), "");
 * ```
 */
export function didYouMean(input: unknown, options: readonly string[]): string {
  if (typeof input !== "string") return "";
  const near = nearest(input, options, 1);
  return near.length === 0 ? "" : `did you mean "${near[0]}"?`;
}

/**
 * Parses one value with `schema` outside a document (options on the
 * command line, a labels file): the value, or the first problem.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { listen, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(listen, "[::1]:9477"), { ok: true, value: "[::1]:9477" });
 * assert.deepEqual(parseValue(listen, "0.0.0.0:99999"), {
 *   ok: false,
 *   problem: "port 99999 is not between 0 and 65535",
 *   kind: "range",
 * });
 * ```
 */
export function parseValue<T>(
  schema: z.ZodType<T>,
  value: unknown,
): Parsed<T> {
  const result = schema.safeParse(value, { error: describeIssue });
  if (result.success) return ok(result.data);
  const { what, kind } = firstProblem(result.error.issues);
  return bad(what.replace(HINT, "; "), kind);
}

/**
 * A schema from a parser of a text grammar that zod has no primitive for
 * (durations `500us`, thresholds `1.5k`, `3 of 5`): its problem becomes
 * the issue, with its kind.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { bad, grammar, ok, parseValue } from "./values.ts";
 *
 * const even = grammar((v) => v === 2 ? ok(2) : bad("must be 2", "range"));
 * assert.deepEqual(parseValue(even, 3), { ok: false, problem: "must be 2", kind: "range" });
 * ```
 */
export function grammar<T>(
  parse: (value: unknown) => Parsed<T>,
): z.ZodType<T> {
  return z.unknown().transform((input, ctx): T => {
    const parsed = parse(input);
    if (parsed.ok) return parsed.value;
    ctx.issues.push({
      code: "custom",
      message: parsed.problem,
      params: { kind: parsed.kind },
      input,
    });
    return z.NEVER;
  });
}

/**
 * Refinement options for a problem that is a `RangeError`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { outOfRange, parseValue } from "./values.ts";
 *
 * const even = z.number().refine((n) => n % 2 === 0, outOfRange("must be even"));
 * assert.deepEqual(parseValue(even, 3), { ok: false, problem: "must be even", kind: "range" });
 * ```
 */
export function outOfRange(message: string): {
  error: string;
  params: { kind: "range" };
  abort: true;
} {
  return { error: message, params: { kind: "range" }, abort: true };
}

const U64_LIMIT = 1n << 64n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Digits of a number shown inside a problem; the `got` part has them all. */
const SHOWN_DIGITS = 30;

function tooBigForNumber(advice: string): string {
  return `is not below 2^53, so a JSON or YAML number cannot hold it exactly; ${advice}`;
}

const notBelow2To64 = (iss: { input?: unknown }) =>
  `${cutText(String(iss.input), SHOWN_DIGITS)} is not below 2^64`;

/**
 * An unsigned 64-bit threshold, exactly: a non-negative integer number up
 * to 2^53 - 1, or a string of decimal digits below 2^64. A larger unquoted
 * number is refused with the quoted spelling to use, because a JSON or
 * YAML number above 2^53 may already have been rounded.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseValue, u64 } from "./values.ts";
 *
 * assert.deepEqual(parseValue(u64, "18446744073709551615"), { ok: true, value: 18446744073709551615n });
 * assert.equal(parseValue(u64, 9007199254740993n).ok, false); // quote it as "9007199254740993"
 * ```
 */
export const u64: z.ZodType<bigint> = z.union([
  // A union reports the one branch of the input's type; its checks must
  // not abort, or the union would report itself instead.
  z.number()
    .refine(Number.isInteger, { error: "must be a whole number" })
    .min(0, { error: "must not be negative" })
    .max(Number.MAX_SAFE_INTEGER, {
      error: tooBigForNumber("quote it as a string of decimal digits"),
    }),
  z.bigint()
    .min(0n, { error: "must not be negative" })
    .lt(U64_LIMIT, { error: notBelow2To64 })
    .max(MAX_SAFE, {
      error: (iss) =>
        `${iss.input} ${
          tooBigForNumber(`quote it as a string: "${iss.input}"`)
        }`,
    }),
  z.string()
    .regex(/^-?[0-9]+$/, {
      error: "must be a whole number written with the digits 0-9 only",
    })
    .refine((s) => !s.startsWith("-"), {
      error: "must not be negative",
      params: { kind: "range" },
    })
    .refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) < U64_LIMIT, {
      error: notBelow2To64,
      params: { kind: "range" },
    }),
], {
  error: (iss) =>
    typeof iss.input === "number"
      ? "must be a whole number"
      : iss.input === undefined
      ? undefined
      : "must be an unsigned integer: a number, or a quoted string of decimal digits",
}).transform((value) => BigInt(value));

const DATA_ID = /^0[xX]([0-9a-fA-F]+)$/;

/**
 * A counter the kernel source reads, by where it comes from and the
 * kernel's own name: `netdev:rx_dropped`, `ethtool:rx_prio3_pause`,
 * `rdma:np_cnp_sent`, `ib:port_xmit_wait`; with the interface (`netdev:p1/rx_bytes`,
 * `ethtool:p1/...`) or RDMA device and port (`rdma:mlx5_1/1/np_cnp_sent`)
 * when the device has several. Whether the device offers it is checked
 * when the source opens.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { kernelCounter, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(kernelCounter, "ethtool:rx_prio3_pause_duration"), {
 *   ok: true,
 *   value: "ethtool:rx_prio3_pause_duration",
 * });
 * assert.equal(parseValue(kernelCounter, "0x1020000100000000").ok, false);
 * ```
 */
export const kernelCounter: z.ZodType<string> = z.string().regex(
  /^(?:(?:netdev|ethtool):(?:[^\s/:]{1,15}\/)?|(?:rdma|ib):(?:[^\s/:]+\/\d+\/)?)[A-Za-z0-9_.-]{1,64}$/,
  {
    error:
      'must name a kernel counter as SOURCE:NAME, SOURCE one of netdev, ethtool, rdma, ib (e.g. "netdev:rx_dropped", "ethtool:rx_prio3_pause", "rdma:mlx5_0/1/np_cnp_sent")',
  },
);

/**
 * A 64-bit diag data ID written as `0x` and 1 to 16 hex digits, normalized
 * to `0x` + 16 lowercase digits. A bare number is refused (YAML reads
 * `0x1020000100000000` unquoted as an integer) with the quoted spelling.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { dataId, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(dataId, "0xABC"), { ok: true, value: "0x0000000000000abc" });
 * assert.deepEqual(parseValue(dataId, 16), {
 *   ok: false,
 *   problem: 'must be a quoted hex string; write it as "0x0000000000000010"',
 *   kind: "type",
 * });
 * ```
 */
export const dataId: z.ZodType<string> = z.union([
  z.string().transform((s, ctx) => {
    if (DATA_ID.test(s)) {
      if (s.length <= 18) return s;
      ctx.issues.push({
        code: "custom",
        message: `has ${s.length - 2} hex digits; a data ID has at most 16`,
        input: s,
        params: { kind: "range" },
        continue: true,
      });
      return z.NEVER;
    }
    // What looks like hex is taken for a mistyped ID, anything else for a name.
    const named = /^(0[xX]|[0-9a-fA-F]+$)/.test(s) ? undefined : docaDataId(s);
    if (named?.ok) return named.dataId;
    ctx.issues.push({
      code: "custom",
      message: named?.problem ??
        'must be a hex string such as "0x1020000100000000" (0x and up to 16 hex digits)',
      input: s,
      continue: true,
      ...(named?.range ? { params: { kind: "range" } } : {}),
    });
    return z.NEVER;
  }),
  z.union([z.number(), z.bigint()]).check((ctx) => {
    const n = ctx.value;
    const id = typeof n === "bigint"
      ? n >= 0n && n < U64_LIMIT
      : Number.isSafeInteger(n) && n >= 0;
    ctx.issues.push({
      code: "custom",
      message: id
        ? `must be a quoted hex string; write it as "0x${
          n.toString(16).padStart(16, "0")
        }"`
        : 'must be a quoted hex string such as "0x1020000100000000"',
      input: n,
      continue: true,
    });
  }),
], {
  error: (iss) =>
    iss.input === undefined
      ? undefined
      : 'must be a quoted hex string such as "0x1020000100000000"',
}).transform((id) =>
  "0x" + String(id).slice(2).toLowerCase().padStart(16, "0")
);

/** The ten accepted spellings of the five rule types. */
const COMPARISON_TYPES = {
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
} as const satisfies Record<string, ComparisonType>;

const SHORT_TYPES = ["gt", "lt", "dt_gt", "dt_lt", "inc_gt"];

/**
 * A rule type in its short or long spelling, as the short one.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { comparisonType, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(comparisonType, "differential_greater_than"), { ok: true, value: "dt_gt" });
 * assert.deepEqual(parseValue(comparisonType, "gte"), {
 *   ok: false,
 *   problem: 'must be one of gt, lt, dt_gt, dt_lt, inc_gt (or their long forms); did you mean "gt"?',
 *   kind: "type",
 * });
 * ```
 */
export const comparisonType: z.ZodType<ComparisonType> = z.enum(
  Object.keys(COMPARISON_TYPES) as (keyof typeof COMPARISON_TYPES)[],
  {
    error: (iss) =>
      iss.input === undefined ? undefined : withHint(
        `must be one of ${SHORT_TYPES.join(", ")} (or their long forms)`,
        didYouMean(iss.input, Object.keys(COMPARISON_TYPES)),
      ),
  },
).transform((type) => COMPARISON_TYPES[type]);

/**
 * A whole number from `min` to `max` (safe integers by default). Quoted
 * numbers are refused so that a typo cannot hide in a string; an integer
 * past 2^53 is out of range, not of the wrong kind.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { integer, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(integer(1), 10000), { ok: true, value: 10000 });
 * assert.deepEqual(parseValue(integer(1), 0), { ok: false, problem: "must be at least 1", kind: "range" });
 * assert.equal(parseValue(integer(), 2n ** 60n).ok, false);
 * ```
 */
export function integer(
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
  error?: string,
): z.ZodType<number> {
  const bound = error === undefined ? {} : { error };
  return z.preprocess(
    (value) => typeof value === "bigint" ? Number(value) : value,
    z.number({
      error: (iss) =>
        iss.code === "invalid_type" && iss.input !== undefined
          ? mustBe("int", iss.input)
          : undefined,
    })
      .int({
        error: (iss) =>
          iss.code === "too_big" || iss.code === "too_small"
            ? `must be at most ${Number.MAX_SAFE_INTEGER} in magnitude`
            : "must be a whole number",
      })
      .min(min, bound)
      .max(max, bound),
  ) as unknown as z.ZodType<number>;
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Free text that ends up in logs, labels or paths: a non-empty string
 * without line breaks or other control characters (one would break the
 * line-oriented events.log and metrics formats), no lone surrogate (UTF-8
 * cannot carry it: a path would name another file), at most
 * {@linkcode MAX_TEXT_CHARS} long.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseValue, text } from "./values.ts";
 *
 * assert.deepEqual(parseValue(text, "Rx Bytes/s > 1MeBs"), { ok: true, value: "Rx Bytes/s > 1MeBs" });
 * assert.equal(parseValue(text, "").ok, false);
 * ```
 */
export const text: z.ZodString = oneLine().max(MAX_TEXT_CHARS);

/**
 * Text on one line: non-empty, no line breaks or other controls, no lone
 * surrogate; {@linkcode text} bounds its length, other fields their own.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { oneLine, parseValue } from "./values.ts";
 *
 * assert.equal(parseValue(oneLine().max(3), "a\nb").ok, false);
 * assert.equal(parseValue(oneLine().max(3), "abcd").ok, false);
 * ```
 */
export function oneLine(): z.ZodString {
  return z.string()
    .refine((s) => s !== "", { error: "must not be empty", abort: true })
    .refine((s) => !CONTROL.test(s), {
      error: "must not contain line breaks or other control characters",
      abort: true,
    })
    .refine((s) => !LONE_SURROGATE.test(s), {
      error: "must not contain a lone surrogate (half a UTF-16 pair)",
      abort: true,
    });
}

/**
 * A monitor name: 1 to 64 letters, digits, `_`, `.` or `-`, because it
 * appears in file names and metric labels.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { monitorName, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(monitorName, "nic-0.a_b"), { ok: true, value: "nic-0.a_b" });
 * assert.equal(parseValue(monitorName, "my nic").ok, false);
 * ```
 */
export const monitorName: z.ZodString = z.string().regex(
  /^[A-Za-z0-9_.-]{1,64}$/,
  { error: "must be 1 to 64 letters, digits, '_', '.' or '-'" },
);

/** The listen address that turns the metrics endpoint off. */
export const LISTEN_OFF = "off";
const LISTEN =
  /^(?:\[([0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?)\]|([A-Za-z0-9_.-]+)):([0-9]+)$/;

/**
 * A listen address `HOST:PORT`, with IPv6 hosts in brackets
 * (`[::1]:9477`) and a port from 0 (any free port) to 65535, or
 * {@linkcode LISTEN_OFF} for no metrics endpoint. Kept as written.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { listen, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(listen, "off"), { ok: true, value: "off" }); // no endpoint
 * assert.deepEqual(parseValue(listen, "::1:9477"), {
 *   ok: false,
 *   problem: 'must put an IPv6 host in brackets, as in "[::1]:9477"',
 *   kind: "type",
 * });
 * ```
 */
export const listen: z.ZodType<string> = z.string({
  error: (iss) =>
    iss.code === "invalid_type" && iss.input !== undefined
      ? 'must be a string "HOST:PORT" such as "0.0.0.0:9477"'
      : undefined,
}).check((ctx) => {
  const value = ctx.value;
  if (value === LISTEN_OFF) return;
  const push = (message: string, kind: ProblemKind = "type") => {
    ctx.issues.push({
      code: "custom",
      message,
      params: { kind },
      input: value,
      continue: true,
    });
  };
  const match = LISTEN.exec(value);
  if (match === null) {
    const bareIpv6 = (value.match(/:/g)?.length ?? 0) > 1 &&
      !value.startsWith("[");
    return push(
      bareIpv6
        ? 'must put an IPv6 host in brackets, as in "[::1]:9477"'
        : 'must be "HOST:PORT" such as "0.0.0.0:9477" (IPv6 as "[::1]:9477")',
    );
  }
  const [, ipv6, host] = match;
  if (ipv6 !== undefined && !ipv6.includes(":")) {
    return push("must use brackets only around an IPv6 address");
  }
  // An address that cannot be one fails here, with the rule, rather than
  // at the bind (exit 1, "failed to lookup address information").
  if (ipv6 !== undefined && !isIpv6(ipv6.replace(/%.*$/, ""))) {
    return push(`host [${ipv6}] is not an IPv6 address`);
  }
  if (host !== undefined && /^[0-9.]+$/.test(host) && !isIpv4(host)) {
    return push(
      `host ${host} is not an IPv4 address: four numbers from 0 to 255 (no leading zeros), as in 127.0.0.1`,
      "range",
    );
  }
  // Port 0 asks the system for a free port (tests; the agent prints it).
  if (Number(match[3]) > 65535) {
    push(`port ${match[3]} is not between 0 and 65535`, "range");
  }
});

/**
 * Dotted-quad IPv4 as people mean it: four numbers from 0 to 255. A
 * leading zero is refused, since the resolver may read `010` as octal (8),
 * and so are the resolver's shorter forms (`127.1`).
 */
function isIpv4(host: string): boolean {
  const parts = host.split(".");
  return parts.length === 4 &&
    parts.every((p) => /^(?:0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}

/** Whether `address` (no zone) is an IPv6 address, as a URL parser reads one. */
function isIpv6(address: string): boolean {
  return URL.canParse(`http://[${address}]/`);
}

/**
 * The metrics window in seconds: {@linkcode MIN_METRICS_WINDOW_S} to
 * {@linkcode MAX_METRICS_WINDOW_S} (a day), fractions allowed.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { metricsWindow, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(metricsWindow, 2.5), { ok: true, value: 2.5 });
 * assert.equal(parseValue(metricsWindow, 1e300).ok, false);
 * ```
 */
export const metricsWindow: z.ZodNumber = z.number()
  .gt(0, { error: "must be greater than 0", abort: true })
  .min(MIN_METRICS_WINDOW_S, {
    error:
      `must be from ${MIN_METRICS_WINDOW_S} to ${MAX_METRICS_WINDOW_S} seconds (a day)`,
  })
  .max(MAX_METRICS_WINDOW_S, {
    error:
      `must be from ${MIN_METRICS_WINDOW_S} to ${MAX_METRICS_WINDOW_S} seconds (a day)`,
  });

/**
 * The size at which events logs rotate: 0 (never) or from
 * {@linkcode MIN_EVENT_LOG_MAX_BYTES} to 2^53 - 1 bytes.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventLogMaxBytes, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(eventLogMaxBytes, 0), { ok: true, value: 0 });
 * assert.equal(parseValue(eventLogMaxBytes, 1).ok, false);
 * ```
 */
export const eventLogMaxBytes: z.ZodType<number> = integer(0).refine(
  (n) => n === 0 || n >= MIN_EVENT_LOG_MAX_BYTES,
  outOfRange(
    `must be 0 (never rotate) or at least ${MIN_EVENT_LOG_MAX_BYTES} (64 KiB); a header block alone can be that large`,
  ),
);

/**
 * How many rotated events logs are kept: 1 to {@linkcode MAX_EVENT_LOG_KEEP}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventLogKeep, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(eventLogKeep, 4), { ok: true, value: 4 });
 * assert.equal(parseValue(eventLogKeep, 1e15).ok, false);
 * ```
 */
export const eventLogKeep: z.ZodType<number> = integer(1).refine(
  (n) => n <= MAX_EVENT_LOG_KEEP,
  outOfRange(
    `must be at most ${MAX_EVENT_LOG_KEEP}; each rotation renames every kept file`,
  ),
);

/**
 * Whether a GPU monitor is added beside a NIC monitor: `auto` or `off`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuMode, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(gpuMode, "off"), { ok: true, value: "off" });
 * assert.equal(parseValue(gpuMode, "maybe").ok, false);
 * ```
 */
export const gpuMode: z.ZodType<GpuMode> = z.enum(["auto", "off"]);

/**
 * A GPU column name (`gpu0.temperature`, `gpu*.power`, `gpu1.*`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { gpuColumnName, parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(gpuColumnName, "gpu*.power"), { ok: true, value: "gpu*.power" });
 * ```
 */
export const gpuColumnName: z.ZodType<string> = z.string({
  error: (iss) =>
    iss.code === "invalid_type" && iss.input !== undefined
      ? "must be a string such as gpu0.temperature"
      : undefined,
}).check((ctx) => {
  const parsed = parseGpuColumn(ctx.value);
  if (!parsed.ok) {
    ctx.issues.push({
      code: "custom",
      message: parsed.problem,
      input: ctx.value,
    });
  }
});
