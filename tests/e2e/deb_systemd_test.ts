/**
 * The Debian package's service under a real systemd: the amd64 package is
 * installed in a container booted with `systemd-nspawn` on an overlay of
 * this machine's own root (no image to fetch; every change is thrown away),
 * and the unit is started with all its hardening, as an operator would:
 * the kernel source samples `lo` with the binary's permissions, the GPU
 * monitor reads the NVML simulator installed where the driver's library
 * goes, /metrics answers behind basic auth (its bcrypt worker loads from
 * the package's node_modules), the journal has the agent's lines, `reload` reopens the logs,
 * `restart` starts on Deno's kept compiled modules, `stop` ends in exit 0,
 * and `dpkg -r` stops and disables it and removes that cache.
 *
 * Needs root, overlayfs, and Debian's `systemd-container`
 * (`apt-get install systemd-container`); `.ci/run` installs it before this
 * suite. Run with `deno task test:e2e`.
 *
 * @module
 */

import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { join } from "node:path";
import { buildDeb } from "../../deploy/deb/build.ts";
import { DENO_CACHE_DIR, WRAPPER } from "../../deploy/deb/layout.ts";
import { type Ran, run, tool } from "../deploy_util.ts";
import { buildNvmlSim } from "../fixtures/libnvml_sim/build.ts";
import { tempDir } from "../temp_dir.ts";
import { freePorts } from "./fleet_util.ts";

const UNIT = "dpu-traceback.service";

function ok(r: Ran, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

/** The child processes of `pid` (from /proc/PID/task/TID/children). */
async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    const text = await Deno.readTextFile(
      `/proc/${pid}/task/${task.name}/children`,
    ).catch(() => "");
    out.push(...text.split(" ").filter((s) => s !== "").map(Number));
  }
  return out;
}

