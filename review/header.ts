/**
 * Reads back the configuration block that opens every run in events.log
 * (`Telemetry monitor : ...` and the tab-indented lines after it), as both
 * our writer and the reference application print it.
 *
 * @module
 */

import type { ComparisonType } from "../config/types.ts";
import { HEADER_PREFIX, HEADER_TYPE_NAMES } from "../events/header.ts";

/** A rule type, short form. */
export type RuleKind = ComparisonType;

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

/** One rule of the header. */
export interface HeaderRule {
  readonly name: string;
  readonly dataId: string;
  /** Short type, or undefined if the header names one this reader does not know. */
  readonly kind?: RuleKind;
  /** As printed (`differential_greater_than`). */
  readonly typeName: string;
  /** Decimal text, exact. */
  readonly value: string;
}

/** What a header block says. */
export interface LogHeader {
  /** After `Telemetry monitor : `. */
  readonly version: string;
  readonly device?: string;
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
}

function toInt(text: string): number | undefined {
  const m = /^(\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}
