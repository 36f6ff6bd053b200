/**
 * The kernel source: a NIC's counters read through Linux itself (netdev
 * statistics, ethtool statistics, RDMA hw_counters, InfiniBand port
 * counters), sampled on a timer into a monitor's ring.
 *
 * A column's data ID names what it reads: `netdev:NAME`, `ethtool:NAME`,
 * `rdma:NAME` or `ib:NAME`, or with an explicit interface or port,
 * `netdev:IF/NAME`, `ethtool:IF/NAME`, `rdma:DEV/PORT/NAME`,
 * `ib:DEV/PORT/NAME` (by default the device's first interface, its first
 * RDMA device's first port). Everything is resolved and opened once, by
 * {@linkcode KernelCollector.open}; a sample is one `pread` per sysfs file
 * and one `ETHTOOL_GSTATS` per interface, with no allocation, no string and
 * no BigInt. A device that goes away (an interface deleted, a driver's set
 * of statistics changed) is a fault, not an end: the source reports it
 * once, opens everything again (on the next tick, then backing off to once
 * a second) and reports the samples it missed as a gap when it resumes.
 *
 * The source follows the interfaces it opened, by ifindex: one renamed
 * under it is read under its new name, said once, with no sample lost. One
 * that is gone (deleted, a driver reload, a VF removed) is looked for
 * again as the operator named it: the device is resolved anew from its
 * `-d` name (an interface, an RDMA device, a PCIe function), and a column
 * that named its interface (`netdev:IF/NAME`) waits for an interface of
 * that name. A link that is merely down is no fault: its counters still
 * read. Each sample's reads are timed (its timestamp is taken right after
 * them) into {@linkcode KernelCollector.readStats}.
 *
 * {@linkcode KernelCollector.run} samples on a thread of its own
 * (sampler_worker.ts), which sleeps to absolute deadlines and raises its
 * own scheduling, and hands the samples to the monitor on this thread in
 * batches through shared memory. A sample taken late (a busy host woke
 * the thread late, or the reads were slow) is a late sample with its true
 * timestamp, never a lost one: the counters are cumulative and read whole,
 * so nothing they counted is missed. It is said through `onLate`, naming
 * both the wake-up's lateness and the reads' time. Only a failed read, a
 * device that is gone, or samples the main thread fell a whole mailbox
 * behind on are lost. Facts: docs/spec/kernel-counters.md.
 *
 * @module
 */

import type { SampleSink } from "../../rules/sample_sink.ts";
import type { Collector } from "../collector.ts";
import { PollStats } from "../poll_stats.ts";
import { ReadStats } from "../read_stats.ts";
import { formatDuration } from "../../base/units.ts";
import { addNumberU64, geU64, msToNsU64, toNumberU64 } from "../../base/u64.ts";
import { nearest } from "../../config/suggest.ts";
import {
  type KernelDevice,
  resolveKernelDevice,
  resolveKernelDeviceSync,
} from "./device.ts";
import { EthtoolStats } from "./ethtool_stats.ts";
import { interfaceIndex, interfaceWithIndex } from "./interface_index.ts";
import { runSamplerThread, samplerControl } from "../sampler_thread.ts";
import type { KernelSamplerPayload } from "./sampler_worker.ts";
import {
  type CounterFile,
  CounterRead,
  ibPortCounterFiles,
  netdevCounterFiles,
  rdmaHwCounterFiles,
  rdmaHwCounterLifespanMs,
  SysfsCounterSet,
} from "./sysfs_counters.ts";

/** One column of a kernel source: its name and what it reads. */
export interface KernelColumn {
  readonly name: string;
  /** `netdev:NAME`, `ethtool:IF/NAME`, `rdma:DEV/PORT/NAME`, ... */
  readonly dataId: string;
}

