/**
 * The `check-config` command: validate a configuration and every file it
 * names for the start (cli/start_files.ts) and summarize it, before a
 * service restart finds a mistake.
 *
 * @module
 */

import { type LibraryProbe, probeNvml } from "../collectors/versions.ts";
import { KernelCollector } from "../collectors/kernel/collector.ts";
import { refreshCheck } from "../agent/refresh_check.ts";
import {
  describeNicGpus,
  type GpuListing,
  nicFunction,
  nicGpus,
} from "../collectors/nic_gpus.ts";
import {
  NvmlCollector,
  nvmlLibraryDirs,
} from "../collectors/nvml/collector.ts";
import { DocaCollector, DocaUnavailableError } from "../collectors/doca.ts";
import { errorMessage } from "../base/error_message.ts";
import { describeConfig } from "../config/describe.ts";
import type { AgentConfig, MonitorConfig } from "../config/types.ts";
import { loadConfig } from "../config/load.ts";
import { withAutoGpuMonitor } from "../config/normalize.ts";
import type { Logger } from "../logging/logger.ts";
import type { WebConfig } from "../endpoint/web_config.ts";
import { readStartFiles } from "./start_files.ts";
import { asUsageError, EXIT_OK } from "./usage_error.ts";

/**
 * Prints the summary of `configFile` and returns 0. Throws a
 * {@linkcode UsageError} naming the file and the problem when it, its
 * data IDs or a file it names for the start cannot be used.
 *
 * @example
 * ```ts ignore
 * await checkConfig({ configFile: "/etc/dpu-traceback/config.yaml" }, log); // 0
 * ```
 */
export async function checkConfig(
  options: {
    readonly configFile: string;
    readonly dataIdsFile?: string;
    /** The tree holding `sys/` (default `/`); tests give a fixture tree. */
    readonly sysfsRoot?: string;
  },
  log: Logger,
): Promise<number> {
  let web: WebConfig | undefined;
  let summary: string;
  let devices: string[];
  try {
    const config = await loadConfig(options.configFile, {
      dataIdsFile: options.dataIdsFile,
    });
    // Every file the agent reads at start (the web config and its
    // certificate, the labels file, the Alertmanagers' secrets) is read
    // and checked by the very function run uses, so what passes here
    // starts, and what would stop the start is found now. The web config
    // even where listen is off: the run's command line may turn it on.
    const start = await readStartFiles(config, { webConfig: "always" });
    web = start.web;
    const full = withAutoGpuMonitor(config);
    // Whether a GPU monitor runs is found at start; say what this host has,
    // looked for as run looks, without loading NVML (a broken driver can
    // hang in its init).
    const gpu = full.monitors.some((m) => m.source === "nvml");
    summary = describeConfig(full, {
      fileLabels: start.topology.fileLabels,
      nvmlHere: gpu
        ? describeNvmlProbe(probeNvml(config.nvmlLibDir))
        : undefined,
      addedByGpuAuto: full.monitors.length > config.monitors.length
        ? full.monitors.at(-1)?.name
        : undefined,
    });
    devices = [
      ...await checkKernelDevices(config.monitors, options.sysfsRoot),
      ...checkDocaDevices(config, (message) => log.warn(message)),
      ...await checkNicGpus(full, options.sysfsRoot),
    ];
  } catch (error) {
    throw asUsageError(error);
  }
  console.log(summary);
  for (const line of devices) console.log(line);
  if (web !== undefined) {
    console.log(describeWebConfig(web));
    for (const warning of web.warnings) log.warn(warning);
  }
  return EXIT_OK;
}

/**
 * Opens each kernel monitor's source as run opens it, and closes it: a
 * device that is not here, or a counter it does not offer, stops the check
 * with the line run would stop with. One line per monitor on what was
 * found.
 */
async function checkKernelDevices(
  monitors: readonly MonitorConfig[],
  root: string | undefined,
): Promise<string[]> {
  const lines: string[] = [];
  for (const m of monitors) {
    if (m.source !== "kernel") continue;
    if (m.device === undefined) {
      lines.push(
        `monitor ${m.name}: the device comes from -d at run; its counters are checked then`,
      );
      continue;
    }
    const source = await KernelCollector.open({
      device: m.device,
      root,
      columns: m.columns,
      samplePeriodNs: m.samplePeriodNs,
    });
    await source.close();
    lines.push(
      `monitor ${m.name}: ${m.device} is here and offers all ${m.columns.length} of its counters`,
    );
    // Where the kernel says how long it caches a counter, a shorter
    // window is known to see steps before the agent ever samples.
    refreshCheck(
      [{
        config: m,
        aggregator: { completed: { refresh: source.cachedForS() } },
      }],
      (line) => lines.push(line),
      "as the kernel caches it: hw_counters/lifespan",
    )();
  }
  return lines;
}

