/**
 * From a validated document to the one {@linkcode AgentConfig} shape: fill
 * defaults and check what a schema cannot see, namely unique names, unique
 * data IDs, rules that point at declared columns, windows and M of N that
 * fit the monitor's ring, and distinct event logs.
 *
 * @module
 */

import { posix } from "node:path";
import { type ConfigDocument, plainDocument } from "./document.ts";
import { formatBytes, formatDuration } from "../base/units.ts";
import {
  configError,
  type ConfigPath,
  formatPath,
  formatValue,
  lookup,
  withHint,
} from "./errors.ts";
import type {
  AgentRuleDocument,
  ReferenceRuleDocument,
  SignalRuleDocument,
} from "./rule_schema.ts";
import type {
  AgentDocument,
  ColumnDocument,
  MonitorDocument,
  ReferenceDocument,
} from "./schema.ts";
import {
  GPU_READINGS,
  GPU_RULE_SUFFIX,
  gpuColumnName,
  parseGpuColumn,
} from "./gpu_readings.ts";
import { MAX_RING_BYTES } from "./limits.ts";
import { maxDepth, ringBytes, ringColumns } from "./ring_budget.ts";
import { nearest } from "./suggest.ts";
import {
  type AgentConfig,
  DEFAULT_SEVERITY,
  DEFAULTS,
  type MonitorColumn,
  type MonitorConfig,
  type ReferenceRuleConfig,
  type RuleConfig,
  type SignalRuleConfig,
} from "./types.ts";

/** Data IDs that came from a separate `--data-ids` file. */
export interface ExternalColumns {
  /** The validated entries. */
  readonly columns: readonly ColumnDocument[];
  /** That file, for messages. */
  readonly source: ConfigDocument;
  /** Where the list sits in that file: `[]` or `["data-ids"]`. */
  readonly path: ConfigPath;
}

/** The monitor a reference-form file describes. */
const REFERENCE_MONITOR = "nic";

/**
 * Normalizes the reference app's rules JSON: one `doca` monitor named
 * `nic` that writes `events.log`. The data IDs come from the file or from
 * `external`, never both.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeReference } from "./normalize.ts";
 *
 * import { plainDocument } from "./document.ts";
 *
 * const doc = { "data-ids": [{ name: "rx", data_id: "0x0000000000000001" }], rules: [] };
 * const config = normalizeReference(doc, plainDocument("rules.json", doc));
 * assert.equal(config.form, "reference");
 * assert.deepEqual(config.monitors.map((m) => [m.name, m.eventLog]), [["nic", "events.log"]]);
 * ```
 */
export function normalizeReference(
  doc: ReferenceDocument,
  source: ConfigDocument,
  external?: ExternalColumns,
): AgentConfig {
  let declared: Columns;
  if (external !== undefined) {
    if (doc["data-ids"] !== undefined) {
      throw configError(
        source,
        ["data-ids"],
        `is also given by the --data-ids file ${external.source.file}; use one or the other`,
        "type",
      );
    }
    declared = checkColumns(external.columns, external.source, external.path);
  } else {
    if (doc["data-ids"] === undefined) {
      throw configError(
        source,
        ["data-ids"],
        "is required (or give the data IDs in a --data-ids file)",
        "type",
      );
    }
    declared = checkColumns(doc["data-ids"], source, ["data-ids"]);
  }
  const samplePeriodNs = doc.diag_sample_period_ns ??
    DEFAULTS.samplePeriodNs;
  const depth = doc.sample_history_depth ?? DEFAULTS.depth;
  // A reference rule is an agent rule that names its counter by data_id.
  const rules = resolveRules(
    doc.rules,
    {
      declared,
      samplePeriodNs,
      depth,
      depthDefaulted: doc.sample_history_depth === undefined,
      gpu: false,
    },
    source,
    [],
  );
  const monitor: MonitorConfig = {
    name: REFERENCE_MONITOR,
    source: "doca",
    samplePeriodNs,
    depth,
    columns: declared.columns,
    rules,
    eventLog: DEFAULTS.eventLog,
    seed: DEFAULTS.seed,
  };
  checkRings([monitor], source, () => ["sample_history_depth"]);
  return {
    file: source.file,
    form: "reference",
    listen: DEFAULTS.listen,
    metricsWindowNs: DEFAULTS.metricsWindowNs,
    eventLogMaxBytes: DEFAULTS.eventLogMaxBytes,
    eventLogKeep: DEFAULTS.eventLogKeep,
    forceOwnership: false,
    gpu: DEFAULTS.gpu,
    monitors: [monitor],
    labels: {},
  };
}

