/**
 * The deploy files: the systemd unit (systemd-analyze verify and security),
 * deploy/install.sh (into a temporary root), the EnvironmentFile
 * template, and the README's and docs/' paths, units and variables of the
 * service (each one install.sh installs).
 *
 * Needs only what a fresh machine has: `sh`, `cp`, `kill` and Debian's
 * `systemd` (systemd-analyze); without systemd-analyze the tests fail,
 * naming the package, rather than skip. The checks that need shellcheck
 * and logrotate are in tests/e2e/deploy_tools_test.ts (`deno task
 * test:e2e`). The fleet kit (deploy/prometheus, deploy/grafana) is parsed
 * here; promtool and a real Prometheus check it in
 * tests/e2e/fleet_kit_test.ts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { ROOT, runMain } from "./cli_util.ts";
import {
  DEPLOY,
  environmentFile,
  exists,
  expandExec,
  fakeBinary,
  installedRoot,
  installSh,
  modeOf,
  PATHS,
  run,
  snapshot,
  tool,
  unitSettings,
} from "./deploy_util.ts";
import { tempDir } from "./temp_dir.ts";
import { RULE_ALERTNAME } from "../alerts/alert_state.ts";

const UNIT = await Deno.readTextFile(join(DEPLOY, "dpu-traceback.service"));
const SERVICE = unitSettings(UNIT, "Service");
const DEFAULTS = await Deno.readTextFile(join(DEPLOY, "default"));

function one(key: string): string {
  const values = SERVICE.get(key) ?? [];
  assert.equal(values.length, 1, `[Service] ${key}= should be set once`);
  return values[0];
}

// --- The unit ----------------------------------------------------------------

Deno.test("systemd-analyze verify passes the installed unit with no output", async () => {
  // --root (supported by verify in systemd 252) instead of a rewritten copy:
  // the unit is checked byte for byte as install.sh installed it, and its
  // ExecStart= must name the path install.sh put the binary at.
  const analyze = tool("systemd-analyze", "systemd");
  await using tmp = await tempDir("deploy_test_");
  const root = await installedRoot(tmp.path);
  const r = await run(analyze, [
    "verify",
    `--root=${root}`,
    join(root, PATHS.unit),
  ]);
  assert.equal(
    `${r.stdout}${r.stderr}`.trim(),
    "",
    "systemd-analyze verify printed warnings",
  );
  assert.equal(r.code, 0);
});

Deno.test("systemd-analyze verify, as used here, catches a broken unit", async () => {
  // The test above is worth something only if verify complains here.
  const analyze = tool("systemd-analyze", "systemd");
  await using tmp = await tempDir("deploy_test_");
  const root = await installedRoot(tmp.path);
  const unit = join(root, PATHS.unit);
  await Deno.writeTextFile(
    unit,
    UNIT.replace(/^RestartSec=/m, "RestartSecs="),
  );
  const typo = await run(analyze, ["verify", `--root=${root}`, unit]);
  assert.match(typo.stderr, /Unknown key 'RestartSecs'/);

  await Deno.writeTextFile(unit, UNIT);
  await Deno.remove(join(root, PATHS.bin));
  const missing = await run(analyze, ["verify", `--root=${root}`, unit]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /dpu-traceback is not executable/);
});

Deno.test("systemd-analyze security rates the unit's exposure 3.0 or less", async () => {
  const analyze = tool("systemd-analyze", "systemd");
  await using tmp = await tempDir("deploy_test_");
  const root = await installedRoot(tmp.path);
  const r = await run(analyze, [
    "security",
    "--offline=true",
    `--root=${root}`,
    join(root, PATHS.unit),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const m =
    /Overall exposure level for dpu-traceback\.service: (\d+\.\d+) (\S+)/
      .exec(r.stdout);
  assert.ok(m, `no overall exposure in:\n${r.stdout}`);
  const exposed = r.stdout.split("\n").filter((l) => l.startsWith("✗"));
  assert.ok(
    Number(m[1]) <= 3.0,
    `exposure ${m[1]} (${m[2]}) is over 3.0:\n${exposed.join("\n")}`,
  );
});

Deno.test("the unit keeps what the agent needs while hardened", () => {
  // V8 compiles to machine code at run time; FFI maps DOCA/NVML executable.
  const mdwe = SERVICE.get("MemoryDenyWriteExecute") ?? ["no"];
  assert.deepEqual(mdwe, ["no"], "MemoryDenyWriteExecute must stay off (V8)");
  // The devices DOCA Telemetry Diag and NVML open.
  assert.equal(one("DevicePolicy"), "closed");
  const devices = SERVICE.get("DeviceAllow") ?? [];
  for (
    const want of [
      "char-fwctl rw",
      "char-infiniband_verbs rw",
      "char-nvidia rw",
      "char-nvidia-frontend rw",
    ]
  ) {
    assert.ok(devices.includes(want), `DeviceAllow=${want} missing`);
  }
  // PrivateDevices= would hide /dev/fwctl, /dev/infiniband and /dev/nvidia*.
  assert.ok(!SERVICE.has("PrivateDevices"));
  // V8 calls pkey_alloc; outside the list it would get EPERM at best.
  assert.match(SERVICE.get("SystemCallFilter")?.[0] ?? "", /pkey_alloc/);
  assert.equal(one("SystemCallErrorNumber"), "EPERM");
  assert.equal(
    one("RestrictAddressFamilies"),
    "AF_UNIX AF_INET AF_INET6 AF_NETLINK",
  );
  // The log directory stays writable under ProtectSystem=strict.
  assert.equal(one("ProtectSystem"), "strict");
  assert.equal(one("LogsDirectory"), "dpu-traceback");
  assert.equal(one("LogsDirectoryMode"), "0750");
  assert.equal(one("WorkingDirectory"), "/var/log/dpu-traceback");
  // Restarts: not for a config error (exit 2); SIGHUP reopens the logs.
  assert.equal(one("Restart"), "on-failure");
  assert.equal(one("RestartPreventExitStatus"), "2");
  assert.equal(one("ExecReload"), "/bin/kill -HUP $MAINPID");
  assert.equal(one("EnvironmentFile"), "-/etc/default/dpu-traceback");
  const unitSection = unitSettings(UNIT, "Unit");
  assert.ok(unitSection.has("StartLimitIntervalSec"));
  assert.ok(unitSection.has("StartLimitBurst"));
});

Deno.test("deploy/default sets every variable ExecStart uses, to install.sh's paths", () => {
  const env = environmentFile(DEFAULTS);
  assert.equal(env.DPU_TRACEBACK_CONFIG, `/${PATHS.config}`);
  // Empty by default: the device comes from the config file.
  assert.equal(env.DPU_TRACEBACK_OPTS, "");
  const used = [...one("ExecStart").matchAll(/\$\{?([A-Za-z_]\w*)\}?/g)].map(
    (m) => m[1],
  );
  assert.ok(used.length > 0);
  for (const name of used) {
    assert.ok(name in env, `${name} is used by ExecStart= but not in default`);
    // Also defaulted in the unit, for a missing /etc/default file.
    assert.ok(
      (SERVICE.get("Environment") ?? []).some((e) => e.startsWith(`${name}=`)),
      `${name} has no Environment= default in the unit`,
    );
  }
});

Deno.test("the unit's command line runs the agent; a bad config exits 2, which the unit does not restart", async () => {
  await using tmp = await tempDir("deploy_test_");
  const config = join(tmp.path, "config.yaml");
  await Deno.writeTextFile(
    config,
    [
      'listen: "off"',
      "monitors:",
      "  - name: nic",
      "    source: sim",
      `    event_log: ${join(tmp.path, "events.log")}`,
      "    columns:",
      '      - { name: port_0_rx_bytes, data_id: "0x1020000100000000" }',
      "    rules: []",
      "",
    ].join("\n"),
  );
  const unitArgs = (env: Record<string, string>) => {
    const argv = expandExec(one("ExecStart"), {
      ...environmentFile(DEFAULTS),
      ...env,
    });
    assert.equal(argv[0], `/${PATHS.bin}`);
    return argv.slice(1);
  };
  // As the unit runs it: no test defaults added, the environment as is.
  const asUnit = { testDefaults: false, noColor: false };
  const ok = await runMain(
    unitArgs({
      DPU_TRACEBACK_CONFIG: config,
      DPU_TRACEBACK_OPTS: "--duration 0.3",
    }),
    asUnit,
  );
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "", "-q: nothing on stdout");

  const bad = await runMain(
    unitArgs({ DPU_TRACEBACK_CONFIG: join(tmp.path, "missing.yaml") }),
    asUnit,
  );
  assert.equal(bad.code, 2, bad.stderr);
  assert.ok(one("RestartPreventExitStatus").split(/\s+/).includes("2"));
});

// --- install.sh ----------------------------------------------------------------

Deno.test("install.sh --root installs every file with its mode", async () => {
  await using tmp = await tempDir("deploy_test_");
  const root = join(tmp.path, "root");
  await Deno.mkdir(root);
  const binary = await fakeBinary(tmp.path);
  const r = await installSh(["--root", root, binary]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.match(r.stdout, /systemctl enable --now dpu-traceback/);

  const expected: [string, number, string | null][] = [
    [PATHS.bin, 0o755, binary],
    [PATHS.unit, 0o644, join(DEPLOY, "dpu-traceback.service")],
    [PATHS.logrotate, 0o644, join(DEPLOY, "dpu-traceback.logrotate")],
    [PATHS.config, 0o644, join(DEPLOY, "example-config.yaml")],
    [PATHS.defaults, 0o644, join(DEPLOY, "default")],
    [PATHS.confDir, 0o750, null],
    [PATHS.logDir, 0o750, null],
  ];
  for (const [path, mode, source] of expected) {
    const full = join(root, path);
    assert.equal(
      (await modeOf(full)).toString(8),
      mode.toString(8),
      `mode of ${path}`,
    );
    if (source !== null) {
      assert.equal(
        await Deno.readTextFile(full),
        await Deno.readTextFile(source),
        `content of ${path}`,
      );
    }
  }
});

Deno.test("install.sh run twice changes nothing the second time", async () => {
  await using tmp = await tempDir("deploy_test_");
  const root = join(tmp.path, "root");
  await Deno.mkdir(root);
  const binary = await fakeBinary(tmp.path);
  assert.equal((await installSh(["--root", root, binary])).code, 0);
  const before = await snapshot(root);
  const again = await installSh(["--root", root, binary]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /nothing to change/);
  // Same paths, modes, inodes, mtimes and contents: nothing was rewritten.
  assert.deepEqual(await snapshot(root), before);
});

Deno.test("install.sh keeps an existing config, puts the new one beside it, and upgrades the binary", async () => {
  await using tmp = await tempDir("deploy_test_");
  const root = join(tmp.path, "root");
  await Deno.mkdir(root);
  assert.equal(
    (await installSh(["--root", root, await fakeBinary(tmp.path)])).code,
    0,
  );
  const mine = "# the operator's\nmonitors: []\n";
  await Deno.writeTextFile(join(root, PATHS.config), mine);
  await Deno.writeTextFile(
    join(root, PATHS.defaults),
    "DPU_TRACEBACK_OPTS=-d mlx5_0\n",
  );

  const newer = join(tmp.path, "newer");
  await Deno.mkdir(newer);
  const r = await installSh([
    "--root",
    root,
    await fakeBinary(newer, "0.2.0"),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readTextFile(join(root, PATHS.config)), mine);
  assert.equal(
    await Deno.readTextFile(join(root, `${PATHS.config}.dist`)),
    await Deno.readTextFile(join(DEPLOY, "example-config.yaml")),
  );
  assert.equal(
    await Deno.readTextFile(join(root, PATHS.defaults)),
    "DPU_TRACEBACK_OPTS=-d mlx5_0\n",
  );
  assert.equal(
    await Deno.readTextFile(join(root, `${PATHS.defaults}.dist`)),
    DEFAULTS,
  );
  assert.match(r.stdout, /kept .*config\.yaml .*config\.yaml\.dist/);
  assert.match(
    await Deno.readTextFile(join(root, PATHS.bin)),
    /dpu-traceback 0\.2\.0/,
  );
  // An upgrade of a configured system does not repeat the first steps.
  assert.doesNotMatch(r.stdout, /enable --now/);

  const before = await snapshot(root);
  const again = await installSh([
    "--root",
    root,
    join(newer, "dpu-traceback"),
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(await snapshot(root), before);
});

Deno.test("install.sh --uninstall keeps config and logs; --purge removes them", async () => {
  await using tmp = await tempDir("deploy_test_");
  const root = join(tmp.path, "root");
  await Deno.mkdir(root);
  assert.equal(
    (await installSh(["--root", root, await fakeBinary(tmp.path)])).code,
    0,
  );
  // What `systemctl enable` and a running agent leave behind.
  const wants = join(root, "etc/systemd/system/multi-user.target.wants");
  await Deno.mkdir(wants);
  await Deno.symlink(`/${PATHS.unit}`, join(wants, "dpu-traceback.service"));
  await Deno.writeTextFile(join(root, PATHS.logDir, "nic-events.log"), "x\n");
  await Deno.mkdir(join(root, `${PATHS.unit}.d`));
  await Deno.writeTextFile(
    join(root, `${PATHS.unit}.d/override.conf`),
    "[Service]\n",
  );

  const r = await installSh(["--root", root, "--uninstall"]);
  assert.equal(r.code, 0, r.stderr);
  for (
    const gone of [
      PATHS.bin,
      PATHS.unit,
      PATHS.logrotate,
      "etc/systemd/system/multi-user.target.wants/dpu-traceback.service",
    ]
  ) {
    assert.ok(!(await exists(join(root, gone))), `${gone} should be gone`);
  }
  for (
    const kept of [
      PATHS.config,
      PATHS.defaults,
      `${PATHS.logDir}/nic-events.log`,
      `${PATHS.unit}.d/override.conf`,
    ]
  ) {
    assert.ok(await exists(join(root, kept)), `${kept} should be kept`);
  }
  // Again: nothing left to remove, still fine.
  assert.equal((await installSh(["--root", root, "--uninstall"])).code, 0);

  const purged = await installSh(["--root", root, "--uninstall", "--purge"]);
  assert.equal(purged.code, 0, purged.stderr);
  for (
    const gone of [
      PATHS.confDir,
      PATHS.defaults,
      PATHS.logDir,
      `${PATHS.unit}.d`,
    ]
  ) {
    assert.ok(!(await exists(join(root, gone))), `${gone} should be gone`);
  }
});

Deno.test("install.sh: usage errors exit 2 with one line, other failures 1", async () => {
  await using tmp = await tempDir("deploy_test_");
  const help = await installSh(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--uninstall/);
  assert.match(help.stdout, /--purge/);
  assert.match(help.stdout, /--root DIR/);

  for (
    const args of [
      ["--bogus"],
      ["--purge"],
      ["--root"],
      ["--root", join(tmp.path, "nowhere")],
      ["--root", tmp.path, "a", "b"],
      ["--root", tmp.path, "--uninstall", "a"],
    ]
  ) {
    const r = await installSh(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^install\.sh: .*\(try --help\)\n$/);
  }

  const missing = await installSh([
    "--root",
    tmp.path,
    join(tmp.path, "no-binary"),
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^install\.sh: error: no binary at .*\n$/);

  // A binary that does not run here: under --root (maybe another
  // machine's tree) only a warning.
  const foreign = join(tmp.path, "foreign");
  await Deno.mkdir(foreign);
  await Deno.writeTextFile(
    join(foreign, "dpu-traceback"),
    "#!/bin/sh\nexit 1\n",
  );
  await Deno.chmod(join(foreign, "dpu-traceback"), 0o755);
  const warned = await installSh([
    "--root",
    tmp.path,
    join(foreign, "dpu-traceback"),
  ]);
  assert.equal(warned.code, 0, warned.stderr);
  assert.match(warned.stderr, /warning: .*--version failed/);
});

// --- The docs ------------------------------------------------------------------

/**
 * Paths the README and docs/ name where install.sh installs: under these,
 * each must be something it installs (or one of OPERATOR_PATHS).
 */
