import assert from "node:assert/strict";
import { join } from "node:path";
import { errorLines, ROOT, runMain, spawnMain } from "./cli_util.ts";
import { tempDir } from "./temp_dir.ts";

const REFERENCE_RULES = {
  diag_sample_period_ns: 100000,
  sample_history_depth: 4,
  "data-ids": [
    { name: "port_0_rx_bytes", data_id: "0x1020000100000000" },
    { name: "port_0_rx_ecn", data_id: "0x1080000400000000" },
  ],
  rules: [
    {
      name: "ECN marks",
      data_id: "0x1080000400000000",
      comparison_type: "dt_gt",
      comparison_value: 0,
    },
  ],
};

/** One line on stderr, no stack trace. */
function assertOneLineError(stderr: string, pattern: RegExp): void {
  const lines = errorLines(stderr);
  assert.match(lines[0], pattern);
  assert.ok(!/^\s+at /m.test(stderr), `stack trace in: ${stderr}`);
}

Deno.test("--help and --version exit 0", async () => {
  const help = await runMain(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage:/);
  assert.match(
    help.stdout,
    /Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error/,
  );
});

Deno.test("--version names the agent, Deno, and the DOCA and NVML libraries found", async () => {
  await using dir = await tempDir();
  // As installed: a versioned file behind the soname link.
  await Deno.mkdir(join(dir.path, "doca"));
  await Deno.mkdir(join(dir.path, "nvml"));
  await Deno.writeTextFile(
    join(dir.path, "doca", "libdoca_common.so.3.1.0105"),
    "",
  );
  await Deno.symlink(
    "libdoca_common.so.3.1.0105",
    join(dir.path, "doca", "libdoca_common.so.3"),
  );
  await Deno.writeTextFile(
    join(dir.path, "nvml", "libnvidia-ml.so.550.54.14"),
    "",
  );
  await Deno.symlink(
    "libnvidia-ml.so.550.54.14",
    join(dir.path, "nvml", "libnvidia-ml.so.1"),
  );
  const found = await runMain(["--version"], {
    env: {
      DOCA_LIB_DIR: join(dir.path, "doca"),
      NVML_LIB_DIR: join(dir.path, "nvml"),
    },
  });
  assert.equal(found.code, 0);
  const lines = found.stdout.trimEnd().split("\n");
  assert.match(lines[0], /^dpu-traceback \d+\.\d+\.\d+$/);
  assert.match(lines[1], /^deno: 2\.9\.6 \(v8 \S+, \S+\)$/);
  assert.equal(
    lines[2],
    `doca: 3.1.0105 (${join(dir.path, "doca", "libdoca_common.so.3.1.0105")})`,
  );
  assert.equal(
    lines[3],
    `nvml: 550.54.14 (${join(dir.path, "nvml", "libnvidia-ml.so.550.54.14")})`,
  );
  // Nothing where it looks: says so, and where it looked.
  const missing = await runMain(["--version"], {
    env: {
      DOCA_LIB_DIR: join(dir.path, "none"),
      NVML_LIB_DIR: join(dir.path, "none"),
    },
  });
  assert.equal(missing.code, 0);
  const [, , doca, nvml] = missing.stdout.trimEnd().split("\n");
  assert.match(
    doca,
    new RegExp(
      `^doca: (not found \\(looked in ${join(dir.path, "none")}, |\\S+ \\()`,
    ),
  );
  assert.match(
    nvml,
    new RegExp(
      `^nvml: (not found \\(looked in ${join(dir.path, "none")}, |\\S+ \\()`,
    ),
  );
});

Deno.test("usage errors exit 2 with one line and a hint", async () => {
  for (
    const [args, pattern] of [
      [["--bogus"], /^dpu-traceback: Unknown option '--bogus'/],
      [["-d", "03:00.0"], /missing the rules file: --rules FILE/],
      [
        ["--rules", "x.json", "--source", "tap"],
        /--source must be one of doca, sim, replay, got "tap"/,
      ],
      [
        ["--rules", "x.json", "--duration", "0"],
        /--duration must be a positive number of seconds, got "0"/,
      ],
      [
        ["--rules", "x.json", "--listen", "nowhere"],
        /--listen must be "HOST:PORT"/,
      ],
      [["check-config"], /check-config needs a FILE/],
    ] as const
  ) {
    const result = await runMain(args);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assertOneLineError(result.stderr, pattern);
    assert.match(result.stderr, /Try 'dpu-traceback --help'\./);
  }
});

