/**
 * One interface's ethtool statistics, read through the `SIOCETHTOOL`
 * ioctl: the driver's own counters (mlx5's `rx_prio3_pause` and the like)
 * that netdev statistics do not carry.
 *
 * Opening does the work that allocates: the socket, the names
 * (`ETHTOOL_GSSET_INFO`, then `ETHTOOL_GSTRINGS`), the buffers. A read is
 * one `ETHTOOL_GSTATS` and copies the wanted counters into the caller's
 * record as u64 (lo, hi) halves: no allocation, no BigInt, no string.
 *
 * The driver's set of statistics can change under a reader (a reload,
 * another channel count, PFC turned on for a priority): {@linkcode
 * EthtoolStats.read} reports it when the count differs from the one the
 * names were read with, and the caller opens a new reader and looks its
 * counters up again by name. A set that changed but kept its count is not
 * seen (the kernel gives nothing cheaper to compare).
 *
 * ABI facts: docs/spec/kernel-counters.md §1.
 *
 * @module
 */

import {
  AF_INET,
  decodeNames,
  Errno,
  ETH_GSTRING_LEN,
  ETH_SS_STATS,
  ETHTOOL_GSSET_INFO,
  ETHTOOL_GSTATS,
  ETHTOOL_GSTRINGS,
  type EthtoolLibc,
  fillIfreq,
  Gstats,
  Gstrings,
  type GuardedBuffer,
  ifName,
  IFNAMSIZ,
  IFREQ_BYTES,
  LITTLE_ENDIAN,
  mapGuarded,
  openEthtoolLibc,
  SIOCETHTOOL_REQUEST,
  SOCK_CLOEXEC,
  SOCK_DGRAM,
  SsetInfo,
} from "../../ffi/ethtool.ts";
import { readCString } from "../../ffi/library.ts";

/** How many times opening reads the names again when the set moves under it. */
const OPEN_ATTEMPTS = 3;

/**
 * The ethtool statistics of one interface, open for reading. Use it on
 * the thread that opened it (`errno` is per thread) and close it.
 *
 * @example
 * ```ts ignore
 * const stats = EthtoolStats.open("eth0");
 * const wanted = stats.indexesOf(["rx_prio3_pause", "tx_prio3_pause"]);
 * const record = new Uint32Array(2 * wanted.length);
 * if (!stats.read(record, 0, wanted)) {
 *   // The driver's set changed: open again and look the names up again.
 * }
 * stats.close();
 * ```
 */
export class EthtoolStats {
  /** The interface, as given to {@linkcode EthtoolStats.open}. */
  readonly interface: string;
  /** The counters' names, in the driver's order (the index a read uses). */
  readonly names: readonly string[];

  #libc: EthtoolLibc;
  #fd: number;
  #errno: Deno.UnsafePointerView;
  // The ifreqs are passed by value at each call; the command buffers they
  // point at are mapped memory, which never moves.
  #ifreqStats = new Uint8Array(IFREQ_BYTES);
  #ifreqInfo = new Uint8Array(IFREQ_BYTES);
  #stats: GuardedBuffer;
  #info: GuardedBuffer;
  #statsWords: Uint32Array;
  #infoWords: Uint32Array;
  #closed = false;

