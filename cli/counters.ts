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
import { parseOptions } from "./parse_options.ts";
import {
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

Options:
  -d, --device DEVICE    the device (required)
      --source kernel    only this source (default: every source)
      --json             print JSON instead of text
  -h, --help             this text

Exit codes: 0 ok (a source that cannot be read is listed with its reason);
2 usage error, or a DEVICE that no source has.
`;

const COUNTERS_OPTIONS = {
  device: { type: "string", short: "d" },
  source: { type: "string" },
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
  let kernel: KernelDiscovery;
  try {
    kernel = await discoverKernelCounters(request.device, context);
  } catch (error) {
    io.error(errorMessage(error));
    return EXIT_USAGE;
  }
  io.out(
    request.json
      ? `${JSON.stringify(kernelJson(kernel), null, 2)}\n`
      : kernelText(kernel),
  );
  return EXIT_OK;
}

function parseCountersArgs(args: readonly string[]) {
  const { values, positionals } = parseOptions(args, COUNTERS_OPTIONS);
  if (values.help) return { help: true, device: "", json: false };
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(positionals[0])}`,
    );
  }
  if (values.device === undefined || values.device === "") {
    throw new UsageError("counters needs the device: -d DEVICE");
  }
  if (values.source !== undefined && values.source !== "kernel") {
    throw new UsageError(
      `--source must be kernel, got ${JSON.stringify(values.source)}`,
    );
  }
  return { help: false, device: values.device, json: values.json ?? false };
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

function kernelText(found: KernelDiscovery): string {
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
      source: "kernel",
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
