/**
 * The check of each windowed rule against how often its column really
 * changes: a counter the driver refreshes every 2 s, read every 10 ms,
 * rises in steps, and a `rate` over 10 ms then sees a step every 2 s, not
 * the bursts it was written for. Said once per rule, on the first window
 * that shows it.
 *
 * @module
 */

import { isReferenceRule, type MonitorConfig } from "../config/types.ts";
import { formatDuration } from "../base/units.ts";

/**
 * One monitor as the check reads it: its configuration and its columns'
 * refresh, as its last window has it (`WindowSnapshot.refresh`,
 * metrics/aggregate.ts).
 */
export interface RefreshCheckedMonitor {
  readonly config: MonitorConfig;
  readonly aggregator: {
    readonly completed: { readonly refresh: ArrayLike<number> };
  };
}

/**
 * Returns a check to call now and then (each metrics window will do): it
 * tells `warn`, once per rule, of every `rate` or `ratio` rule whose window
 * is shorter than its column's observed refresh
 * (`WindowSnapshot.refresh`).
 *
 * @example A 10 ms rate over a counter that changes every 2 s
 * ```ts
 * import assert from "node:assert/strict";
 * import { refreshCheck } from "./refresh_check.ts";
 * import type { MonitorConfig } from "../config/types.ts";
 *
 * const config = {
 *   name: "p0",
 *   columns: [{ name: "rx_packets" }],
 *   rules: [{ name: "burst", signal: "rate", column: 0, windowNs: 10_000_000 }],
 * } as unknown as MonitorConfig;
 * const completed = { refresh: [2] };
 * const said: string[] = [];
 * const check = refreshCheck([{ config, aggregator: { completed } }], (m) => said.push(m));
 * check();
 * check(); // once per rule
 * assert.deepEqual(said, [
 *   'monitor p0, rule "burst": its 10 ms window is shorter than how often rx_packets changes (every 2.000 s, regularly): the device refreshes that counter on its own timer, so the rule sees steps, not bursts; use a window of at least 2.000 s, or a counter that moves every sample',
 * ]);
 * ```
 */
export function refreshCheck(
  monitors: readonly RefreshCheckedMonitor[],
  warn: (message: string) => void,
  /** What the refresh figures are, for the message. */
  seen = "regularly",
): () => void {
  const said = new Set<string>();
  return () => {
    for (const { config, aggregator } of monitors) {
      const refresh = aggregator.completed.refresh;
      for (const rule of config.rules) {
        if (isReferenceRule(rule) || rule.windowNs === 0) continue;
        const key = `${config.name}\n${rule.name}`;
        if (said.has(key)) continue;
        for (const column of [rule.column, rule.denominator ?? rule.column]) {
          const seconds = refresh[column];
          if (!(seconds * 1e9 > rule.windowNs)) continue;
          said.add(key);
          const every = formatDuration(seconds);
          warn(
            `monitor ${config.name}, rule "${rule.name}": its ${
              formatDuration(rule.windowNs / 1e9, { exact: true })
            } window is shorter than how often ${
              config.columns[column].name
            } changes (every ${every}, ${seen}): the device refreshes that counter on its own timer, so the rule sees steps, not bursts; use a window of at least ${every}, or a counter that moves every sample`,
          );
          break;
        }
      }
    }
  };
}
