/**
 * Topology labels (`labels:` and the labels file): where a DPU sits
 * (`rack`, `rail`, `plane`, `switch`, `switch_port`, a site's own). They
 * go on every alert and on the one `dpu_traceback_topology_info` series,
 * so names follow Prometheus's label name rules, and names the agent sets
 * itself on alerts are refused rather than silently overwritten.
 *
 * @module
 */

import {
  MAX_INSTANCE_CHARS,
  MAX_LABEL_VALUE_CHARS,
  MAX_TOPOLOGY_LABELS,
} from "./limits.ts";
import { nameProblem } from "./names.ts";
import { bad, ok, type Parsed } from "./values.ts";

/**
 * Label names the agent sets itself, and what each holds: a topology
 * label of one of these names would overwrite it on alerts (or, for `job`
 * and `instance`, be renamed by Prometheus on the scraped series).
 */
export const RESERVED_LABELS: Readonly<Record<string, string>> = {
  alertname: "the rule's name on every alert",
  monitor: "the monitor's name on alerts and metrics",
  device: "the monitored device on alerts",
  instance:
    "the agent's instance on alerts (set it with instance:), and Prometheus's scrape target on metrics",
  severity: "the rule's severity on alerts",
  rule: "the rule's name on metrics",
  job: "Prometheus's scrape job on metrics",
};

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Why `name` cannot be a topology label name, or undefined if it can: it
 * must be a Prometheus label name, must not start with `__` (Prometheus
 * keeps those for itself and drops them after relabelling), and must not
 * be one of {@linkcode RESERVED_LABELS}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { labelNameProblem } from "./topology_labels.ts";
 *
 * assert.equal(labelNameProblem("switch_port"), undefined);
 * assert.equal(
 *   labelNameProblem("rack-id"),
 *   "is not a label name: letters, digits and _, not starting with a digit",
 * );
 * assert.equal(
 *   labelNameProblem("severity"),
 *   "is a label the agent sets itself (the rule's severity on alerts); choose another name",
 * );
 * ```
 */
export function labelNameProblem(name: string): string | undefined {
  if (!LABEL_NAME.test(name)) {
    return "is not a label name: letters, digits and _, not starting with a digit";
  }
  if (name.startsWith("__")) {
    return "starts with __, which Prometheus keeps for its own labels; choose another name";
  }
  if (Object.hasOwn(RESERVED_LABELS, name)) {
    return `is a label the agent sets itself (${
      RESERVED_LABELS[name]
    }); choose another name`;
  }
  return undefined;
}

/**
 * Parses a topology label value: one line of printable text (what a rule
 * name may hold, see names.ts), 1 to {@linkcode MAX_LABEL_VALUE_CHARS}
 * characters. A YAML number is refused: `rail: 03` would arrive as 3.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLabelValue } from "./topology_labels.ts";
 *
 * assert.deepEqual(parseLabelValue("leaf-12"), { ok: true, value: "leaf-12" });
 * assert.deepEqual(parseLabelValue(3), {
 *   ok: false,
 *   problem: 'must be a string; quote it ("3") so YAML keeps it as written',
 *   kind: "type",
 * });
 * ```
 */
export function parseLabelValue(value: unknown): Parsed<string> {
  return parseLabelText(value, MAX_LABEL_VALUE_CHARS, "a label value");
}

/**
 * Parses `instance`: like a label value, but up to
 * {@linkcode MAX_INSTANCE_CHARS} characters, the longest host name.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseInstance } from "./topology_labels.ts";
 *
 * assert.deepEqual(parseInstance("dpu-r12-07"), { ok: true, value: "dpu-r12-07" });
 * assert.equal(parseInstance("").ok, false);
 * ```
 */
export function parseInstance(value: unknown): Parsed<string> {
  return parseLabelText(value, MAX_INSTANCE_CHARS, "an instance");
}

function parseLabelText(
  value: unknown,
  max: number,
  what: string,
): Parsed<string> {
  if (value === undefined) return bad("is required");
  if (
    typeof value === "number" || typeof value === "bigint" ||
    typeof value === "boolean"
  ) {
    return bad(
      `must be a string; quote it (${
        JSON.stringify(String(value))
      }) so YAML keeps it as written`,
    );
  }
  if (typeof value !== "string") return bad("must be a string");
  if (value === "") {
    return bad(
      "must not be empty: Prometheus and Alertmanager treat an empty label as no label (leave it out instead)",
    );
  }
  const problem = nameProblem(value);
  if (problem !== undefined && problem.startsWith("contains")) {
    return bad(
      problem.replace(
        /; names must be printable text$/,
        `; ${what} must be one line of printable text`,
      ),
    );
  }
  let chars = 0;
  for (const _ of value) {
    if (++chars > max) {
      return bad(`is longer than ${max} characters`, "range");
    }
  }
  return ok(value);
}

/** One problem with a label, and where: its name, or the list as a whole. */
export interface LabelProblem {
  /** The label's name, or undefined for the whole list (too many). */
  readonly name?: string;
  /** What is wrong, phrased to follow the name. */
  readonly problem: string;
  /** TypeError or RangeError. */
  readonly kind: "type" | "range";
}

/**
 * Checks a set of topology labels: each name by
 * {@linkcode labelNameProblem}, each value by {@linkcode parseLabelValue},
 * at most {@linkcode MAX_TOPOLOGY_LABELS} in all. Returns the labels as
 * strings, or the first problem.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkTopologyLabels } from "./topology_labels.ts";
 *
 * assert.deepEqual(checkTopologyLabels({ rack: "r12", rail: "3" }), {
 *   ok: true,
 *   value: { rack: "r12", rail: "3" },
 * });
 * assert.deepEqual(checkTopologyLabels({ job: "x" }), {
 *   ok: false,
 *   problem: {
 *     name: "job",
 *     problem: "is a label the agent sets itself (Prometheus's scrape job on metrics); choose another name",
 *     kind: "type",
 *   },
 * });
 * ```
 */
export function checkTopologyLabels(
  labels: Readonly<Record<string, unknown>>,
):
  | { readonly ok: true; readonly value: Record<string, string> }
  | { readonly ok: false; readonly problem: LabelProblem } {
  const names = Object.keys(labels);
  const value: Record<string, string> = {};
  for (const name of names) {
    const nameIssue = labelNameProblem(name);
    if (nameIssue !== undefined) {
      return { ok: false, problem: { name, problem: nameIssue, kind: "type" } };
    }
    const parsed = parseLabelValue(labels[name]);
    if (!parsed.ok) {
      return {
        ok: false,
        problem: { name, problem: parsed.problem, kind: parsed.kind },
      };
    }
    value[name] = parsed.value;
  }
  if (names.length > MAX_TOPOLOGY_LABELS) {
    return {
      ok: false,
      problem: { problem: tooManyLabels(names.length), kind: "range" },
    };
  }
  return { ok: true, value };
}

/**
 * The problem of `count` topology labels past
 * {@linkcode MAX_TOPOLOGY_LABELS}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { tooManyLabels } from "./topology_labels.ts";
 *
 * assert.match(tooManyLabels(11), /^has 11 topology labels; at most 10/);
 * ```
 */
export function tooManyLabels(count: number): string {
  return `has ${count} topology labels; at most ${MAX_TOPOLOGY_LABELS}, so that alerts (which add alertname, monitor, device, instance and severity) stay under 20 labels`;
}
