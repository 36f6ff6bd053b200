/**
 * A GPU monitor's configuration names columns by pattern (`gpu*.power`,
 * `gpu0.temperature`); once NVML has said which GPUs there are, each
 * pattern becomes one column per GPU it matches, and each rule on a
 * `gpu*` pattern one rule per GPU (`GPU hot [gpu1]`). A signal rule's
 * `ratio` divides one GPU's readings by the same GPU's: its copy for GPU 1
 * has both columns on GPU 1.
 *
 * @module
 */

import {
  GPU_READINGS,
  gpuColumnName,
  type GpuColumnPattern,
  gpuRuleName,
  parseGpuColumn,
} from "../../config/gpu_readings.ts";
import {
  isReferenceRule,
  type MonitorColumn,
  type MonitorConfig,
  type RuleConfig,
} from "../../config/types.ts";
import type { GpuColumn } from "./readings.ts";

/** A GPU monitor made concrete for the GPUs present. */
export interface ExpandedGpuMonitor {
  /** The monitor with one column per (GPU, reading) and per-GPU rules. */
  readonly config: MonitorConfig;
  /** What each column reads, in column order. */
  readonly columns: readonly GpuColumn[];
  /** Patterns that named a GPU that is not there, one line each. */
  readonly leftOut: readonly string[];
}

/**
 * Expands `config` (a monitor with source nvml, as normalized: columns
 * named `gpu*.R` or `gpuN.R`) for the GPUs with indexes `gpus`. Columns
 * are grouped by GPU, in the configured order within each.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expandGpuMonitor } from "./gpu_monitor.ts";
 *
 * const config = {
 *   name: "gpu", source: "nvml" as const, samplePeriodNs: 1e9, depth: 60,
 *   eventLog: "gpu-events.log", seed: 1,
 *   columns: [{ name: "gpu*.temperature", dataId: "nvml gpu*.temperature", kind: "gauge" as const }],
 *   rules: [{ name: "hot", column: 0, comparisonType: "gt" as const, comparisonValue: 85n }],
 * };
 * const expanded = expandGpuMonitor(config, [0, 1]);
 * assert.deepEqual(
 *   expanded.config.columns.map((c) => c.name),
 *   ["gpu0.temperature", "gpu1.temperature"],
 * );
 * assert.deepEqual(expanded.config.rules.map((r) => r.name), ["hot [gpu0]", "hot [gpu1]"]);
 * ```
 */
export function expandGpuMonitor(
  config: MonitorConfig,
  gpus: readonly number[],
): ExpandedGpuMonitor {
  const patterns = config.columns.map((c): GpuColumnPattern => {
    const parsed = parseGpuColumn(c.name);
    if (!parsed.ok || parsed.value.reading === "*") {
      throw new TypeError(
        `monitor "${config.name}": column ${c.name} is not a GPU column`,
      );
    }
    return parsed.value;
  });
  const present = new Set(gpus);
  const leftOut: string[] = [];
  for (const [k, p] of patterns.entries()) {
    if (p.gpu !== "*" && !present.has(p.gpu)) {
      const rules = config.rules.filter((r) =>
        r.column === k || (!isReferenceRule(r) && r.denominator === k)
      ).length;
      leftOut.push(
        `${config.columns[k].name}: there is no GPU ${p.gpu} (NVML found ${
          gpus.length === 1 ? "gpu" : "gpus"
        } ${gpus.join(", ")}); left out${
          rules === 0 ? "" : ` with ${rules} rule${rules === 1 ? "" : "s"}`
        }`,
      );
    }
  }
  const columns: MonitorColumn[] = [];
  const reads: GpuColumn[] = [];
  const index = new Map<string, number>();
  const sorted = [...gpus].sort((a, b) => a - b);
  for (const gpu of sorted) {
    for (const p of patterns) {
      if (p.gpu !== "*" && p.gpu !== gpu) continue;
      const reading = p.reading as number;
      const name = gpuColumnName(gpu, reading);
      if (index.has(name)) continue;
      index.set(name, columns.length);
      columns.push({
        name,
        dataId: `nvml ${name}`,
        kind: GPU_READINGS[reading].kind,
      });
      reads.push({ gpu, reading });
    }
  }
  const rules: RuleConfig[] = [];
  for (const rule of config.rules) {
    const p = patterns[rule.column];
    // A ratio's denominator is on the same GPUs as its numerator (the
    // loader refuses a mix): each copy divides one GPU's readings.
    const denominator = isReferenceRule(rule) ? undefined : rule.denominator;
    const q = denominator === undefined ? undefined : patterns[denominator];
    if (q !== undefined && q.gpu !== p.gpu) {
      throw new TypeError(
        `monitor "${config.name}": rule "${rule.name}" divides ${
          config.columns[rule.column].name
        } by ${
          config.columns[denominator!].name
        }, which is on other GPUs; name the same GPUs in both`,
      );
    }
    const copies = p.gpu === "*" ? sorted : [p.gpu];
    for (const gpu of copies) {
      const column = index.get(gpuColumnName(gpu, p.reading as number));
      // A rule on one GPU's column that is not there is left out (said above).
      if (column === undefined) continue;
      const name = p.gpu === "*" ? gpuRuleName(rule.name, gpu) : rule.name;
      rules.push(
        q === undefined ? { ...rule, name, column } : {
          ...rule,
          name,
          column,
          denominator: index.get(gpuColumnName(gpu, q.reading as number))!,
        },
      );
    }
  }
  return { config: { ...config, columns, rules }, columns: reads, leftOut };
}
