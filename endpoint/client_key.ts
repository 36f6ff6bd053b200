/**
 * Who a connection or request is counted against, for the endpoint's
 * per-client limits.
 *
 * @module
 */

/**
 * The key a client is counted under: the IPv4 address; for IPv6 its /64
 * (one host often has a whole /64 and could otherwise take every place by
 * changing address), except IPv4-mapped addresses, which count as the IPv4
 * address; `local` for Unix sockets and requests with no address.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientKey } from "./client_key.ts";
 *
 * const tcp = (hostname: string): Deno.NetAddr => ({ transport: "tcp", hostname, port: 1 });
 * assert.equal(clientKey(tcp("192.0.2.7")), "192.0.2.7");
 * assert.equal(clientKey(tcp("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
 * assert.equal(clientKey(tcp("::ffff:192.0.2.7")), "192.0.2.7");
 * assert.equal(clientKey(undefined), "local");
 * ```
 */
export function clientKey(addr: Deno.Addr | undefined): string {
  if (addr === undefined || !("hostname" in addr)) return "local";
  const host = addr.hostname;
  if (!host.includes(":")) return host;
  const groups = ipv6Groups(host);
  if (groups === undefined) return host;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255]
      .join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, or undefined if malformed. */
function ipv6Groups(host: string): number[] | undefined {
  // The zone (`%eth0`) is dropped; a dotted IPv4 tail becomes two groups.
  let text = host.replace(/%.*$/, "");
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4 !== null) {
    const b = v4.slice(1).map(Number);
    if (b.some((x) => x > 255)) return undefined;
    text = text.slice(0, v4.index) +
      `${((b[0] << 8) | b[1]).toString(16)}:${
        ((b[2] << 8) | b[3]).toString(16)
      }`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const split = (s: string) => s === "" ? [] : s.split(":");
  const head = split(halves[0]);
  const tail = halves.length === 2 ? split(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array(missing).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}
