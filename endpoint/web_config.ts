/**
 * Loads the Prometheus exporter-toolkit "web configuration" file
 * (node_exporter's `--web.config.file`), so operators reuse the file they
 * already have for TLS and basic auth on the metrics endpoint.
 *
 * The metrics endpoint's TLS is node:tls over its own sockets
 * (endpoint/transport.ts), which in Deno is rustls and cannot be tuned the
 * way Go's `crypto/tls` can. Each setting is therefore either
 * honoured, satisfied anyway, or refused with an error naming it: a security
 * setting is never silently ignored. What Deno 2.9.6 offers was checked with
 * `openssl s_client`: TLS 1.2 and 1.3 only; TLS 1.3 suites AES-256-GCM,
 * AES-128-GCM, CHACHA20-POLY1305; TLS 1.2 suites ECDHE with AES-GCM or
 * CHACHA20-POLY1305 (ECDSA or RSA, by certificate).
 *
 * | key | here |
 * | --- | --- |
 * | `tls_server_config.cert_file`, `key_file` | read at load; relative to the web config's directory |
 * | `tls_server_config.cert`, `key` | inline PEM, instead of the files |
 * | `client_auth_type` | `NoClientCert` only |
 * | `client_ca`, `client_ca_file`, `client_allowed_sans` | refused (no client certificates) |
 * | `min_version` | `TLS10`, `TLS11`, `TLS12` (already true: never below 1.2); `TLS13` refused |
 * | `max_version` | `TLS13` (already true); lower refused |
 * | `cipher_suites` | accepted when it lists every TLS 1.2 suite Deno may pick for the certificate's key type, else refused |
 * | `curve_preferences` | empty only; a list is refused (the groups cannot be restricted) |
 * | `prefer_server_cipher_suites` | accepted; no effect (Go ignores it too since Go 1.18) |
 * | `http_server_config.http2` | accepted either way: the endpoint speaks HTTP/1.1 only |
 * | `http_server_config.headers` | exporter-toolkit's five: `Strict-Transport-Security`, `X-Content-Type-Options` (`nosniff`), `X-Frame-Options` (`deny`, `sameorigin`), `X-XSS-Protection`, `Content-Security-Policy`; blank means unset |
 * | `basic_auth_users` | user → bcrypt hash, checked at load: no `:` in a user name, cost 12 at most |
 * | `rate_limit`, `auth_excluded_paths`, `ip_socket_config` | refused |
 *
 * YAML is read as YAML 1.2 (the `yaml` package's default), where `yes`/`no`
 * are strings, not booleans: `http2: yes` is an error, never a guess.
 *
 * @module
 */

import { readConfigText } from "../config/read_text.ts";
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { dirname, isAbsolute, join } from "node:path";
import { isScalar, parseDocument } from "yaml";
import { z } from "zod";
import { errorMessage } from "../base/error_message.ts";
import { basicAuthUserProblem } from "./basic_auth.ts";

