import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCounters } from "./counters.ts";
import { tempDir } from "../tests/temp_dir.ts";

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
  const { code, out } = await counters(["-d", "mlx5_0", "--json"], FIXTURE);
  assert.equal(code, 0);
  const json = JSON.parse(out);
  assert.deepEqual(json.device, {
    name: "mlx5_0",
    pci: null,
    interfaces: [],
    rdma: [{ name: "mlx5_0", ports: [1] }],
  });
  const [rdma] = json.sources;
  assert.deepEqual(
    [rdma.source, rdma.kind, rdma.owner, rdma.lifespan_ms],
    ["kernel", "rdma", "mlx5_0 port 1", 10],
  );
  assert.ok(Number.isInteger(rdma.read_ns) && rdma.read_ns >= 0);
  assert.deepEqual(rdma.counters[1], {
    data_id: "rdma:np_cnp_sent",
    value: "9007199254740993",
  });
});

Deno.test("counters: a counter named or valued to move the cursor is shown escaped, not obeyed", async () => {
  await using dir = await tempDir();
  const hw = `${dir.path}/sys/class/infiniband/mlx5_9/ports/1/hw_counters`;
  await Deno.mkdir(hw, { recursive: true });
  await Deno.writeTextFile(`${hw}/evil\x1b[2J`, "1\n");
  await Deno.writeTextFile(`${hw}/worse`, "\x1b]0;owned\x07\n");
  const { code, out } = await counters(["-d", "mlx5_9"], dir.path);
  assert.equal(code, 0);
  assert.doesNotMatch(out, /\x1b|\x07/);
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
      "--source must be kernel, got \"nvml\". Try 'dpu-traceback counters --help'.",
    ],
    [
      ["-d", "mlx5_7"],
      'Cannot find device "mlx5_7": no interface, RDMA device or PCIe function of that name; did you mean mlx5_0?',
    ],
  ];
  for (const [args, message] of cases) {
    const { code, out, errors } = await counters(args, FIXTURE);
    assert.deepEqual([code, out, errors], [2, "", [message]], args.join(" "));
  }
  const help = await counters(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage:\n  dpu-traceback counters -d DEVICE/);
});