/** Options of {@linkcode KernelCollector.open}. */
export interface KernelOptions {
  /** What `-d` names: an interface, an RDMA device or a PCIe function. */
  readonly device: string;
  /** The monitor's columns, in record order. */
  readonly columns: readonly KernelColumn[];
  /**
   * Sample period in ns (a positive safe integer). Default
   * {@linkcode DEFAULT_SAMPLE_PERIOD_NS}.
   */
  readonly samplePeriodNs?: number;
  /** The tree holding `sys/` (default `/`); tests give a fixture tree. */
  readonly root?: string;
  /**
   * Told, once per fault, why the source stopped delivering (the device
   * went away, its set of statistics changed); it keeps trying.
   */
  readonly onFault?: (message: string) => void;
  /**
   * Told, in one line, when a sample came a period or more late, naming
   * why (woken late, or reads slow, with both times): once, and again only
   * after {@linkcode LATE_QUIET_MS} without such a sample.
   */
  readonly onLate?: (message: string) => void;
  /** Told once, as {@linkcode KernelCollector.run} starts, what scheduling its thread got. */
  readonly onScheduling?: (message: string) => void;
  /** Wall clock in ms since the Unix epoch. Default `performance` time. */
  readonly now?: () => number;
  /**
   * The monotonic clock, ms, that schedules samples and retries and times
   * the reads (default `performance.now`); tests move it to make the
   * timer late.
   */
  readonly monotonic?: () => number;
}

/** The longest wait between two attempts to open a faulted device again, ms. */
export const MAX_RETRY_MS = 1000;

/**
 * After a late sample has been said, how long samples must stay on time
 * before the next late one is said again, ms: a host hovering around the
 * period would otherwise say it every few samples.
 */
export const LATE_QUIET_MS = 60_000;

/** The default sample period: 10 ms. */
export const DEFAULT_SAMPLE_PERIOD_NS = 10_000_000;

type Kind = "netdev" | "ethtool" | "rdma" | "ib";

/** What a column reads, resolved: where and which counter. */
interface Target {
  readonly kind: Kind;
  /** The interface (netdev, ethtool) or RDMA device, as it is called now. */
  readonly owner: string;
  /** The port (rdma, ib); 0 otherwise. */
  readonly port: number;
  readonly counter: string;
  /**
   * The interface or RDMA device the column named (`netdev:IF/NAME`,
   * `rdma:DEV/PORT/NAME`), as written; undefined for the device's default.
   */
  readonly named: string | undefined;
}

/** An interface's ethtool statistics and the columns read from them. */
interface EthtoolGroup {
  readonly stats: EthtoolStats;
  /** Per wanted counter: its index in the driver's set. */
  readonly indexes: Int32Array;
  /** Per wanted counter: the record word its low half goes to. */
  readonly words: Int32Array;
  /** What one read writes: (lo, hi) per wanted counter. */
  readonly scratch: Uint32Array;
}

/** Everything open for reading: sysfs files and ethtool readers. */
interface Readers {
  readonly sysfs: SysfsCounterSet;
  /** Per sysfs file: the record word its low half goes to. */
  readonly sysfsWords: Int32Array;
  readonly ethtool: readonly EthtoolGroup[];
}

/** A fault's one-line reason (where it allocates, only on the fault path). */
class Fault extends Error {}

/**
 * Parses a data ID against the device; throws a line without the
 * "Cannot read column" prefix when it names nothing the device offers.
 */
