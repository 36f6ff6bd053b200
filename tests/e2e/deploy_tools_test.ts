/**
 * The deploy files checked with tools a fresh machine lacks:
 * deploy/install.sh linted by shellcheck, and the logrotate file (a dry
 * run, a real rotation, and the agent reopening its log on the SIGHUP).
 * The rest of the deploy checks (the systemd unit with systemd-analyze,
 * install.sh into a temporary root, the EnvironmentFile template) are in
 * tests/deploy_test.ts and run with `deno task test`.
 *
 * Needs Debian's `shellcheck` and `logrotate` (`apt-get install shellcheck
 * logrotate`); without them the tests fail, naming the package, rather than
 * skip. `.ci/run` installs them before this suite. Run with
 * `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnMain } from "../cli_util.ts";
import { DEPLOY, modeOf, run, tool } from "../deploy_util.ts";
import { tempDir } from "../temp_dir.ts";
import { wrapperScript } from "../../deploy/deb/wrapper.ts";

// --- install.sh ----------------------------------------------------------------

Deno.test("install.sh is shellcheck-clean", async () => {
  const shellcheck = tool("shellcheck", "shellcheck");
  const r = await run(shellcheck, ["--shell=sh", join(DEPLOY, "install.sh")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

Deno.test("the Debian package's maintainer scripts and command are shellcheck-clean", async () => {
  const shellcheck = tool("shellcheck", "shellcheck");
  await using tmp = await tempDir("deploy_tools_test_");
  const wrapper = join(tmp.path, "dpu-traceback");
  await Deno.writeTextFile(wrapper, wrapperScript());
  const scripts = ["postinst", "prerm", "postrm"]
    .map((name) => join(DEPLOY, "deb", name));
  const r = await run(shellcheck, ["--shell=sh", ...scripts, wrapper]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

// --- logrotate -----------------------------------------------------------------

/**
 * The shipped logrotate file with its log directory moved to `logs`, at a
 * path logrotate accepts (it ignores group- or world-writable configs).
 * Not root: logrotate could not chown a new file to root, so the owner is
 * dropped (the mode stays).
 */
async function logrotateConfig(tmp: string, logs: string): Promise<string> {
  let text = await Deno.readTextFile(join(DEPLOY, "dpu-traceback.logrotate"));
  assert.ok(text.includes("/var/log/dpu-traceback/*.log {"));
  text = text.replace("/var/log/dpu-traceback/", `${logs}/`);
  if (Deno.uid() !== 0) {
    text = text.replace("create 0640 root root", "create 0640");
  }
  const path = join(tmp, "logrotate.conf");
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o644);
  return path;
}

/** A systemctl stand-in for the postrotate script: logs its arguments. */
async function fakeSystemctl(dir: string): Promise<string> {
  await Deno.mkdir(dir);
  const path = join(dir, "systemctl");
  await Deno.writeTextFile(
    path,
    [
      "#!/bin/sh",
      'echo "$*" >> "$CALLS"',
      "case $1 in",
      'is-active) exit "$FAKE_ACTIVE" ;;',
      'kill) if [ -n "${AGENT_PID:-}" ]; then kill -HUP "$AGENT_PID"; fi ;;',
      "esac",
      "exit 0",
      "",
    ].join("\n"),
  );
  await Deno.chmod(path, 0o755);
  return dir;
}

