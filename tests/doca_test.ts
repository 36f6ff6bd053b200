import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DocaCollector,
  type DocaOptions,
  MAX_TRANSIENT_FAILURES,
  transientRetryMs,
  WARN_TRANSIENT_FAILURES,
} from "../collectors/doca.ts";
import { ReplayCollector } from "../collectors/replay.ts";
import type { ColumnConfig, RuleConfig } from "../config/types.ts";
import { EventsLog } from "../events/log.ts";
import { Monitor } from "../rules/monitor.ts";
import { formatU64 } from "../base/u64.ts";
import type { SampleSink } from "../rules/sample_sink.ts";
import { startedAgent } from "./agent_util.ts";
import { errorLines, runMain, spawnMain } from "./cli_util.ts";
import {
  buildDocaSim,
  simCounterValue,
  simValueBase,
} from "./fixtures/libdoca_sim/build.ts";
import { tempDir } from "./temp_dir.ts";
import { until } from "./until.ts";

const PERIOD = 100_000;
const RX_BYTES = 0x1020000100000000n;
const columns: ColumnConfig[] = [
  { name: "port_0_rx_bytes", dataId: "0x1020000100000000" },
  { name: "port_0_rx_ecn_packets", dataId: "0x1080000400000000" },
  { name: "icmc_requests", dataId: "0x1180000100000000" },
];
const rules: RuleConfig[] = [
  // The simulated ECN counter rises by 5 a sample plus (k^2 mod 97) noise:
  // over 8 samples, sometimes above 100 and sometimes not, so events churn.
  {
    name: "ECN > 100 per 8",
    column: 1,
    comparisonType: "dt_gt",
    comparisonValue: 100n,
  },
  {
    name: "icmc wraps",
    column: 2,
    comparisonType: "lt",
    comparisonValue: 1000n,
  },
];

const REFERENCE = {
  diag_sample_period_ns: PERIOD,
  sample_history_depth: 8,
  "data-ids": columns.map((c) => ({ name: c.name, data_id: c.dataId })),
  rules: [{
    name: "ECN > 100 per 8",
    data_id: "0x1080000400000000",
    comparison_type: "dt_gt",
    comparison_value: 100,
  }],
};

/** Runs `fn` with the simulator built and a temp dir holding rules.json. */
async function withSim(
  fn: (simDir: string, dir: string) => Promise<void>,
): Promise<void> {
  const sim = await buildDocaSim();
  try {
    await using dir = await tempDir();
    await Deno.writeTextFile(
      join(dir.path, "rules.json"),
      JSON.stringify(REFERENCE),
    );
    await fn(sim.dir, dir.path);
  } finally {
    await sim.cleanup();
  }
}

/** Sets DOCA_SIM_* variables for an in-process test and restores them. */
async function withEnv(
  vars: Record<string, string>,
  fn: () => void | Promise<void>,
): Promise<void> {
  const before = Object.fromEntries(
    Object.keys(vars).map((k) => [k, Deno.env.get(k)]),
  );
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
  }
}

/** The simulated device (03:00.0 unless said), opened in this process. */
function openDoca(
  libDir: string,
  options: Partial<DocaOptions> = {},
): DocaCollector {
  return DocaCollector.open({
    device: "03:00.0",
    columns,
    samplePeriodNs: PERIOD,
    depth: 8,
    forceOwnership: false,
    libDir,
    ...options,
  });
}

/** A sink of this file's columns that keeps nothing. */
function discard(): SampleSink {
  return {
    words: new Uint32Array(8),
    columns: columns.length,
    claim: () => 0,
    commit: () => {},
    gap: () => {},
  };
}

function u64(words: Uint32Array, at: number): bigint {
  return (BigInt(words[at + 1]) << 32n) | BigInt(words[at]);
}

function agentArgs(dir: string, ...extra: string[]): string[] {
  return [
    "--rules",
    join(dir, "rules.json"),
    "--event-log",
    join(dir, "events.log"),
    "-q",
    ...extra,
  ];
}