function resolveTarget(
  device: KernelDevice,
  dataId: string,
  root: string | undefined,
): Target {
  const colon = dataId.indexOf(":");
  const kind = dataId.slice(0, colon);
  const rest = dataId.slice(colon + 1);
  if (
    colon < 0 ||
    (kind !== "netdev" && kind !== "ethtool" && kind !== "rdma" &&
      kind !== "ib")
  ) {
    throw new Error(
      "the data ID must be netdev:, ethtool:, rdma: or ib: and a counter name",
    );
  }
  const parts = rest.split("/");
  if (kind === "netdev" || kind === "ethtool") {
    if (parts.length > 2 || parts.some((p) => p === "")) {
      throw new Error(`the data ID must be ${kind}:NAME or ${kind}:IF/NAME`);
    }
    const iface = parts.length === 2 ? parts[0] : device.interfaces[0];
    if (iface === undefined) {
      throw new Error(`${device.name} has no interface`);
    }
    if (!device.interfaces.includes(iface)) {
      throw new Error(
        `${device.name} has no interface ${iface}${
          suggestion(iface, device.interfaces)
        }`,
      );
    }
    const counter = parts[parts.length - 1];
    const names = kind === "netdev"
      ? netdevCounterFiles(iface, { root }).map((f) => f.name)
      : ethtoolNames(iface);
    if (!names.includes(counter)) {
      throw new Error(
        `${iface} has no ${kind} counter ${counter}${
          suggestion(counter, names)
        }`,
      );
    }
    return {
      kind,
      owner: iface,
      port: 0,
      counter,
      named: parts.length === 2 ? iface : undefined,
    };
  }
  if (
    (parts.length !== 1 && parts.length !== 3) || parts.some((p) => p === "")
  ) {
    throw new Error(
      `the data ID must be ${kind}:NAME or ${kind}:DEV/PORT/NAME`,
    );
  }
  const first = device.rdma.find((d) => d.ports.length > 0);
  const dev = parts.length === 3 ? parts[0] : first?.name;
  if (dev === undefined) throw new Error(`${device.name} has no RDMA port`);
  const rdma = device.rdma.find((d) => d.name === dev);
  if (rdma === undefined) {
    throw new Error(
      `${device.name} has no RDMA device ${dev}${
        suggestion(dev, device.rdma.map((d) => d.name))
      }`,
    );
  }
  const port = parts.length === 3 ? Number(parts[1]) : rdma.ports[0];
  if (!rdma.ports.includes(port)) {
    throw new Error(
      `${dev} has no port ${parts[1] ?? ""}; it has ${
        rdma.ports.join(", ") || "none"
      }`,
    );
  }
  const counter = parts[parts.length - 1];
  const names = (kind === "rdma" ? rdmaHwCounterFiles : ibPortCounterFiles)(
    dev,
    port,
    { root },
  ).map((f) => f.name);
  if (!names.includes(counter)) {
    throw new Error(
      `${dev} port ${port} has no ${kind} counter ${counter}${
        suggestion(counter, names)
      }`,
    );
  }
  return {
    kind,
    owner: dev,
    port,
    counter,
    named: parts.length === 3 ? dev : undefined,
  };
}

function isInterfaceKind(kind: Kind): boolean {
  return kind === "netdev" || kind === "ethtool";
}

/**
 * The ifindex of every interface the targets read, by its name now; an
 * interface whose ifindex cannot be read (a fixture tree without one) is
 * left out, and is then looked for by name only.
 */
function interfaceIndexes(
  targets: readonly Target[],
  root: string | undefined,
): Map<string, number> {
  const indexes = new Map<string, number>();
  for (const t of targets) {
    if (!isInterfaceKind(t.kind) || indexes.has(t.owner)) continue;
    const index = interfaceIndex(t.owner, { root });
    if (index !== undefined) indexes.set(t.owner, index);
  }
  return indexes;
}

/**
 * The targets bound to `device` as resolved anew: a column on an
 * interface in `lost` reads the interface it named, or the device's first;
 * a column on the default RDMA device reads the device's first port.
 * Throws a {@linkcode Fault} when the device has nothing to read for one.
 */
function rebind(
  targets: readonly Target[],
  device: KernelDevice,
  lost: ReadonlySet<string>,
): Target[] {
  return targets.map((t) => {
    if (isInterfaceKind(t.kind)) {
      if (!lost.has(t.owner)) return t;
      const owner = t.named ?? device.interfaces[0];
      if (owner === undefined) {
        throw new Fault(`${device.name} has no interface`);
      }
      return { ...t, owner };
    }
    if (t.named !== undefined) return t;
    const first = device.rdma.find((d) => d.ports.length > 0);
    if (first === undefined) throw new Fault(`${device.name} has no RDMA port`);
    return { ...t, owner: first.name, port: first.ports[0] };
  });
}

function ethtoolNames(iface: string): readonly string[] {
  const stats = EthtoolStats.open(iface);
  try {
    return stats.names;
  } finally {
    stats.close();
  }
}

function suggestion(name: string, names: readonly string[]): string {
  const near = nearest(name, names, 3);
  return near.length > 0 ? `; did you mean ${near.join(", ")}?` : "";
}

/**
 * Opens every target; throws a {@linkcode Fault} naming what failed, with
 * whatever it opened closed again.
 */