Deno.test("logrotate --debug reads the shipped file without complaint", async () => {
  const logrotate = tool("logrotate", "logrotate");
  await using tmp = await tempDir("deploy_tools_test_");
  // A copy: a checkout with umask 002 makes the file group-writable,
  // which logrotate refuses.
  const conf = join(tmp.path, "dpu-traceback");
  await Deno.copyFile(join(DEPLOY, "dpu-traceback.logrotate"), conf);
  await Deno.chmod(conf, 0o644);
  const r = await run(logrotate, [
    "--debug",
    "--state",
    join(tmp.path, "state"),
    conf,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout + r.stderr;
  assert.match(
    out,
    /rotating pattern: \/var\/log\/dpu-traceback\/\*\.log\s+104857600 bytes \(10 rotations\)/,
  );
  assert.doesNotMatch(out, /error/i);
});

Deno.test("logrotate renames the logs and sends SIGHUP only to a running service", async () => {
  const logrotate = tool("logrotate", "logrotate");
  for (const active of [true, false]) {
    await using tmp = await tempDir("deploy_tools_test_");
    const logs = join(tmp.path, "logs");
    await Deno.mkdir(logs);
    await Deno.writeTextFile(join(logs, "nic-events.log"), "row\n");
    await Deno.writeTextFile(join(logs, "pcie-events.log"), "row\n");
    const conf = await logrotateConfig(tmp.path, logs);
    const calls = join(tmp.path, "calls");
    const r = await run(logrotate, [
      "-f",
      "--state",
      join(tmp.path, "state"),
      conf,
    ], {
      clearEnv: true,
      env: {
        PATH: await fakeSystemctl(join(tmp.path, "bin")),
        CALLS: calls,
        FAKE_ACTIVE: active ? "0" : "3",
      },
    });
    assert.equal(r.code, 0, r.stderr);
    const names = [];
    for await (const e of Deno.readDir(logs)) names.push(e.name);
    names.sort();
    assert.equal(names.length, 4, names.join(" "));
    assert.match(names[0], /^nic-events\.log$/);
    assert.match(names[1], /^nic-events\.log-\d{8}-\d+$/);
    assert.equal(
      (await modeOf(join(logs, "nic-events.log"))).toString(8),
      "640",
    );
    assert.equal(await Deno.readTextFile(join(logs, names[1])), "row\n");
    // sharedscripts: one check, at most one signal, for both logs.
    const expected = active
      ? "is-active --quiet dpu-traceback.service\n" +
        "kill --kill-who=main --signal=HUP dpu-traceback.service\n"
      : "is-active --quiet dpu-traceback.service\n";
    assert.equal(await Deno.readTextFile(calls), expected);
  }
  // No systemctl at all (a container): postrotate must not fail.
  await using tmp = await tempDir("deploy_tools_test_");
  const logs = join(tmp.path, "logs");
  await Deno.mkdir(logs);
  await Deno.writeTextFile(join(logs, "events.log"), "row\n");
  const empty = join(tmp.path, "empty");
  await Deno.mkdir(empty);
  const r = await run(
    logrotate,
    [
      "-f",
      "--state",
      join(tmp.path, "state"),
      await logrotateConfig(tmp.path, logs),
    ],
    { clearEnv: true, env: { PATH: empty } },
  );
  assert.equal(r.code, 0, r.stderr);
});

Deno.test("logrotate and the agent: the renamed log is finished, the new one continues after SIGHUP", async () => {
  const logrotate = tool("logrotate", "logrotate");
  await using tmp = await tempDir("deploy_tools_test_");
  const logs = join(tmp.path, "logs");
  await Deno.mkdir(logs);
  const log = join(logs, "nic-events.log");
  const config = join(tmp.path, "config.yaml");
  // A rule that is always active, so every sample is a row.
  await Deno.writeTextFile(
    config,
    [
      'listen: "off"',
      "monitors:",
      "  - name: nic",
      "    source: sim",
      "    depth: 10",
      `    event_log: ${log}`,
      "    columns:",
      '      - { name: port_0_rx_bytes, data_id: "0x1020000100000000" }',
      "    rules:",
      "      - { name: always, column: port_0_rx_bytes, comparison_type: gt, comparison_value: 0 }",
      "",
    ].join("\n"),
  );
  const agent = spawnMain(["run", "-q", "-c", config], {
    testDefaults: false,
    noColor: false,
  });
  const output = Promise.all([
    new Response(agent.stdout).text(),
    new Response(agent.stderr).text(),
  ]);
  const ROW = /^\d{19}, \d+$/m;
  const waitFor = async (path: string, ok: (text: string) => boolean) => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const text = await Deno.readTextFile(path).catch(() => "");
      if (ok(text)) return text;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${path} did not get what the test waited for`);
  };
  try {
    await waitFor(log, (t) => ROW.test(t));
    const calls = join(tmp.path, "calls");
    const r = await run(
      logrotate,
      [
        "-f",
        "--state",
        join(tmp.path, "state"),
        await logrotateConfig(tmp.path, logs),
      ],
      {
        clearEnv: true,
        env: {
          PATH: await fakeSystemctl(join(tmp.path, "bin")),
          CALLS: calls,
          FAKE_ACTIVE: "0",
          AGENT_PID: String(agent.pid),
        },
      },
    );
    assert.equal(r.code, 0, r.stderr);
    // The agent reopened the path: a header block, then rows again.
    await waitFor(
      log,
      (t) => t.startsWith("Telemetry monitor") && ROW.test(t),
    );
  } finally {
    agent.kill("SIGTERM");
  }
  const status = await agent.status;
  const [, stderr] = await output;
  assert.equal(status.code, 0, stderr);
  assert.match(stderr, /SIGHUP: reopening/);
  const rotated = [];
  for await (const e of Deno.readDir(logs)) {
    if (/^nic-events\.log-\d{8}-\d+$/.test(e.name)) rotated.push(e.name);
  }
  assert.equal(rotated.length, 1);
  const old = await Deno.readTextFile(join(logs, rotated[0]));
  assert.ok(ROW.test(old));
  // Whole lines only: the file was finished, not cut mid-row.
  assert.ok(old.endsWith("\n"));
});