/**
 * Normalizes our agent form.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeAgent } from "./normalize.ts";
 *
 * import { plainDocument } from "./document.ts";
 *
 * const doc = { monitors: [{ name: "gpu", source: "doca" as const, columns: [{ name: "temp", data_id: "0x0000000000000001" }] }] };
 * const monitor = normalizeAgent(doc, plainDocument("a.yaml", doc)).monitors[0];
 * assert.equal(monitor.eventLog, "events.log"); // the defaults filled in
 * assert.equal(monitor.depth, 1024);
 * ```
 */
export function normalizeAgent(
  doc: AgentDocument,
  source: ConfigDocument,
): AgentConfig {
  const names = new Map<string, number>();
  const logs = new Map<string, number>();
  // A GPU monitor does not count: one NIC monitor keeps the reference
  // app's events.log, with gpu-events.log beside it.
  const nicMonitors = doc.monitors.filter((m) => m.source !== "nvml").length;
  const monitors = doc.monitors.map((m, i): MonitorConfig => {
    const at: ConfigPath = ["monitors", i];
    const earlier = names.get(m.name);
    if (earlier !== undefined) {
      throw configError(
        source,
        [...at, "name"],
        `is already the name of ${formatPath(["monitors", earlier])}`,
        "type",
      );
    }
    names.set(m.name, i);

    const eventLog = m.event_log ??
      (nicMonitors === 1 && m.source !== "nvml"
        ? DEFAULTS.eventLog
        : `${m.name}-events.log`);
    const logKey = posix.normalize(eventLog);
    const sharer = logs.get(logKey);
    if (sharer !== undefined) {
      const also = `the event log of ${formatPath(["monitors", sharer])}`;
      throw configError(
        source,
        [...at, "event_log"],
        m.event_log === undefined
          ? `defaults to "${eventLog}", which is also ${also}; set a different event_log`
          : `is also ${also}; give each monitor its own file`,
        "type",
      );
    }
    logs.set(logKey, i);

    return normalizeMonitor(m, eventLog, doc.device, source, at);
  });
  checkRings(monitors, source, (i) => ["monitors", i, "depth"]);
  return {
    file: source.file,
    form: "agent",
    listen: doc.listen ?? DEFAULTS.listen,
    metricsWindowNs: doc.metrics_window_s === undefined
      ? DEFAULTS.metricsWindowNs
      : Math.round(doc.metrics_window_s * 1e9),
    webConfigFile: doc.web_config_file,
    eventLogMaxBytes: doc.event_log_max_bytes ?? DEFAULTS.eventLogMaxBytes,
    eventLogKeep: doc.event_log_keep ?? DEFAULTS.eventLogKeep,
    forceOwnership: doc.force_ownership ?? false,
    docaLibDir: doc.doca_lib_dir,
    nvmlLibDir: doc.nvml_lib_dir,
    gpu: doc.gpu ?? DEFAULTS.gpu,
    monitors,
    ...(doc.instance === undefined ? {} : { instance: doc.instance }),
    labels: doc.labels ?? {},
    ...(doc.labels_file === undefined ? {} : { labelsFile: doc.labels_file }),
    ...(doc.alerting === undefined ? {} : { alerting: doc.alerting }),
  };
}

/**
 * One agent-form monitor with its defaults filled in (names and event logs
 * across monitors are checked by the caller). `device` is the document's
 * default NIC device.
 */
function normalizeMonitor(
  m: MonitorDocument,
  eventLog: string,
  device: string | undefined,
  source: ConfigDocument,
  at: ConfigPath,
): MonitorConfig {
  const gpu = m.source === "nvml";
  const nic = m.source === "nvml" ? undefined : m;
  const declared = m.source === "nvml"
    ? gpuMonitorColumns(m, source, at)
    : monitorColumns(m, source, at);
  // A GPU monitor reads every GPU NVML finds; the NIC device is not its.
  const reads = nic === undefined ? undefined : nic.device ?? device;
  const kernel = m.source === "kernel";
  const samplePeriodNs = m.sample_period_ns ??
    (gpu
      ? DEFAULTS.gpuSamplePeriodNs
      : kernel
      ? DEFAULTS.kernelSamplePeriodNs
      : DEFAULTS.samplePeriodNs);
  const depth = m.depth ??
    (gpu ? DEFAULTS.gpuDepth : kernel ? DEFAULTS.kernelDepth : DEFAULTS.depth);
  const rules = resolveRules(
    m.rules,
    {
      declared,
      samplePeriodNs,
      depth,
      depthDefaulted: m.depth === undefined,
      gpu,
    },
    source,
    at,
  );
  return {
    name: m.name,
    source: m.source ?? "doca",
    samplePeriodNs,
    depth,
    columns: declared.columns,
    rules,
    eventLog,
    seed: m.seed ?? DEFAULTS.seed,
    ...(reads === undefined ? {} : { device: reads }),
    ...(nic === undefined || !("input" in nic) || nic.input === undefined
      ? {}
      : { input: nic.input }),
  };
}