const INSTALLED_PATH =
  /(?<![\w./-])\/(?:etc\/(?:dpu-traceback|default|systemd\/system|logrotate\.d)|usr\/local\/bin)(?:\/[\w.@-]+)*/g;
/**
 * What the docs tell the operator to make there: their own files in the
 * configuration directory, and the drop-in directory `systemctl edit`
 * makes. install.sh creates none of them.
 */
const OPERATOR_PATHS = new Set([
  "/etc/dpu-traceback/web.yml",
  "/etc/dpu-traceback/tls.crt",
  "/etc/dpu-traceback/tls.key",
  "/etc/dpu-traceback/level_labels.ini",
  "/etc/dpu-traceback/am-ca.pem",
  "/etc/dpu-traceback/am-password",
  "/etc/systemd/system/dpu-traceback.service.d",
]);
/** Our unit as systemctl, journalctl -u and systemd-analyze security name it. */
const UNIT_NAME =
  /\b(?:systemctl(?:\s+-[\w-]+)*\s+[\w-]+(?:\s+-[\w-]+)*|journalctl\s+-u|systemd-analyze\s+security)\s+(dpu-traceback[\w.@-]*)/g;

/** README.md and every Markdown file under docs/, relative to the root. */
async function docFiles(): Promise<string[]> {
  const files = ["README.md"];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".md")) files.push(path);
    }
  };
  await walk("docs");
  return files;
}