/** TLS material: the certificate chain and key, PEM. */
export interface WebTls {
  /** Resolved `cert_file`; undefined when the PEM is inline (`cert`). */
  readonly certFile?: string;
  /** Resolved `key_file`; undefined when the PEM is inline (`key`). */
  readonly keyFile?: string;
  /** PEM certificate chain, leaf first. */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

/** A loaded and checked web configuration. */
export interface WebConfig {
  /** The web config file, as given. */
  readonly file: string;
  /** PEM certificate chain and key, when TLS is configured. */
  readonly tls?: WebTls;
  /** user -> bcrypt hash; empty means no authentication. */
  readonly basicAuthUsers: ReadonlyMap<string, string>;
  /** Extra response headers, canonical names (`http_server_config.headers`). */
  readonly headers: ReadonlyMap<string, string>;
  /** `http_server_config.http2` (default true); see {@linkcode warnings}. */
  readonly http2: boolean;
  /**
   * Settings accepted that do not do what they say here, or a certificate
   * outside its validity period: one line each, for the operator.
   */
  readonly warnings: readonly string[];
}

/** Top-level keys exporter-toolkit knows that dpu-traceback does not do. */
const UNSUPPORTED_TOP = [
  "rate_limit",
  "auth_excluded_paths",
  "ip_socket_config",
];

/** exporter-toolkit's only configurable headers, and their allowed values. */
const HEADERS: ReadonlyMap<string, readonly string[] | undefined> = new Map([
  ["Strict-Transport-Security", undefined],
  ["X-Content-Type-Options", ["nosniff"]],
  ["X-Frame-Options", ["deny", "sameorigin"]],
  ["X-XSS-Protection", undefined],
  ["Content-Security-Policy", undefined],
]);

const TLS_VERSIONS = ["TLS10", "TLS11", "TLS12", "TLS13"];

/** TLS 1.2 suites Deno 2.9.6 negotiates, by certificate key type. */
const TLS12_SUITES_ECDSA = [
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
];
const TLS12_SUITES_RSA = [
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

// Empty strings count as unset, as in exporter-toolkit.
const text = z.string().nullish().transform((s) => s || undefined);
const texts = z.array(z.string()).nullish();
const flag = z.boolean().nullish();

const schema = z.strictObject({
  tls_server_config: z.strictObject({
    cert: text,
    key: text,
    cert_file: text,
    key_file: text,
    client_auth_type: text,
    client_ca: z.unknown().optional(),
    client_ca_file: z.unknown().optional(),
    client_allowed_sans: z.unknown().optional(),
    min_version: text,
    max_version: text,
    cipher_suites: texts,
    prefer_server_cipher_suites: flag,
    curve_preferences: texts,
  }).nullish(),
  http_server_config: z.strictObject({
    http2: flag,
    // Numbers and booleans are taken as their YAML source text below, as
    // Go's YAML decoding into a string would (`X-XSS-Protection: 0`).
    headers: z.record(
      z.string(),
      z.union([z.string(), z.number(), z.boolean()]).nullable(),
    ).nullish(),
  }).nullish(),
  basic_auth_users: z.record(z.string(), z.string()).nullish(),
  rate_limit: z.unknown().optional(),
  auth_excluded_paths: z.unknown().optional(),
  ip_socket_config: z.unknown().optional(),
});

type TlsSection = NonNullable<z.infer<typeof schema>["tls_server_config"]>;

/**
 * Reads and checks a web config file, and the certificate and key it names.
 *
 * Errors are one line, name the file and the setting, and never hold a
 * secret: `Cannot load web config /etc/dpu-traceback/web.yml:
 * tls_server_config.cert_file: no such file /etc/ssl/x.crt`. A bad value is
 * a TypeError; an unreadable file keeps its `Deno.errors` class.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadWebConfig } from "./web_config.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/web.yml`,
 *   `basic_auth_users:
 *   prometheus: $2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG
 * `,
 * );
 * const web = await loadWebConfig(`${dir}/web.yml`);
 * assert.equal(web.tls, undefined); // plain HTTP
 * assert.deepEqual([...web.basicAuthUsers.keys()], ["prometheus"]);
 * assert.deepEqual(web.warnings, []);
 *
 * // Certificate paths are relative to the file; a missing one keeps its class.
 * await Deno.writeTextFile(
 *   `${dir}/tls.yml`,
 *   "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n",
 * );
 * await assert.rejects(loadWebConfig(`${dir}/tls.yml`), {
 *   name: "NotFound",
 *   message: `Cannot load web config ${dir}/tls.yml: tls_server_config.cert_file: no such file ${dir}/server.crt`,
 * });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadWebConfig(path: string): Promise<WebConfig> {
  let source: string;
  try {
    source = await readBounded(path, `Cannot load web config ${path}`);
  } catch (error) {
    throw ioError(`Cannot load web config ${path}`, path, error);
  }
  return await parseWebConfig(
    source,
    path,
    (p) => readBounded(p, `Cannot load web config ${path}: ${p}`),
  );
}

/**
 * Reads a web config, certificate or key file like every file the
 * operator names (config/read_text.ts): only a regular file, at most 1 MiB
 * of UTF-8, so a FIFO or `/dev/zero` is one line at once, not a hang. A
 * missing or unreadable file is rethrown as the runtime's error, for
 * {@linkcode ioError} to word.
 */
async function readBounded(path: string, prefix: string): Promise<string> {
  try {
    return await readConfigText(path, { prefix });
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    if (
      cause instanceof Deno.errors.NotFound ||
      cause instanceof Deno.errors.PermissionDenied ||
      cause instanceof Deno.errors.NotCapable
    ) {
      throw cause;
    }
    throw error;
  }
}

/**
 * Checks web config text as if read from `file` (relative certificate paths
 * are taken from its directory); `readFile` reads the certificate and key.
 * Errors are those of {@linkcode loadWebConfig}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseWebConfig } from "./web_config.ts";
 *
 * const noFiles = () => Promise.reject(new Deno.errors.NotFound());
 * const web = await parseWebConfig(
 *   [
 *     "http_server_config:",
 *     "  headers:",
 *     "    X-Frame-Options: deny",
 *     "basic_auth_users:",
 *     "  prometheus: $2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG",
 *   ].join("\n"),
 *   "/etc/dpu-traceback/web.yml",
 *   noFiles,
 * );
 * assert.equal(web.tls, undefined);
 * assert.deepEqual([...web.basicAuthUsers.keys()], ["prometheus"]);
 * assert.equal(web.headers.get("X-Frame-Options"), "deny");
 *
 * await assert.rejects(
 *   parseWebConfig("tls_server_config: {cert_file: c.pem}", "web.yml", noFiles),
 *   {
 *     name: "TypeError",
 *     message: "Cannot load web config web.yml: tls_server_config: " +
 *       "cert_file is set but key_file (or key) is missing",
 *   },
 * );
 * ```
 */
export async function parseWebConfig(
  text: string,
  file: string,
  readFile: (path: string) => Promise<string>,
): Promise<WebConfig> {
  const prefix = `Cannot load web config ${file}`;
  const fail = (where: string, problem: string): never => {
    throw new TypeError(`${prefix}: ${where}: ${problem}`);
  };

  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    // Only the first line: the rest quotes the source, which may hold a key.
    const message = doc.errors[0].message.split("\n")[0].replace(/:$/, "");
    throw new TypeError(`${prefix}: ${message}`);
  }
  const parsed = schema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      fail([...at, issue.keys[0]].join("."), "unknown key");
    }
    fail(
      at.join(".") || "top level",
      issue.code === "invalid_type"
        ? `expected ${
          issue.expected === "object" || issue.expected === "record"
            ? "a mapping"
            : issue.expected
        }`
        : issue.message,
    );
  }
  const config = parsed.data!;
  for (const key of UNSUPPORTED_TOP) {
    if (config[key as keyof typeof config] != null) {
      fail(key, "not supported by dpu-traceback");
    }
  }
  const warnings: string[] = [];

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(config.basic_auth_users ?? {})) {
    // The same rules as BasicAuthVerifier, refused here with the file's
    // name; the problem never quotes the hash: it is a secret.
    const problem = basicAuthUserProblem(user, hash);
    if (problem !== undefined) {
      // Plain names as a path, others quoted so `a:b` or a newline in a
      // name cannot blur or break the one-line message.
      fail(
        /^[A-Za-z0-9_-]+$/.test(user)
          ? `basic_auth_users.${user}`
          : `basic_auth_users[${JSON.stringify(user)}]`,
        problem,
      );
    }
    users.set(user, hash);
  }

  const headers = new Map<string, string>();
  for (
    const [name, raw] of Object.entries(
      config.http_server_config?.headers ?? {},
    )
  ) {
    const where = `http_server_config.headers.${name}`;
    const canonical = [...HEADERS.keys()].find((h) =>
      h.toLowerCase() === name.toLowerCase()
    );
    if (canonical === undefined) {
      fail(
        where,
        `cannot be configured (only ${[...HEADERS.keys()].join(", ")})`,
      );
    }
    if (headers.has(canonical!) || raw === null) {
      if (raw !== null) fail(where, `${canonical} is set twice`);
      continue;
    }
    const node = doc.getIn(["http_server_config", "headers", name], true);
    const value = typeof raw === "string"
      ? raw
      : isScalar(node) && typeof node.source === "string"
      ? node.source
      : String(raw);
    if (value === "") continue; // blank means unset, as in exporter-toolkit
    const allowed = HEADERS.get(canonical!);
    if (allowed !== undefined && !allowed.includes(value)) {
      fail(where, `expected one of ${allowed.join(", ")}`);
    }
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) {
      fail(
        where,
        "not a valid header value (control or non-Latin-1 characters)",
      );
    }
    headers.set(canonical!, value.trim());
  }

  // HTTP/2 is never offered (endpoint/server.ts speaks HTTP/1.1 only), so
  // `false` is already true and `true` asks for nothing that matters.
  const http2 = config.http_server_config?.http2 ?? true;

  const tls = config.tls_server_config == null
    ? undefined
    : await loadTls(config.tls_server_config, file, readFile, fail, warnings);
  return {
    file,
    ...(tls === undefined ? {} : { tls }),
    basicAuthUsers: users,
    headers,
    http2,
    warnings,
  };
}