/** Polls `check` every 100 ms until it returns a value, for at most `ms`. */
async function until<T>(
  what: string,
  ms: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The kernel monitor on `lo`, with a rule that holds from the first sample,
 * and the GPU monitor `gpu: auto` adds where libnvidia-ml.so.1 is.
 */
function config(port: number): string {
  return `listen: "127.0.0.1:${port}"
web_config_file: /etc/dpu-traceback/web.yml
gpu: auto
monitors:
  - name: host
    source: kernel
    device: lo
    sample_period_ns: 10000000
    depth: 10
    event_log: /var/log/dpu-traceback/host-events.log
    columns:
      - { name: rx_packets, data_id: "netdev:rx_packets" }
    rules:
      - name: always
        column: rx_packets
        comparison_type: lt
        comparison_value: 9007199254740991
`;
}

Deno.test("the package's service runs under systemd with its hardening: samples, serves, reloads, restarts, stops, and goes with dpkg -r", async () => {
  assert.equal(Deno.uid(), 0, "mounting and booting a container need root");
  const nspawn = tool("systemd-nspawn", "systemd-container");
  await using tmp = await tempDir("deb_systemd_test_");
  const deb = await buildDeb("amd64", join(tmp.path, "dist"), {
    compression: "gzip",
  });

  // The container's root: this machine's, read-only under a tmpfs overlay.
  const upper = join(tmp.path, "upper");
  const root = join(tmp.path, "root");
  await Deno.mkdir(upper);
  await Deno.mkdir(root);
  ok(
    await run("mount", ["-t", "tmpfs", "-o", "size=1g", "tmpfs", upper]),
    "mount tmpfs",
  );
  const mounted = [upper];
  let container: Deno.ChildProcess | undefined;
  try {
    await Deno.mkdir(join(upper, "u"));
    await Deno.mkdir(join(upper, "w"));
    ok(
      await run("mount", [
        "-t",
        "overlay",
        "-o",
        `lowerdir=/,upperdir=${upper}/u,workdir=${upper}/w`,
        "overlay",
        root,
      ]),
      "mount overlay",
    );
    mounted.unshift(root);
    await Deno.copyFile(deb, join(root, "root/dpu-traceback.deb"));
    // The NVML simulator where the GPU driver's library goes.
    const nvml = await buildNvmlSim();
    try {
      await Deno.copyFile(
        nvml.lib,
        join(root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
      );
    } finally {
      await nvml.cleanup();
    }
    // A machine ID of its own, so that its journal is not this machine's.
    await Deno.writeTextFile(
      join(root, "etc/machine-id"),
      crypto.randomUUID().replaceAll("-", "") + "\n",
    );

    container = new Deno.Command(nspawn, {
      args: [
        "--quiet",
        "-D",
        root,
        "--boot",
        `--machine=dtb-e2e-${Deno.pid}`,
        "--register=no",
        "--keep-unit",
        "--link-journal=no",
        "--console=pipe",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const nspawnPid = container.pid;
    // The container's PID 1 (systemd) is nspawn's child.
    const init = await until("the container's systemd", 30_000, async () => {
      for (const pid of await childrenOf(nspawnPid)) {
        const comm = await Deno.readTextFile(`/proc/${pid}/comm`)
          .catch(() => "");
        if (comm.trim() === "systemd") return pid;
      }
      return undefined;
    });
    const inside = (args: string[]) =>
      run("nsenter", ["-t", String(init), "-a", ...args]);
    const state = await until("boot", 60_000, async () => {
      const r = await inside(["systemctl", "is-system-running"]);
      const s = r.stdout.trim();
      return s === "running" || s === "degraded" ? s : undefined;
    });
    assert.ok(state !== undefined);

    // Install, configure, check, start: as docs/service.md says.
    const installed = ok(
      await inside(["dpkg", "-i", "/root/dpu-traceback.deb"]),
      "dpkg -i",
    );
    assert.match(installed, /the service is not enabled or started/);
    const [port] = freePorts(1);
    await Deno.writeTextFile(
      join(root, "etc/dpu-traceback/config.yaml"),
      config(port),
    );
    await Deno.writeTextFile(
      join(root, "etc/dpu-traceback/web.yml"),
      `basic_auth_users:\n  alice: "${bcrypt.hashSync("alice pw", 4)}"\n`,
    );
    ok(
      await inside([WRAPPER, "check-config", "/etc/dpu-traceback/config.yaml"]),
      "check-config",
    );
    ok(
      await inside(["systemctl", "enable", "--now", UNIT]),
      "systemctl enable --now",
    );

    // Its network is this machine's: scrape it from here.
    const scrape = () =>
      fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `Basic ${btoa("alice:alice pw")}` },
      }).then(
        (r) => r.ok ? r.text() : (r.body?.cancel(), undefined),
        () => undefined,
      );
    const metric = (body: string, name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, "m").exec(body)?.[1]);
    const body = await until("/metrics with samples", 30_000, async () => {
      const text = await scrape();
      return text !== undefined &&
          metric(text, 'dpu_traceback_samples_total\\{monitor="host"\\}') > 0
        ? text
        : undefined;
    });
    assert.equal(
      metric(
        body,
        'dpu_traceback_rule_active\\{monitor="host",rule="always"\\}',
      ),
      1,
      body,
    );
    const refused = await fetch(`http://127.0.0.1:${port}/metrics`, {
      headers: { authorization: `Basic ${btoa("alice:wrong")}` },
    });
    await refused.body?.cancel();
    assert.equal(refused.status, 401);
    await until("GPU samples on /metrics", 30_000, async () => {
      const text = await scrape();
      return text !== undefined &&
          metric(text, 'dpu_traceback_samples_total\\{monitor="gpu"\\}') > 0
        ? true
        : undefined;
    });
    const mainPid = () =>
      inside(["systemctl", "show", "-P", "MainPID", UNIT])
        .then((r) => r.stdout.trim());
    const firstPid = await mainPid();
    assert.match(firstPid, /^[1-9]\d*$/);
    const journal = () =>
      inside(["journalctl", "-u", UNIT, "--no-pager", "-o", "cat"])
        .then((r) => r.stdout);
    assert.match(
      await journal(),
      new RegExp(`^metrics on http://127\\.0\\.0\\.1:${port}/$`, "m"),
    );
    assert.ok(
      (await Deno.stat(join(root, DENO_CACHE_DIR.slice(1), "gen")))
        .isDirectory,
      `${DENO_CACHE_DIR}/gen: the service kept no compiled modules`,
    );

    // Reload: SIGHUP, the logs reopened, the same process.
    ok(await inside(["systemctl", "reload", UNIT]), "systemctl reload");
    await until(
      "SIGHUP in the journal",
      10_000,
      async () =>
        /SIGHUP: reopening the events logs/.test(await journal()) || undefined,
    );
    assert.equal(await mainPid(), firstPid);

    // Restart: a new process, serving again.
    ok(await inside(["systemctl", "restart", UNIT]), "systemctl restart");
    assert.notEqual(await mainPid(), firstPid);
    await until("/metrics after the restart", 30_000, scrape);

    // Stop: SIGTERM, the events written, exit 0.
    ok(await inside(["systemctl", "stop", UNIT]), "systemctl stop");
    const shown = ok(
      await inside([
        "systemctl",
        "show",
        "-p",
        "Result",
        "-p",
        "ExecMainStatus",
        UNIT,
      ]),
      "systemctl show",
    );
    assert.match(shown, /^Result=success$/m);
    assert.match(shown, /^ExecMainStatus=0$/m);
    assert.match(
      await Deno.readTextFile(
        join(root, "var/log/dpu-traceback/host-events.log"),
      ),
      /<<Event start>> .*Rule: "always"/,
    );

    // dpkg -r: stopped, disabled, the program and its cache gone.
    ok(await inside(["systemctl", "start", UNIT]), "systemctl start");
    ok(await inside(["dpkg", "-r", "dpu-traceback"]), "dpkg -r");
    const active = await inside(["systemctl", "is-active", UNIT]);
    assert.notEqual(active.stdout.trim(), "active");
    for (
      const path of [
        WRAPPER,
        DENO_CACHE_DIR,
        `/etc/systemd/system/multi-user.target.wants/${UNIT}`,
      ]
    ) {
      const left = await inside(["test", "-e", path]);
      assert.notEqual(left.code, 0, `${path} is left after dpkg -r`);
    }
  } finally {
    if (container !== undefined) {
      container.kill("SIGTERM");
      const timer = setTimeout(() => container?.kill("SIGKILL"), 20_000);
      await container.status;
      clearTimeout(timer);
    }
    for (const path of mounted) await run("umount", [path]);
  }
});
