/**
 * Configurations as the log states them (a header block per start of the
 * agent) and what the events under one share: their monitor, rule,
 * column and timestamps. Each is made once: a log restarted a thousand
 * times with the same configuration has one block, and the hundreds of
 * thousands of events of a flapping rule one context.
 *
 * @module
 */

import type { EventContext, EventStore } from "./event_store.ts";
import type { HeaderRule, LogHeader } from "./header.ts";
import type { TimeFormat } from "./reference_time.ts";

/** A header block and what follows from it. */
export interface Block {
  readonly id: number;
  /** Null for rows without a header (a log cut at the front). */
  readonly header: LogHeader | null;
  readonly monitor: string;
  /** Rule name -> its header entry and column (-1: unknown). */
  readonly rules: ReadonlyMap<string, { rule: HeaderRule; col: number }>;
}

/** Blocks by what they say, shared by every monitor's reader. */
export class Blocks {
  readonly #blocks = new Map<string, Block>();

  /** The block for `monitor` under `header` (the same one for equal ones). */
  get(monitor: string, header: LogHeader | null): Block {
    const key = JSON.stringify([monitor, header]);
    let block = this.#blocks.get(key);
    if (block === undefined) {
      const rules = new Map<string, { rule: HeaderRule; col: number }>();
      for (const rule of header?.rules ?? []) {
        const k = header!.columns.findIndex((c) => c.dataId === rule.dataId);
        if (!rules.has(rule.name)) {
          rules.set(rule.name, { rule, col: k < 0 ? -1 : k + 1 });
        }
      }
      block = { id: this.#blocks.size, header, monitor, rules };
      this.#blocks.set(key, block);
    }
    return block;
  }
}

/**
 * The contexts of one monitor's events, registered in the store, by
 * block, column names, timestamp format and rule.
 *
 * @example
 * ```ts ignore
 * const contexts = new EventContexts(store, family.files);
 * const { id, col } = contexts.get(block, names, "ECN > 100", "ns");
 * ```
 */
export class EventContexts {
  readonly #store: EventStore;
  readonly #files: readonly string[];
  readonly #ids = new Map<string, number>();
  readonly #columnIds = new Map<readonly string[], number>();

  /** For the monitor whose files are `files` (oldest first). */
  constructor(store: EventStore, files: readonly string[]) {
    this.#store = store;
    this.#files = files;
  }

  /**
   * The store's id of the context of `rule`'s events under `block` with
   * rows of columns `names`, and the rule's column (-1: unknown).
   */
  get(
    block: Block,
    names: readonly string[],
    rule: string,
    format: TimeFormat,
  ): { id: number; col: number } {
    let columnsId = this.#columnIds.get(names);
    if (columnsId === undefined) {
      columnsId = this.#columnIds.size;
      this.#columnIds.set(names, columnsId);
    }
    const entry = block.rules.get(rule);
    const col = entry !== undefined && entry.col < names.length
      ? entry.col
      : -1;
    const key = `${block.id}\u0000${columnsId}\u0000${format}\u0000${rule}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      const header = block.header;
      const headerRule = entry?.rule;
      const context: EventContext = {
        monitor: block.monitor,
        rule,
        kind: headerRule?.kind,
        typeName: headerRule?.typeName,
        threshold: headerRule?.value,
        signal: headerRule?.signal,
        column: col > 0
          ? names[col] ?? header?.columns[col - 1]?.name
          : headerRule === undefined
          ? undefined
          : header?.columns.find((c) => c.dataId === headerRule.dataId)?.name,
        device: header?.device,
        depth: header?.depth,
        samplePeriodNs: header?.samplePeriodNs,
        timeFormat: format,
        files: this.#files,
        columns: names,
        columnIndex: col,
      };
      id = this.#store.context(context);
      this.#ids.set(key, id);
    }
    return { id, col };
  }
}
