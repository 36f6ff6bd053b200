import assert from "node:assert/strict";
import { join } from "node:path";
import { errorLines, runMain } from "../tests/cli_util.ts";
import { tempDir } from "../tests/temp_dir.ts";

/**
 * Long enough for a loaded machine to start Deno and refuse; a child that
 * is still running by then is hanging, and is ended (SIGTERM) so the test
 * fails instead of stalling.
 */
const HANG_MS = 60_000;

/** An agent-form configuration on the simulator, with `extra` keys. */
function agentConfig(extra: string): string {
  return `instance: dpu-1
${extra}
monitors: [{ name: nic, source: sim, columns: [{ name: rx, data_id: "0x1" }] }]
`;
}

/** Makes a FIFO at `path`, as an operator's `mkfifo` would. */
async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

/** One file the agent reads at start, named as something it cannot read. */
interface Case {
  readonly what: string;
  /** The arguments after the command: `--config FILE` and more. */
  readonly args: readonly string[];
  /** The one line both commands must print. */
  readonly line: string;
}

/**
 * Runs `check-config` and `run` on `c`; both must end with exit 2 and the
 * one line, promptly, and `run` must not have opened its events log.
 */
async function assertBothRefuse(c: Case, log: string): Promise<void> {
  const args = [...c.args];
  // check-config takes the file positionally; run takes --config.
  const check = await runMain(
    ["check-config", ...args.slice(1)],
    { signal: AbortSignal.timeout(HANG_MS) },
  );
  assert.equal(check.code, 2, `check-config, ${c.what}: ${check.stderr}`);
  assert.equal(check.stdout, "", c.what);
  assert.deepEqual(errorLines(check.stderr), [c.line], c.what);
  const run = await runMain(
    ["run", ...args, "--source", "sim", "--event-log", log],
    { signal: AbortSignal.timeout(HANG_MS) },
  );
  assert.equal(run.code, 2, `run, ${c.what}: ${run.stderr}`);
  assert.deepEqual(errorLines(run.stderr), [c.line], c.what);
  await assert.rejects(Deno.stat(log), Deno.errors.NotFound, c.what);
}

Deno.test("a FIFO named as any file the agent reads at start is refused at once, exit 2, by check-config and run alike", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, "fifo");
  await mkfifo(fifo);
  const file = async (name: string, text: string) => {
    const path = join(dir.path, name);
    await Deno.writeTextFile(path, text);
    return path;
  };
  const web = await file(
    "web.yml",
    `tls_server_config:\n  cert_file: ${fifo}\n  key_file: ${fifo}\n`,
  );
  const not = "is a FIFO, not a regular file";
  const am = "Alertmanager https://127.0.0.1:9";
  const cases: Case[] = [
    {
      what: "the configuration",
      args: ["--config", fifo],
      line: `dpu-traceback: Cannot load config ${fifo}: ${not}`,
    },
    {
      what: "--data-ids",
      args: ["--config", "deploy/example-rules-only.json", "--data-ids", fifo],
      line: `dpu-traceback: Cannot load config ${fifo}: ${not}`,
    },
    {
      what: "the web config",
      args: [
        "--config",
        await file("web.yaml", agentConfig(`web_config_file: ${fifo}`)),
      ],
      line: `dpu-traceback: Cannot load web config ${fifo}: ${not}`,
    },
    {
      what: "the web config's certificate",
      args: [
        "--config",
        await file("cert.yaml", agentConfig(`web_config_file: ${web}`)),
      ],
      line: `dpu-traceback: Cannot load web config ${web}: ${fifo}: ${not}`,
    },
    {
      what: "the labels file",
      args: [
        "--config",
        await file("labels.yaml", agentConfig(`labels_file: ${fifo}`)),
      ],
      line: `dpu-traceback: Cannot read labels file ${fifo}: ${not}`,
    },
    {
      what: "an Alertmanager password",
      args: [
        "--config",
        await file(
          "password.yaml",
          agentConfig(
            `alerting: { alertmanagers: [{ url: "https://127.0.0.1:9", basic_auth: { username: agent, password_file: ${fifo} } }] }`,
          ),
        ),
      ],
      line:
        `dpu-traceback: Cannot read the password of ${am} from ${fifo}: ${not}`,
    },
    {
      what: "an Alertmanager token",
      args: [
        "--config",
        await file(
          "token.yaml",
          agentConfig(
            `alerting: { alertmanagers: [{ url: "https://127.0.0.1:9", bearer_token_file: ${fifo} }] }`,
          ),
        ),
      ],
      line:
        `dpu-traceback: Cannot read the bearer token of ${am} from ${fifo}: ${not}`,
    },
    {
      what: "an Alertmanager CA",
      args: [
        "--config",
        await file(
          "ca.yaml",
          agentConfig(
            `alerting: { alertmanagers: [{ url: "https://127.0.0.1:9", tls: { ca_file: ${fifo} } }] }`,
          ),
        ),
      ],
      line:
        `dpu-traceback: Cannot read the CA certificates of ${am} from ${fifo}: ${not}`,
    },
  ];
  const log = join(dir.path, "events.log");
  for (const c of cases) await assertBothRefuse(c, log);
});

Deno.test("what check-config accepts run runs: a secret file of /dev/zero or a directory fails both, exit 2, one line", async () => {
  await using dir = await tempDir();
  const am = "Alertmanager https://127.0.0.1:9";
  const cases: Case[] = [];
  for (
    const [path, kind] of [
      ["/dev/zero", "a character device"],
      [dir.path, "a directory"],
    ]
  ) {
    const password = join(dir.path, `password-${cases.length}.yaml`);
    await Deno.writeTextFile(
      password,
      agentConfig(
        `alerting: { alertmanagers: [{ url: "https://127.0.0.1:9", basic_auth: { username: agent, password_file: ${path} } }] }`,
      ),
    );
    cases.push({
      what: `password_file ${path}`,
      args: ["--config", password],
      line:
        `dpu-traceback: Cannot read the password of ${am} from ${path}: is ${kind}, not a regular file`,
    });
    const ca = join(dir.path, `ca-${cases.length}.yaml`);
    await Deno.writeTextFile(
      ca,
      agentConfig(
        `alerting: { alertmanagers: [{ url: "https://127.0.0.1:9", tls: { ca_file: ${path} } }] }`,
      ),
    );
    cases.push({
      what: `ca_file ${path}`,
      args: ["--config", ca],
      line:
        `dpu-traceback: Cannot read the CA certificates of ${am} from ${path}: is ${kind}, not a regular file`,
    });
  }
  const log = join(dir.path, "events.log");
  for (const c of cases) await assertBothRefuse(c, log);
});