/** A monitor's columns and their lookups. */
interface Columns {
  readonly columns: readonly MonitorColumn[];
  readonly byName: ReadonlyMap<string, number>;
  readonly byDataId: ReadonlyMap<string, number>;
}

function monitorColumns(
  m: Exclude<MonitorDocument, { source: "nvml" }>,
  source: ConfigDocument,
  at: ConfigPath,
): Columns {
  // The schema has checked that exactly one of the two is given.
  if (m.columns !== undefined) {
    return checkColumns(m.columns, source, [...at, "columns"]);
  }
  // Only a DOCA-shaped monitor may say data-ids (a kernel one needs columns).
  const ids = (m as { "data-ids"?: typeof m.columns })["data-ids"]!;
  return checkColumns(ids, source, [...at, "data-ids"]);
}

/**
 * A GPU monitor's columns, one per (GPU pattern, reading): `gpu*.*` and
 * `gpu0.*` become one column per reading, so a rule names exactly one
 * (`gpu*.temperature`). The GPUs themselves are known only once NVML is
 * open; collectors/nvml/gpu_monitor.ts expands the patterns then.
 */
function gpuMonitorColumns(
  m: Extract<MonitorDocument, { source: "nvml" }>,
  source: ConfigDocument,
  at: ConfigPath,
): Columns {
  for (const [j, rule] of (m.rules ?? []).entries()) {
    if (GPU_RULE_SUFFIX.test(rule.name)) {
      throw configError(
        source,
        [...at, "rules", j, "name"],
        'ends in " [gpuN]", which names the per-GPU copies of a rule on a gpu* column; choose another name',
        "type",
      );
    }
    if (!("signal" in rule) && rule.dataId !== undefined) {
      throw configError(
        source,
        [...at, "rules", j, "data_id"],
        "is for NIC monitors; a GPU rule names its column (e.g. column: gpu*.temperature)",
        "type",
      );
    }
  }
  const columns: MonitorColumn[] = [];
  const byName = new Map<string, number>();
  for (const text of m.readings ?? [GPU_ALL]) {
    // The schema has checked each reading's name.
    const pattern = parseGpuColumn(text);
    if (!pattern.ok) throw new TypeError(pattern.problem);
    const gpu = pattern.value.gpu;
    const readings = pattern.value.reading === "*"
      ? GPU_READINGS.map((_, r) => r)
      : [pattern.value.reading];
    for (const r of readings) {
      const name = gpuColumnName(gpu, r);
      if (byName.has(name)) continue;
      byName.set(name, columns.length);
      columns.push({
        name,
        dataId: `nvml ${name}`,
        kind: GPU_READINGS[r].kind,
      });
    }
  }
  return { columns, byName, byDataId: new Map() };
}

/**
 * Checks that the rings of `monitors` fit in {@linkcode MAX_RING_BYTES}
 * together; the first that does not is refused at its depth.
 */
function checkRings(
  monitors: readonly MonitorConfig[],
  source: ConfigDocument,
  depthPath: (index: number) => ConfigPath,
): void {
  let used = 0;
  for (const [i, m] of monitors.entries()) {
    const columns = ringColumns(m);
    const bytes = ringBytes(columns, m.depth);
    if (used + bytes > MAX_RING_BYTES) {
      const gpus = columns === m.columns.length
        ? ""
        : ", counting each gpu* column once per GPU there may be";
      const before = used === 0
        ? ""
        : ` (the monitors before it take ${formatBytes(used)})`;
      throw configError(
        source,
        depthPath(i),
        `needs a ${formatBytes(bytes)} ring (2 x depth records of ${
          columns + 1
        } values${gpus}); the rings of all monitors may take at most ${
          formatBytes(MAX_RING_BYTES)
        }${before}, so depth can be at most ${
          maxDepth(columns, MAX_RING_BYTES - used)
        } here`,
        "range",
      );
    }
    used += bytes;
  }
}