Deno.test("every path, unit and variable of the service that the README and docs/ name is what install.sh installs", async () => {
  await using tmp = await tempDir("deploy_test_");
  const root = join(tmp.path, "root");
  await Deno.mkdir(root);
  const r = await installSh(["--root", root, await fakeBinary(tmp.path)]);
  assert.equal(r.code, 0, r.stderr);
  const variables = environmentFile(DEFAULTS);
  const wrong = new Set<string>();
  const named = { paths: 0, units: 0, variables: 0 };
  for (const file of await docFiles()) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const [match] of text.matchAll(INSTALLED_PATH)) {
      // A sentence's full stop is not part of the path.
      const path = match.replace(/\.+$/, "");
      named.paths++;
      if (OPERATOR_PATHS.has(path) || await exists(join(root, path))) continue;
      wrong.add(`${file}: ${path} (not installed)`);
    }
    for (const [, match] of text.matchAll(UNIT_NAME)) {
      const unit = match.replace(/\.+$/, "");
      const file_ = unit.endsWith(".service") ? unit : `${unit}.service`;
      named.units++;
      if (await exists(join(root, "etc/systemd/system", file_))) continue;
      wrong.add(`${file}: unit ${unit} (installed: ${PATHS.unit})`);
    }
    for (const [variable] of text.matchAll(/\bDPU_TRACEBACK_[A-Z_]+/g)) {
      named.variables++;
      if (variable in variables) continue;
      wrong.add(`${file}: ${variable} (not in deploy/default)`);
    }
  }
  // The patterns still find what the docs name (the config, the unit...).
  assert.ok(Object.values(named).every((n) => n > 0), JSON.stringify(named));
  assert.deepEqual([...wrong], []);
});