Deno.test("every identifier form selects the simulated device", async () => {
  await withSim(async (simDir, dir) => {
    for (const device of ["03:00.0", "0000:03:00.0", "mlx5_0", "p0s0"]) {
      const result = await runMain(
        agentArgs(dir, "-d", device, "--duration", "0.3"),
        {
          env: { DOCA_LIB_DIR: simDir },
        },
      );
      assert.equal(result.code, 0, `${device}: ${result.stderr}`);
    }
    const unknown = await runMain(
      agentArgs(dir, "-d", "04:00.0", "--duration", "0.3"),
      {
        env: { DOCA_LIB_DIR: simDir },
      },
    );
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /no device matches "04:00.0"; found 0000:03:00.0 \(mlx5_0, p0s0\)\n$/,
    );
  });
});

Deno.test("each device fault ends with one clear line and exit 1", async () => {
  await withSim(async (simDir, dir) => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { DOCA_SIM_FAULT_CREATE: "IN_USE" },
        /in use by another program; stop it, or take it over with --force-ownership/,
      ],
      [
        { DOCA_SIM_FAULT_REJECT_INDEX: "1" },
        /rejected data ID "port_0_rx_ecn_packets" \(rx_transport_ecn_packets\{port=0\}, 0x1080000400000000\): DOCA_ERROR_NOT_SUPPORTED/,
      ],
      [{ DOCA_SIM_FAULT_START: "21" }, /starting sampling: DOCA_ERROR_DRIVER/],
      [
        { DOCA_SIM_FAULT_QUERY_AFTER: "3", DOCA_SIM_FAULT_QUERY_ERROR: "17" },
        /query_counters failed: DOCA_ERROR_IO_FAILED/,
      ],
      [
        { DOCA_SIM_DEVICES: "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0,diag=0" },
        /does not support Telemetry Diag/,
      ],
      [{
        DOCA_SIM_DEVICES:
          "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0,max_data_ids=2",
      }, /at most 2 data IDs, the config has 3/],
      [
        { DOCA_SIM_DEVICES: "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0,ts=frc" },
        /no real-time-clock \(RTC\) timestamps/,
      ],
      [
        {
          DOCA_SIM_DEVICES:
            "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0,modes=single+on_demand",
        },
        /does not support repetitive sampling/,
      ],
      [{ DOCA_SIM_FAULT_CAP: "NOT_FOUND" }, /mlx5_fwctl module loaded/],
    ];
    for (const [env, pattern] of cases) {
      const calls = join(dir, "calls.log");
      await Deno.remove(calls).catch(() => {});
      const result = await runMain(
        agentArgs(dir, "-d", "03:00.0", "--duration", "1"),
        {
          env: { DOCA_LIB_DIR: simDir, DOCA_SIM_LOG: calls, ...env },
        },
      );
      assert.equal(result.code, 1, `${JSON.stringify(env)}: ${result.stderr}`);
      const lines = errorLines(result.stderr);
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0], pattern);
      // Every error path released what it had acquired.
      assert.match(
        await Deno.readTextFile(calls),
        /\nleaks lists=0 devices=0 diags=0\n$/,
        JSON.stringify(env),
      );
    }
    const forced = await runMain(
      agentArgs(dir, "-d", "03:00.0", "--duration", "0.3", "--force-ownership"),
      {
        env: { DOCA_LIB_DIR: simDir, DOCA_SIM_FAULT_CREATE: "IN_USE" },
      },
    );
    assert.equal(forced.code, 0, forced.stderr);
  });
});