/** Every reading of every GPU. */
const GPU_ALL = "gpu*.*";

/** What a monitor's rules are resolved against. */
interface RuleContext {
  /** The monitor's columns. */
  readonly declared: Columns;
  /** Its sample period, ns. */
  readonly samplePeriodNs: number;
  /** Its history depth, as configured or defaulted. */
  readonly depth: number;
  /** Whether the configuration left the depth to its default. */
  readonly depthDefaulted: boolean;
  /** Whether it is a GPU monitor, whose columns are GPU patterns. */
  readonly gpu: boolean;
}

/** Rules with their columns resolved to indexes and defaults filled in. */
function resolveRules(
  rules: readonly AgentRuleDocument[] | undefined,
  monitor: RuleContext,
  source: ConfigDocument,
  at: ConfigPath,
): RuleConfig[] {
  const byName = new Map<string, number>();
  return (rules ?? []).map((rule, j): RuleConfig => {
    const here: ConfigPath = [...at, "rules", j];
    // A rule's name labels its metrics and its events; two rules with one
    // name could not be told apart in either.
    const sameName = byName.get(rule.name);
    if (sameName !== undefined) {
      throw configError(
        source,
        [...here, "name"],
        `is already the name of ${
          formatPath([...at, "rules", sameName])
        }; rule names label metrics and events, so each must be unique`,
        "type",
      );
    }
    byName.set(rule.name, j);
    return "signal" in rule
      ? resolveSignalRule(rule, monitor, source, here)
      : resolveReferenceRule(rule, monitor.declared, source, here);
  });
}

function resolveReferenceRule(
  rule: ReferenceRuleDocument,
  declared: Columns,
  source: ConfigDocument,
  here: ConfigPath,
): ReferenceRuleConfig {
  // The schema has checked that the rule names exactly one of the two.
  const { column: name, dataId, ...config } = rule;
  if (name !== undefined) {
    return {
      ...config,
      column: columnByName(name, declared, source, [...here, "column"]),
    };
  }
  const column = declared.byDataId.get(dataId!);
  if (column === undefined) {
    throw configError(
      source,
      [...here, "data_id"],
      `${dataId} is not one of the declared data IDs${
        someOf(dataId!, declared.columns.map((c) => c.dataId), false)
      }`,
      "type",
    );
  }
  return { ...config, column };
}

/**
 * A signal rule with its columns resolved, checked against the monitor's
 * ring: a window must fit in it (W <= (2 x depth - 1) x period, so that
 * the sample a window starts at is still there) and so must M of N's
 * last N samples (N <= 2 x depth).
 */
function resolveSignalRule(
  rule: SignalRuleDocument,
  monitor: RuleContext,
  source: ConfigDocument,
  here: ConfigPath,
): SignalRuleConfig {
  const { declared, depth, samplePeriodNs } = monitor;
  const column = columnByName(rule.column, declared, source, [
    ...here,
    rule.signal,
  ]);
  let denominator: number | undefined;
  if (rule.to !== undefined) {
    denominator = columnByName(rule.to, declared, source, [...here, "to"]);
    if (monitor.gpu) checkSameGpus(rule, source, here);
  }
  checkSignalColumns(rule, column, denominator, declared, source, here);
  checkClear(rule, source, here);
  const hadDepth = `got depth ${depth}${
    monitor.depthDefaulted ? " (the default)" : ""
  }`;
  const tooShallow = (key: string, what: string) =>
    configError(source, [...here, key], what, "range", { got: false });
  if (rule.windowNs > (2 * depth - 1) * samplePeriodNs) {
    const written = lookup(source.value, [...here, "window"]);
    throw tooShallow(
      "window",
      `${
        typeof written === "string"
          ? written
          : formatDuration(rule.windowNs / 1e9, { exact: true })
      } needs depth >= ${
        Math.ceil((rule.windowNs + samplePeriodNs) / (2 * samplePeriodNs))
      } at a ${
        formatDuration(samplePeriodNs / 1e9, { exact: true })
      } period (W <= (2 x depth - 1) x period), ${hadDepth}, which fits a window of at most ${
        formatDuration((2 * depth - 1) * samplePeriodNs / 1e9, { exact: true })
      }`,
    );
  }
  if (rule.mOfN !== undefined && rule.mOfN.n > 2 * depth) {
    throw tooShallow(
      "for",
      `${rule.mOfN.m} of ${rule.mOfN.n} needs depth >= ${
        Math.ceil(rule.mOfN.n / 2)
      } (N <= 2 x depth, the samples the ring holds), ${hadDepth}`,
    );
  }
  const { to: _, ...config } = rule;
  return {
    ...config,
    column,
    ...(denominator === undefined ? {} : { denominator }),
  };
}

