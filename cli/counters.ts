/**
 * The `counters` command: what a device offers, source by source, so
 * that an operator can write columns by copying names rather than
 * guessing them: every counter with the `data_id` that reads it and its
 * value now, and what one read of that source costs on this machine.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import { terminalSafe } from "../base/terminal_text.ts";
import { formatDuration } from "../base/units.ts";
import {
  type DiscoveredSource,
  discoverKernelCounters,
  type KernelDiscovery,
} from "../collectors/kernel/discovery.ts";
import {
  discoverDocaCounters,
  type DocaDiscovery,
} from "../collectors/doca_discovery.ts";
import { parseOptions } from "./parse_options.ts";
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  UsageError,
  withHelpHint,
} from "./usage_error.ts";

/** `counters --help`. */
export const COUNTERS_USAGE = `Usage:
  dpu-traceback counters -d DEVICE [options]

Lists every counter DEVICE offers, source by source, with the data_id a
monitor's column reads it by, its value now, and what one read of all of a
source's counters takes here (the median of 9). DEVICE is what -d takes:
a PCIe address (03:00.0), an interface (p0, eth0) or an RDMA device (mlx5_0).

Sources:
  kernel   netdev:NAME   the interface's statistics (/sys/class/net/IF/statistics)
           ethtool:NAME  the driver's statistics (ethtool -S)
           rdma:NAME     the RDMA port's hw_counters
           ib:NAME       the InfiniBand port counters
           (a second interface or port is named in the data_id: netdev:IF/NAME,
           rdma:DEV/PORT/NAME)
  doca     the Telemetry Diag counters the agent knows by name, for ports 0
           and 1 (rx_bytes{port=0}, ...; docs/doca-counters.md), each with
           whether the device supports it, where the DOCA library can say

Options:
  -d, --device DEVICE    the device (required)
      --source kernel|doca
                         only this source (default: every source)
      --doca-lib-dir DIR load the DOCA libraries from DIR first (also DOCA_LIB_DIR)
      --json             print JSON instead of text
  -h, --help             this text

Exit codes: 0 a source listed counters (one that cannot be read is listed
with its reason); 1 no source could list any; 2 usage error, or a DEVICE the
kernel does not know (it knows every PCIe function, interface and RDMA device).
`;

