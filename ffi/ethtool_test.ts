import assert from "node:assert/strict";
import {
  AF_INET,
  decodeNames,
  ETH_GSTRING_LEN,
  ETH_SS_STATS,
  ETHTOOL_GSSET_INFO,
  ETHTOOL_GSTATS,
  ETHTOOL_GSTRINGS,
  fillIfreq,
  Gstats,
  Gstrings,
  ifName,
  IFNAMSIZ,
  IFREQ_BYTES,
  IFREQ_DATA_OFFSET,
  mapGuarded,
  Mmap,
  openEthtoolLibc,
  SIOCETHTOOL,
  SOCK_CLOEXEC,
  SOCK_DGRAM,
  SsetInfo,
} from "./ethtool.ts";
import { canMakeNamespaces, withVethPair } from "../tests/netns.ts";

Deno.test("ifName: up to 15 bytes and a NUL; nothing else is a name", () => {
  assert.deepEqual(ifName("va"), new Uint8Array([118, 97, 0]));
  assert.equal(ifName("fifteen-bytes-x")!.length, 16);
  assert.equal(ifName("sixteen-bytes-xx"), null);
  assert.equal(ifName(""), null);
  assert.equal(ifName("a\0b"), null);
});

Deno.test("fillIfreq: the name at 0, zeros after it, ifr_data at 16", () => {
  const ifreq = new Uint8Array(IFREQ_BYTES).fill(0xff);
  fillIfreq(ifreq, ifName("eth0")!, 0x1122_3344_5566_7788n);
  assert.deepEqual([...ifreq.subarray(0, 16)], [
    ...new TextEncoder().encode("eth0"),
    ...new Array(12).fill(0),
  ]);
  assert.equal(
    new DataView(ifreq.buffer).getBigUint64(IFREQ_DATA_OFFSET, true),
    0x1122_3344_5566_7788n,
  );
  assert.deepEqual([...ifreq.subarray(24)], new Array(16).fill(0));
  assert.throws(() => fillIfreq(new Uint8Array(32), ifName("x")!, 0n));
});

Deno.test("decodeNames: 32-byte slots, each up to its first NUL, the full 32 without one", () => {
  const data = new Uint8Array(3 * ETH_GSTRING_LEN);
  data.set(new TextEncoder().encode("peer_ifindex"), 0);
  data.set(new TextEncoder().encode("x".repeat(32)), ETH_GSTRING_LEN);
  data.set(new TextEncoder().encode("b\0junk"), 2 * ETH_GSTRING_LEN);
  assert.deepEqual(decodeNames(data, 3), ["peer_ifindex", "x".repeat(32), "b"]);
  assert.throws(() => decodeNames(data, 4), RangeError);
});

Deno.test("mapGuarded: zeroed, page-sized, at the address it reports; unmap is idempotent", () => {
  const libc = openEthtoolLibc();
  try {
    const mapped = mapGuarded(libc, 100);
    assert.ok(mapped.buffer.byteLength >= 100);
    assert.equal(mapped.buffer.byteLength % 4096, 0);
    assert.ok(new Uint8Array(mapped.buffer).every((byte) => byte === 0));
    assert.equal(
      BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(mapped.buffer))),
      mapped.address,
    );
    mapped.unmap();
    mapped.unmap();
  } finally {
    libc.close();
  }
});