Deno.test("every command's option errors read the same: one sentence of ours, then the hint", async () => {
  for (
    const [args, line] of [
      [["--bogus"], "Unknown option '--bogus'. Try 'dpu-traceback --help'."],
      [["--rules"], "--rules needs a value. Try 'dpu-traceback --help'."],
      [
        ["--quiet=yes", "--rules", "r.json"],
        "--quiet takes no value. Try 'dpu-traceback --help'.",
      ],
      [
        ["--rules", "--quiet"],
        "--rules needs a value. Try 'dpu-traceback --help'.",
      ],
      [
        ["run", "--rules", "r.json", "extra"],
        "unexpected argument \"extra\". Try 'dpu-traceback --help'.",
      ],
      [
        ["review", "--bogus"],
        "Unknown option '--bogus'. Try 'dpu-traceback review --help'.",
      ],
    ] as const
  ) {
    // As typed: the test defaults (--listen, --gpu) would follow --rules.
    const result = await runMain(args, { testDefaults: false });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.equal(result.stderr, `dpu-traceback: ${line}\n`);
  }
});

/** Runs `demo` with `args` and asserts exit 2 and `line` alone on stderr. */
async function assertRefused(args: readonly string[], line: string) {
  // Refused while parsing: the rules file is never read.
  const result = await runMain(["demo", "--quiet", ...args], {
    testDefaults: false,
  });
  assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
  assert.equal(
    result.stderr,
    `dpu-traceback: ${line}. Try 'dpu-traceback --help'.\n`,
  );
}

Deno.test("a negative number after a numeric option exits 2 with that option's rule", async () => {
  await assertRefused(
    ["--seed", "-5"],
    '--seed must be a non-negative integer, from 0 to 9007199254740991, got "-5"',
  );
  await assertRefused(
    ["--duration", "-1"],
    '--duration must be a positive number of seconds, got "-1"',
  );
  await assertRefused(
    ["--metrics-window", "-3"],
    '--metrics-window must be a positive number of seconds, got "-3"',
  );
});

Deno.test("an empty --event-log and an address no host can have exit 2 with one line", async () => {
  await assertRefused(
    ["--event-log", ""],
    '--event-log must be a file path, got ""',
  );
  await assertRefused(
    ["--listen", "300.1.1.1:9477"],
    '--listen host 300.1.1.1 is not an IPv4 address: four numbers from 0 to 255 (no leading zeros), as in 127.0.0.1, got "300.1.1.1:9477"',
  );
  // The config's listen by the same rule: a configuration error.
  await using dir = await tempDir();
  const file = join(dir.path, "agent.yaml");
  const demo = await Deno.readTextFile(join(ROOT, "deploy/demo.yaml"));
  await Deno.writeTextFile(
    file,
    demo.replace(/^listen: .*$/m, 'listen: "300.1.1.1:9477"'),
  );
  const config = await runMain(["check-config", file]);
  assert.equal(config.code, 2, config.stderr);
  assert.match(
    config.stderr,
    /^dpu-traceback: Cannot load config \S+agent\.yaml:\d+: listen host 300\.1\.1\.1 is not an IPv4 address: four numbers from 0 to 255 \(no leading zeros\), as in 127\.0\.0\.1, got "300\.1\.1\.1:9477"\n$/,
  );
});

Deno.test("a busy port fails the start with exit 1 and one line, before the events log is touched", async () => {
  await using dir = await tempDir();
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const address = `127.0.0.1:${busy.addr.port}`;
  const eventLog = join(dir.path, "events.log");
  const result = await runMain([
    "demo",
    "--quiet",
    "--listen",
    address,
    "--event-log",
    eventLog,
  ]);
  assert.equal(result.code, 1, result.stderr);
  assert.equal(
    result.stderr,
    `dpu-traceback: Cannot serve metrics on ${address}: the address is in use (another dpu-traceback or exporter? choose one with --listen HOST:PORT, or --listen off)\n`,
  );
  await assert.rejects(() => Deno.lstat(eventLog), Deno.errors.NotFound);
});

