/**
 * The text events.log carries before any sample: the reference
 * application's configuration block, and the column-name row that opens
 * every history dump.
 *
 * @module
 */

import { stringify } from "csv-stringify/sync";
import {
  type ColumnConfig,
  DEFAULT_SEVERITY,
  isReferenceRule,
  type RuleConfig,
  type SignalRuleConfig,
} from "../config/types.ts";
import { HEADER_PREFIX, HEADER_TYPE_NAMES } from "./header_names.ts";

export { HEADER_PREFIX, HEADER_TYPE_NAMES };

/** What the header block describes. */
export interface HeaderOptions {
  /** Printed after `Telemetry monitor : `. */
  readonly version: string;
  /** Printed as `Device: "..."`. */
  readonly device: string;
  /**
   * The monitor's name as configured, printed after the device as
   * `Monitor: "..."` (ours: the reference has one monitor and no name), so
   * that review names the monitor as the configuration, the metrics and
   * the alerts do.
   */
  readonly name?: string;
  /** History depth in samples, printed as `Sample history depth: N`. */
  readonly depth: number;
  /** Sample period in ns, printed as `Diag sample period: Nns`. */
  readonly samplePeriodNs: number;
  /** The `Data IDs` list: each column's name and data ID, in order. */
  readonly columns: readonly ColumnConfig[];
  /**
   * The `Rules` list. Each rule's `column` (and a ratio's `denominator`)
   * must index `columns`: the header names a rule's columns by data ID.
   * Reference rules print as the reference prints them; signal rules as
   * {@linkcode signalRuleLines} says.
   */
  readonly rules: readonly RuleConfig[];
}

