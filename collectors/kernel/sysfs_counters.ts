/**
 * Counters out of sysfs attribute files (netdev statistics, RDMA
 * hw_counters, InfiniBand port counters), read every few milliseconds.
 *
 * Each file is opened once, at start, and kept open; a read is one
 * `pread(fd, buf, n, 0)` into one preallocated buffer, which asks the
 * driver again (within its caches: docs/spec/kernel-counters.md §3-4).
 * The decimal digits are parsed from the bytes straight into the (lo, hi)
 * halves of a u64 in the caller's record: exact up to 2^64-1, with no
 * allocation, no BigInt and no strings on the per-sample path. Faults are
 * return values and per-file tallies, turned into a line by
 * {@linkcode SysfsCounterSet.describeFault} when the caller chooses.
 *
 * The discovery helpers (which counters an interface or a port has) run
 * at start and may allocate. They look under a `root` directory, "/"
 * unless a test points them at a fixture tree.
 *
 * @module
 */

import {
  Errno,
  errnoName,
  type LibcFile,
  openLibcFile,
  sizeWord,
} from "../../ffi/libc_file.ts";
import {
  openSysfsFile,
  readSysfsDir,
  readSysfsText,
  type SysfsEntry,
} from "../sysfs.ts";

/** What a read of one counter file gave. */
export const CounterRead = {
  /** The value is in the record. */
  OK: 0,
  /**
   * Read fault: the file answered, but not with one decimal u64 and an
   * optional newline (empty, too long, other bytes, above 2^64-1). The
   * record keeps its previous value.
   */
  MALFORMED: 1,
  /**
   * Source fault: the read failed (`ENODEV` once the interface or device
   * is gone, or any error the driver returns). The record keeps its
   * previous value.
   */
  FAILED: 2,
} as const;
/** One of {@linkcode CounterRead}'s values. */
export type CounterRead = typeof CounterRead[keyof typeof CounterRead];

/**
 * Bytes read per file. A u64 is at most 20 digits and a newline; a read
 * that fills the whole buffer is a file too long to be a counter.
 */
export const READ_BYTES = 32;

/** How many times a read interrupted by a signal is tried again. */
const EINTR_RETRIES = 3;

const TWO_32 = 4294967296;

/** A counter file: its name (the file name) and its path. */
export interface CounterFile {
  readonly name: string;
  readonly path: string;
}

/**
 * A set of counter files opened once and read in place. Counter `k` is
 * written to `out[at + 2k]` (lo) and `out[at + 2k + 1]` (hi).
 *
 * Single-threaded: errno is read at the address libc gives the thread that
 * opened the set, so read it on that thread.
 */
export class SysfsCounterSet {
  /** The files, in the order their values are written. */
  readonly files: readonly CounterFile[];
  /** How many files. */
  readonly count: number;
  /** Per file: the {@linkcode CounterRead} of its last read. */
  readonly status: Uint8Array;
  /** Per file: the errno of its last failed read (0 if none yet). */
  readonly errno: Int32Array;
  /** Per file: how many reads were MALFORMED, in all. */
  readonly malformedReads: Float64Array;
  /** Per file: how many reads FAILED, in all. */
  readonly failedReads: Float64Array;

  #libc: LibcFile;
  #pread: LibcFile["symbols"]["pread"];
  #fds: Int32Array;
  #buffer = new Uint8Array(READ_BYTES);
  #readBytes = sizeWord(READ_BYTES);
  /** Per file: the bytes of its last MALFORMED read, for the message. */
  #badBytes: Uint8Array;
  #badLength: Int32Array;
  #errnoView: Deno.UnsafePointerView;
  #closed = false;

  private constructor(
    files: readonly CounterFile[],
    libc: LibcFile,
    fds: Int32Array,
  ) {
    this.files = files;
    this.count = files.length;
    this.status = new Uint8Array(files.length);
    this.errno = new Int32Array(files.length);
    this.malformedReads = new Float64Array(files.length);
    this.failedReads = new Float64Array(files.length);
    this.#libc = libc;
    this.#pread = libc.symbols.pread;
    this.#fds = fds;
    this.#badBytes = new Uint8Array(files.length * READ_BYTES);
    this.#badLength = new Int32Array(files.length);
    const errnoAt = libc.symbols.__errno_location();
    if (errnoAt === null) throw new Error("libc gave no errno location");
    this.#errnoView = new Deno.UnsafePointerView(errnoAt);
  }

