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
import { z } from "zod";
import { nameProblem } from "./names.ts";
import { outOfRange } from "./values.ts";

/**
 * Label names the agent sets itself, and what each holds: a topology
 * label of one of these names would overwrite it on alerts (or, for `job`
 * and `instance`, be renamed by Prometheus on the scraped series).
 */
export const RESERVED_LABELS: Readonly<Record<string, string>> = {
  alertname: "DpuTracebackRuleFired on every rule's alert, pushed or scraped",
  monitor: "the monitor's name on alerts and metrics",
  device: "the monitored device on alerts",
  instance:
    "the agent's instance on alerts (set it with instance:), and Prometheus's scrape target on metrics",
  severity: "the rule's severity on alerts",
  rule: "the rule's name on alerts and metrics",
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
 * One line of printable text (what a rule name may hold, see names.ts), 1
 * to `max` characters, saying `what` it is when it is not. A YAML number
 * is refused: `rail: 03` would arrive as 3.
 */
function labelText(max: number, what: string): z.ZodType<string> {
  return z.string({
    error: (iss) => {
      const value = iss.input;
      if (value === undefined || iss.code !== "invalid_type") return undefined;
      return typeof value === "number" || typeof value === "bigint" ||
          typeof value === "boolean"
        ? `must be a string; quote it (${
          JSON.stringify(String(value))
        }) so YAML keeps it as written`
        : "must be a string";
    },
  })
    .refine((s) => s !== "", {
      error:
        "must not be empty: Prometheus and Alertmanager treat an empty label as no label (leave it out instead)",
      abort: true,
    })
    .check((ctx) => {
      const problem = nameProblem(ctx.value);
      if (problem === undefined || !problem.startsWith("contains")) return;
      ctx.issues.push({
        code: "custom",
        message: problem.replace(
          /; names must be printable text$/,
          `; ${what} must be one line of printable text`,
        ),
        input: ctx.value,
      });
    })
    .refine(
      (s) => [...s].length <= max,
      outOfRange(`is longer than ${max} characters`),
    );
}

/**
 * A topology label value: 1 to {@linkcode MAX_LABEL_VALUE_CHARS}
 * characters of one printable line, a string as written.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { labelValue } from "./topology_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(labelValue, "leaf-12"), { ok: true, value: "leaf-12" });
 * assert.deepEqual(parseValue(labelValue, 3), {
 *   ok: false,
 *   problem: 'must be a string; quote it ("3") so YAML keeps it as written',
 *   kind: "type",
 * });
 * ```
 */
export const labelValue: z.ZodType<string> = labelText(
  MAX_LABEL_VALUE_CHARS,
  "a label value",
);

/**
 * `instance`: like a label value, but up to {@linkcode MAX_INSTANCE_CHARS}
 * characters, the longest host name.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { instance } from "./topology_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(instance, "dpu-r12-07"), { ok: true, value: "dpu-r12-07" });
 * assert.equal(parseValue(instance, "").ok, false);
 * ```
 */
export const instance: z.ZodType<string> = labelText(
  MAX_INSTANCE_CHARS,
  "an instance",
);

/**
 * Topology labels, `name: value`: each name by
 * {@linkcode labelNameProblem}, each value by {@linkcode labelValue}, at
 * most {@linkcode MAX_TOPOLOGY_LABELS} in all; each problem at its label.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { topologyLabels } from "./topology_labels.ts";
 * import { parseValue } from "./values.ts";
 *
 * assert.deepEqual(parseValue(topologyLabels, { rack: "r12", rail: "3" }), {
 *   ok: true,
 *   value: { rack: "r12", rail: "3" },
 * });
 * assert.deepEqual(parseValue(topologyLabels, { job: "x" }), {
 *   ok: false,
 *   problem: "is a label the agent sets itself (Prometheus's scrape job on metrics); choose another name",
 *   kind: "type",
 * });
 * ```
 */
export const topologyLabels: z.ZodType<Record<string, string>> = z.record(
  z.string(),
  labelValue,
  {
    error:
      'must be an object of label names and values, e.g. { rack: r12, rail: "3" }',
  },
).check((ctx) => {
  const names = Object.keys(ctx.value);
  for (const name of names) {
    const problem = labelNameProblem(name);
    if (problem !== undefined) {
      ctx.issues.push({
        code: "custom",
        message: problem,
        path: [name],
        input: ctx.value[name],
      });
    }
  }
  if (names.length > MAX_TOPOLOGY_LABELS) {
    ctx.issues.push({
      code: "custom",
      message: tooManyLabels(names.length),
      params: { kind: "range" },
      input: ctx.value,
    });
  }
});

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
  return `has ${count} topology labels; at most ${MAX_TOPOLOGY_LABELS}, so that alerts (which add alertname, rule, monitor, device, instance and severity) stay under 20 labels`;
}
