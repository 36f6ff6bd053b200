/**
 * What the kernel tests set on a veth with the legacy ethtool ioctls (as
 * root, in its namespace): its offload flags and its receive channels.
 * For tests only: the agent reads ethtool statistics, it sets nothing.
 *
 * @module
 */

import {
  AF_INET,
  fillIfreq,
  ifName,
  IFREQ_BYTES,
  mapGuarded,
  openEthtoolLibc,
  SIOCETHTOOL_REQUEST,
  SOCK_DGRAM,
} from "../../ffi/ethtool.ts";

/** `ETHTOOL_STSO` and `ETHTOOL_SGRO` (`linux/ethtool.h`), `struct ethtool_value`. */
export const ETHTOOL_STSO = 0x1f;
export const ETHTOOL_SGRO = 0x2c;
/** `ETHTOOL_GCHANNELS`, `ETHTOOL_SCHANNELS`; `rx_count` is word 5 of `struct ethtool_channels`. */
const ETHTOOL_GCHANNELS = 0x3c;
const ETHTOOL_SCHANNELS = 0x3d;

/**
 * Runs ethtool commands on `ifname` with a guarded buffer of `bytes`
 * (its words given to `use`), then releases everything.
 */
function withEthtool(
  ifname: string,
  bytes: number,
  use: (
    words: Uint32Array,
    call: (what: string) => void,
  ) => void,
): void {
  const libc = openEthtoolLibc();
  const fd = libc.symbols.socket(AF_INET, SOCK_DGRAM, 0);
  const buffer = mapGuarded(libc, bytes);
  try {
    const ifreq = new Uint8Array(IFREQ_BYTES);
    fillIfreq(ifreq, ifName(ifname)!, buffer.address);
    use(new Uint32Array(buffer.buffer), (what) => {
      if (libc.symbols.ioctl(fd, SIOCETHTOOL_REQUEST, ifreq) < 0) {
        throw new Error(`${what} on ${ifname} failed`);
      }
    });
  } finally {
    buffer.unmap();
    libc.symbols.close(fd);
    libc.close();
  }
}

/** Sets one legacy ethtool feature flag of `ifname` (needs CAP_NET_ADMIN). */
export function setFeature(ifname: string, command: number, on: boolean): void {
  withEthtool(ifname, 8, (words, call) => {
    words[0] = command;
    words[1] = on ? 1 : 0;
    call(`ethtool command ${command}`);
  });
}

/** Sets `ifname`'s receive channels to `rx` (needs CAP_NET_ADMIN). */
export function setRxChannels(ifname: string, rx: number): void {
  withEthtool(ifname, 36, (words, call) => {
    words[0] = ETHTOOL_GCHANNELS;
    call("ETHTOOL_GCHANNELS");
    words[0] = ETHTOOL_SCHANNELS;
    words[5] = rx;
    call("ETHTOOL_SCHANNELS");
  });
}