const COUNTERS_OPTIONS = {
  device: { type: "string", short: "d" },
  source: { type: "string" },
  "doca-lib-dir": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Where `counters` writes. */
export interface CountersIo {
  /** Standard output. */
  readonly out: (text: string) => void;
  /** A one-line error (the caller prefixes the program name). */
  readonly error: (message: string) => void;
}

/** Options for tests: a fixture sysfs tree. */
export interface CountersContext {
  /** The tree holding `sys/` (default `/`). */
  readonly root?: string;
}

/**
 * Runs `counters` with `args` (the words after `counters`) and returns the
 * exit code.
 *
 * @example A usage error is one line and exit code 2
 * ```ts
 * import assert from "node:assert/strict";
 * import { runCounters } from "./counters.ts";
 *
 * const errors: string[] = [];
 * const io = { out: () => {}, error: (m: string) => errors.push(m) };
 * assert.equal(await runCounters([], io), 2);
 * assert.deepEqual(errors, [
 *   "counters needs the device: -d DEVICE. Try 'dpu-traceback counters --help'.",
 * ]);
 * ```
 */
export async function runCounters(
  args: readonly string[],
  io: CountersIo,
  context: CountersContext = {},
): Promise<number> {
  let request;
  try {
    request = parseCountersArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.error(
      withHelpHint(errorMessage(error), "dpu-traceback counters --help"),
    );
    return EXIT_USAGE;
  }
  if (request.help) {
    io.out(COUNTERS_USAGE);
    return EXIT_OK;
  }
  const { device, sources, json } = request;
  let kernel: KernelDiscovery | Error | undefined;
  let doca: DocaDiscovery | Error | undefined;
  if (sources.includes("kernel")) {
    try {
      kernel = await discoverKernelCounters(device, context);
    } catch (error) {
      kernel = new Error(errorMessage(error));
    }
  }
  if (sources.includes("doca")) {
    try {
      doca = discoverDocaCounters({ device, libDir: request.docaLibDir });
    } catch (error) {
      doca = new Error(errorMessage(error));
    }
  }
  const listed = [kernel, doca].some((d) =>
    d !== undefined && !(d instanceof Error)
  );
  if (!listed) {
    for (const d of [kernel, doca]) if (d instanceof Error) io.error(d.message);
    // The kernel knows every device there is: one it lacks was mistyped.
    return kernel instanceof Error ? EXIT_USAGE : EXIT_FAILURE;
  }
  io.out(
    json ? `${JSON.stringify(countersJson(kernel, doca), null, 2)}\n` : [
      ...(kernel === undefined ? [] : [kernelText(kernel)]),
      ...(doca === undefined ? [] : [docaText(doca)]),
    ].join("\n"),
  );
  return EXIT_OK;
}

const SOURCES = ["kernel", "doca"] as const;
type Source = typeof SOURCES[number];

function parseCountersArgs(args: readonly string[]): {
  help: boolean;
  device: string;
  sources: readonly Source[];
  docaLibDir?: string;
  json: boolean;
} {
  const { values, positionals } = parseOptions(args, COUNTERS_OPTIONS);
  if (values.help) return { help: true, device: "", sources: [], json: false };
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(positionals[0])}`,
    );
  }
  if (values.device === undefined || values.device === "") {
    throw new UsageError("counters needs the device: -d DEVICE");
  }
  const source = values.source;
  if (
    source !== undefined && !(SOURCES as readonly string[]).includes(source)
  ) {
    throw new UsageError(
      `--source must be kernel or doca, got ${JSON.stringify(source)}`,
    );
  }
  if (values["doca-lib-dir"] === "") {
    throw new UsageError("--doca-lib-dir needs a directory");
  }
  return {
    help: false,
    device: values.device,
    sources: source === undefined ? SOURCES : [source as Source],
    docaLibDir: values["doca-lib-dir"],
    json: values.json ?? false,
  };
}

/** What the device is, in one line. */
function deviceLine(found: KernelDiscovery): string {
  const { device, drivers } = found;
  const parts: string[] = [];
  if (device.pci !== undefined) parts.push(`PCIe ${device.pci}`);
  parts.push(
    device.interfaces.length === 0
      ? "no interface"
      : `interface ${
        device.interfaces.map((i) =>
          drivers.has(i) ? `${i} (${drivers.get(i)})` : i
        ).join(", ")
      }`,
  );
  parts.push(
    device.rdma.length === 0
      ? "no RDMA device"
      : `RDMA ${
        device.rdma.map((d) => `${d.name} port ${d.ports.join(", ")}`).join(
          "; ",
        )
      }`,
  );
  return `${device.name}: ${parts.join(", ")}`;
}

const WHAT: Record<DiscoveredSource["kind"], string> = {
  netdev: "interface statistics",
  ethtool: "driver statistics, as ethtool -S",
  rdma: "RDMA hw_counters",
  ib: "InfiniBand port counters",
};

function sourceHeading(source: DiscoveredSource): string {
  const what = `kernel ${source.kind} ${source.owner} (${WHAT[source.kind]})`;
  if (source.problem !== undefined) {
    return `${what}: cannot be read: ${source.problem}`;
  }
  const n = source.counters.length;
  const notes = [`${n} counter${n === 1 ? "" : "s"}`];
  if (source.readNs !== undefined) {
    notes.push(
      `one read of all ${n} takes ${formatDuration(source.readNs / 1e9)} here`,
    );
  }
  if (source.lifespanMs !== undefined) {
    notes.push(
      `the kernel serves the same values for ${source.lifespanMs} ms (hw_counters/lifespan)`,
    );
  }
  if (source.kind === "ib") {
    notes.push("each file read is a management query to the port");
  }
  return `${what}: ${notes.join("; ")}`;
}

function kernelText(found: KernelDiscovery | Error): string {
  if (found instanceof Error) {
    return `${terminalSafe(`kernel: cannot list: ${found.message}`)}\n`;
  }
  const lines = [deviceLine(found)];
  for (const source of found.sources) {
    lines.push("", sourceHeading(source));
    const width = Math.max(0, ...source.counters.map((c) => c.dataId.length));
    for (const c of source.counters) {
      lines.push(
        `  ${c.dataId.padEnd(width)}  ${c.read ? c.value : `(${c.value})`}`,
      );
    }
  }
  return lines.map(terminalSafe).join("\n") + "\n";
}

function docaText(found: DocaDiscovery | Error): string {
  if (found instanceof Error) {
    return `${terminalSafe(`doca: cannot list: ${found.message}`)}\n`;
  }
  const { counters } = found;
  const supported = counters.filter((c) => c.supported).length;
  const read = counters.filter((c) => c.value !== undefined).length;
  const notes = [`${counters.length} known counters (ports 0 and 1)`];
  if (!found.checked) {
    notes.push(
      "this DOCA library cannot say which the device supports (it has no doca_telemetry_diag_check_data_id), so none was probed or read",
    );
  } else {
    notes.push(`${supported} supported`);
    if (found.readNs !== undefined) {
      notes.push(
        `one read of ${read} takes ${formatDuration(found.readNs / 1e9)} here`,
      );
    }
    notes.push(
      `the device samples at most ${found.maxDataIds} data IDs at once`,
    );
    if (read < supported) notes.push(`${supported - read} left unread`);
  }
  const lines = [
    `doca ${found.device} (Telemetry Diag): ${notes.join("; ")}`,
  ];
  const width = Math.max(...counters.map((c) => c.name.length));
  for (const c of counters) {
    const state = c.value ??
      (c.supported === undefined
        ? "(not probed)"
        : c.supported
        ? "(supported, not read)"
        : "(not supported)");
    lines.push(`  ${c.name.padEnd(width)}  ${c.dataId}  ${state}`);
  }
  return lines.map(terminalSafe).join("\n") + "\n";
}

function countersJson(
  kernel: KernelDiscovery | Error | undefined,
  doca: DocaDiscovery | Error | undefined,
) {
  return {
    ...(kernel === undefined ? {} : {
      kernel: kernel instanceof Error
        ? { problem: kernel.message }
        : kernelJson(kernel),
    }),
    ...(doca === undefined ? {} : {
      doca: doca instanceof Error ? { problem: doca.message } : {
        device: doca.device,
        checked: doca.checked,
        max_data_ids: doca.maxDataIds,
        read_ns: doca.readNs === undefined ? null : Math.round(doca.readNs),
        counters: doca.counters.map((c) => ({
          name: c.name,
          data_id: c.dataId,
          meaning: c.meaning,
          supported: c.supported ?? null,
          value: c.value ?? null,
        })),
      },
    }),
  };
}

function kernelJson(found: KernelDiscovery) {
  const { device, drivers } = found;
  return {
    device: {
      name: device.name,
      pci: device.pci ?? null,
      interfaces: device.interfaces.map((name) => ({
        name,
        driver: drivers.get(name) ?? null,
      })),
      rdma: device.rdma,
    },
    sources: found.sources.map((s) => ({
      kind: s.kind,
      owner: s.owner,
      ...(s.problem === undefined ? {} : { problem: s.problem }),
      read_ns: s.readNs === undefined ? null : Math.round(s.readNs),
      ...(s.lifespanMs === undefined ? {} : { lifespan_ms: s.lifespanMs }),
      counters: s.counters.map((c) =>
        c.read
          ? { data_id: c.dataId, value: c.value }
          : { data_id: c.dataId, problem: c.value }
      ),
    })),
  };
}