  private constructor(
    ifname: string,
    libc: EthtoolLibc,
    fd: number,
    errno: Deno.UnsafePointerView,
    names: string[],
    info: GuardedBuffer,
    stats: GuardedBuffer,
    name: Uint8Array,
  ) {
    this.interface = ifname;
    this.names = names;
    this.#libc = libc;
    this.#fd = fd;
    this.#errno = errno;
    this.#info = info;
    this.#stats = stats;
    this.#infoWords = new Uint32Array(info.buffer);
    this.#statsWords = new Uint32Array(stats.buffer);
    fillIfreq(this.#ifreqInfo, name, info.address);
    fillIfreq(this.#ifreqStats, name, stats.address);
    this.#statsWords[Gstats.CMD / 4] = ETHTOOL_GSTATS;
    this.#statsWords[Gstats.N_STATS / 4] = names.length;
  }

  /**
   * Opens `ifname`'s statistics (in the calling process's network
   * namespace). Throws one line, `Cannot read ethtool statistics of
   * <ifname>: <why>`, when there is no such interface, its driver has no
   * statistics, or libc will not do it.
   */
  static open(ifname: string): EthtoolStats {
    const fail = (why: string): never => {
      throw new Error(`Cannot read ethtool statistics of ${ifname}: ${why}`);
    };
    if (!LITTLE_ENDIAN) fail("this machine is big-endian");
    const name = ifName(ifname) ??
      fail(
        `not an interface name (1 to ${IFNAMSIZ - 1} bytes, no NUL)`,
      );
    let libc: EthtoolLibc;
    try {
      libc = openEthtoolLibc();
    } catch (error) {
      return fail(`cannot bind libc (${String(error).split("\n")[0]})`);
    }
    const buffers: GuardedBuffer[] = [];
    let fd = -1;
    try {
      const errno = new Deno.UnsafePointerView(
        libc.symbols.__errno_location() ?? fail("libc gives no errno"),
      );
      const why = (): string => errnoText(libc, errno.getInt32());
      fd = libc.symbols.socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) fail(`socket: ${why()}`);
      const info = mapGuarded(libc, SsetInfo.BYTES_ONE_SET);
      buffers.push(info);
      const ifreq = new Uint8Array(IFREQ_BYTES);
      for (let attempt = 1;; attempt++) {
        const count = statsCount(libc, fd, ifreq, name, info, why, fail);
        const strings = mapGuarded(
          libc,
          Gstrings.DATA + count * ETH_GSTRING_LEN,
        );
        buffers.push(strings);
        const view = new DataView(strings.buffer);
        view.setUint32(Gstrings.CMD, ETHTOOL_GSTRINGS, true);
        view.setUint32(Gstrings.STRING_SET, ETH_SS_STATS, true);
        view.setUint32(Gstrings.LEN, count, true);
        fillIfreq(ifreq, name, strings.address);
        const got = libc.symbols.ioctl(fd, SIOCETHTOOL_REQUEST, ifreq) < 0
          ? -1
          : view.getUint32(Gstrings.LEN, true);
        const failed = got < 0 ? errno.getInt32() : 0;
        // The kernel writes as many names as the driver has now: if the
        // set grew since it was counted, it hit the guard page (EFAULT).
        if (got === count) {
          const names = decodeNames(
            new Uint8Array(strings.buffer, Gstrings.DATA),
            count,
          );
          strings.unmap();
          buffers.pop();
          const stats = mapGuarded(libc, Gstats.DATA + 8 * count);
          buffers.push(stats);
          return new EthtoolStats(
            ifname,
            libc,
            fd,
            errno,
            names,
            info,
            stats,
            name,
          );
        }
        strings.unmap();
        buffers.pop();
        if (got < 0 && failed !== Errno.EFAULT) {
          fail(`reading the names: ${errnoText(libc, failed)}`);
        }
        if (attempt === OPEN_ATTEMPTS) {
          fail(
            `the driver's set of statistics kept changing while it was read (${OPEN_ATTEMPTS} times)`,
          );
        }
      }
    } catch (error) {
      for (const buffer of buffers) buffer.unmap();
      if (fd >= 0) libc.symbols.close(fd);
      libc.close();
      throw error;
    }
  }

  /** How many counters the driver had when the reader was opened. */
  get count(): number {
    return this.names.length;
  }

  /**
   * The index of each of `names` in {@linkcode EthtoolStats.names}, -1 for
   * a name this driver does not have; the argument of a read.
   */
  indexesOf(names: readonly string[]): Int32Array {
    const at = new Map(this.names.map((name, i) => [name, i]));
    return Int32Array.from(names, (name) => at.get(name) ?? -1);
  }

  /**
   * Reads the statistics once (one `ETHTOOL_GSTATS`) and writes counter
   * `indexes[j]` to `out[at + 2j]` (low 32 bits) and `out[at + 2j + 1]`
   * (high); an index of -1 leaves its two words as they are. Returns false,
   * writing nothing, when the driver's set is no longer the one the names
   * were read with: the caller opens a new reader. Throws one line when the
   * read fails (the interface went away, say). Allocates nothing.
   */
  read(out: Uint32Array, at: number, indexes: Int32Array): boolean {
    if (this.#closed) this.#fail("the reader is closed");
    const words = this.#statsWords;
    const count = this.names.length;
    // The count we expect: a kernel with the December 2025 fix answers a
    // different one with n_stats 0 and no data; an older one writes all
    // it has (into the guard page, if that is more than the buffer holds).
    words[Gstats.N_STATS / 4] = count;
    const result = this.#libc.symbols.ioctl(
      this.#fd,
      SIOCETHTOOL_REQUEST,
      this.#ifreqStats,
    );
    // A set that grew past the buffer hits the guard page: EFAULT, with
    // the header (and its new count) already written.
    if (result < 0) {
      const errno = this.#errno.getInt32();
      if (errno === Errno.EFAULT) return false;
      this.#fail(errnoText(this.#libc, errno));
    }
    if (words[Gstats.N_STATS / 4] !== count) return false;
    const base = Gstats.DATA / 4;
    for (let j = 0; j < indexes.length; j++) {
      const index = indexes[j];
      if (index < 0 || index >= count) continue;
      out[at + 2 * j] = words[base + 2 * index];
      out[at + 2 * j + 1] = words[base + 2 * index + 1];
    }
    return true;
  }

  /**
   * Whether the driver still has as many statistics as when the reader
   * was opened (one `ETHTOOL_GSSET_INFO`), for a caller that checks
   * between reads rather than at them. Allocates nothing.
   */
  unchanged(): boolean {
    if (this.#closed) this.#fail("the reader is closed");
    const words = this.#infoWords;
    words[SsetInfo.CMD / 4] = ETHTOOL_GSSET_INFO;
    words[SsetInfo.MASK / 4] = 1 << ETH_SS_STATS;
    words[SsetInfo.MASK / 4 + 1] = 0;
    words[SsetInfo.DATA / 4] = 0;
    if (
      this.#libc.symbols.ioctl(this.#fd, SIOCETHTOOL_REQUEST, this.#ifreqInfo) <
        0
    ) {
      this.#fail(errnoText(this.#libc, this.#errno.getInt32()));
    }
    return (words[SsetInfo.MASK / 4] & (1 << ETH_SS_STATS)) !== 0 &&
      words[SsetInfo.DATA / 4] === this.names.length;
  }

  /** Releases the socket, the buffers and libc. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stats.unmap();
    this.#info.unmap();
    this.#libc.symbols.close(this.#fd);
    this.#libc.close();
  }

  #fail(why: string): never {
    throw new Error(
      `Cannot read ethtool statistics of ${this.interface}: ${why}`,
    );
  }
}

/** How many statistics the driver has now (`ETHTOOL_GSSET_INFO`). */
function statsCount(
  libc: EthtoolLibc,
  fd: number,
  ifreq: Uint8Array,
  name: Uint8Array,
  info: GuardedBuffer,
  why: () => string,
  fail: (why: string) => never,
): number {
  const view = new DataView(info.buffer);
  view.setUint32(SsetInfo.CMD, ETHTOOL_GSSET_INFO, true);
  view.setBigUint64(SsetInfo.MASK, 1n << BigInt(ETH_SS_STATS), true);
  view.setUint32(SsetInfo.DATA, 0, true);
  fillIfreq(ifreq, name, info.address);
  if (libc.symbols.ioctl(fd, SIOCETHTOOL_REQUEST, ifreq) < 0) fail(why());
  const has = (view.getBigUint64(SsetInfo.MASK, true) &
    (1n << BigInt(ETH_SS_STATS))) !== 0n;
  const count = view.getUint32(SsetInfo.DATA, true);
  // The kernel warns (once) when asked for statistics a driver has none
  // of: such a driver is one without them.
  if (!has || count === 0) fail("its driver has no ethtool statistics");
  return count;
}

/** An errno as the end of a one-line error. */
function errnoText(libc: EthtoolLibc, errno: number): string {
  switch (errno) {
    case Errno.ENODEV:
      return "no such device";
    case Errno.EOPNOTSUPP:
      return "its driver has no ethtool statistics";
    case Errno.EPERM:
      return "not permitted";
    default:
      return `${
        readCString(libc.symbols.strerror(errno)).toLowerCase()
      } (errno ${errno})`;
  }
}