function openReaders(
  targets: readonly Target[],
  root: string | undefined,
): Readers {
  const files: CounterFile[] = [];
  const fileWords: number[] = [];
  const byInterface = new Map<string, { names: string[]; words: number[] }>();
  for (let k = 0; k < targets.length; k++) {
    const t = targets[k];
    const word = 2 * (k + 1);
    if (t.kind === "ethtool") {
      let group = byInterface.get(t.owner);
      if (!group) byInterface.set(t.owner, group = { names: [], words: [] });
      group.names.push(t.counter);
      group.words.push(word);
      continue;
    }
    const found = t.kind === "netdev"
      ? netdevCounterFiles(t.owner, { root })
      : (t.kind === "rdma" ? rdmaHwCounterFiles : ibPortCounterFiles)(
        t.owner,
        t.port,
        { root },
      );
    const file = found.find((f) => f.name === t.counter);
    if (!file) {
      throw new Fault(`${t.owner} has no ${t.kind} counter ${t.counter}`);
    }
    files.push(file);
    fileWords.push(word);
  }
  const groups: EthtoolGroup[] = [];
  let sysfs: SysfsCounterSet | undefined;
  try {
    for (const [iface, { names, words }] of byInterface) {
      const stats = EthtoolStats.open(iface);
      groups.push({
        stats,
        indexes: stats.indexesOf(names),
        words: Int32Array.from(words),
        scratch: new Uint32Array(2 * names.length),
      });
      const missing = names.find((_, j) => groups.at(-1)!.indexes[j] < 0);
      if (missing !== undefined) {
        throw new Fault(`${iface} has no ethtool counter ${missing}`);
      }
    }
    sysfs = SysfsCounterSet.open(files);
  } catch (error) {
    for (const group of groups) group.stats.close();
    if (error instanceof Fault) throw error;
    throw new Fault(error instanceof Error ? error.message : String(error));
  }
  return { sysfs, sysfsWords: Int32Array.from(fileWords), ethtool: groups };
}

function closeReaders(readers: Readers): void {
  readers.sysfs.close();
  for (const group of readers.ethtool) group.stats.close();
}

/**
 * A {@linkcode Collector} of a NIC's counters through the kernel.
 *
 * @example
 * ```ts ignore
 * const kernel = await KernelCollector.open({
 *   device: "p0",
 *   columns: [{ name: "rx", dataId: "netdev:rx_bytes" }],
 *   samplePeriodNs: 10_000_000,
 * });
 * await kernel.run(sink, signal);
 * kernel.close();
 * ```
 */
export class KernelCollector implements Collector {
  /** Always `"kernel"`. */
  readonly source = "kernel";
  /** `kernel <device>`, for events.log's `Device:`. */
  readonly device: string;
  /** The poll loop's health. */
  readonly pollStats: PollStats = new PollStats();
  /**
   * How long each sample's reads took (a failed read too), and the samples
   * whose reads took longer than the period.
   */
  readonly readStats: ReadStats;
  /** Faults so far (each reported once through `onFault`). */
  faults = 0;
  /** Samples lost so far (reported through `sink.gap`). */
  lostSamples = 0;
  /** What {@linkcode run}'s thread got as its scheduling, once it started. */
  scheduling: string | undefined;

  /** What `-d` named, as given: looked for again when the device is gone. */
  readonly #given: string;
  readonly #columns: readonly KernelColumn[];
  /** What each column reads, under the names its interfaces have now. */
  #targets: readonly Target[];
  /** The ifindex of each interface read, by its name now. */
  #ifindexes: Map<string, number>;
  readonly #root: string | undefined;
  readonly #periodNs: number;
  readonly #periodMs: number;
  readonly #onFault: (message: string) => void;
  readonly #onLate: (message: string) => void;
  readonly #onScheduling: (message: string) => void;
  /** The monotonic time of the last late sample. */
  #lateAt = -Infinity;
  readonly #now: () => number;
  readonly #monotonic: () => number;
  /** Timestamp, then (lo, hi) per column: the next record. */
  readonly #record: Uint32Array;
  #readers: Readers | undefined;
  /** Samples lost since the last committed one. */
  #pendingGap = 0;
  /** The monotonic time at which a faulted source next tries to open. */
  #retryAt = 0;
  #retryMs = 0;
  #running = false;
  #closed = false;
  /** While {@linkcode run}'s thread samples: its control words (samplerControl). */
  #control: Int32Array | undefined;

