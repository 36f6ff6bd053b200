import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, runMain } from "./cli_util.ts";
import {
  canMakeNamespaces,
  denoIn,
  run,
  type VethEnd,
  type VethPair,
  withVethPair,
} from "./netns.ts";
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
    "the agent on a veth's kernel counters: a burst of datagrams starts its rule, and its rows and /metrics are the kernel's own",
  ignore: !canMakeNamespaces(), // not root, or no iproute2: nothing to make a pair with
  async fn() {
    let kernel: number[] = [];
    const { stdout, log } = await withKernelAgent(
      `    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
      - { name: rx_bytes, data_id: "netdev:rx_bytes" }
    rules:
      # Nothing else crosses the pair: any packet in a 10 ms sample is ours.
      - name: packets in
        increase: rx_packets
        above: 0
`,
      async ({ pair: { a, b }, log }) => {
        // The rule needs a sample before the burst: the first has no
        // increase.
        await until(
          "a sample",
          () => monitorMetric(scrape(b.namespace), "samples_total") > 0,
        );
        await sendBurst(a, b);
        // The rule ends on the first sample without packets, once the
        // kernel has counted every datagram.
        await until(
          "the rule to end after the burst",
          () => /<<Event end>>.*"packets in"/.test(Deno.readTextFileSync(log)),
        );
        // A window that ended after the burst serves the kernel's count.
        let metrics = "";
        await until("a window ending after the burst", () => {
          metrics = scrape(b.namespace);
          return metric(metrics, "column_total", "rx_packets") === COUNT;
        });
        assert.equal(
          metric(metrics, "column_total", "rx_bytes"),
          COUNT * FRAME,
        );
        assert.equal(
          metric(metrics, "rule_activations_total", undefined, "packets in"),
          1,
        );
        // The kernel's own counters of b, read in b's namespace.
        const dev = await run(
          "ip",
          "netns",
          "exec",
          b.namespace,
          "cat",
          "/proc/net/dev",
        );
        kernel = dev.split("\n").find((l) =>
          l.trim().startsWith(`${b.interface}:`)
        )!.split(":")[1].trim().split(/\s+/).map(Number);
      },
      ["--metrics-window", "1"],
    );
    const [rxBytes, rxPackets] = kernel;
    assert.equal(rxPackets, COUNT);
    assert.equal(rxBytes, COUNT * FRAME);
    // The last row the agent wrote, during the event, holds them all.
    assert.match(log, /^\tDevice: "kernel /m);
    assert.match(log, /^\tMonitor: "veth"$/m);
    const rows = log.split("\n").filter((l) => /^\d+, \d+, \d+$/.test(l));
    const last = rows.at(-1)!.split(", ").map(Number);
    assert.deepEqual(last.slice(1), [COUNT, COUNT * FRAME]);
    // The closing table names the event, with the burst as its peak.
    assert.match(
      stdout,
      /^veth +packets in +\S+ \S+ +\S+( \S+)? +\d+ +\d+ +warning$/m,
    );
  },
});

/**
 * Runs the agent in `b`'s namespace of a new veth pair with one kernel
 * monitor, `veth`, on `b` (`monitor`: its columns and rules, as YAML under
 * the monitor), calls `during` while it runs, then stops it with SIGTERM
 * (SIGKILL when `during` threw) and checks that it exited 0. Returns what
 * it printed and its events.log.
 */
async function withKernelAgent(
  monitor: string,
  during: (
    run: { pair: VethPair; agent: Deno.ChildProcess; log: string },
  ) => Promise<void>,
  extra: readonly string[] = [],
): Promise<{ stdout: string; stderr: string; log: string }> {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  return await withVethPair(async (pair) => {
    const config = join(dir.path, "kernel.yaml");
    await Deno.writeTextFile(
      config,
      `monitors:
  - name: veth
    source: kernel
    device: ${pair.b.interface}
    event_log: ${JSON.stringify(log)}
${monitor}`,
    );
    const agent = startAgent(pair.b.namespace, config, extra);
    const output = agent.output();
    let stopped = false;
    try {
      await during({ pair, agent, log });
      agent.kill("SIGTERM");
      stopped = true;
    } finally {
      if (!stopped) agent.kill("SIGKILL");
    }
    const { code, stdout, stderr } = await output;
    const text = new TextDecoder();
    assert.equal(code, 0, text.decode(stderr));
    return {
      stdout: text.decode(stdout),
      stderr: text.decode(stderr),
      log: await Deno.readTextFile(log),
    };
  });
}