/**
 * A name inside the double quotes the reference puts around names, with
 * embedded quotes doubled as CSV does, so a name cannot end its own field.
 */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The configuration block in the reference layout (tab-indented; the
 * trailing space after `Configuration:` and the two blank lines are the
 * reference's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatHeader } from "./header.ts";
 *
 * const header = formatHeader({
 *   version: "dpu-traceback 0.1.0",
 *   device: "03:00.0",
 *   depth: 1024,
 *   samplePeriodNs: 100000,
 *   columns: [{ name: "rx", dataId: "0x1020000100000000" }],
 *   rules: [{ name: "busy", column: 0, comparisonType: "dt_gt", comparisonValue: 1048576n }],
 * });
 * assert.equal(
 *   header,
 *   [
 *     "Telemetry monitor : dpu-traceback 0.1.0",
 *     "Configuration: ",
 *     '\tDevice: "03:00.0"',
 *     "\tSample history depth: 1024",
 *     "\tDiag sample period: 100000ns",
 *     "\tData IDs: [",
 *     "\t\t{",
 *     '\t\t\tName: "rx",',
 *     "\t\t\tData ID: 0x1020000100000000",
 *     "\t\t},",
 *     "\t]",
 *     "\tRules: [",
 *     "\t\t{",
 *     '\t\t\tName: "busy",',
 *     "\t\t\tData ID: 0x1020000100000000",
 *     "\t\t\tComparison type: differential_greater_than",
 *     "\t\t\tComparison value: 1048576",
 *     "\t\t},",
 *     "\t]",
 *     "",
 *     "",
 *     "",
 *   ].join("\n"),
 * );
 * ```
 */
export function formatHeader(options: HeaderOptions): string {
  const lines = [
    `${HEADER_PREFIX} ${options.version}`,
    "Configuration: ",
    `\tDevice: ${quoteName(options.device)}`,
    ...(options.name === undefined
      ? []
      : [`\tMonitor: ${quoteName(options.name)}`]),
    `\tSample history depth: ${options.depth}`,
    `\tDiag sample period: ${options.samplePeriodNs}ns`,
    "\tData IDs: [",
  ];
  for (const column of options.columns) {
    lines.push(
      "\t\t{",
      `\t\t\tName: ${quoteName(column.name)},`,
      `\t\t\tData ID: ${column.dataId}`,
      "\t\t},",
    );
  }
  lines.push("\t]", "\tRules: [");
  for (const rule of options.rules) {
    lines.push(
      "\t\t{",
      `\t\t\tName: ${quoteName(rule.name)},`,
      `\t\t\tData ID: ${options.columns[rule.column].dataId}`,
    );
    // Reference rules stay exactly as the reference prints them (without
    // severity or summary); signal rules have no comparison type.
    if (isReferenceRule(rule)) {
      lines.push(
        `\t\t\tComparison type: ${HEADER_TYPE_NAMES[rule.comparisonType]}`,
        `\t\t\tComparison value: ${rule.comparisonValue}`,
      );
    } else {
      lines.push(...signalRuleLines(rule, options.columns));
    }
    lines.push("\t\t},");
  }
  lines.push("\t]", "", "", "");
  return lines.join("\n");
}

/**
 * The lines of a signal rule's header item after its `Data ID`: every
 * figure of its definition, exact (durations in ns, u64 thresholds in
 * decimal, float thresholds in JavaScript's shortest round-trip form), so
 * a reader of the log alone knows what the rule was:
 *
 * ```
 * Signal: rate over 1000000ns
 * Condition: above 1000000, clear 200000, for 500000ns, keep_firing_for 10000000ns
 * Severity: critical
 * Summary: "ECN marks above 1M/s"
 * ```
 *
 * A ratio adds `Denominator data ID: <data ID>` after `Signal`; M of N
 * reads `for 3 of 5 samples`; `Summary` is there only when configured.
 *
 * @example A ratio with M of N
 * ```ts
 * import assert from "node:assert/strict";
 * import { signalRuleLines } from "./header.ts";
 *
 * assert.deepEqual(
 *   signalRuleLines({
 *     name: "discards", signal: "ratio", column: 0, denominator: 1,
 *     windowNs: 1_000_000, direction: "above", threshold: 0.001, clear: 0.001,
 *     forNs: 0, mOfN: { m: 3, n: 5 }, keepFiringForNs: 0,
 *   }, [
 *     { name: "rx_discards", dataId: "0x1020000c00000000" },
 *     { name: "rx_packets", dataId: "0x1020000200000000" },
 *   ]),
 *   [
 *     "\t\t\tSignal: ratio over 1000000ns",
 *     "\t\t\tDenominator data ID: 0x1020000200000000",
 *     "\t\t\tCondition: above 0.001, clear 0.001, for 3 of 5 samples, keep_firing_for 0ns",
 *     "\t\t\tSeverity: warning",
 *   ],
 * );
 * ```
 */
export function signalRuleLines(
  rule: SignalRuleConfig,
  columns: readonly ColumnConfig[],
): string[] {
  const windowed = rule.signal === "rate" || rule.signal === "ratio";
  const lines = [
    `\t\t\tSignal: ${rule.signal}${windowed ? ` over ${rule.windowNs}ns` : ""}`,
  ];
  if (rule.signal === "ratio" && rule.denominator !== undefined) {
    lines.push(
      `\t\t\tDenominator data ID: ${columns[rule.denominator].dataId}`,
    );
  }
  const start = rule.mOfN === undefined
    ? `for ${rule.forNs}ns`
    : `for ${rule.mOfN.m} of ${rule.mOfN.n} samples`;
  lines.push(
    `\t\t\tCondition: ${rule.direction} ${rule.threshold}, clear ${rule.clear}, ${start}, keep_firing_for ${rule.keepFiringForNs}ns`,
    `\t\t\tSeverity: ${rule.severity ?? DEFAULT_SEVERITY}`,
  );
  if (rule.summary !== undefined) {
    lines.push(`\t\t\tSummary: ${quoteName(rule.summary)}`);
  }
  return lines;
}

/**
 * The row naming the columns (`timestamp, <name>, ...`), each name quoted
 * as CSV requires (a comma, quote, newline or edge whitespace forces quotes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatColumnNames } from "./header.ts";
 *
 * assert.equal(
 *   formatColumnNames([
 *     { name: "rx, port 0", dataId: "0x1020000100000000" },
 *     { name: "ecn", dataId: "0x1080000400000000" },
 *   ]),
 *   'timestamp, "rx, port 0", ecn\n',
 * );
 * ```
 */
export function formatColumnNames(columns: readonly ColumnConfig[]): string {
  const cells = ["timestamp"];
  for (const column of columns) cells.push(quoteColumnName(column.name));
  return cells.join(", ") + "\n";
}

/**
 * One cell of the column-name row: CSV-quoted when it needs it (a comma,
 * quote, newline or edge whitespace), as is otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { quoteColumnName } from "./header.ts";
 *
 * assert.equal(quoteColumnName("rx, port 0"), '"rx, port 0"');
 * assert.equal(quoteColumnName('say "hi"'), '"say ""hi"""');
 * assert.equal(quoteColumnName("rx"), "rx");
 * ```
 */
export function quoteColumnName(name: string): string {
  return stringify([[name]], {
    quoted_match: /^\s|\s$/,
    record_delimiter: "unix",
  }).slice(0, -1);
}