  private constructor(
    options: KernelOptions,
    targets: Target[],
    readers: Readers,
  ) {
    this.device = `kernel ${options.device}`;
    this.#given = options.device;
    this.#columns = options.columns;
    this.#targets = targets;
    this.#root = options.root;
    this.#ifindexes = interfaceIndexes(targets, options.root);
    this.#periodNs = options.samplePeriodNs ?? DEFAULT_SAMPLE_PERIOD_NS;
    this.#periodMs = this.#periodNs / 1e6;
    this.#onFault = options.onFault ?? (() => {});
    this.#onLate = options.onLate ?? (() => {});
    this.#onScheduling = options.onScheduling ?? (() => {});
    this.readStats = new ReadStats(this.#periodMs);
    this.#now = options.now ??
      (() => performance.timeOrigin + performance.now());
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#record = new Uint32Array(2 * (1 + targets.length));
    this.#readers = readers;
  }

  /**
   * Resolves the device and every column, and opens what they read.
   * Rejects with one line naming the column, and the nearest names the
   * device offers, when a column reads something the device does not have.
   */
  static async open(options: KernelOptions): Promise<KernelCollector> {
    const {
      device: name,
      columns,
      samplePeriodNs = DEFAULT_SAMPLE_PERIOD_NS,
      root,
    } = options;
    if (!Number.isSafeInteger(samplePeriodNs) || samplePeriodNs < 1) {
      throw new RangeError(
        `Cannot create kernel collector: samplePeriodNs must be a positive integer, got ${samplePeriodNs}`,
      );
    }
    const device = await resolveKernelDevice(name, { root });
    const targets: Target[] = [];
    for (const column of columns) {
      try {
        targets.push(resolveTarget(device, column.dataId, root));
      } catch (error) {
        throw new Error(
          `Cannot read column "${column.name}" (${column.dataId}) of ${name}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
    }
    let readers: Readers;
    try {
      readers = openReaders(targets, root);
    } catch (error) {
      throw new Error(
        `Cannot read ${name}: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
    return new KernelCollector(
      { ...options, samplePeriodNs },
      targets,
      readers,
    );
  }

  /**
   * Per column, how long the kernel caches its value, s: an RDMA
   * hw_counter's `lifespan`; NaN where nothing says (the column may still
   * be refreshed by its driver on a timer, which only sampling shows).
   */
  cachedForS(): Float64Array {
    return Float64Array.from(this.#targets, (t) => {
      if (t.kind !== "rdma") return NaN;
      try {
        return rdmaHwCounterLifespanMs(t.owner, t.port, { root: this.#root }) /
          1000;
      } catch {
        return NaN; // an older kernel without the file
      }
    });
  }

  /** Whether the source is delivering (false while a fault lasts). */
  get up(): boolean {
    if (this.#control !== undefined) {
      return Atomics.load(this.#control, 1) === 1;
    }
    return this.#readers !== undefined;
  }

  /**
   * Samples every period (first sample at once) on a thread of its own
   * until `signal` aborts, then resolves once the thread has ended. A
   * device fault does not end it; a sink that throws, or a thread that
   * fails, rejects it. The samples reach `sink` on this thread, in batches
   * every `DRAIN_MS` (collectors/sampler_thread.ts), each with its true timestamp.
   */
  run(sink: SampleSink, signal: AbortSignal): Promise<void> {
    if (this.#running) {
      return Promise.reject(
        new Error("Cannot run kernel collector: it is already running"),
      );
    }
    if (this.#closed) {
      return Promise.reject(
        new Error("Cannot run kernel collector: it is closed"),
      );
    }
    if (sink.columns !== this.#targets.length) {
      return Promise.reject(
        new Error(
          `Cannot deliver kernel samples: the sink has ${sink.columns} columns, the source ${this.#targets.length}`,
        ),
      );
    }
    // The thread opens the counters itself: two readers would only cost.
    if (this.#readers) closeReaders(this.#readers);
    this.#readers = undefined;
    this.#running = true;
    const control = samplerControl();
    this.#control = control;
    const payload: KernelSamplerPayload = {
      device: this.#given,
      columns: this.#columns,
      samplePeriodNs: this.#periodNs,
      root: this.#root,
    };
    return runSamplerThread(sink, signal, {
      worker: new Worker(new URL("./sampler_worker.ts", import.meta.url), {
        type: "module",
      }),
      payload,
      columns: this.#targets.length,
      periodNs: this.#periodNs,
      device: this.device,
      pollStats: this.pollStats,
      readStats: this.readStats,
      control,
      onStarted: (scheduling) => {
        this.scheduling = scheduling;
        this.#onScheduling(
          `${this.device}: the sampler thread runs at ${scheduling}`,
        );
      },
      onNote: (level, message) =>
        level === "late" ? this.#onLate(message) : this.#onFault(message),
      // The source's own gaps and the mailbox's overruns both count as lost.
      onGap: (dropped) => this.lostSamples += dropped,
      // Faults as the thread counts them; each also failed a read.
      onDrain: () => {
        const faults = Atomics.load(control, 2);
        for (; this.faults < faults; this.faults++) {
          this.pollStats.recordError("read failed");
        }
      },
    }).finally(() => {
      this.#running = false;
      this.#control = undefined;
    });
  }

  /**
   * One sample, `lateMs` after it was due: reads every column and commits
   * a record, or, while the device is faulted, counts a lost sample (and
   * tries to open it again when the back-off allows). Returns whether a
   * record was committed. The sampling thread calls it on its deadlines.
   */
  sample(sink: SampleSink, lateMs = 0): boolean {
    let readers = this.#readers;
    if (readers === undefined) {
      if (this.#monotonic() < this.#retryAt || !this.#reopen()) {
        this.#pendingGap++;
        return false;
      }
      readers = this.#readers!;
    }
    const start = this.#monotonic();
    let why = this.#read(readers);
    if (why !== undefined) {
      closeReaders(readers);
      this.#readers = undefined;
      // A renamed interface fails the ethtool read (it asks by name):
      // followed, the sample is read again at once and nothing is lost.
      if (this.#followRename()) {
        readers = this.#readers!;
        why = this.#read(readers);
        if (why !== undefined) {
          closeReaders(readers);
          this.#readers = undefined;
        }
      }
    }
    const end = this.#monotonic();
    const readMs = end - start;
    this.pollStats.recordPoll(lateMs);
    if (lateMs >= this.#periodMs) this.pollStats.lateSamples++;
    this.readStats.record(readMs);
    if (lateMs >= this.#periodMs || readMs > this.#periodMs) {
      this.#late(end, lateMs, readMs);
    }
    if (why !== undefined) {
      this.#fault(why);
      this.#pendingGap++;
      return false;
    }
    const record = this.#record;
    // The timestamp follows the reads; strictly after the last one.
    const hi = record[1];
    const lo = record[0];
    msToNsU64(record, 0, this.#now());
    if (geU64(lo, hi, record[0], record[1])) {
      addNumberU64(record, 0, lo, hi, 1);
    }
    this.pollStats.recordSampleTime(toNumberU64(record[0], record[1]));
    if (this.#pendingGap > 0) {
      const lost = this.#pendingGap;
      this.#pendingGap = 0;
      this.lostSamples += lost;
      sink.gap(lost);
    }
    const words = sink.words;
    const at = sink.claim();
    for (let w = 0; w < record.length; w++) words[at + w] = record[w];
    sink.commit();
    return true;
  }

  /**
   * Reads every column into the record: undefined when all were read, else
   * what failed. Allocates nothing unless something failed.
   */
  #read(readers: Readers): string | undefined {
    const record = this.#record;
    const sysfs = readers.sysfs;
    const sysfsWords = readers.sysfsWords;
    for (let i = 0; i < sysfs.count; i++) {
      if (sysfs.readOne(i, record, sysfsWords[i]) !== CounterRead.OK) {
        return sysfs.describeFault(i);
      }
    }
    const groups = readers.ethtool;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g];
      const scratch = group.scratch;
      try {
        if (!group.stats.read(scratch, 0, group.indexes)) {
          return `the ethtool statistics of ${group.stats.interface} changed`;
        }
      } catch (error) {
        return (error as Error).message;
      }
      const words = group.words;
      for (let j = 0; j < words.length; j++) {
        record[words[j]] = scratch[2 * j];
        record[words[j] + 1] = scratch[2 * j + 1];
      }
    }
    return undefined;
  }

  /** Reports the fault once (all is closed) and schedules a retry. */
  #fault(why: string): void {
    this.faults++;
    this.#retryMs = this.#periodMs;
    this.#retryAt = this.#monotonic() + this.#retryMs;
    this.pollStats.recordError("read failed");
    this.#onFault(
      `${this.device} stopped delivering: ${why}; opening it again`,
    );
  }

  /**
   * Says that a sample came a period or more late (`lateMs` woken late,
   * `readMs` reading, at monotonic `at`), unless another did within the
   * last {@linkcode LATE_QUIET_MS}: the metrics count each one.
   */
  #late(at: number, lateMs: number, readMs: number): void {
    const quiet = at - this.#lateAt >= LATE_QUIET_MS;
    this.#lateAt = at;
    if (!quiet) return;
    const period = formatDuration(this.#periodNs / 1e9, { exact: true });
    const woken = formatDuration(lateMs / 1000);
    const read = formatDuration(readMs / 1000);
    const cause = readMs > this.#periodMs
      ? `its reads took ${read}, longer than the ${period} sample period (woken ${woken} late)`
      : `the sampler thread was woken ${woken} late (the host is busy; its reads took ${read}), against a ${period} sample period`;
    this.#onLate(
      `${this.device}: a sample came late: ${cause}; nothing is lost (the sample has its true time and the counters' whole increase), but a burst shorter than the delay is averaged over it`,
    );
  }

  /**
   * Finds each interface read by its ifindex: one renamed is read under
   * its new name from now on (said once); returns the names of those gone.
   */
  #follow(): Set<string> {
    const lost = new Set<string>();
    const renamed = new Map<string, string>();
    for (const [name, ifindex] of this.#ifindexes) {
      // Still there under its name: no need to look at every interface.
      if (interfaceIndex(name, { root: this.#root }) === ifindex) continue;
      const now = interfaceWithIndex(ifindex, { root: this.#root });
      if (now === undefined) lost.add(name);
      else if (now !== name) renamed.set(name, now);
    }
    if (renamed.size === 0) return lost;
    this.#targets = this.#targets.map((t) => {
      const now = isInterfaceKind(t.kind) ? renamed.get(t.owner) : undefined;
      return now === undefined ? t : { ...t, owner: now };
    });
    this.#ifindexes = new Map(
      [...this.#ifindexes].map(([name, i]) => [renamed.get(name) ?? name, i]),
    );
    for (const [was, now] of renamed) {
      this.#onFault(
        `${this.device}: interface ${was} is now called ${now}; reading it under its new name`,
      );
    }
    return lost;
  }

  /**
   * After a read failed: true when an interface was renamed, none is
   * gone, and everything opened again under the new names.
   */
  #followRename(): boolean {
    const before = this.#targets;
    if (this.#follow().size > 0 || this.#targets === before) return false;
    try {
      this.#readers = openReaders(this.#targets, this.#root);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Opens every column again, following renames; when an interface is
   * gone or the columns will not open as they are, the device is
   * resolved anew from the name it was given. True once it is open.
   */
  #reopen(): boolean {
    try {
      const lost = this.#follow();
      if (lost.size === 0) {
        try {
          this.#readers = openReaders(this.#targets, this.#root);
          return true;
        } catch {
          // Look for the device anew, below.
        }
      }
      const device = resolveKernelDeviceSync(this.#given, {
        root: this.#root,
      });
      const targets = rebind(this.#targets, device, lost);
      this.#readers = openReaders(targets, this.#root);
      const moved = new Map<string, string>();
      targets.forEach((t, k) => {
        const was = this.#targets[k].owner;
        if (isInterfaceKind(t.kind) && t.owner !== was) moved.set(was, t.owner);
      });
      this.#targets = targets;
      this.#ifindexes = interfaceIndexes(targets, this.#root);
      for (const [was, now] of moved) {
        this.#onFault(
          `${this.device}: interface ${was} is gone; reading ${now} in its place`,
        );
      }
      return true;
    } catch {
      this.#retryMs = Math.min(MAX_RETRY_MS, 2 * this.#retryMs);
      this.#retryAt = this.#monotonic() + this.#retryMs;
      return false;
    }
  }

  /** The sample period, ns. */
  get samplePeriodNs(): number {
    return this.#periodNs;
  }

  /** Releases every file, socket and library handle. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#readers) closeReaders(this.#readers);
    this.#readers = undefined;
  }
}
