/**
 * Reads back the configuration block that opens every run in events.log
 * (`Telemetry monitor : ...` and the tab-indented lines after it), as both
 * our writer and the reference application print it.
 *
 * @module
 */

import type { ComparisonType, Direction, SignalKind } from "../config/types.ts";
import { SIGNAL_KEYS } from "../config/signal_keys.ts";
import { HEADER_PREFIX, HEADER_TYPE_NAMES } from "../events/header_names.ts";

/**
 * A rule's type, short form: one of the reference's five comparison
 * types, or for a signal rule the signal it watches.
 */
export type RuleKind = ComparisonType | SignalKind;

/**
 * The comparison types, by the names the header prints (the inverse of
 * the writer's {@linkcode HEADER_TYPE_NAMES}), by their short forms, and
 * `incremental_greater_than`, which some writers print.
 */
const HEADER_TYPES: ReadonlyMap<string, RuleKind> = new Map([
  ...(Object.entries(HEADER_TYPE_NAMES) as [RuleKind, string][]).flatMap((
    [kind, name],
  ) => [[name, kind], [kind, kind]] as [string, RuleKind][]),
  ["incremental_greater_than", "inc_gt"],
]);

/** One data ID (column) of the header. */
export interface HeaderColumn {
  readonly name: string;
  /** As printed: hex for DOCA (`0x1020000100000000`), text for others (`nvml gpu0.temperature`). */
  readonly dataId: string;
}

/**
 * A signal rule's definition, as its header item prints it (see the
 * writer's `signalRuleLines`).
 */
export interface HeaderSignal {
  /** What the rule computes from its column(s). */
  readonly signal: SignalKind;
  /** The window of `rate` and `ratio`, ns; 0 for `value` and `increase`. */
  readonly windowNs: number;
  /** `above`: raised when the signal goes above the threshold; `below`: under it. */
  readonly direction: Direction;
  /** As printed: exact decimal u64 (`value`, `increase`) or a float (per second for `rate`). */
  readonly threshold: string;
  /** The clear level, as printed. */
  readonly clear: string;
  /** `for`, ns (0 with M of N). */
  readonly forNs: number;
  /** M of N instead of `for`. */
  readonly mOfN?: { readonly m: number; readonly n: number };
  /** `keep_firing_for`, ns. */
  readonly keepFiringForNs: number;
  /** As configured (`critical`); undefined if the item has no `Severity`. */
  readonly severity?: string;
  /** The configured one-line summary, if any. */
  readonly summary?: string;
  /** A ratio's denominator: its data ID, and its name if `Data IDs` lists it. */
  readonly denominatorDataId?: string;
  /** The denominator's column name, when `Data IDs` lists its data ID. */
  readonly denominator?: string;
}

/** One rule of the header. */
export interface HeaderRule {
  readonly name: string;
  /** The rule's column (for a ratio, its numerator). */
  readonly dataId: string;
  /** Short type, or undefined if the header names one this reader does not know. */
  readonly kind?: RuleKind;
  /**
   * As printed: the comparison type (`differential_greater_than`), or for
   * a signal rule its `Signal` line (`rate over 1000000ns`).
   */
  readonly typeName: string;
  /** The threshold: decimal text, exact (for a signal rule, as its `Condition` prints it). */
  readonly value: string;
  /**
   * A signal rule's definition; undefined for the reference's rule types,
   * and for a signal rule whose `Condition` line cannot be read.
   */
  readonly signal?: HeaderSignal;
}

/** What a header block says. */
export interface LogHeader {
  /** After `Telemetry monitor : `. */
  readonly version: string;
  readonly device?: string;
  /** The monitor's configured name (`Monitor:`, ours; absent in older logs). */
  readonly monitor?: string;
  readonly depth?: number;
  readonly samplePeriodNs?: number;
  readonly columns: readonly HeaderColumn[];
  readonly rules: readonly HeaderRule[];
}

/**
 * The text of a `"..."` name with doubled quotes undone; a value without
 * quotes is returned trimmed.
 */
export function unquoteName(text: string): string {
  const t = text.trim().replace(/,$/, "");
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) {
    return t.slice(1, -1).replaceAll('""', '"');
  }
  return t;
}

/**
 * Collects a header block line by line. {@linkcode accept} says whether a
 * line still belongs to the header; the first one that does not ends it.
 * Indented lines it does not know are skipped, so a later writer may add
 * fields.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HeaderParser } from "./header.ts";
 *
 * const p = new HeaderParser("Telemetry monitor : dpu-traceback 0.1.0");
 * assert.equal(p.accept('\tDevice: "03:00.0"'), true);
 * assert.equal(p.accept("timestamp, rx"), false); // the header is over
 * assert.equal(p.header().version, "dpu-traceback 0.1.0");
 * assert.equal(p.header().device, "03:00.0");
 * ```
 */
export class HeaderParser {
  #version: string;
  #device: string | undefined;
  #monitor: string | undefined;
  #depth: number | undefined;
  #periodNs: number | undefined;
  #section: "none" | "ids" | "rules" = "none";
  #item: Map<string, string> | null = null;
  readonly #columns: HeaderColumn[] = [];
  readonly #rules: HeaderRule[] = [];

  /** Starts with the `Telemetry monitor : ...` line. */
  constructor(firstLine: string) {
    this.#version = firstLine.slice(HEADER_PREFIX.length).trim();
  }

