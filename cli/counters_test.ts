import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCounters } from "./counters.ts";
import { tempDir } from "../tests/temp_dir.ts";
import {
  buildDocaSim,
  simCounterValue,
} from "../tests/fixtures/libdoca_sim/build.ts";

const FIXTURE = fileURLToPath(
  new URL("../tests/fixtures/sysfs", import.meta.url),
);

async function counters(args: string[], root?: string) {
  let out = "";
  const errors: string[] = [];
  const code = await runCounters(args, {
    out: (text) => out += text,
    error: (message) => errors.push(message),
  }, { root });
  return { code, out, errors };
}

Deno.test("counters -d lists each source with its data IDs and values, ready to paste into a column", async () => {
  const { code, out, errors } = await counters(["-d", "mlx5_0"], FIXTURE);
  assert.deepEqual([code, errors], [0, []]);
  const lines = out.split("\n");
  assert.equal(lines[0], "mlx5_0: no interface, RDMA mlx5_0 port 1");
  assert.match(
    out,
    /\nkernel rdma mlx5_0 port 1 \(RDMA hw_counters\): 5 counters; one read of all 5 takes [0-9.]+ [nµm]?s here; the kernel serves the same values for 10 ms \(hw_counters\/lifespan\)\n/,
  );
  assert.ok(
    lines.includes("  rdma:np_cnp_sent                 9007199254740993"),
  );
  assert.ok(lines.includes("  ib:port_xmit_wait   18446744073709551614"));
  assert.match(
    out,
    /\nkernel ib mlx5_0 port 1 \(InfiniBand port counters\): 5 counters; one read of all 5 takes [^;]+ here; each file read is a management query to the port\n/,
  );
});

Deno.test("counters --json gives the same, values as exact decimal strings", async () => {
  const { code, out } = await counters(
    ["-d", "mlx5_0", "--json", "--source", "kernel"],
    FIXTURE,
  );
  assert.equal(code, 0);
  const json = JSON.parse(out);
  assert.deepEqual(Object.keys(json), ["kernel"]);
  assert.deepEqual(json.kernel.device, {
    name: "mlx5_0",
    pci: null,
    interfaces: [],
    rdma: [{ name: "mlx5_0", ports: [1] }],
  });
  const [rdma] = json.kernel.sources;
  assert.deepEqual(
    [rdma.kind, rdma.owner, rdma.lifespan_ms],
    ["rdma", "mlx5_0 port 1", 10],
  );
  assert.ok(Number.isInteger(rdma.read_ns) && rdma.read_ns >= 0);
  assert.deepEqual(rdma.counters[1], {
    data_id: "rdma:np_cnp_sent",
    value: "9007199254740993",
  });
});

/** Runs `fn` with `vars` in the environment, then puts it back. */
async function withEnv<T>(
  vars: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  const before = Object.entries(vars).map(([k]) => [k, Deno.env.get(k)]);
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    return await fn();
  } finally {
    for (const [k, v] of before) {
      v === undefined ? Deno.env.delete(k!) : Deno.env.set(k!, v);
    }
  }
}

Deno.test("counters lists the DOCA counters by name as the device supports them, with their values; the kernel's beside them", async () => {
  const sim = await buildDocaSim();
  try {
    const { code, out, errors } = await withEnv({
      DOCA_SIM_DEVICES:
        "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0s0,unsupported=0x1020000600000300",
    }, () => counters(["-d", "mlx5_0", "--doca-lib-dir", sim.dir], FIXTURE));
    assert.deepEqual([code, errors], [0, []]);
    const doca = out.slice(out.indexOf("\ndoca ") + 1).split("\n");
    assert.match(
      doca[0],
      /^doca 0000:03:00\.0 \(mlx5_0, p0s0\) \(Telemetry Diag\): 116 known counters \(ports 0 and 1\); 115 supported; one read of 64 takes [^;]+ here; the device samples at most 64 data IDs at once; 51 left unread$/,
    );
    const row = (name: string) => doca.find((l) => l.startsWith(`  ${name} `));
    assert.match(
      row("rx_bytes{port=0}")!,
      new RegExp(
        ` 0x1020000100000000  ${simCounterValue(0x1020000100000000n, 0n)}$`,
      ),
    );
    assert.match(
      row("priority_rx_pause_packets{port=0,priority=3}")!,
      / 0x1020000600000300 {2}\(not supported\)$/,
    );
    assert.match(row("global_icmc_miss")!, /\(supported, not read\)$/);
    // The kernel's sources come first, from the same -d.
    assert.ok(out.startsWith("mlx5_0: no interface, RDMA mlx5_0 port 1\n"));
  } finally {
    await sim.cleanup();
  }
});