const CC = (() => {
  try {
    return new Deno.Command("cc", { args: ["--version"], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name:
    "every constant and offset agrees with the machine's own headers (cc and linux-libc-dev)",
  ignore: Deno.build.os !== "linux" || !CC,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "ethtool-abi-" });
    try {
      await Deno.writeTextFile(
        `${dir}/abi.c`,
        `#include <stdio.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#define P(name, value) printf("\\"%s\\": %ld,\\n", name, (long)(value))
int main(void) {
  printf("{\\n");
  P("SIOCETHTOOL", SIOCETHTOOL);
  P("ETHTOOL_GSSET_INFO", ETHTOOL_GSSET_INFO);
  P("ETHTOOL_GSTRINGS", ETHTOOL_GSTRINGS);
  P("ETHTOOL_GSTATS", ETHTOOL_GSTATS);
  P("ETH_SS_STATS", ETH_SS_STATS);
  P("ETH_GSTRING_LEN", ETH_GSTRING_LEN);
  P("IFNAMSIZ", IFNAMSIZ);
  P("IFREQ_BYTES", sizeof(struct ifreq));
  P("IFREQ_DATA_OFFSET", offsetof(struct ifreq, ifr_data));
  P("SSET_MASK", offsetof(struct ethtool_sset_info, sset_mask));
  P("SSET_DATA", offsetof(struct ethtool_sset_info, data));
  P("GSTRINGS_STRING_SET", offsetof(struct ethtool_gstrings, string_set));
  P("GSTRINGS_LEN", offsetof(struct ethtool_gstrings, len));
  P("GSTRINGS_DATA", offsetof(struct ethtool_gstrings, data));
  P("GSTATS_N_STATS", offsetof(struct ethtool_stats, n_stats));
  P("GSTATS_DATA", offsetof(struct ethtool_stats, data));
  P("AF_INET", AF_INET);
  P("SOCK_DGRAM", SOCK_DGRAM);
  P("SOCK_CLOEXEC", SOCK_CLOEXEC);
  P("PROT_READ_WRITE", PROT_READ | PROT_WRITE);
  P("PROT_NONE", PROT_NONE);
  P("MAP_PRIVATE_ANONYMOUS", MAP_PRIVATE | MAP_ANONYMOUS);
  P("SC_PAGESIZE", _SC_PAGESIZE);
  printf("\\"end\\": 0}\\n");
  return 0;
}
`,
      );
      const built = await new Deno.Command("cc", {
        args: ["-o", `${dir}/abi`, `${dir}/abi.c`],
        stderr: "piped",
      }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
      const out = await new Deno.Command(`${dir}/abi`).output();
      const c = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.deepEqual(
        {
          SIOCETHTOOL,
          ETHTOOL_GSSET_INFO,
          ETHTOOL_GSTRINGS,
          ETHTOOL_GSTATS,
          ETH_SS_STATS,
          ETH_GSTRING_LEN,
          IFNAMSIZ,
          IFREQ_BYTES,
          IFREQ_DATA_OFFSET,
          SSET_MASK: SsetInfo.MASK,
          SSET_DATA: SsetInfo.DATA,
          GSTRINGS_STRING_SET: Gstrings.STRING_SET,
          GSTRINGS_LEN: Gstrings.LEN,
          GSTRINGS_DATA: Gstrings.DATA,
          GSTATS_N_STATS: Gstats.N_STATS,
          GSTATS_DATA: Gstats.DATA,
          AF_INET,
          SOCK_DGRAM,
          SOCK_CLOEXEC,
          PROT_READ_WRITE: Mmap.PROT_READ_WRITE,
          PROT_NONE: Mmap.PROT_NONE,
          MAP_PRIVATE_ANONYMOUS: Mmap.MAP_PRIVATE_ANONYMOUS,
          SC_PAGESIZE: Mmap.SC_PAGESIZE,
          end: 0,
        },
        c,
      );
      assert.equal(SsetInfo.BYTES_ONE_SET, SsetInfo.DATA + 4);
      assert.equal(SsetInfo.CMD, 0);
      assert.equal(Gstrings.CMD, 0);
      assert.equal(Gstats.CMD, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a GSTATS answer longer than its buffer stops at the guard page (EFAULT), not in the heap (network namespace)",
  ignore: !canMakeNamespaces(),
  async fn() {
    await withVethPair(async ({ a }) => {
      const ffi = new URL("./ethtool.ts", import.meta.url).href;
      // veth has 10 statistics; the buffer ends (at the guard page) after
      // the header and 5 of them. Asked for "all of them" (n_stats 0), the
      // kernel writes 10 and the copy faults at the guard page. Asked for
      // 5, a kernel with the December 2025 fix answers "0, and no data";
      // one without it writes all 10 and faults likewise.
      const probe = `
        import * as E from ${JSON.stringify(ffi)};
        const libc = E.openEthtoolLibc();
        const fd = libc.symbols.socket(E.AF_INET, E.SOCK_DGRAM, 0);
        const errno = new Deno.UnsafePointerView(libc.symbols.__errno_location());
        const mapped = E.mapGuarded(libc, 64);
        const end = mapped.address + BigInt(mapped.buffer.byteLength);
        const start = end - BigInt(E.Gstats.DATA + 5 * 8);
        const words = new Uint32Array(mapped.buffer, Number(start - mapped.address));
        const ifreq = new Uint8Array(E.IFREQ_BYTES);
        E.fillIfreq(ifreq, E.ifName(${JSON.stringify(a.interface)}), start);
        const call = (asked) => {
          words.fill(0);
          words[0] = E.ETHTOOL_GSTATS;
          words[1] = asked;
          const result = libc.symbols.ioctl(fd, E.SIOCETHTOOL_REQUEST, ifreq);
          return { result, errno: result < 0 ? errno.getInt32() : 0, nStats: words[1] };
        };
        console.log(JSON.stringify({ all: call(0), five: call(5), ten: call(10) }));
      `;
      const output = await new Deno.Command("ip", {
        args: ["netns", "exec", a.namespace, Deno.execPath(), "eval", probe],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      const { all, five, ten } = JSON.parse(
        new TextDecoder().decode(output.stdout),
      );
      const faulted = { result: -1, errno: 14, nStats: 10 }; // EFAULT
      assert.deepEqual(all, faulted);
      assert.deepEqual(ten, faulted);
      const fixed = { result: 0, errno: 0, nStats: 0 };
      assert.ok(
        [JSON.stringify(fixed), JSON.stringify(faulted)].includes(
          JSON.stringify(five),
        ),
        JSON.stringify(five),
      );
    });
  },
});
