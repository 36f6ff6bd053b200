import assert from "node:assert/strict";
import { join } from "node:path";
import { errorLines, runMain } from "../tests/cli_util.ts";
import { buildDocaSim } from "../tests/fixtures/libdoca_sim/build.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { checkConfig } from "./check_config.ts";
import { Logger } from "../logging/logger.ts";

/** An agent-form config naming `labelsFile`. */
function config(labelsFile: string, labels = "{ rack: r12 }"): string {
  return `labels: ${labels}
labels_file: ${labelsFile}
monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]
`;
}

Deno.test("check-config reads the labels file and lists its labels", async () => {
  await using dir = await tempDir();
  const ini = join(dir.path, "level_labels.ini");
  const yaml = join(dir.path, "config.yaml");
  await Deno.writeTextFile(ini, "[dpu]\nrail = 3\nrack = r99\n");
  await Deno.writeTextFile(yaml, config(ini));
  const result = await runMain(["check-config", yaml]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n");
  assert.ok(lines.includes('topology labels (1): rack="r12"'), result.stdout);
  assert.ok(
    lines.includes(
      `labels file ${ini}: rail="3", rack="r99" (read at start; labels: win)`,
    ),
    result.stdout,
  );
});

Deno.test("check-config refuses a missing or broken labels file with exit 2 and one line", async () => {
  await using dir = await tempDir();
  const ini = join(dir.path, "level_labels.ini");
  const yaml = join(dir.path, "config.yaml");
  await Deno.writeTextFile(yaml, config(ini));
  const cases: [string | undefined, string][] = [
    [undefined, `Cannot read labels file ${ini}: file not found`],
    [
      "rack\n",
      `Cannot read labels file ${ini}: line 1 is not key=value`,
    ],
    [
      Array.from({ length: 10 }, (_, i) => `f${i} = x`).join("\n"),
      `Cannot read labels file ${ini}: with labels: of the configuration it has 11 topology labels; at most 10`,
    ],
  ];
  for (const [text, message] of cases) {
    if (text !== undefined) await Deno.writeTextFile(ini, text);
    const result = await runMain(["check-config", yaml]);
    assert.equal(result.code, 2, result.stderr);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, result.stderr);
    assert.ok(lines[0].includes(message), lines[0]);
  }
});

Deno.test("check-config refuses what the agent refuses at start: a host name it may not read as the instance", async () => {
  await using dir = await tempDir();
  const yaml = join(dir.path, "config.yaml");
  // No instance: the agent takes the host name, and refuses to start
  // where it cannot read it.
  await Deno.writeTextFile(
    yaml,
    'monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]\n',
  );
  const flags = ["-A", "--deny-sys=hostname"];
  const message =
    "dpu-traceback: Cannot tell the host name for the instance label (";
  const agent = await runMain(
    ["run", "--config", yaml, "--event-log", join(dir.path, "events.log")],
    { flags },
  );
  assert.notEqual(agent.code, 0, agent.stderr);
  const refused = agent.stderr.trimEnd().split("\n");
  assert.ok(refused.at(-1)!.startsWith(message), agent.stderr);
  const result = await runMain(["check-config", yaml], { flags });
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, "");
  assert.deepEqual(result.stderr.trimEnd().split("\n"), [refused.at(-1)]);
  assert.match(result.stderr, /; set instance: in the configuration\n$/);
  // With an instance configured the host name is not needed.
  await Deno.writeTextFile(
    yaml,
    `instance: dpu-r12-07\n${await Deno.readTextFile(yaml)}`,
  );
  const fixed = await runMain(["check-config", yaml], { flags });
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.ok(
    fixed.stdout.split("\n").includes('instance "dpu-r12-07" on alerts'),
    fixed.stdout,
  );
});

