/**
 * Deno FFI declarations for reading a network interface's ethtool
 * statistics through libc: the `SIOCETHTOOL` ioctl on a datagram socket,
 * `struct ifreq`, the three ethtool commands the reader needs and their
 * buffer layouts as byte offsets, and the decoding of the 32-byte name
 * table. Declarations and decoding only: when to call what, and what an
 * error means, live in collectors/kernel/ethtool_stats.ts.
 *
 * ABI facts (checked against the UAPI headers `linux/sockios.h`,
 * `linux/ethtool.h`, `linux/if.h`): docs/spec/kernel-counters.md §1.
 *
 * @module
 */

import { LIBC_SONAME } from "./libc.ts";
import { cStringFromBuffer } from "./library.ts";

/** `SIOCETHTOOL` (`linux/sockios.h`): the ethtool ioctl request. */
export const SIOCETHTOOL = 0x8946;
/**
 * {@linkcode SIOCETHTOOL} as the `unsigned long` argument of `ioctl`: one
 * BigInt made here, passed as it is at every call (nothing allocated).
 */
export const SIOCETHTOOL_REQUEST: bigint = BigInt(SIOCETHTOOL);

/** `ETHTOOL_GSSET_INFO` (`linux/ethtool.h`): the sizes of string sets. */
export const ETHTOOL_GSSET_INFO = 0x37;
/** `ETHTOOL_GSTRINGS`: the names of a string set. */
export const ETHTOOL_GSTRINGS = 0x1b;
/** `ETHTOOL_GSTATS`: the driver's statistics, in the order of their names. */
export const ETHTOOL_GSTATS = 0x1d;

/** `ETH_SS_STATS` (`enum ethtool_stringset`): the names of `ETHTOOL_GSTATS`. */
export const ETH_SS_STATS = 1;
/** `ETH_GSTRING_LEN`: bytes per name, NUL-padded. */
export const ETH_GSTRING_LEN = 32;

/** `IFNAMSIZ` (`linux/if.h`): an interface name and its NUL. */
export const IFNAMSIZ = 16;
/** `sizeof(struct ifreq)` on 64-bit Linux (x86_64 and aarch64). */
export const IFREQ_BYTES = 40;
/** Offset of the union in `struct ifreq`, whose `ifr_data` is a pointer. */
export const IFREQ_DATA_OFFSET = 16;

/**
 * `struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask;
 * u32 data[]; }`: byte offsets, and the size with one `data` entry (one
 * set asked for).
 */
export const SsetInfo = {
  CMD: 0,
  MASK: 8,
  DATA: 16,
  BYTES_ONE_SET: 20,
} as const;

/** `struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }`. */
export const Gstrings = { CMD: 0, STRING_SET: 4, LEN: 8, DATA: 12 } as const;

/** `struct ethtool_stats { u32 cmd; u32 n_stats; u64 data[]; }`. */
export const Gstats = { CMD: 0, N_STATS: 4, DATA: 8 } as const;

/** `AF_INET`, `SOCK_DGRAM` and `SOCK_CLOEXEC` on Linux (x86_64 and aarch64). */
export const AF_INET = 2;
export const SOCK_DGRAM = 2;
export const SOCK_CLOEXEC = 0o2000000;

/** `mmap` and `sysconf` constants on Linux (x86_64 and aarch64). */
export const Mmap = {
  PROT_NONE: 0,
  PROT_READ_WRITE: 0x1 | 0x2,
  MAP_PRIVATE_ANONYMOUS: 0x02 | 0x20,
  SC_PAGESIZE: 30,
} as const;

/** The `errno` values the reader tells apart (Linux, asm-generic). */
export const Errno = {
  EPERM: 1,
  EFAULT: 14,
  ENODEV: 19,
  EINVAL: 22,
  EOPNOTSUPP: 95,
} as const;