Deno.test("counters: a DOCA library that cannot say what is supported lists the names unprobed; one that is missing is a reason, exit 1 when nothing else lists", async () => {
  const sim = await buildDocaSim();
  try {
    const unprobed = await withEnv({
      DOCA_SIM_DEVICES: "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0s0",
    }, () =>
      counters([
        "-d",
        "mlx5_0",
        "--source",
        "doca",
        "--json",
        "--doca-lib-dir",
        sim.withoutCheckDataIdDir,
      ]));
    assert.equal(unprobed.code, 0);
    const json = JSON.parse(unprobed.out).doca;
    assert.deepEqual([json.checked, json.read_ns], [false, null]);
    assert.deepEqual(json.counters[0], {
      name: "rx_bytes{port=0}",
      data_id: "0x1020000100000000",
      meaning: "bytes received",
      supported: null,
      value: null,
    });
  } finally {
    await sim.cleanup();
  }
  await using empty = await tempDir();
  const missing = await withEnv(
    { DOCA_LIB_DIR: empty.path },
    () =>
      counters([
        "-d",
        "03:00.0",
        "--source",
        "doca",
        "--doca-lib-dir",
        empty.path,
      ]),
  );
  assert.equal(missing.code, 1);
  assert.equal(missing.out, "");
  assert.equal(missing.errors.length, 1);
  assert.match(
    missing.errors[0],
    /^Cannot start DOCA source: libdoca_common not found \(looked in /,
  );
});

Deno.test("counters: a counter named or valued to move the cursor is shown escaped, not obeyed", async () => {
  await using dir = await tempDir();
  const hw = `${dir.path}/sys/class/infiniband/mlx5_9/ports/1/hw_counters`;
  await Deno.mkdir(hw, { recursive: true });
  await Deno.writeTextFile(`${hw}/evil\x1b[2J`, "1\n");
  await Deno.writeTextFile(`${hw}/worse`, "\x1b]0;owned\x07\n");
  const { code, out } = await counters(["-d", "mlx5_9"], dir.path);
  assert.equal(code, 0);
  assert.ok(!out.includes("\x1b") && !out.includes("\x07"));
  assert.match(out, /rdma:evil\\u001b\[2J +1\n/);
  assert.match(out, /rdma:worse +\(.*not a counter: .*\\u001b\]0;owned\\u0007/);
});

Deno.test("counters: usage errors and a device no source has are one line, exit 2", async () => {
  const cases: [string[], string][] = [
    [
      [],
      "counters needs the device: -d DEVICE. Try 'dpu-traceback counters --help'.",
    ],
    [
      ["-d", "eth0", "extra"],
      "unexpected argument \"extra\". Try 'dpu-traceback counters --help'.",
    ],
    [
      ["-d", "eth0", "--source", "nvml"],
      "--source must be kernel or doca, got \"nvml\". Try 'dpu-traceback counters --help'.",
    ],
    [
      ["-d", "mlx5_7", "--source", "kernel"],
      'Cannot find device "mlx5_7": no interface, RDMA device or PCIe function of that name; did you mean mlx5_0?',
    ],
  ];
  for (const [args, message] of cases) {
    const { code, out, errors } = await counters(args, FIXTURE);
    assert.deepEqual([code, out, errors], [2, "", [message]], args.join(" "));
  }
  const help = await counters(["--help"]);
  assert.equal(help.code, 0);
  assert.ok(help.out.startsWith("Usage:\n  dpu-traceback counters -d DEVICE"));
});