Deno.test("--log-level debug follows an error with its stack and its cause's", async () => {
  await using dir = await tempDir();
  const missing = join(dir.path, "missing.csv");
  const args = [
    "--rules",
    "deploy/example-rules.json",
    "--source",
    "replay",
    "--input",
    missing,
  ];
  const quiet = await runMain(args);
  assert.equal(quiet.code, 2);
  assert.equal(
    quiet.stderr,
    `dpu-traceback: Cannot replay ${missing}: no such file\n`,
  );
  const loud = await runMain([...args, "--log-level", "debug"]);
  assert.equal(loud.code, 2);
  const lines = loud.stderr.trimEnd().split("\n");
  assert.equal(
    lines[0],
    `dpu-traceback: Cannot replay ${missing}: no such file`,
  );
  assert.equal(
    lines[1],
    `dpu-traceback: debug: UsageError: Cannot replay ${missing}: no such file`,
  );
  assert.ok(
    lines.some((l) => /^dpu-traceback: debug: +at /.test(l)),
    loud.stderr,
  );
  assert.ok(
    lines.some((l) =>
      l.startsWith("dpu-traceback: debug: caused by: NotFound: ")
    ),
    loud.stderr,
  );
});

Deno.test("a bad config exits 2 naming the file, the field and the value", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "rules.json");
  const bad = structuredClone(REFERENCE_RULES) as Record<string, unknown>;
  (bad.rules as Record<string, unknown>[])[0].comparison_type = "gte";
  await Deno.writeTextFile(file, JSON.stringify(bad));
  for (
    const args of [["--rules", file, "--source", "sim"], [
      "check-config",
      file,
    ]]
  ) {
    const result = await runMain(args);
    assert.equal(result.code, 2);
    assertOneLineError(
      result.stderr,
      /Cannot load config .*rules\.json:\d+: rules\[0\] \("[^"]+"\)\.comparison_type .*"gte"/,
    );
  }
  const missing = await runMain([
    "-c",
    join(dir.path, "nope.yaml"),
    "--source",
    "sim",
  ]);
  assert.equal(missing.code, 2);
  assertOneLineError(missing.stderr, /nope\.yaml/);
});

Deno.test("check-config summarizes a valid config", async () => {
  const result = await runMain(["check-config", "deploy/demo.yaml"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /nic/);
  assert.match(result.stdout, /dt_gt/);
});

Deno.test("doca needs a device (exit 2) and its libraries (exit 1, saying where it looked)", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "rules.json");
  await Deno.writeTextFile(file, JSON.stringify(REFERENCE_RULES));
  const noDevice = await runMain(["--rules", file]);
  assert.equal(noDevice.code, 2);
  assertOneLineError(noDevice.stderr, /use -d DEVICE/);
  const log = join(dir.path, "events.log");
  const doca = await runMain([
    "-d",
    "03:00.0",
    "--rules",
    file,
    "--event-log",
    log,
    "--doca-lib-dir",
    join(dir.path, "no-doca-here"),
  ], { env: { DOCA_LIB_DIR: join(dir.path, "nor-here") } });
  assert.equal(doca.code, 1);
  assertOneLineError(
    doca.stderr,
    /libdoca_common not found \(looked in .*no-doca-here, .*nor-here, \/opt\/mellanox\/doca\/lib\/.*-linux-gnu, \/opt\/mellanox\/doca\/lib64\).*--source sim/,
  );
  // A source that cannot start must not leave a header behind.
  await assert.rejects(() => Deno.stat(log), Deno.errors.NotFound);
});

Deno.test("replay needs an existing capture (exit 2)", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "rules.json");
  await Deno.writeTextFile(file, JSON.stringify(REFERENCE_RULES));
  const none = await runMain(["--rules", file, "--source", "replay"]);
  assert.equal(none.code, 2);
  assertOneLineError(none.stderr, /use --input FILE/);
  const missing = await runMain([
    "--rules",
    file,
    "--source",
    "replay",
    "--input",
    join(dir.path, "x.csv"),
  ]);
  assert.equal(missing.code, 2);
  assertOneLineError(missing.stderr, /Cannot replay .*x\.csv: no such file/);
  // A FIFO would block the replay's open: refused before it is opened.
  const fifo = join(dir.path, "capture.csv");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const piped = await runMain(
    ["--rules", file, "--source", "replay", "--input", fifo],
    { signal: AbortSignal.timeout(60_000) },
  );
  assert.equal(piped.code, 2, piped.stderr);
  assert.equal(
    piped.stderr,
    `dpu-traceback: Cannot replay ${fifo}: is a FIFO, not a regular file\n`,
  );
});

