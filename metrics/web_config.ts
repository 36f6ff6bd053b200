/**
 * The Prometheus exporter-toolkit web configuration (node_exporter's
 * `--web.config.file`): TLS and basic auth for the metrics endpoint, so
 * operators reuse the file they already have.
 *
 * A setting the endpoint cannot honour (client certificates, cipher
 * suites, a TLS 1.3 minimum) is an error naming it: a security setting is
 * never silently ignored.
 *
 * @module
 */

import { dirname, isAbsolute, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

/** TLS material for Deno.serve. */
export interface WebTls {
  readonly certFile?: string;
  readonly keyFile?: string;
  /** PEM certificate chain. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

/** A loaded web configuration. */
export interface WebConfig {
  readonly file: string;
  /** TLS when `tls_server_config` is present. */
  readonly tls?: WebTls;
  /** user -> bcrypt hash; empty for no auth. */
  readonly basicAuthUsers: ReadonlyMap<string, string>;
  /** Extra response headers (`http_server_config.headers`). */
  readonly headers: ReadonlyMap<string, string>;
}

// Headers exporter-toolkit refuses to let the config set, since the server
// owns them.
const RESERVED_HEADERS = [
  "authorization",
  "www-authenticate",
  "content-type",
  "content-encoding",
  "server",
];
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

const text = z.string({ error: "must be a string" });
const schema = z.strictObject({
  tls_server_config: z.strictObject({
    cert_file: text.optional(),
    key_file: text.optional(),
    cert: text.optional(),
    key: text.optional(),
    client_auth_type: text.optional(),
    client_ca_file: text.optional(),
    client_allowed_sans: z.array(text).optional(),
    min_version: text.optional(),
    max_version: text.optional(),
    cipher_suites: z.array(text).optional(),
    prefer_server_cipher_suites: z.boolean().optional(),
    curve_preferences: z.array(text).optional(),
  }).optional(),
  http_server_config: z.strictObject({
    http2: z.boolean({ error: "must be true or false" }).optional(),
    headers: z.record(z.string(), text).optional(),
  }).optional(),
  basic_auth_users: z.record(z.string(), text).nullable().optional(),
});

/**
 * Reads and checks a web config file, and the certificate and key it names
 * (relative paths are taken from the file's directory, as exporter-toolkit
 * does). Throws a one-line error naming the file and the setting.
 *
 * @example
 * ```ts ignore
 * const web = await loadWebConfig("/etc/dpu-traceback/web.yml");
 * Deno.serve({ ...web.tls, port: 9477 }, handler);
 * ```
 */
export async function loadWebConfig(path: string): Promise<WebConfig> {
  let source: string;
  try {
    source = await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(`Cannot load web config ${path}: ${ioProblem(error)}`);
  }
  return await parseWebConfig(
    source,
    path,
    (file) => Deno.readTextFile(file),
  );
}

/**
 * Checks web config text; `readFile` reads the certificate and key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseWebConfig } from "./web_config.ts";
 *
 * const web = await parseWebConfig("{}", "web.yml", () => Promise.reject());
 * assert.equal(web.tls, undefined);
 * assert.equal(web.basicAuthUsers.size, 0);
 * ```
 */
export async function parseWebConfig(
  source: string,
  file: string,
  readFile: (path: string) => Promise<string>,
): Promise<WebConfig> {
  const fail = (where: string, problem: string): never => {
    throw new TypeError(`Cannot load web config ${file}: ${where} ${problem}`);
  };
  let doc: unknown;
  try {
    doc = parseYaml(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SyntaxError(
      `Cannot load web config ${file}: ${message.split("\n")[0]}`,
    );
  }
  const parsed = schema.safeParse(doc ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.join(".") || "the file";
    if (issue.code === "unrecognized_keys") {
      fail(
        where === "the file" ? "top level" : where,
        `has an unknown key "${issue.keys[0]}"`,
      );
    }
    fail(where, issue.message);
  }
  const config = parsed.data!;

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(config.basic_auth_users ?? {})) {
    if (!BCRYPT.test(hash)) {
      fail(
        `basic_auth_users.${user}`,
        "must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)",
      );
    }
    users.set(user, hash);
  }

  const headers = new Map<string, string>();
  for (
    const [name, value] of Object.entries(
      config.http_server_config?.headers ?? {},
    )
  ) {
    if (RESERVED_HEADERS.includes(name.toLowerCase())) {
      fail(`http_server_config.headers.${name}`, "is set by the server itself");
    }
    headers.set(name, value);
  }

  let tls: WebTls | undefined;
  const t = config.tls_server_config;
  if (t !== undefined) {
    const at = (key: string) => `tls_server_config.${key}`;
    if (
      t.client_auth_type !== undefined && t.client_auth_type !== "NoClientCert"
    ) {
      fail(
        at("client_auth_type"),
        `is "${t.client_auth_type}": client certificates are not supported by dpu-traceback (use basic auth, or NoClientCert)`,
      );
    }
    for (const key of ["client_ca_file", "client_allowed_sans"] as const) {
      if (t[key] !== undefined) {
        fail(at(key), "is not supported: client certificates are not checked");
      }
    }
    for (
      const key of [
        "cipher_suites",
        "curve_preferences",
        "prefer_server_cipher_suites",
      ] as const
    ) {
      if (t[key] !== undefined) {
        fail(
          at(key),
          "is not supported: the TLS library chooses (TLS 1.2 with AEAD suites, or TLS 1.3)",
        );
      }
    }
    // Deno's TLS never offers less than 1.2 nor more than 1.3, so only
    // these settings hold whatever the client does.
    if (
      t.min_version !== undefined &&
      !["TLS10", "TLS11", "TLS12"].includes(t.min_version)
    ) {
      fail(
        at("min_version"),
        `is "${t.min_version}": the endpoint always allows TLS 1.2 and 1.3, so only TLS10, TLS11 or TLS12 can be honoured`,
      );
    }
    if (t.max_version !== undefined && t.max_version !== "TLS13") {
      fail(
        at("max_version"),
        `is "${t.max_version}": the endpoint always allows TLS 1.3, so only TLS13 can be honoured`,
      );
    }
    const base = dirname(file);
    const resolve = (p: string) => isAbsolute(p) ? p : join(base, p);
    const read = async (key: string, path: string) => {
      try {
        return await readFile(resolve(path));
      } catch (error) {
        return fail(at(key), `${resolve(path)}: ${ioProblem(error)}`);
      }
    };
    if ((t.cert_file ?? t.cert) === undefined) {
      fail("tls_server_config", "needs cert_file (or cert)");
    }
    if ((t.key_file ?? t.key) === undefined) {
      fail("tls_server_config", "needs key_file (or key)");
    }
    if (t.cert_file !== undefined && t.cert !== undefined) {
      fail("tls_server_config", "has both cert_file and cert; keep one");
    }
    if (t.key_file !== undefined && t.key !== undefined) {
      fail("tls_server_config", "has both key_file and key; keep one");
    }
    const cert = t.cert ?? await read("cert_file", t.cert_file!);
    const key = t.key ?? await read("key_file", t.key_file!);
    if (!/-----BEGIN [A-Z ]*CERTIFICATE-----/.test(cert)) {
      fail(at(t.cert_file ? "cert_file" : "cert"), "is not a PEM certificate");
    }
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) {
      fail(at(t.key_file ? "key_file" : "key"), "is not a PEM private key");
    }
    tls = {
      certFile: t.cert_file === undefined ? undefined : resolve(t.cert_file),
      keyFile: t.key_file === undefined ? undefined : resolve(t.key_file),
      cert,
      key,
    };
  }
  return { file, tls, basicAuthUsers: users, headers };
}

function ioProblem(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file";
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied";
  }
  if (error instanceof Deno.errors.IsADirectory) return "is a directory";
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0];
}
