/**
 * The kernel source's ethtool columns against the real `ethtool -S`: on a
 * veth end in a network namespace, after a known number of datagrams,
 * every statistic the tool lists is a column, and at a quiet moment each
 * column equals the tool's value exactly.
 *
 * Needs Debian's `ethtool` (`apt-get install ethtool`); without it the
 * test fails, naming the package, rather than skip: `.ci/run` installs it
 * before this suite (a fresh machine has no ethtool, so the test lives
 * here and not in `deno task test`). It also needs root and iproute2 for
 * the namespaces, and is ignored without them, as the other netns tests
 * are. Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { tool } from "../deploy_util.ts";
import { canMakeNamespaces, childReport, run, withVethPair } from "../netns.ts";

const CHILD = new URL("./ethtool_test_child.ts", import.meta.url).pathname;
const COUNT = 40;
const PAYLOAD = 100;

/** `ethtool -S` output as name to value, in the tool's order. */
function parseEthtoolS(text: string): Map<string, bigint> {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  assert.equal(lines[0], "NIC statistics:", text);
  const stats = new Map<string, bigint>();
  for (const line of lines.slice(1)) {
    const match = /^\s+(\S(?:.*\S)?):\s+(\d+)$/.exec(line);
    assert.ok(match, `not an ethtool -S line: ${JSON.stringify(line)}`);
    stats.set(match[1], BigInt(match[2]));
  }
  return stats;
}

Deno.test({
  name:
    "on a veth end after a burst of datagrams, every ethtool column equals `ethtool -S` exactly (needs ethtool, root and network namespaces)",
  ignore: !canMakeNamespaces(),
  async fn() {
    const ethtool = tool("ethtool", "ethtool");
    await withVethPair(async ({ a, b }) => {
      // veth counts received packets in its queue statistics only on its
      // NAPI path: GRO on at b, and TSO off at a so that a datagram is
      // eligible for it.
      await run(
        "ip",
        "netns",
        "exec",
        a.namespace,
        ethtool,
        "-K",
        a.interface,
        "tso",
        "off",
      );
      await run(
        "ip",
        "netns",
        "exec",
        b.namespace,
        ethtool,
        "-K",
        b.interface,
        "gro",
        "on",
      );
      const names = [
        ...parseEthtoolS(
          await run(
            "ip",
            "netns",
            "exec",
            b.namespace,
            ethtool,
            "-S",
            b.interface,
          ),
        ).keys(),
      ];
      assert.ok(names.includes("rx_queue_0_xdp_packets"), names.join(", "));
      const report = await childReport(b.namespace, CHILD, {
        a,
        b,
        ethtool,
        names,
        count: COUNT,
        payload: PAYLOAD,
      }, 20_000);
      assert.equal(report.faults, 0);
      const before = parseEthtoolS(report.ethtoolBefore);
      const after = parseEthtoolS(report.ethtoolAfter);
      // Quiet: the tool said the same before and after the record.
      assert.deepEqual(after, before);
      const agent = new Map(
        names.map((name, k) => [name, BigInt(report.record[k])]),
      );
      assert.deepEqual(agent, before);
      // The comparison is not of zeros only: the burst is in the columns.
      const k = names.indexOf("rx_queue_0_xdp_packets");
      assert.equal(
        BigInt(report.record[k]) - BigInt(report.first[k]),
        BigInt(COUNT),
      );
    });
  },
});
