/**
 * Network namespaces with a veth pair between them, for tests that read
 * the real kernel's NIC counters without touching the machine's own
 * interfaces. Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN) and
 * iproute2's `ip`.
 *
 * @module
 */

/** Whether this process can make namespaces and veth pairs (root with `ip`). */
export function canMakeNamespaces(): boolean {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  try {
    return new Deno.Command("ip", { args: ["-V"], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** One end of the pair: its namespace, interface, MAC and IPv4 address. */
export interface VethEnd {
  readonly namespace: string;
  readonly interface: string;
  readonly mac: string;
  readonly address: string;
}

/** The pair {@linkcode withVethPair} made. */
export interface VethPair {
  readonly a: VethEnd;
  readonly b: VethEnd;
}

let made = 0;
/**
 * This module instance's own: `deno test --parallel` runs files in workers of
 * one process, so the process id and a count alone repeat across files.
 */
const INSTANCE = crypto.getRandomValues(new Uint16Array(1))[0].toString(36);

/**
 * Makes two namespaces joined by a veth pair (`a` in one, `b` in the
 * other; 10.23.0.1/24 and 10.23.0.2/24, fixed MACs, each other's neighbour
 * entry permanent and IPv6 off, so that nothing crosses the pair but what
 * the test sends; `queues` receive and transmit queues each, 1 unless
 * told), runs `body`, then deletes both namespaces (and with
 * them the pair), whatever happened. Names carry the process id, a tag of
 * this module instance and a count, so files running in parallel do not
 * collide.
 */
export async function withVethPair<T>(
  body: (pair: VethPair) => Promise<T>,
  options: { queues?: number } = {},
): Promise<T> {
  const queues = String(options.queues ?? 1);
  const tag = `${Deno.pid.toString(36)}${INSTANCE}${(made++).toString(36)}`;
  const a: VethEnd = {
    namespace: `dtb-${tag}-a`,
    interface: `dtb${tag}a`,
    mac: "02:23:00:00:00:01",
    address: "10.23.0.1",
  };
  const b: VethEnd = {
    namespace: `dtb-${tag}-b`,
    interface: `dtb${tag}b`,
    mac: "02:23:00:00:00:02",
    address: "10.23.0.2",
  };
  try {
    for (const end of [a, b]) {
      await ip("netns", "add", end.namespace);
      await run(
        "ip",
        "netns",
        "exec",
        end.namespace,
        "sysctl",
        "-qw",
        "net.ipv6.conf.all.disable_ipv6=1",
        "net.ipv6.conf.default.disable_ipv6=1",
      );
    }
    await ip(
      ..."link add".split(" "),
      a.interface,
      "netns",
      a.namespace,
      "address",
      a.mac,
      "numrxqueues",
      queues,
      "numtxqueues",
      queues,
      "type",
      "veth",
      "peer",
      "name",
      b.interface,
      "netns",
      b.namespace,
      "address",
      b.mac,
      "numrxqueues",
      queues,
      "numtxqueues",
      queues,
    );
    for (const [end, other] of [[a, b], [b, a]]) {
      const n = ["-n", end.namespace];
      await ip(...n, "addr", "add", `${end.address}/24`, "dev", end.interface);
      await ip(...n, "link", "set", end.interface, "up");
      await ip(...n, "link", "set", "lo", "up");
      await ip(
        ...n,
        "neigh",
        "replace",
        other.address,
        "lladdr",
        other.mac,
        "dev",
        end.interface,
        "nud",
        "permanent",
      );
    }
    return await body({ a, b });
  } finally {
    for (const end of [a, b]) {
      await new Deno.Command("ip", {
        args: ["netns", "del", end.namespace],
        stdout: "null",
        stderr: "null",
      }).output();
    }
  }
}

/**
 * From inside `b`'s namespace (a test child there), after `b`'s end was
 * deleted: makes the pair again with the same names and MACs, `b`'s end
 * here and `a`'s in its namespace, both down and without addresses, as a
 * driver reload leaves an interface.
 */
export function remakeVethPair({ a, b }: VethPair): Promise<string> {
  return run(
    "ip",
    ..."link add".split(" "),
    b.interface,
    "address",
    b.mac,
    "type",
    "veth",
    "peer",
    "name",
    a.interface,
    "address",
    a.mac,
    "netns",
    a.namespace,
  );
}

function ip(...args: string[]): Promise<string> {
  return run("ip", ...args);
}

/** Runs a command to the end; its stdout, or an error with its stderr. */
export async function run(command: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command(command, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return stdoutOf(`${command} ${args.join(" ")}`, output);
}

/**
 * As {@linkcode run}, without giving the event loop up: for a child that
 * must not let anything run between its steps.
 */
export function runSync(command: string, args: readonly string[]): string {
  const output = new Deno.Command(command, {
    args: [...args],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  return stdoutOf(`${command} ${args.join(" ")}`, output);
}

/** A finished command's stdout, or an error naming it with its stderr. */
function stdoutOf(what: string, output: Deno.CommandOutput): string {
  const text = new TextDecoder();
  if (!output.success) {
    throw new Error(
      `${what}: exit ${output.code}: ${text.decode(output.stderr).trim()}`,
    );
  }
  return text.decode(output.stdout);
}

/**
 * `deno run -A ARGS` inside `namespace`, as `ip netns exec` runs it: for
 * an agent or a benchmark that must see that namespace's interfaces.
 */
export function denoIn(
  namespace: string,
  args: readonly string[],
  options: Omit<Deno.CommandOptions, "args"> = {},
): Deno.Command {
  return new Deno.Command("ip", {
    ...options,
    args: ["netns", "exec", namespace, Deno.execPath(), "run", "-A", ...args],
  });
}

/**
 * Runs the test child `script` inside `namespace` with `input` (as JSON,
 * its one argument) and returns what it printed, parsed as JSON. Throws
 * with the child's stderr when it fails or outlives `timeoutMs`.
 */
export async function childReport(
  namespace: string,
  script: string,
  input: unknown,
  timeoutMs: number,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const output = await denoIn(
    namespace,
    ["--no-check", "--unstable-net", script, JSON.stringify(input)],
    {
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutMs),
    },
  ).output();
  return JSON.parse(stdoutOf(`${script} in ${namespace}`, output));
}