  /**
   * Opens every file as {@linkcode openSysfsFile} does, refusing anything
   * but a regular file. Throws, naming the path, on the first that cannot
   * be opened; the ones already open are closed again.
   */
  static open(files: readonly CounterFile[]): SysfsCounterSet {
    const libc = openLibcFile();
    const fds = new Int32Array(files.length).fill(-1);
    try {
      for (let k = 0; k < files.length; k++) {
        fds[k] = openSysfsFile(files[k].path, "read counters from");
      }
      return new SysfsCounterSet(files, libc, fds);
    } catch (error) {
      for (const fd of fds) if (fd >= 0) libc.symbols.close(fd);
      libc.close();
      throw error;
    }
  }

  /**
   * Reads counter `index` into `out[at]` (lo) and `out[at + 1]` (hi) and
   * returns its {@linkcode CounterRead}. On a fault `out` is left as it
   * was. Allocates nothing.
   */
  readOne(index: number, out: Uint32Array, at: number): CounterRead {
    const buffer = this.#buffer;
    let n = -1;
    for (let tries = 0; tries <= EINTR_RETRIES; tries++) {
      n = this.#pread(this.#fds[index], buffer, this.#readBytes, null);
      if (n >= 0 || this.#errnoView.getInt32(0) !== Errno.EINTR) break;
    }
    if (n < 0) {
      this.errno[index] = this.#errnoView.getInt32(0);
      this.failedReads[index]++;
      this.status[index] = CounterRead.FAILED;
      return CounterRead.FAILED;
    }
    // Digits, then at most one newline, then the end; at least one digit.
    const end = n > 0 && buffer[n - 1] === 10 ? n - 1 : n;
    let lo = 0;
    let hi = 0;
    let ok = end > 0 && n < READ_BYTES;
    for (let i = 0; ok && i < end; i++) {
      const digit = buffer[i] - 48;
      if (digit < 0 || digit > 9) {
        ok = false;
        break;
      }
      // value * 10 + digit on the halves: lo * 10 + digit < 2^36 and
      // hi * 10 + carry < 2^36 are exact doubles.
      const t = lo * 10 + digit;
      lo = t >>> 0;
      hi = hi * 10 + (t - lo) / TWO_32;
      if (hi >= TWO_32) ok = false; // above 2^64 - 1
    }
    if (!ok) {
      // A loop, not set(subarray()): a file that stays malformed must not
      // allocate a view per read.
      const bad = this.#badBytes;
      for (let i = 0, j = index * READ_BYTES; i < n; i++, j++) {
        bad[j] = buffer[i];
      }
      this.#badLength[index] = n;
      this.malformedReads[index]++;
      this.status[index] = CounterRead.MALFORMED;
      return CounterRead.MALFORMED;
    }
    out[at] = lo;
    out[at + 1] = hi;
    this.status[index] = CounterRead.OK;
    return CounterRead.OK;
  }

  /**
   * Reads every counter into `out` from word `at` on (two words each) and
   * returns how many faulted (0 when all are in; {@linkcode status} says
   * which). Allocates nothing.
   */
  readAll(out: Uint32Array, at: number): number {
    let faults = 0;
    for (let k = 0; k < this.count; k++) {
      if (this.readOne(k, out, at + 2 * k) !== CounterRead.OK) faults++;
    }
    return faults;
  }

  /**
   * One line about counter `index`'s last read, for a log: "" when it was
   * OK. Allocates; call it off the sampling path, e.g. once when a
   * counter's fault tally first moves.
   */
  describeFault(index: number): string {
    const path = this.files[index].path;
    switch (this.status[index]) {
      case CounterRead.FAILED:
        return `${path}: read failed: ${errnoName(this.errno[index])}${
          this.errno[index] === Errno.ENODEV ? " (the device is gone)" : ""
        }`;
      case CounterRead.MALFORMED: {
        const n = this.#badLength[index];
        const bytes = this.#badBytes.subarray(
          index * READ_BYTES,
          index * READ_BYTES + n,
        );
        if (n === 0) return `${path}: not a counter: the file is empty`;
        if (n >= READ_BYTES) {
          return `${path}: not a counter: ${READ_BYTES} bytes or more`;
        }
        const text = JSON.stringify(new TextDecoder().decode(bytes));
        return /^\d+\n?$/.test(new TextDecoder().decode(bytes))
          ? `${path}: not a counter: ${text} is above 2^64-1`
          : `${path}: not a counter: ${text} is not a decimal number`;
      }
      default:
        return "";
    }
  }