/**
 * Opens each DOCA monitor's device as run opens it (which checks every
 * column with the device where the library can) and closes it: a device
 * that is not here, or a column it does not support, stops the check with
 * the line run would stop with. Missing DOCA libraries, or a diag context
 * another program holds (the running agent, most likely), leave the
 * counters unchecked, said in the monitor's line: the host that checks a
 * configuration need not be the one that runs it, and a check must not
 * take the device from a running agent (so never with force ownership).
 */
function checkDocaDevices(
  config: AgentConfig,
  warn: (message: string) => void,
): string[] {
  const lines: string[] = [];
  for (const m of config.monitors) {
    if (m.source !== "doca") continue;
    if (m.device === undefined) {
      lines.push(
        `monitor ${m.name}: the device comes from -d at run; its counters are checked then`,
      );
      continue;
    }
    let source: DocaCollector;
    try {
      source = DocaCollector.open({
        device: m.device,
        columns: m.columns,
        samplePeriodNs: m.samplePeriodNs,
        depth: m.depth,
        forceOwnership: false,
        libDir: config.docaLibDir,
        warn,
      });
    } catch (error) {
      if (!(error instanceof DocaUnavailableError)) throw error;
      lines.push(
        `monitor ${m.name}: its counters are not checked here, they are at run: ${
          errorMessage(error)
        }`,
      );
      continue;
    }
    source.close();
    lines.push(
      `monitor ${m.name}: ${source.deviceName} is here and supports all ${m.columns.length} of its counters`,
    );
  }
  return lines;
}

/** How long check-config waits for NVML to list its GPUs. */
const NVML_LIST_TIMEOUT_MS = 5_000;

/**
 * For each NIC monitor on a PCIe function here, one line on the GPUs
 * behind it, found as run finds them (collectors/nic_gpus.ts): NVML is
 * opened on a Worker only to list its GPUs, and only where a NIC is on a
 * PCIe function, unless gpu: off and no GPU monitor say not to; a driver
 * that hangs costs at most 5 s and is said.
 */
async function checkNicGpus(
  config: AgentConfig,
  root: string | undefined,
): Promise<string[]> {
  const nics = config.monitors.flatMap((m) => {
    const pci = nicFunction(m, { root });
    return pci === undefined ? [] : [{ name: m.name, pci }];
  });
  if (nics.length === 0) return [];
  let listing: GpuListing;
  if (
    config.gpu === "off" && !config.monitors.some((m) => m.source === "nvml")
  ) {
    listing = { none: "gpu: off, NVML not opened" };
  } else {
    const listed = await NvmlCollector.listGpus({
      libDirs: nvmlLibraryDirs(config.nvmlLibDir),
      openTimeoutMs: NVML_LIST_TIMEOUT_MS,
    });
    listing = listed.ok ? { gpus: listed.gpus } : { none: listed.reason };
  }
  return nics.map(({ name, pci }) =>
    `monitor ${name}: ${describeNicGpus(nicGpus(pci, listing, { root }))}`
  );
}

/** What {@linkcode probeNvml} found, for a GPU monitor's line. */
function describeNvmlProbe(probe: LibraryProbe): string {
  if ("found" in probe) return `found ${probe.found}`;
  if ("notFound" in probe) return `not found in ${probe.notFound.join(", ")}`;
  return `cannot look (${probe.cannotLook})`;
}

/** One line on what a web config turns on. */
function describeWebConfig(web: WebConfig): string {
  const users = web.basicAuthUsers.size;
  const parts = [
    web.tls === undefined ? "plain HTTP" : "TLS",
    users === 0
      ? "no basic auth"
      : `basic auth (${users} user${users === 1 ? "" : "s"})`,
  ];
  if (web.headers.size > 0) parts.push(`${web.headers.size} extra headers`);
  return `web config ${web.file}: ${parts.join(", ")}`;
}