// --- The fleet kit (promtool and a real Prometheus: tests/e2e/fleet_kit_test.ts)

Deno.test("the fleet kit's rules, rule tests and dashboard are there, parse, and cover every alert", async () => {
  const rules = parseYaml(
    await Deno.readTextFile(
      join(DEPLOY, "prometheus", "dpu-traceback.rules.yml"),
    ),
  ) as {
    groups: {
      rules: {
        alert?: string;
        record?: string;
        expr: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
      }[];
    }[];
  };
  const all = rules.groups.flatMap((g) => g.rules);
  const alerts = all.filter((r) => r.alert !== undefined);
  assert.ok(alerts.length >= 8, "the alerting rules");
  assert.ok(all.some((r) => r.record?.startsWith("rail:")), "rail records");
  for (const rule of alerts) {
    assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
    assert.ok(rule.annotations?.description, `${rule.alert}: description`);
    // Every alert routes by severity: its own label, or (for a rule's
    // events) the rule's severity joined from rule_info.
    assert.ok(
      rule.labels?.severity !== undefined ||
        /group_left \(severity\)\s+dpu_traceback_rule_info/.test(rule.expr),
      `${rule.alert}: severity`,
    );
  }

  // The scrape path names a rule's event as the agent's push does, so one
  // silence or route on alertname and rule covers both; it carries the
  // rule's summary and runbook from rule_info.
  const fired = alerts.find((r) => r.alert === RULE_ALERTNAME);
  assert.ok(fired, `${RULE_ALERTNAME}: the pushed alerts' name`);
  assert.match(fired.annotations!.summary, /label "summary"/);
  assert.match(fired.annotations!.runbook_url ?? "", /label "runbook_url"/);
  // A command to the agent works with instance relabelled to the bare
  // host name (docs/fleet.md): the port is added where instance has none.
  for (const rule of alerts) {
    for (const text of Object.values(rule.annotations ?? {})) {
      for (const after of text.split("://{{ $labels.instance }}").slice(1)) {
        assert.ok(
          after.startsWith(
            '{{ if not (match ":[0-9]+$" $labels.instance) }}:9477{{ end }}/',
          ),
          `${rule.alert}: ${after.slice(0, 80)}`,
        );
      }
    }
  }

  // Each alert has a unit test where it fires and one where it does not.
  const tests = parseYaml(
    await Deno.readTextFile(
      join(DEPLOY, "prometheus", "dpu-traceback.rules.test.yml"),
    ),
  ) as {
    rule_files: string[];
    tests: {
      alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
    }[];
  };
  assert.deepEqual(tests.rule_files, ["dpu-traceback.rules.yml"]);
  const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const { alert } of alerts) {
    const mine = cases.filter((c) => c.alertname === alert);
    assert.ok(mine.some((c) => c.exp_alerts.length > 0), `${alert} fires`);
    assert.ok(mine.some((c) => c.exp_alerts.length === 0), `${alert} quiet`);
  }

  const dashboard = JSON.parse(
    await Deno.readTextFile(join(DEPLOY, "grafana", "dpu-traceback.json")),
  ) as {
    schemaVersion: number;
    templating: { list: { name: string; type: string }[] };
    panels: {
      type: string;
      title: string;
      datasource?: { uid: string };
      targets?: { expr: string; datasource: { uid: string } }[];
    }[];
  };
  assert.ok(dashboard.schemaVersion >= 36, "a current Grafana schema");
  assert.deepEqual(
    dashboard.templating.list.map((v) => [v.name, v.type]),
    [
      ["datasource", "datasource"],
      ["job", "query"],
      ["rail", "query"],
      ["rack", "query"],
      ["instance", "query"],
    ],
  );
  const panels = dashboard.panels.filter((p) => p.type !== "row");
  assert.ok(panels.length >= 15, "the panels");
  for (const panel of panels) {
    assert.equal(panel.datasource?.uid, "${datasource}", panel.title);
    assert.ok((panel.targets ?? []).length > 0, `${panel.title}: a query`);
    for (const target of panel.targets ?? []) {
      assert.equal(target.datasource.uid, "${datasource}", panel.title);
      assert.match(target.expr, /dpu_traceback_|^sum\(up|count\(up|process_/);
    }
  }
});