  /** Closes every file and libc. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const fd of this.#fds) if (fd >= 0) this.#libc.symbols.close(fd);
    this.#fds.fill(-1);
    this.#libc.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Where the discovery helpers look: "/" unless a test says otherwise. */
export interface SysfsRootOptions {
  readonly root?: string;
}

function under(root: string | undefined, path: string): string {
  return `${(root ?? "/").replace(/\/+$/, "")}${path}`;
}

/** A name that is one path component: not empty, no "/", not "." or "..". */
function checkComponent(what: string, name: string): void {
  if (name === "" || name.includes("/") || name === "." || name === "..") {
    throw new Error(`Invalid ${what} ${JSON.stringify(name)}`);
  }
}

/**
 * The regular files of `dir`, sorted by name, except `skip`. Throws,
 * naming `what`, when the folder does not exist.
 */
function listCounterFiles(
  dir: string,
  what: string,
  skip: readonly string[] = [],
): CounterFile[] {
  let entries: SysfsEntry[];
  try {
    entries = readSysfsDir(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`No ${what}: ${dir} does not exist`, { cause: error });
    }
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile && !skip.includes(entry.name))
    .map((entry) => ({ name: entry.name, path: `${dir}/${entry.name}` }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The netdev statistics of interface `iface`:
 * `ROOT/sys/class/net/IF/statistics/*`.
 */
export function netdevCounterFiles(
  iface: string,
  options: SysfsRootOptions = {},
): CounterFile[] {
  checkComponent("interface name", iface);
  return listCounterFiles(
    under(options.root, `/sys/class/net/${iface}/statistics`),
    `interface ${iface}`,
  );
}

function portDir(
  device: string,
  port: number,
  options: SysfsRootOptions,
): string {
  checkComponent("RDMA device name", device);
  if (!Number.isSafeInteger(port) || port < 0) {
    throw new Error(`Invalid port number ${port}`);
  }
  return under(options.root, `/sys/class/infiniband/${device}/ports/${port}`);
}

/**
 * The RDMA hw_counters of a port:
 * `ROOT/sys/class/infiniband/DEV/ports/N/hw_counters/*`, without
 * `lifespan` (the kernel's cache time, not a counter: see
 * {@linkcode rdmaHwCounterLifespanMs}).
 */
export function rdmaHwCounterFiles(
  device: string,
  port: number,
  options: SysfsRootOptions = {},
): CounterFile[] {
  return listCounterFiles(
    `${portDir(device, port, options)}/hw_counters`,
    `hw_counters for ${device} port ${port}`,
    ["lifespan"],
  );
}

/**
 * How long the kernel keeps a port's hw_counters before asking the device
 * again, in ms (`hw_counters/lifespan`): reads more often than this see
 * the same values.
 */
export function rdmaHwCounterLifespanMs(
  device: string,
  port: number,
  options: SysfsRootOptions = {},
): number {
  const path = `${portDir(device, port, options)}/hw_counters/lifespan`;
  const text = readSysfsText(path).trim();
  if (!/^\d+$/.test(text)) {
    throw new Error(`${path}: ${JSON.stringify(text)} is not a number of ms`);
  }
  return Number(text);
}

/**
 * The InfiniBand port counters of a port:
 * `ROOT/sys/class/infiniband/DEV/ports/N/counters/*` (each read a
 * management query to the port; `port_xmit_data` and `port_rcv_data`
 * count 4-byte words).
 */
export function ibPortCounterFiles(
  device: string,
  port: number,
  options: SysfsRootOptions = {},
): CounterFile[] {
  return listCounterFiles(
    `${portDir(device, port, options)}/counters`,
    `port counters for ${device} port ${port}`,
  );
}