/** /metrics, fetched from inside `namespace`, where the agent listens. */
function scrape(namespace: string): string {
  const output = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      namespace,
      Deno.execPath(),
      "eval",
      "console.log(await (await fetch('http://127.0.0.1:9477/metrics')).text())",
    ],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  return output.success ? new TextDecoder().decode(output.stdout) : "";
}

/**
 * The agent with `config` in `namespace`, listening there on 127.0.0.1:9477
 * (the namespace is its own: no other listener to meet).
 */
function startAgent(
  namespace: string,
  config: string,
  extra: readonly string[] = [],
): Deno.ChildProcess {
  return denoIn(namespace, [
    join(ROOT, "main.ts"),
    "run",
    "--config",
    config,
    "--listen",
    "127.0.0.1:9477",
    ...extra,
  ], { stdout: "piped", stderr: "piped" }).spawn();
}

/** Sends COUNT datagrams of PAYLOAD bytes from `a` to `b`, as fast as it can. */
function sendBurst(a: VethEnd, b: VethEnd): Promise<string> {
  return run(
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
}

/** A monitor-wide sample's value in exposition `text` (NaN if absent). */
function monitorMetric(text: string, name: string): number {
  return Number(
    text.match(new RegExp(`^dpu_traceback_${name}\\{[^}]*\\} (\\S+)$`, "m"))
      ?.[1],
  );
}

/** A sample's value in exposition `text`, or undefined. */
function metric(
  text: string,
  name: string,
  column?: string,
  rule?: string,
): number | undefined {
  const label = column !== undefined ? `column="${column}"` : `rule="${rule}"`;
  const line = text.split("\n").find((l) =>
    l.startsWith(`dpu_traceback_${name}{`) && l.includes(label)
  );
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

Deno.test("check-config opens a kernel monitor's device as run does: a counter it lacks is one line, exit 2", async () => {
  await using dir = await tempDir();
  const config = join(dir.path, "lo.yaml");
  const write = (dataId: string, device = "device: lo") =>
    Deno.writeTextFile(
      config,
      `monitors:
  - name: loop
    source: kernel
    ${device}
    columns:
      - { name: rx, data_id: "${dataId}" }
`,
    );
  await write("netdev:rx_bytes");
  const ok = await runMain(["check-config", config]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(
    ok.stdout,
    /^monitor loop: lo is here and offers all 1 of its counters$/m,
  );
  await write("netdev:rx_bytez");
  const bad = await runMain(["check-config", config]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr.trim(),
    'dpu-traceback: Cannot read column "rx" (netdev:rx_bytez) of lo: lo has no netdev counter rx_bytez; did you mean rx_bytes, tx_bytes?',
  );
  // No device in the file: -d gives it at run, and the check says so.
  await write("netdev:rx_bytes", "");
  const later = await runMain(["check-config", config]);
  assert.equal(later.code, 0, later.stderr);
  assert.match(
    later.stdout,
    /^monitor loop: the device comes from -d at run; its counters are checked then$/m,
  );
});

Deno.test({
  name:
    "a sample made late by a stopped agent loses nothing: no gap, no unknown window, and the burst across the delay starts both its rules",
  ignore: !canMakeNamespaces(),
  async fn() {
    const { stderr, log } = await withKernelAgent(
      `    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
    rules:
      # Per sample: the late sample holds the whole burst.
      - name: burst
        increase: rx_packets
        above: ${COUNT / 2}
      # Over a window much shorter than the delay: the rate spans the
      # late sample's true interval, so it is known, and averaged.
      - name: burst rate
        rate: rx_packets
        window: 20ms
        above: 1/s
`,
      async ({ pair: { a, b }, agent, log }) => {
        await until(
          "some samples",
          () => monitorMetric(scrape(b.namespace), "samples_total") > 10,
        );
        // Every thread of the agent stops; the kernel goes on counting.
        agent.kill("SIGSTOP");
        try {
          await sendBurst(a, b);
        } finally {
          agent.kill("SIGCONT");
        }
        await until(
          "both rules to end after the burst",
          () => {
            const text = Deno.readTextFileSync(log);
            return /<<Event end>>.*"burst"/.test(text) &&
              /<<Event end>>.*"burst rate"/.test(text);
          },
        );
        // /metrics publishes what the monitor has, a moment later.
        let metrics = "";
        // The thread hands over its statistics just after its records, so
        // a drain can deliver the late sample a drain (250 ms) before its
        // count: wait for both, on a busy machine too.
        await until("the burst and its late sample on /metrics", () => {
          metrics = scrape(b.namespace);
          return metric(
                metrics,
                "rule_activations_total",
                undefined,
                "burst rate",
              ) === 1 &&
            monitorMetric(metrics, "source_late_samples_total") >= 1;
        });
        assert.equal(monitorMetric(metrics, "lost_samples_total"), 0);
        assert.ok(
          monitorMetric(metrics, "source_late_samples_total") >= 1,
          metrics,
        );
        assert.equal(
          metric(metrics, "rule_activations_total", undefined, "burst"),
          1,
        );
        assert.equal(
          metric(metrics, "rule_activations_total", undefined, "burst rate"),
          1,
        );
      },
    );
    assert.doesNotMatch(log, /<<Gap>>/);
    // The warning names the cause: woken late, not slow reads.
    assert.match(
      stderr,
      /a sample came late: the sampler thread was woken \S+ \S* ?late/,
    );
  },
});

Deno.test({
  name:
    "a device deleted under the agent and made again is one blind period: one gap line whose count fits its span, and the same on /metrics",
  ignore: !canMakeNamespaces(),
  async fn() {
    let metrics = "";
    const { log } = await withKernelAgent(
      `    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
`,
      async ({ pair }) => {
        const { b } = pair;
        await until("some samples", () => {
          metrics = scrape(b.namespace);
          return monitorMetric(metrics, "samples_total") > 10;
        });
        await run("ip", "-n", b.namespace, "link", "del", b.interface);
        await until("the fault on /metrics", () => {
          metrics = scrape(b.namespace);
          return monitorMetric(metrics, "source_up") === 0;
        });
        // As a driver reload leaves it: the same name, a new ifindex.
        await run(
          "ip",
          "netns",
          "exec",
          b.namespace,
          Deno.execPath(),
          "eval",
          `import { remakeVethPair } from ${
            JSON.stringify(join(ROOT, "tests/netns.ts"))
          }; await remakeVethPair(${JSON.stringify(pair)});`,
        );
        await until("samples after the gap, on /metrics", () => {
          metrics = scrape(b.namespace);
          return monitorMetric(metrics, "blind_periods_total") === 1 &&
            monitorMetric(metrics, "source_up") === 1;
        });
      },
    );
    const gaps = log.split("\n").filter((l) => l.startsWith("<<Gap>>"));
    assert.equal(gaps.length, 1, gaps.join("\n"));
    const [, lost, from, to] = gaps[0].match(
      /^<<Gap>> Time: \S+, Dropped samples: (\d+), From: (\S+), To: (\S+)$/,
    )!;
    assert.equal(Number(lost), monitorMetric(metrics, "lost_samples_total"));
    // Every period between the last sample before and the first after
    // is a lost sample, and no more than fit between them.
    const spanMs = Date.parse(to) - Date.parse(from);
    assert.ok(Number(lost) >= 1, gaps[0]);
    assert.ok(Number(lost) <= Math.floor(spanMs / 10), gaps[0]);
  },
});