/**
 * A signal that needs increases reads counters: a gauge's every fall would
 * read as a counter reset (an unknown signal), silently. A ratio of a
 * column to itself is 1 or unknown, never a signal.
 */
function checkSignalColumns(
  rule: SignalRuleDocument,
  column: number,
  denominator: number | undefined,
  declared: Columns,
  source: ConfigDocument,
  here: ConfigPath,
): void {
  if (rule.signal !== "value") {
    for (
      const [key, k] of [[rule.signal, column], ["to", denominator]] as const
    ) {
      if (k === undefined || declared.columns[k].kind !== "gauge") continue;
      throw configError(
        source,
        [...here, key],
        `names a gauge (a level, not a running count); ${rule.signal} needs a counter${
          rule.signal === "ratio"
            ? ""
            : `: use value: ${declared.columns[k].name}`
        }`,
        "type",
      );
    }
  }
  if (denominator !== undefined && denominator === column) {
    throw configError(
      source,
      [...here, "to"],
      "names the same column as ratio: the ratio would always be 1",
      "type",
    );
  }
}

/**
 * `clear` must be on the quiet side of the threshold: at or below it for
 * an above rule, at or above it for a below rule. The message quotes the
 * threshold as written.
 */
function checkClear(
  rule: SignalRuleDocument,
  source: ConfigDocument,
  here: ConfigPath,
): void {
  const { direction, threshold, clear } = rule;
  if (direction === "above" ? clear <= threshold : clear >= threshold) return;
  const quiet = direction === "above" ? "below" : "above";
  throw configError(
    source,
    [...here, "clear"],
    `must not be ${direction} the threshold (${direction}: ${
      formatValue(lookup(source.value, [...here, direction]))
    }): ${
      direction === "above" ? "an" : "a"
    } ${direction} rule ends once its signal is at or ${quiet} the clear level`,
    "range",
  );
}

/**
 * On a GPU monitor, a ratio's two columns must be on the same GPUs: a rule
 * on `gpu*` columns is copied once per GPU, and its copy for GPU 3 divides
 * GPU 3's readings.
 */
function checkSameGpus(
  rule: SignalRuleDocument,
  source: ConfigDocument,
  here: ConfigPath,
): void {
  const top = parseGpuColumn(rule.column);
  const bottom = parseGpuColumn(rule.to!);
  // Declared GPU columns always parse, with one reading each.
  if (!top.ok || !bottom.ok || top.value.gpu === bottom.value.gpu) return;
  const reading = rule.to!.slice(rule.to!.indexOf(".") + 1);
  throw configError(
    source,
    [...here, "to"],
    `must be on the same GPUs as ${rule.signal} (${rule.column}), as in to: gpu${top.value.gpu}.${reading}: a ratio divides each GPU's readings by the same GPU's`,
    "type",
  );
}

/**
 * The index of the column named `name`, or an error at `path` that lists
 * the monitor's columns (the nearest ones when it has many).
 */
function columnByName(
  name: string,
  declared: Columns,
  source: ConfigDocument,
  path: ConfigPath,
): number {
  const column = declared.byName.get(name);
  if (column === undefined) {
    throw configError(
      source,
      path,
      `must be one of this monitor's column names${
        someOf(name, declared.columns.map((c) => c.name))
      }`,
      "type",
    );
  }
  return column;
}

/** Lists shown whole in a message up to this length; past it, the nearest. */
const MAX_LISTED = 8;

/**
 * What `name` could have been among `names`, for a message: all of them
 * when few (` (a, b, c)`), else the nearest, with a hint naming the
 * nearest few (`did you mean "a"?`) unless `suggest` is false (data IDs
 * are not misspelt names).
 */
function someOf(
  name: string,
  names: readonly string[],
  suggest = true,
): string {
  const near = suggest ? nearest(name, names, MAX_LISTED) : [];
  const meant = near.length === 0
    ? ""
    : `did you mean ${
      near.slice(0, 3).map((n) => JSON.stringify(n)).join(" or ")
    }?`;
  const listed = names.length <= MAX_LISTED
    ? ` (${names.join(", ")})`
    : near.length > 0
    ? ` (${names.length} in all; the nearest: ${near.join(", ")})`
    : ` (${names.length} in all, such as ${
      names.slice(0, MAX_LISTED).join(", ")
    })`;
  return withHint(listed, meant);
}