Deno.test("transient query errors are retried and a rounded period is reported", async () => {
  await withSim(async (simDir, dir) => {
    const result = await runMain(
      agentArgs(dir, "-d", "03:00.0", "--duration", "0.5"),
      {
        env: {
          DOCA_LIB_DIR: simDir,
          DOCA_SIM_FAULT_QUERY_AFTER: "2",
          DOCA_SIM_FAULT_QUERY_ERROR: "5",
          DOCA_SIM_FAULT_QUERY_COUNT: "3",
          DOCA_SIM_PERIOD_QUANTUM_NS: "65536",
          DOCA_SIM_LOG: join(dir, "calls.log"),
        },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const queries = (await Deno.readTextFile(join(dir, "calls.log")))
      .split("\n").filter((l) => l.startsWith("telemetry_diag_query_counters"));
    // Two good polls, three AGAIN, then good again: the collector kept going.
    assert.deepEqual(
      queries.slice(0, 6).map((l) => l.includes("DOCA_ERROR_AGAIN")),
      [false, false, true, true, true, false],
    );
    assert.match(
      result.stderr,
      /warning: .* samples every 131.072 µs, not the 100 µs configured/,
    );
    // The polls ran on a sampling thread, which said what it got.
    assert.match(
      result.stderr,
      /^dpu-traceback: DOCA source 0000:03:00\.0 \(mlx5_0, p0s0\): the sampler thread runs at (SCHED_FIFO priority 1|nice -10 \(SCHED_FIFO refused: \w+\)|the default priority \(.*\))/m,
    );
  });
});

Deno.test("a query that keeps failing is warned about after a second, retried every second, and ends the run at the 40th", async () => {
  await withSim(async (simDir) => {
    await withEnv({
      DOCA_SIM_FAULT_QUERY_ERROR: "5", // AGAIN
      DOCA_SIM_FAULT_QUERY_COUNT: "1000000",
    }, () => {
      const warnings: string[] = [];
      const doca = openDoca(simDir, { warn: (m) => warnings.push(m) });
      // The 30 s of retries, without the 30 s: the loop's clock is this
      // test's, and each sleep moves it to the deadline at once.
      let t = 0;
      const polledAt: number[] = []; // after each poll that did not end the run
      const warnedBefore: number[] = []; // warnings so far, at each of them
      let error: Error | undefined;
      try {
        doca.pollUntilStopped(
          discard(),
          { now: () => t, sleepUntil: (ns) => (t = Math.max(t, ns)) },
          () => false,
          () => {
            polledAt.push(t);
            warnedBefore.push(warnings.length);
          },
        );
      } catch (e) {
        error = e as Error;
      } finally {
        doca.close();
      }
      const waits = [...polledAt, t].slice(1).map((at, i) =>
        (at - polledAt[i]) / 1e6
      );
      assert.equal(MAX_TRANSIENT_FAILURES, 40); // as docs/configuration.md says
      assert.match(
        error?.message ?? "resolved",
        /^DOCA source 0000:03:00\.0 \(mlx5_0, p0s0\): gave up after query_counters failed 40 times in a row over 30\.023 s: DOCA_ERROR_AGAIN/,
      );
      assert.deepEqual(
        waits,
        Array.from({ length: 39 }, (_, i) => transientRetryMs(i + 1)),
      );
      assert.equal(waits.reduce((a, b) => a + b), 30_023); // about 30 s
      // Warned as the second-long retries start, after about a second.
      assert.equal(warnedBefore.indexOf(1), WARN_TRANSIENT_FAILURES - 1);
      assert.equal(waits[WARN_TRANSIENT_FAILURES - 1], 1000);
      assert.equal(
        waits.slice(0, WARN_TRANSIENT_FAILURES - 1).reduce((a, b) => a + b),
        1023,
      );
      assert.equal(doca.pollStats.errors.get("DOCA_ERROR_AGAIN"), 40);
      assert.deepEqual(warnings, [
        // The clock is the test's: the first failure at 0, the 11th 1,023 ms on.
        "DOCA source 0000:03:00.0 (mlx5_0, p0s0): query_counters has failed 11 times in a row (DOCA_ERROR_AGAIN) over 1.023 s; retrying every second, giving up after 40 in a row",
      ]);
    });
  });
});

Deno.test("a failing device is reported on stderr within a few seconds, and when it works again", async () => {
  await withSim(async (simDir, dir) => {
    // 11 AGAINs in a row: about 2 s of retrying, then the device recovers;
    // both lines must come within the 4 s run.
    const result = await runMain(
      agentArgs(dir, "-d", "03:00.0", "--duration", "4"),
      {
        env: {
          DOCA_LIB_DIR: simDir,
          DOCA_SIM_FAULT_QUERY_ERROR: "5",
          DOCA_SIM_FAULT_QUERY_COUNT: "11",
        },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const lines = errorLines(result.stderr);
    assert.equal(lines.length, 2, result.stderr);
    assert.match(
      lines[0],
      /^dpu-traceback: warning: DOCA source 0000:03:00\.0 \(mlx5_0, p0s0\): query_counters has failed 11 times in a row \(DOCA_ERROR_AGAIN\) over 1\.\d{3} s; retrying every second, giving up after 40 in a row$/,
    );
    assert.match(
      lines[1],
      /^dpu-traceback: warning: DOCA source 0000:03:00\.0 \(mlx5_0, p0s0\): query_counters works again after 11 failures in a row over 2\.\d{3} s$/,
    );
  });
});

Deno.test("shutdown stops, destroys, closes the device, in that order, and leaks nothing (SIGTERM too)", async () => {
  await withSim(async (simDir, dir) => {
    const log = join(dir, "calls.log");
    const child = spawnMain(agentArgs(dir, "-d", "03:00.0"), {
      env: { DOCA_LIB_DIR: simDir, DOCA_SIM_LOG: log },
    });
    for (let i = 0; i < 100; i++) {
      const text = await Deno.readTextFile(log).catch(() => "");
      if (text.includes("query_counters")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const calls = (await Deno.readTextFile(log)).trimEnd().split("\n").map((
      l,
    ) => l.split(" ")[0]);
    const tail = calls.filter((c) =>
      /^(telemetry_diag_stop|telemetry_diag_destroy|dev_close|leaks)$/.test(c)
    );
    assert.deepEqual(tail, [
      "telemetry_diag_stop",
      "telemetry_diag_destroy",
      "dev_close",
      "leaks",
    ]);
    assert.match(
      await Deno.readTextFile(log),
      /\nleaks lists=0 devices=0 diags=0\n$/,
    );
  });
});

Deno.test("decoded samples are the device's values, and SKIPPED gaps are counted exactly", async () => {
  await withSim(async (simDir) => {
    await withEnv({
      DOCA_SIM_DEVICES:
        "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0,log_max_samples=4",
    }, async () => {
      const doca = openDoca(simDir, { depth: 16 });
      try {
        assert.equal(doca.deviceRingSamples, 16);
        const records: bigint[][] = [];
        let gaps = 0;
        const words = new Uint32Array(8);
        const sink = {
          words,
          columns: columns.length,
          claim: () => 0,
          commit: () =>
            records.push([0, 1, 2, 3].map((i) => u64(words, 2 * i))),
          gap: (n: number) => gaps += n,
        };
        for (let i = 0; i < 5; i++) {
          // 16 samples fit; sleeping 5 ms lets ~50 arrive, so most polls skip.
          await new Promise((r) => setTimeout(r, 5));
          doca.poll(sink);
        }
        assert.ok(records.length > 0);
        assert.ok(doca.pollStats.overflows > 0, "the slow reader saw SKIPPED");
        // Every record is sample k of the formula, k recovered from rx bytes
        // (step 3000 > the 0..96 noise), and the k's skipped equal the gaps.
        const base = simValueBase(RX_BYTES);
        const ks = records.map((r) => (r[1] - base) / 3000n);
        records.forEach((r, i) => {
          columns.forEach((c, j) =>
            assert.equal(r[j + 1], simCounterValue(BigInt(c.dataId), ks[i]))
          );
          if (i > 0) {
            assert.equal(
              r[0] - records[i - 1][0],
              (ks[i] - ks[i - 1]) * BigInt(PERIOD),
            );
          }
        });
        const missing = Number(ks[ks.length - 1] - ks[0]) + 1 - records.length;
        assert.equal(gaps, missing);
        assert.ok(missing > 0);
        // The achieved period, from the device's own timestamps: one
        // interval between each two records, summing to their span.
        const stats = doca.pollStats;
        assert.equal(
          stats.intervalCounts.reduce((a, b) => a + b),
          records.length - 1,
        );
        // Each timestamp as a float is within 256 ns (2026's step).
        const span = Number(records.at(-1)![0] - records[0][0]);
        assert.ok(
          Math.abs(stats.intervalSumS * 1e9 - span) <= 256 * records.length,
          `${stats.intervalSumS * 1e9} ns against ${span}`,
        );
      } finally {
        doca.close();
      }
    });
  });
});

Deno.test("the DOCA path writes the same rows and markers as a replay of the same counters", async () => {
  await withSim(async (simDir, dir) => {
    const capture: string[] = [
      ["timestamp", ...columns.map((c) => c.name)].join(","),
    ];
    const logOptions = (path: string) => ({
      path,
      version: "test",
      device: "x",
      depth: 8,
      samplePeriodNs: PERIOD,
      columns,
      rules,
    });
    const docaLog = await EventsLog.open(logOptions(join(dir, "doca.log")));
    const monitor = new Monitor(
      { name: "nic", depth: 8, columns, rules },
      docaLog,
    );
    // Capture exactly what the monitor was given, in the replay format.
    const sink = {
      words: monitor.words,
      columns: monitor.columns,
      claim: () => monitor.claim(),
      commit: () => {
        const at = monitor.ring.offsetBack(0);
        const cells = [];
        for (let w = at; w < at + monitor.ring.stride; w += 2) {
          cells.push(formatU64(monitor.words[w], monitor.words[w + 1]));
        }
        capture.push(cells.join(","));
        monitor.commit();
      },
      gap: (n: number) => monitor.gap(n),
    };
    const doca = openDoca(simDir, { device: "mlx5_0" });
    try {
      const running = doca.run(sink, AbortSignal.timeout(400));
      // One user of the diag context at a time.
      const busy =
        /^Error: Cannot (run|shut|poll) DOCA source 0000:03:00\.0 \(mlx5_0, p0s0\)( down)?: its sampler thread is running/;
      await assert.rejects(doca.run(sink, new AbortController().signal), busy);
      assert.throws(() => doca.poll(sink), busy);
      assert.throws(() => doca.close(), busy);
      await running;
    } finally {
      doca.close();
      await docaLog.close();
    }
    assert.ok(monitor.events > 0, "rules fired on the device's counters");
    await Deno.writeTextFile(
      join(dir, "capture.csv"),
      capture.join("\n") + "\n",
    );

    const replayLog = await EventsLog.open(logOptions(join(dir, "replay.log")));
    const replayed = new Monitor(
      { name: "nic", depth: 8, columns, rules },
      replayLog,
    );
    await new ReplayCollector({ path: join(dir, "capture.csv"), columns }).run(
      replayed,
      new AbortController().signal,
    );
    await replayLog.close();
    const body = async (path: string) =>
      (await Deno.readTextFile(path)).replace(/Time: \S+Z/g, "Time: <t>");
    assert.equal(
      await body(join(dir, "replay.log")),
      await body(join(dir, "doca.log")),
    );
    assert.equal(replayed.samples, monitor.samples);
  });
});

Deno.test("the endpoint reports the DOCA source's retried errors by name, and the source up", async () => {
  await withSim(async (simDir, dir) => {
    const agent = await startedAgent(
      agentArgs(dir, "-d", "03:00.0", "--duration", "30"),
      {
        env: {
          DOCA_LIB_DIR: simDir,
          DOCA_SIM_FAULT_QUERY_AFTER: "2",
          DOCA_SIM_FAULT_QUERY_ERROR: "5",
          DOCA_SIM_FAULT_QUERY_COUNT: "3",
        },
      },
    );
    try {
      await agent.waitReady();
      // The endpoint reads what the sampler published (every 100 ms), so
      // the errors show up to 100 ms after the samples before them.
      const body = await agent.waitFor(
        "/metrics",
        (text) =>
          /dpu_traceback_samples_total\{monitor="nic"\} [1-9]/.test(text) &&
          text.includes('error="DOCA_ERROR_AGAIN"} 3\n'),
      );
      for (
        const line of [
          'dpu_traceback_poll_errors_total{monitor="nic",error="DOCA_ERROR_AGAIN"} 3',
          'dpu_traceback_source_up{monitor="nic"} 1',
          'dpu_traceback_monitor_info{monitor="nic",source="doca",device="03:00.0"} 1',
          'dpu_traceback_lost_samples_total{monitor="nic"} 0',
        ]
      ) {
        assert.ok(body.includes(`${line}\n`), `missing ${line}`);
      }
    } finally {
      const { code, stderr } = await agent.stop();
      assert.equal(code, 0, stderr);
    }
  });
});

Deno.test("a column the device does not support is refused in one line naming the nearest it does; the log shows each column checked", async () => {
  const sim = await buildDocaSim();
  try {
    await using dir = await tempDir();
    const calls = join(dir.path, "calls.log");
    const open = (cols: ColumnConfig[], libDir = sim.dir) =>
      openDoca(libDir, { columns: cols, depth: 16 });
    const refused = (cols: ColumnConfig[], libDir?: string) => {
      try {
        open(cols, libDir).close();
      } catch (error) {
        return (error as Error).message;
      }
      assert.fail(`${JSON.stringify(cols)} was taken`);
    };
    const pause = { name: "pause", dataId: "0x1020000600000300" };
    await withEnv({
      DOCA_SIM_DEVICES:
        "pci=0000:03:00.0,ibdev=mlx5_0,iface=p0s0,unsupported=0x1020000600000300+0x1100000900000000",
      DOCA_SIM_LOG: calls,
    }, async () => {
      // Supported columns start, each checked before being applied.
      open(columns).close();
      const log = await Deno.readTextFile(calls);
      for (const c of columns) {
        assert.ok(
          log.includes(
            `telemetry_diag_check_data_id data_id=${c.dataId} -> DOCA_SUCCESS\n`,
          ),
          log,
        );
      }
      await Deno.remove(calls);
      // By name: the same counter at other priorities is nearest.
      assert.equal(
        refused([...columns, pause]),
        'Cannot start DOCA source on 0000:03:00.0 (mlx5_0, p0s0): column "pause" (priority_rx_pause_packets{port=0,priority=3}, 0x1020000600000300) is not supported by this device; ' +
          "it supports priority_rx_pause_packets{port=0,priority=0}, priority_rx_pause_packets{port=0,priority=1}, priority_rx_pause_packets{port=0,priority=2}",
      );
      // An ID the agent has no name for: the nearest by ID.
      assert.equal(
        refused([{ name: "other", dataId: "0x1100000900000000" }]),
        'Cannot start DOCA source on 0000:03:00.0 (mlx5_0, p0s0): column "other" (0x1100000900000000) is not supported by this device; ' +
          "it supports tx_transport_cnp_sent_packets{port=0}, tx_transport_cnp_sent_packets{port=1}, tx_transport_done_due_to_cc_deschedule_events",
      );
      // Refused before anything was applied or started, and released.
      const log2 = await Deno.readTextFile(calls);
      assert.ok(!log2.includes("telemetry_diag_start"), log2);
      assert.match(log2, /\nleaks lists=0 devices=0 diags=0\n$/);
      // A library without check_data_id: apply_counters refuses it, named.
      assert.match(
        refused([...columns, pause], sim.withoutCheckDataIdDir),
        /^Cannot start DOCA source: 0000:03:00\.0 \(mlx5_0, p0s0\) rejected data ID "pause" \(priority_rx_pause_packets\{port=0,priority=3\}, 0x1020000600000300\): DOCA_ERROR_NOT_SUPPORTED/,
      );
    });
  } finally {
    await sim.cleanup();
  }
});

Deno.test("a stop that gives up on a hung query leaves the device to the process's exit, not destroyed under the thread", async () => {
  await withSim(async (simDir, dir) => {
    const log = join(dir, "calls.log");
    // A device of its own: the one left in use is no other test's.
    await withEnv({
      DOCA_SIM_DEVICES: "pci=0000:07:00.0,ibdev=mlx5_7,iface=p7",
      // The first query hangs: the thread polls at once, before it looks
      // whether it was stopped.
      DOCA_SIM_FAULT_QUERY_HANG_MS: "2000",
      DOCA_SIM_LOG: log,
    }, async () => {
      // The stop's grace is the test's: 100 ms, not 5 s.
      const doca = openDoca(simDir, { device: "07:00.0", stopGraceMs: 100 });
      const stop = new AbortController();
      const running = doca.run(discard(), stop.signal);
      // Stopped once the thread is inside the query, however slowly it
      // started.
      await until(
        "the query to hang",
        () => Deno.readTextFileSync(log).includes("hanging"),
      );
      stop.abort();
      await assert.rejects(
        running,
        /^Error: DOCA source 0000:07:00\.0 \(mlx5_7, p7\): the sampler thread did not stop within 100 ms \(a read that does not return\); left behind$/,
      );
      assert.throws(
        () => doca.close(),
        /^Error: Cannot shut DOCA source 0000:07:00\.0 \(mlx5_7, p7\) down cleanly: its sampler thread is still inside query_counters; the device is left to the process's exit$/,
      );
      const calls = await Deno.readTextFile(log);
      // The one query still hangs; nothing was stopped, destroyed or closed
      // under it.
      assert.match(calls, /\ntelemetry_diag_query_counters hanging ms=2000\n$/);
      assert.doesNotMatch(calls, /telemetry_diag_(stop|destroy)|dev_close/);
      // Nor can the device be used again meanwhile.
      await assert.rejects(
        doca.run(discard(), new AbortController().signal),
        /^Error: Cannot run DOCA source 0000:07:00\.0 \(mlx5_7, p7\): it is closed$/,
      );
    });
  });
});