Deno.test("a replay that hits a bad line exits 1 and keeps the rows already logged", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "rules.json");
  await Deno.writeTextFile(file, JSON.stringify(REFERENCE_RULES));
  const rows = ["timestamp,port_0_rx_bytes,port_0_rx_ecn"];
  for (let i = 0; i < 20; i++) rows.push(`${1000 + i},${i * 100},${i}`);
  rows.push("1020,12x,20");
  await Deno.writeTextFile(join(dir.path, "in.csv"), rows.join("\n") + "\n");
  const log = join(dir.path, "events.log");
  const result = await runMain([
    "--rules",
    file,
    "--source",
    "replay",
    "--input",
    join(dir.path, "in.csv"),
    "--event-log",
    log,
    "-q",
  ]);
  assert.equal(result.code, 1);
  assertOneLineError(
    result.stderr,
    /in\.csv: line 22.*port_0_rx_bytes.*"12x"/,
  );
  const text = await Deno.readTextFile(log);
  // ECN rises by 1 per sample, so the dt_gt rule fires once 5 records exist
  // and every later row is logged up to the bad line.
  assert.match(
    text,
    /<<Event start>> Time: .*Rule: "ECN marks"\n1005, 500, 5\n/,
  );
  // The event is still open as the agent stops: its peak so far (a rise
  // of 4 over the depth of 4) closes the log.
  assert.ok(
    text.endsWith(
      '1019, 1900, 19\n<<Peak>> Rule: "ECN marks", Peak: 4\n',
    ),
    text.slice(-80),
  );
});

Deno.test("SIGTERM stops a running agent cleanly with exit 0 and a complete log", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "events.log");
  const child = spawnMain([
    "-c",
    "deploy/demo.yaml",
    "--source",
    "sim",
    "--event-log",
    log,
    "-q",
  ]);
  // Once the header is written the agent is sampling (it listens for
  // SIGTERM from before it opens anything).
  let exited = false;
  child.status.then(() => exited = true);
  while (
    !exited && await Deno.stat(log).then((s) => s.size === 0, () => true)
  ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(!exited, "the agent ended before writing its header");
  child.kill("SIGTERM");
  const out = await child.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const text = await Deno.readTextFile(log);
  assert.match(text, /^Telemetry monitor : dpu-traceback /);
  assert.ok(text.endsWith("\n"));
});

Deno.test("the demo's closing table lists events and the log path", async () => {
  await using dir = await tempDir();
  const log = join(dir.path, "demo.log");
  const result = await runMain([
    "demo",
    "--duration",
    "3",
    "--event-log",
    log,
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /MONITOR +RULE +START \(UTC\) +DURATION +SAMPLES|No events recorded\./,
  );
  assert.match(
    result.stdout,
    new RegExp(`events log ${log.replaceAll("/", "\\/")}`),
  );
});

Deno.test("under journald (JOURNAL_STREAM is stderr) lines carry syslog priorities", async () => {
  await using dir = await tempDir();
  const out = `${dir.path}/stderr`;
  // The agent's stderr is a file whose device and inode JOURNAL_STREAM
  // names, as systemd sets it up for a service.
  const journald = async (args: readonly string[]) => {
    const result = await runMain(args, {
      via: [
        "sh",
        "-c",
        `exec 2>"$OUT"; JOURNAL_STREAM=$(stat -L -c '%d:%i' "$OUT") exec "$@"`,
        "sh",
      ],
      testDefaults: false,
      noColor: false,
      env: { OUT: out },
      stdout: "null",
    });
    return {
      code: result.code,
      lines: errorLines(await Deno.readTextFile(out)),
    };
  };
  const bad = await journald(["demo", "--seed", "nope"]);
  assert.equal(bad.code, 2);
  assert.deepEqual(bad.lines.length, 1);
  assert.match(bad.lines[0], /^<3>--seed /);
  const ok = await journald([
    "demo",
    "-q",
    "--duration",
    "1",
    "--listen",
    "127.0.0.1:0",
    "--event-log",
    `${dir.path}/e.log`,
    "--log-level",
    "debug",
  ]);
  assert.equal(ok.code, 0);
  const raw = await Deno.readTextFile(out);
  assert.match(raw, /^<6>metrics on http:\/\/127\.0\.0\.1:\d+\/$/m);
  assert.match(raw, /^<7>monitor nic: source sim, seed 7$/m);
  for (const line of raw.trimEnd().split("\n")) {
    assert.match(line, /^<[3467]>/);
  }
  // Inherited by something that writes elsewhere: plain lines.
  const plain = await runMain(["demo", "--seed", "nope"], {
    env: { JOURNAL_STREAM: "1:2" },
  });
  assert.match(plain.stderr, /^dpu-traceback: --seed /);
});