  /** Takes the next line; false if it is not part of the header. */
  accept(line: string): boolean {
    if (line.trim() === "") return true;
    if (line.startsWith("Configuration:")) return true;
    if (!/^\s/.test(line)) return false;
    const text = line.trim();
    if (text === "{") {
      this.#item = new Map();
      return true;
    }
    if (text === "}," || text === "}") {
      this.#closeItem();
      return true;
    }
    if (text === "]" || text === "],") {
      this.#closeItem();
      this.#section = "none";
      return true;
    }
    const colon = text.indexOf(":");
    if (colon < 0) return true;
    const key = text.slice(0, colon).trim();
    const value = text.slice(colon + 1).trim();
    if (this.#item !== null) {
      this.#item.set(key, value);
      return true;
    }
    if (key === "Data IDs") this.#section = "ids";
    else if (key === "Rules") this.#section = "rules";
    else if (key === "Device") this.#device = unquoteName(value);
    else if (key === "Monitor") this.#monitor = unquoteName(value);
    else if (key === "Sample history depth") this.#depth = toInt(value);
    else if (/period/i.test(key)) this.#periodNs = toInt(value);
    return true;
  }

  /** What the block said. */
  header(): LogHeader {
    this.#closeItem();
    return {
      version: this.#version,
      device: this.#device,
      monitor: this.#monitor,
      depth: this.#depth,
      samplePeriodNs: this.#periodNs,
      columns: this.#columns,
      rules: this.#rules,
    };
  }

  #closeItem(): void {
    const item = this.#item;
    this.#item = null;
    if (item === null) return;
    const name = unquoteName(item.get("Name") ?? "");
    const dataId = (item.get("Data ID") ?? "").replace(/,$/, "").trim();
    if (this.#section === "ids") {
      this.#columns.push({ name, dataId });
    } else if (this.#section === "rules") {
      const signalLine = item.get("Signal");
      if (signalLine !== undefined && !item.has("Comparison type")) {
        this.#rules.push(this.#signalRule(name, dataId, item, signalLine));
        return;
      }
      const typeName = (item.get("Comparison type") ?? "").replace(/,$/, "");
      this.#rules.push({
        name,
        dataId,
        kind: HEADER_TYPES.get(typeName),
        typeName,
        value: (item.get("Comparison value") ?? "").replace(/,$/, ""),
      });
    }
  }

  /** A signal rule's item; what cannot be read is left out, never guessed. */
  #signalRule(
    name: string,
    dataId: string,
    item: ReadonlyMap<string, string>,
    signalLine: string,
  ): HeaderRule {
    const typeName = signalLine.replace(/,$/, "");
    const m = /^(\w+)(?: over (\d+)ns)?$/.exec(typeName);
    const kind = m !== null && (SIGNAL_KEYS as readonly string[]).includes(m[1])
      ? m[1] as SignalKind
      : undefined;
    const condition = readCondition(item.get("Condition") ?? "");
    const rule = {
      name,
      dataId,
      kind,
      typeName,
      value: condition?.threshold ?? "",
    };
    if (kind === undefined || condition === undefined) return rule;
    const denominatorDataId = item.get("Denominator data ID")
      ?.replace(/,$/, "");
    const denominator = denominatorDataId === undefined
      ? undefined
      : this.#columns.find((c) => c.dataId === denominatorDataId)?.name;
    const severity = item.get("Severity")?.replace(/,$/, "");
    const summary = item.get("Summary");
    const signal: HeaderSignal = {
      signal: kind,
      windowNs: m![2] === undefined ? 0 : Number(m![2]),
      ...condition,
      ...(severity === undefined ? {} : { severity }),
      ...(summary === undefined ? {} : { summary: unquoteName(summary) }),
      ...(denominatorDataId === undefined ? {} : { denominatorDataId }),
      ...(denominator === undefined ? {} : { denominator }),
    };
    return { ...rule, signal };
  }
}

type Condition = Pick<
  HeaderSignal,
  "direction" | "threshold" | "clear" | "forNs" | "mOfN" | "keepFiringForNs"
>;

/**
 * `above 1000000, clear 200000, for 500000ns, keep_firing_for 10000000ns`
 * (or `for 3 of 5 samples`); undefined without a direction and threshold.
 * Parts a later writer may add are skipped.
 */
function readCondition(text: string): Condition | undefined {
  let direction: Direction | undefined;
  let threshold: string | undefined;
  let clear: string | undefined;
  let forNs = 0;
  let mOfN: { m: number; n: number } | undefined;
  let keepFiringForNs = 0;
  for (const part of text.replace(/,$/, "").split(", ")) {
    let m: RegExpExecArray | null;
    if ((m = /^(above|below) (\S+)$/.exec(part)) !== null) {
      direction = m[1] as Direction;
      threshold = m[2];
    } else if ((m = /^clear (\S+)$/.exec(part)) !== null) clear = m[1];
    else if ((m = /^for (\d+)ns$/.exec(part)) !== null) forNs = Number(m[1]);
    else if ((m = /^for (\d+) of (\d+)(?: samples)?$/.exec(part)) !== null) {
      mOfN = { m: Number(m[1]), n: Number(m[2]) };
    } else if ((m = /^keep_firing_for (\d+)ns$/.exec(part)) !== null) {
      keepFiringForNs = Number(m[1]);
    }
  }
  if (direction === undefined || threshold === undefined) return undefined;
  return {
    direction,
    threshold,
    clear: clear ?? threshold,
    forNs,
    ...(mOfN === undefined ? {} : { mOfN }),
    keepFiringForNs,
  };
}

function toInt(text: string): number | undefined {
  const m = /^(\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}
