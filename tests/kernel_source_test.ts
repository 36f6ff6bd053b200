import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./cli_util.ts";
import { canMakeNamespaces, run, withVethPair } from "./netns.ts";
import { tempDir } from "./temp_dir.ts";
import { until } from "./until.ts";

// The agent on the real kernel: a kernel monitor on one end of a veth pair,
// traffic sent from the other end, and what the agent wrote checked
// against the kernel's own counters. Needs root and iproute2 (CI has both).

const COUNT = 40;
const PAYLOAD = 100;
// What veth counts per datagram: Ethernet 14 + IPv4 20 + UDP 8 + payload.
const FRAME = 14 + 20 + 8 + PAYLOAD;

Deno.test({
  name:
    "the agent on a veth's kernel counters: a burst of datagrams starts its rule, and its rows are the kernel's own",
  ignore: !canMakeNamespaces(), // not root, or no iproute2: nothing to make a pair with
  async fn() {
    await using dir = await tempDir();
    const log = join(dir.path, "events.log");
    await withVethPair(async ({ a, b }) => {
      const config = join(dir.path, "kernel.yaml");
      await Deno.writeTextFile(
        config,
        `monitors:
  - name: veth
    source: kernel
    device: ${b.interface}
    event_log: ${JSON.stringify(log)}
    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
      - { name: rx_bytes, data_id: "netdev:rx_bytes" }
    rules:
      # Nothing else crosses the pair: any packet in a 10 ms sample is ours.
      - name: packets in
        increase: rx_packets
        above: 0
`,
      );
      const agent = new Deno.Command("ip", {
        args: [
          "netns",
          "exec",
          b.namespace,
          Deno.execPath(),
          "run",
          "-A",
          join(ROOT, "main.ts"),
          "run",
          "--config",
          config,
          "--listen",
          "off",
        ],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const output = agent.output();
      let stopped = false;
      try {
        // Sampling begins once the log has its header.
        await until("the events log's header", () => {
          try {
            return Deno.statSync(log).size > 0;
          } catch {
            return false;
          }
        });
        await run(
          "ip",
          "netns",
          "exec",
          a.namespace,
          Deno.execPath(),
          "run",
          "-A",
          "--unstable-net",
          join(ROOT, "tests/fixtures/udp_send.ts"),
          a.address,
          b.address,
          "9",
          String(COUNT),
          String(PAYLOAD),
        );
        // The rule ends on the first sample without packets, once the
        // kernel has counted every datagram.
        await until(
          "the rule to end after the burst",
          () => /<<Event end>>.*"packets in"/.test(Deno.readTextFileSync(log)),
        );
        agent.kill("SIGTERM");
        stopped = true;
      } finally {
        if (!stopped) agent.kill("SIGKILL");
      }
      const { code, stdout, stderr } = await output;
      const text = new TextDecoder();
      assert.equal(code, 0, text.decode(stderr));
      // The kernel's own counters of b, read in b's namespace.
      const dev = await run(
        "ip",
        "netns",
        "exec",
        b.namespace,
        "cat",
        "/proc/net/dev",
      );
      const fields = dev.split("\n").find((l) =>
        l.trim().startsWith(`${b.interface}:`)
      )!.split(":")[1].trim().split(/\s+/).map(Number);
      const [rxBytes, rxPackets] = fields;
      assert.equal(rxPackets, COUNT);
      assert.equal(rxBytes, COUNT * FRAME);
      // The last row the agent wrote, during the event, holds them all.
      const body = await Deno.readTextFile(log);
      assert.match(body, /^\tDevice: "kernel /m);
      assert.match(body, /^\tMonitor: "veth"$/m);
      const rows = body.split("\n").filter((l) => /^\d+, \d+, \d+$/.test(l));
      const last = rows.at(-1)!.split(", ").map(Number);
      assert.deepEqual(last.slice(1), [COUNT, COUNT * FRAME]);
      // The closing table names the event, with the burst as its peak.
      assert.match(
        text.decode(stdout),
        /^veth +packets in +\S+ \S+ +\S+( \S+)? +\d+ +\d+ +warning$/m,
      );
    });
  },
});