/** Checks names and data IDs are unique, and builds the lookups. */
function checkColumns(
  entries: readonly ColumnDocument[],
  source: ConfigDocument,
  at: ConfigPath,
): Columns {
  const byName = new Map<string, number>();
  const byDataId = new Map<string, number>();
  const columns = entries.map((entry, k): MonitorColumn => {
    const sameName = byName.get(entry.name);
    if (sameName !== undefined) {
      throw configError(
        source,
        [...at, k, "name"],
        `is already the name of ${formatPath([...at, sameName])}`,
        "type",
      );
    }
    const sameId = byDataId.get(entry.data_id);
    if (sameId !== undefined) {
      throw configError(
        source,
        [...at, k, "data_id"],
        `${entry.data_id} is already the data ID of ${
          formatPath([...at, sameId])
        }`,
        "type",
      );
    }
    byName.set(entry.name, k);
    byDataId.set(entry.data_id, k);
    return {
      name: entry.name,
      dataId: entry.data_id,
      kind: entry.kind ?? "counter",
    };
  });
  return { columns, byName, byDataId };
}

/** The rules of the GPU monitor `gpu: auto` adds. */
const AUTO_GPU_RULES = [
  // Any Xid is worth the history around it: most mean a fault.
  {
    name: "GPU Xid error",
    column: "gpu*.xid_errors",
    comparisonType: "inc_gt",
    comparisonValue: 1n,
    severity: DEFAULT_SEVERITY,
  },
  {
    name: "GPU uncorrected ECC error",
    column: "gpu*.ecc_uncorrected",
    comparisonType: "inc_gt",
    comparisonValue: 1n,
    severity: DEFAULT_SEVERITY,
  },
] as const;

/** The sources that read a real NIC: beside one, `gpu: auto` watches the GPUs. */
const NIC_SOURCES: ReadonlySet<string> = new Set(["doca", "kernel"]);

/**
 * The configuration with the GPU monitor `gpu: auto` stands for: when a
 * monitor reads a NIC (source doca or kernel) and none reads NVML, a
 * monitor named
 * `gpu` on every reading of every GPU, with rules for Xid and uncorrected
 * ECC errors, logging to `gpu-events.log` beside the first monitor's log.
 * Otherwise the configuration unchanged.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeAgent, withAutoGpuMonitor } from "./normalize.ts";
 * import { plainDocument } from "./document.ts";
 *
 * const doc = {
 *   monitors: [{ name: "nic", source: "doca" as const, device: "03:00.0", columns: [{ name: "rx", data_id: "0x0000000000000001" }] }],
 * };
 * const nic = normalizeAgent(doc, plainDocument("a.yaml", doc));
 * assert.deepEqual(
 *   withAutoGpuMonitor(nic).monitors.map((m) => [m.name, m.source, m.eventLog]),
 *   [["nic", "doca", "events.log"], ["gpu", "nvml", "gpu-events.log"]],
 * );
 * // With `gpu: off`, nothing is added.
 * assert.equal(withAutoGpuMonitor({ ...nic, gpu: "off" }).monitors.length, 1);
 * ```
 */
export function withAutoGpuMonitor(config: AgentConfig): AgentConfig {
  if (
    config.gpu !== "auto" ||
    !config.monitors.some((m) => NIC_SOURCES.has(m.source)) ||
    config.monitors.some((m) => m.source === "nvml")
  ) {
    return config;
  }
  const taken = new Set(config.monitors.map((m) => m.name));
  const name = taken.has("gpu") ? "gpu-auto" : "gpu";
  const doc: MonitorDocument = {
    name,
    source: "nvml",
    rules: AUTO_GPU_RULES.map((r) => ({ ...r })),
  };
  const dir = posix.dirname(config.monitors[0].eventLog);
  const logs = new Set(config.monitors.map((m) => posix.normalize(m.eventLog)));
  // Beside the NIC's log, under a name no monitor uses already.
  let eventLog = "";
  for (let n = 1; eventLog === "" || logs.has(posix.normalize(eventLog)); n++) {
    const file = n === 1 ? `${name}-events.log` : `${name}-${n}-events.log`;
    eventLog = dir === "." ? file : posix.join(dir, file);
  }
  const monitor = normalizeMonitor(
    doc,
    eventLog,
    undefined,
    plainDocument("(gpu: auto)", doc),
    [],
  );
  return { ...config, monitors: [...config.monitors, monitor] };
}