async function loadTls(
  t: TlsSection,
  file: string,
  readFile: (path: string) => Promise<string>,
  fail: (where: string, problem: string) => never,
  warnings: string[],
): Promise<WebTls | undefined> {
  const at = (key: string) => `tls_server_config.${key}`;
  const settings = Object.entries(t).filter(([, v]) => v != null);
  if (settings.length === 0) return undefined;

  if (
    t.client_auth_type !== undefined && t.client_auth_type !== "NoClientCert"
  ) {
    fail(
      at("client_auth_type"),
      `${
        JSON.stringify(t.client_auth_type.slice(0, 40))
      }: client certificates are not supported by dpu-traceback (only NoClientCert)`,
    );
  }
  for (const key of ["client_ca", "client_ca_file", "client_allowed_sans"]) {
    if (t[key as keyof TlsSection] != null) {
      fail(
        at(key),
        "client certificates are not supported by dpu-traceback",
      );
    }
  }

  const min = checkVersion(t.min_version, at("min_version"), fail);
  const max = checkVersion(t.max_version, at("max_version"), fail);
  if (min !== undefined && max !== undefined && min > max) {
    fail(at("min_version"), "is above max_version");
  }
  // Deno never negotiates below TLS 1.2 and always offers 1.2 and 1.3, so a
  // minimum of 1.2 or less and a maximum of 1.3 hold; nothing else can.
  if (min === "TLS13") {
    fail(
      at("min_version"),
      "TLS13 cannot be enforced: Deno's TLS always allows TLS 1.2 too " +
        "(TLS10, TLS11 and TLS12 are satisfied)",
    );
  }
  if (max !== undefined && max !== "TLS13") {
    fail(
      at("max_version"),
      `${max} cannot be enforced: Deno's TLS always allows TLS 1.3 ` +
        "(only TLS13 is satisfied)",
    );
  }
  if (t.curve_preferences != null && t.curve_preferences.length > 0) {
    fail(
      at("curve_preferences"),
      "not supported by dpu-traceback: Deno's TLS picks its own " +
        "key-exchange groups and cannot be restricted",
    );
  }

  const hasCert = t.cert !== undefined || t.cert_file !== undefined;
  const hasKey = t.key !== undefined || t.key_file !== undefined;
  if (!hasCert || !hasKey) {
    fail(
      "tls_server_config",
      hasCert
        ? `${
          t.cert_file ? "cert_file" : "cert"
        } is set but key_file (or key) is missing`
        : hasKey
        ? `${
          t.key_file ? "key_file" : "key"
        } is set but cert_file (or cert) is missing`
        : "has settings but no cert_file (or cert) and key_file (or key)",
    );
  }
  if (t.cert !== undefined && t.cert_file !== undefined) {
    fail("tls_server_config", "cert and cert_file are both set; keep one");
  }
  if (t.key !== undefined && t.key_file !== undefined) {
    fail("tls_server_config", "key and key_file are both set; keep one");
  }

  // As exporter-toolkit (config_util.JoinDir): relative to the web config.
  const resolve = (p: string) => isAbsolute(p) ? p : join(dirname(file), p);
  const read = async (key: string, path: string): Promise<string> => {
    try {
      return await readFile(path);
    } catch (error) {
      throw ioError(`Cannot load web config ${file}: ${at(key)}`, path, error);
    }
  };
  const certFile = t.cert_file === undefined ? undefined : resolve(t.cert_file);
  const keyFile = t.key_file === undefined ? undefined : resolve(t.key_file);
  const certWhere = certFile === undefined ? at("cert") : at("cert_file");
  const keyWhere = keyFile === undefined ? at("key") : at("key_file");
  const certIn = certFile === undefined ? "" : ` ${certFile}`;
  const keyIn = keyFile === undefined ? "" : ` ${keyFile}`;
  const cert = t.cert ?? await read("cert_file", certFile!);
  const key = t.key ?? await read("key_file", keyFile!);

  if (!/-----BEGIN CERTIFICATE-----/.test(cert)) {
    fail(
      certWhere,
      `no PEM certificate (-----BEGIN CERTIFICATE-----)${certIn}`,
    );
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    return fail(certWhere, `not a readable PEM certificate${certIn}`);
  }
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(key)) {
    fail(
      keyWhere,
      `no PEM private key (-----BEGIN ... PRIVATE KEY-----)${keyIn}`,
    );
  }
  if (
    /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(key)
  ) {
    fail(keyWhere, `encrypted private keys are not supported${keyIn}`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    // The library's message is dropped: it is not needed and keys are secret.
    return fail(keyWhere, `not a readable PEM private key${keyIn}`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    fail(keyWhere, `does not match the certificate in ${certWhere}${keyIn}`);
  }

  if (t.cipher_suites != null && t.cipher_suites.length > 0) {
    // Go applies cipher_suites to TLS 1.2 only; the list is satisfied when
    // it holds every TLS 1.2 suite Deno may pick for this key type.
    const offered = x509.publicKey.asymmetricKeyType === "rsa"
      ? TLS12_SUITES_RSA
      : TLS12_SUITES_ECDSA;
    const missing = offered.filter((s) => !t.cipher_suites!.includes(s));
    if (missing.length > 0) {
      fail(
        at("cipher_suites"),
        "cannot be enforced: Deno's TLS cannot be restricted and may also " +
          `pick ${missing.join(", ")}`,
      );
    }
  }

  const now = Date.now();
  if (now > x509.validToDate.getTime()) {
    warnings.push(
      `${file}: ${certWhere}: the certificate expired ${x509.validToDate.toISOString()}`,
    );
  } else if (now < x509.validFromDate.getTime()) {
    warnings.push(
      `${file}: ${certWhere}: the certificate is not valid before ${x509.validFromDate.toISOString()}`,
    );
  }
  return {
    ...(certFile === undefined ? {} : { certFile }),
    ...(keyFile === undefined ? {} : { keyFile }),
    cert,
    key,
  };
}

function checkVersion(
  value: string | undefined,
  where: string,
  fail: (where: string, problem: string) => never,
): string | undefined {
  if (value !== undefined && !TLS_VERSIONS.includes(value)) {
    fail(where, `unknown TLS version (expected ${TLS_VERSIONS.join(", ")})`);
  }
  return value;
}

/** A one-line I/O error of the same Deno.errors class, naming `path`. */
function ioError(prefix: string, path: string, error: unknown): Error {
  const problems: [
    new (message: string, options?: ErrorOptions) => Error,
    string,
  ][] = [
    [Deno.errors.NotFound, `no such file ${path}`],
    [Deno.errors.PermissionDenied, `permission denied reading ${path}`],
    [Deno.errors.NotCapable, `not allowed to read ${path} (--allow-read)`],
    [Deno.errors.IsADirectory, `${path} is a directory`],
  ];
  for (const [Class, problem] of problems) {
    if (error instanceof Class) {
      return new Class(`${prefix}: ${problem}`, { cause: error });
    }
  }
  // Not a regular file, too large or not UTF-8: readBounded() already
  // said so, in full.
  if (
    error instanceof Error &&
    error.message.startsWith("Cannot load web config ")
  ) {
    return error;
  }
  return new Error(
    `${prefix}: ${path}: ${errorMessage(error).split("\n")[0]}`,
    { cause: error },
  );
}