Deno.test("check-config refuses a percentage past the ratio's range with exit 2 and one line", async () => {
  await using dir = await tempDir();
  const yaml = join(dir.path, "config.yaml");
  const withAbove = (above: string) =>
    Deno.writeTextFile(
      yaml,
      `monitors:
  - name: nic
    source: sim
    columns: [{ name: drops, data_id: "0x1" }, { name: packets, data_id: "0x2" }]
    rules: [{ name: drops, ratio: drops, to: packets, window: 1ms, above: ${above} }]
`,
    );
  await withAbove("1e309%");
  const refused = await runMain(["check-config", yaml]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.equal(
    refused.stderr,
    `dpu-traceback: Cannot load config ${yaml}:5: monitors[0].rules[0] ("drops").above is too large: a ratio threshold must be from 0 to 1e306 (0 % to 1e308 %), got "1e309%"\n`,
  );
  // The largest is shown as the percentage it is, not as the ratio.
  await withAbove("1e308%");
  const largest = await runMain(["check-config", yaml]);
  assert.equal(largest.code, 0, largest.stderr);
  assert.match(largest.stdout, /over 1 ms goes above 1e\+308 %;/);
});

Deno.test("check-config opens a DOCA monitor's device as run does: a column it does not support is run's very line, exit 2 (run: 1); a device in use is left unchecked", async () => {
  const sim = await buildDocaSim();
  try {
    await using dir = await tempDir();
    const yaml = join(dir.path, "nic.yaml");
    const write = (pause: string) =>
      Deno.writeTextFile(
        yaml,
        `doca_lib_dir: ${sim.dir}
gpu: "off"
listen: "off"
monitors:
  - name: nic
    source: doca
    device: "03:00.0"
    event_log: ${join(dir.path, "nic-events.log")}
    columns:
      - { name: rx, data_id: "rx_bytes{port=0}" }
      - { name: pause, data_id: "${pause}" }
`,
      );
    const env = {
      DOCA_SIM_DEVICES:
        "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0s0,unsupported=0x1020000600000300",
    };
    const line =
      'dpu-traceback: Cannot start DOCA source on 0000:03:00.0 (mlx5_0, p0s0): column "pause" (priority_rx_pause_packets{port=0,priority=3}, 0x1020000600000300) is not supported by this device; ' +
      "it supports priority_rx_pause_packets{port=0,priority=0}, priority_rx_pause_packets{port=0,priority=1}, priority_rx_pause_packets{port=0,priority=2}";
    await write("priority_rx_pause_packets{port=0,priority=3}");
    const check = await runMain(["check-config", yaml], { env });
    assert.equal(check.code, 2, check.stderr);
    assert.equal(check.stderr, `${line}\n`);
    const run = await runMain(["run", "--config", yaml, "--duration", "1"], {
      env,
    });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(errorLines(run.stderr), [line]);

    await write("priority_rx_pause_packets{port=0,priority=2}");
    const ok = await runMain(["check-config", yaml], { env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^monitor nic: 0000:03:00\.0 \(mlx5_0, p0s0\) is here and supports all 2 of its counters$/m,
    );
    // The running agent holds the context: not taken, not a failure.
    const held = await runMain(["check-config", yaml], {
      env: { ...env, DOCA_SIM_FAULT_CREATE: "IN_USE" },
    });
    assert.equal(held.code, 0, held.stderr);
    assert.match(
      held.stdout,
      /^monitor nic: its counters are not checked here, they are at run: Cannot start DOCA source: the diag context of 0000:03:00\.0 \(mlx5_0, p0s0\) is in use by another program; /m,
    );
  } finally {
    await sim.cleanup();
  }
});

Deno.test("check-config says when a rule's window is shorter than the kernel's cache of its RDMA counter", async () => {
  await using dir = await tempDir();
  const yaml = join(dir.path, "rdma.yaml");
  await Deno.writeTextFile(
    yaml,
    `monitors:
  - name: roce
    source: kernel
    device: mlx5_0
    columns:
      - { name: cnp, data_id: "rdma:np_cnp_sent" }
    rules:
      - { name: cnp burst, rate: cnp, window: 1ms, above: 1k/s }
      - { name: cnp storm, rate: cnp, window: 50ms, above: 1k/s }
`,
  );
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => lines.push(...String(line).split("\n"));
  try {
    const code = await checkConfig(
      {
        configFile: yaml,
        sysfsRoot: join(import.meta.dirname!, "../tests/fixtures/sysfs"),
      },
      new Logger({ program: "test", write: () => {} }),
    );
    assert.equal(code, 0);
  } finally {
    console.log = log;
  }
  // The fixture's hw_counters/lifespan is 10 ms: only the 1 ms rule.
  assert.deepEqual(lines.filter((l) => l.includes(" window is shorter")), [
    'monitor roce, rule "cnp burst": its 1 ms window is shorter than how often cnp changes (every 10 ms, as the kernel caches it: hw_counters/lifespan): the device refreshes that counter on its own timer, so the rule sees steps, not bursts; use a window of at least 10 ms, or a counter that moves every sample',
  ]);
});