/** The symbols of libc the ethtool reader binds. */
export const ETHTOOL_SYMBOLS = {
  /** `int socket(int domain, int type, int protocol)`. */
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  /**
   * `int ioctl(int fd, unsigned long request, ...)`, called with one
   * pointer: variadic, but on x86_64 and aarch64 Linux a pointer passed
   * after the fixed arguments travels as a fixed one would.
   */
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  /** `int close(int fd)`. */
  close: { parameters: ["i32"], result: "i32" },
  /** `int *__errno_location(void)`: the calling thread's `errno` (glibc). */
  __errno_location: { parameters: [], result: "pointer" },
  /** `char *strerror(int errnum)`. */
  strerror: { parameters: ["i32"], result: "pointer" },
  /** `void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)`. */
  mmap: {
    parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"],
    result: "pointer",
  },
  /** `int mprotect(void *addr, size_t len, int prot)`. */
  mprotect: { parameters: ["pointer", "usize", "i32"], result: "i32" },
  /** `int munmap(void *addr, size_t length)`. */
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  /** `long sysconf(int name)`. */
  sysconf: { parameters: ["i32"], result: "i64" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc bound with {@linkcode ETHTOOL_SYMBOLS}. */
export type EthtoolLibc = Deno.DynamicLibrary<typeof ETHTOOL_SYMBOLS>;

/** Opens libc with {@linkcode ETHTOOL_SYMBOLS}; the caller closes it. */
export function openEthtoolLibc(): EthtoolLibc {
  return Deno.dlopen(LIBC_SONAME, ETHTOOL_SYMBOLS);
}

/**
 * `name` as the NUL-terminated bytes of `ifr_name`, or null when it cannot
 * be one: empty, longer than `IFNAMSIZ - 1` bytes, or holding a NUL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ifName } from "./ethtool.ts";
 *
 * assert.deepEqual(ifName("eth0"), new Uint8Array([101, 116, 104, 48, 0]));
 * assert.equal(ifName("a-name-of-16-bytes"), null);
 * ```
 */
export function ifName(name: string): Uint8Array | null {
  const bytes = new TextEncoder().encode(name);
  if (bytes.length === 0 || bytes.length >= IFNAMSIZ || bytes.includes(0)) {
    return null;
  }
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/**
 * Fills a `struct ifreq` (`IFREQ_BYTES` long): `name` (from
 * {@linkcode ifName}) at offset 0, the rest zero, and `ifr_data` set to
 * `dataAddress`, memory that must stay where it is for as long as the
 * ifreq is used (a {@linkcode GuardedBuffer}'s).
 */
export function fillIfreq(
  ifreq: Uint8Array,
  name: Uint8Array,
  dataAddress: bigint,
): void {
  if (ifreq.length !== IFREQ_BYTES) {
    throw new RangeError(`an ifreq is ${IFREQ_BYTES} bytes`);
  }
  ifreq.fill(0);
  ifreq.set(name);
  new DataView(ifreq.buffer, ifreq.byteOffset, IFREQ_BYTES).setBigUint64(
    IFREQ_DATA_OFFSET,
    dataAddress,
    LITTLE_ENDIAN,
  );
}

/** Memory of {@linkcode mapGuarded}: usable bytes, then a page no one may touch. */
export interface GuardedBuffer {
  /** The usable bytes (at least those asked for), over memory libc mapped. */
  readonly buffer: ArrayBuffer;
  /** Where `buffer` starts, for `ifr_data`. */
  readonly address: bigint;
  /** Gives the memory back; `buffer` must not be touched afterwards. */
  unmap(): void;
}

/**
 * At least `bytes` of zeroed memory, mapped with `mmap`, followed by one
 * page mapped with no access. The kernel answers `ETHTOOL_GSTRINGS` and
 * `ETHTOOL_GSTATS` with as many entries as the driver has now, whatever
 * the buffer's header says, so a driver whose set grew since it was
 * measured writes past the end: into this page, where the copy fails with
 * `EFAULT`, rather than over whatever the process keeps next.
 */
export function mapGuarded(libc: EthtoolLibc, bytes: number): GuardedBuffer {
  const page = Number(libc.symbols.sysconf(Mmap.SC_PAGESIZE));
  if (!(page > 0)) throw new Error("sysconf(_SC_PAGESIZE) failed");
  const usable = Math.max(page, Math.ceil(bytes / page) * page);
  const base = libc.symbols.mmap(
    null,
    BigInt(usable + page),
    Mmap.PROT_READ_WRITE,
    Mmap.MAP_PRIVATE_ANONYMOUS,
    -1,
    0n,
  );
  const address = BigInt(Deno.UnsafePointer.value(base));
  if (base === null || address === MAP_FAILED) {
    throw new Error(`mmap of ${usable + page} bytes failed`);
  }
  const guard = Deno.UnsafePointer.create(address + BigInt(usable));
  if (libc.symbols.mprotect(guard, BigInt(page), Mmap.PROT_NONE) !== 0) {
    libc.symbols.munmap(base, BigInt(usable + page));
    throw new Error("mprotect of the guard page failed");
  }
  const buffer = Deno.UnsafePointerView.getArrayBuffer(base, usable);
  let mapped = true;
  return {
    buffer,
    address,
    unmap() {
      if (!mapped) return;
      mapped = false;
      libc.symbols.munmap(base, BigInt(usable + page));
    },
  };
}

/** `MAP_FAILED`, `(void *) -1`, as an address. */
const MAP_FAILED = 0xffff_ffff_ffff_ffffn;

/**
 * The names of an `ETHTOOL_GSTRINGS` answer: `count` entries of
 * `ETH_GSTRING_LEN` bytes from `data` (the bytes after the header), each up
 * to its first NUL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeNames, ETH_GSTRING_LEN } from "./ethtool.ts";
 *
 * const data = new Uint8Array(2 * ETH_GSTRING_LEN);
 * data.set(new TextEncoder().encode("rx_packets"), 0);
 * data.set(new TextEncoder().encode("tx_packets"), ETH_GSTRING_LEN);
 * assert.deepEqual(decodeNames(data, 2), ["rx_packets", "tx_packets"]);
 * ```
 */
export function decodeNames(data: Uint8Array, count: number): string[] {
  if (data.length < count * ETH_GSTRING_LEN) {
    throw new RangeError(
      `${count} names need ${
        count * ETH_GSTRING_LEN
      } bytes, not ${data.length}`,
    );
  }
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * ETH_GSTRING_LEN;
    names.push(cStringFromBuffer(data.subarray(at, at + ETH_GSTRING_LEN)));
  }
  return names;
}

/** Whether this machine stores a u64 low half first (every target we build). */
export const LITTLE_ENDIAN =
  new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
