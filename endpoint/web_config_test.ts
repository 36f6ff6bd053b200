import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { textAnswer } from "./answer.ts";
import { basicAuthRefusal, BasicAuthVerifier } from "./basic_auth.ts";
import { headerField } from "./http1.ts";
import { serveMetrics } from "./server.ts";
import { loadWebConfig, parseWebConfig, type WebConfig } from "./web_config.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { settles } from "../tests/until.ts";
import { selfSignedCert } from "../tests/tls_cert.ts";

const HASH = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

// One directory of certificates for the whole file: openssl is slow-ish.
const dir = await Deno.makeTempDir({ prefix: "web_config_test_" });
const ec = await selfSignedCert(dir, "ec");
const other = await selfSignedCert(dir, "other");
const rsa = await selfSignedCert(dir, "rsa", "rsa");
globalThis.addEventListener("unload", () => {
  Deno.removeSync(dir, { recursive: true });
});

/** A readFile over an in-memory map of absolute paths, recording reads. */
function memoryFiles(files: Record<string, string>) {
  const reads: string[] = [];
  const readFile = (path: string) => {
    reads.push(path);
    return path in files
      ? Promise.resolve(files[path])
      : Promise.reject(new Deno.errors.NotFound(`stat '${path}'`));
  };
  return { reads, readFile };
}

const FILES = {
  "/etc/dpu/tls/web.crt": ec.cert,
  "/etc/dpu/tls/web.key": ec.key,
  "/etc/dpu/tls/rsa.crt": rsa.cert,
  "/etc/dpu/tls/rsa.key": rsa.key,
  "/etc/dpu/tls/other.key": other.key,
  "/etc/dpu/tls/junk.crt": "not a certificate\n",
  "/etc/dpu/tls/broken.crt":
    "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
};

function parse(text: string, file = "/etc/dpu/web.yml"): Promise<WebConfig> {
  return parseWebConfig(text, file, memoryFiles(FILES).readFile);
}

/** Asserts `text` is refused with exactly `message` after the prefix. */
async function refused(
  text: string,
  message: string | RegExp,
  errorClass: new (...args: never[]) => Error = TypeError,
): Promise<Error> {
  let caught: unknown;
  try {
    await parse(text);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof errorClass, `${text} -> ${caught}`);
  const rest = caught.message.replace(
    /^Cannot load web config \/etc\/dpu\/web.yml: /,
    "",
  );
  if (typeof message === "string") assert.equal(rest, message);
  else assert.match(rest, message);
  assert.ok(!caught.message.includes("\n"), "one line");
  return caught;
}

const TLS = "tls_server_config:\n  cert_file: tls/web.crt\n" +
  "  key_file: tls/web.key\n";

Deno.test("parseWebConfig: empty files, {} and null sections mean no TLS and no auth", async () => {
  for (
    const text of [
      "",
      "{}",
      "---\n",
      "# only a comment\n",
      "tls_server_config:\nhttp_server_config:\nbasic_auth_users:\n",
      "tls_server_config: {}\nbasic_auth_users: {}\n",
    ]
  ) {
    const web = await parse(text);
    assert.equal(web.tls, undefined, text);
    assert.equal(web.basicAuthUsers.size, 0);
    assert.equal(web.headers.size, 0);
    assert.equal(web.http2, true);
    assert.deepEqual(web.warnings, []);
    assert.equal(web.file, "/etc/dpu/web.yml");
  }
});

Deno.test("parseWebConfig: unknown keys are named", async () => {
  await refused("basic_auth_user:\n  a: b\n", "basic_auth_user: unknown key");
  await refused(
    TLS + "  certfile: x\n",
    "tls_server_config.certfile: unknown key",
  );
  await refused(
    "http_server_config:\n  http3: true\n",
    "http_server_config.http3: unknown key",
  );
});

Deno.test("parseWebConfig: exporter-toolkit features dpu-traceback lacks are refused by name", async () => {
  await refused(
    "rate_limit:\n  interval: 1s\n  burst: 5\n",
    "rate_limit: not supported by dpu-traceback",
  );
  await refused(
    "auth_excluded_paths: [/metrics]\n",
    "auth_excluded_paths: not supported by dpu-traceback",
  );
  await refused(
    TLS + "  client_auth_type: RequireAndVerifyClientCert\n",
    'tls_server_config.client_auth_type: "RequireAndVerifyClientCert": ' +
      "client certificates are not supported by dpu-traceback " +
      "(only NoClientCert)",
  );
  await refused(
    TLS + "  client_ca_file: ca.pem\n",
    "tls_server_config.client_ca_file: client certificates are not " +
      "supported by dpu-traceback",
  );
  await refused(
    TLS + "  client_allowed_sans: [a.example]\n",
    /^tls_server_config\.client_allowed_sans: client certificates/,
  );
  const web = await parse(TLS + "  client_auth_type: NoClientCert\n");
  assert.ok(web.tls !== undefined);
});

Deno.test("parseWebConfig: values of the wrong type", async () => {
  await refused(
    "basic_auth_users: [a, b]\n",
    "basic_auth_users: expected a mapping",
  );
  await refused(
    "basic_auth_users:\n  alice:\n",
    "basic_auth_users.alice: expected string",
  );
  await refused(
    "http_server_config:\n  http2: yes\n",
    "http_server_config.http2: expected boolean",
  );
  await refused(
    "tls_server_config: 5\n",
    "tls_server_config: expected a mapping",
  );
  await refused("- a\n- b\n", "top level: expected a mapping");
});

Deno.test("parseWebConfig: YAML errors are one line and quote no source", async () => {
  const error = await refused(
    "tls_server_config:\n  key: |\n    SECRETKEYMATERIAL\n   cert: x\n",
    /at line \d+, column \d+$/,
  );
  assert.ok(!error.message.includes("SECRETKEYMATERIAL"));
  await refused("a: 1\na: 2\n", /^Map keys must be unique/);
  await refused("a: 1\n---\nb: 2\n", /multiple documents/);
});

Deno.test("parseWebConfig: basic_auth_users hashes are checked at load, named by user", async () => {
  const web = await parse(
    `basic_auth_users:\n  alice: ${HASH}\n  "bob": "${
      HASH.replace("$2y$", "$2a$")
    }"\n  carol: '${HASH.replace("$2y$10$", "$2b$04$")}'\n  "123": ${HASH}\n`,
  );
  assert.deepEqual([...web.basicAuthUsers.keys()], [
    "123",
    "alice",
    "bob",
    "carol",
  ]);
  assert.equal(web.basicAuthUsers.get("alice"), HASH);
  for (
    const bad of [
      HASH.slice(0, -1),
      HASH.replace("$10$", "$03$"),
      HASH.replace("$10$", "$32$"),
      HASH.replace("$2y$", "$2x$"),
      "hunter2",
      "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
    ]
  ) {
    const error = await refused(
      `basic_auth_users:\n  alice: '${bad}'\n`,
      "basic_auth_users.alice: not a bcrypt hash ($2a$, $2b$ or $2y$, " +
        "cost 04 to 31, 60 characters)",
    );
    assert.ok(!error.message.includes(bad), "the hash is not printed");
  }
});

Deno.test("parseWebConfig: basic_auth_users above cost 12 are refused, naming the user and the cost", async () => {
  const web = await parse(
    `basic_auth_users:\n  alice: '${HASH.replace("$10$", "$12$")}'\n`,
  );
  assert.deepEqual([...web.basicAuthUsers.keys()], ["alice"]);
  for (
    const [cost, time] of [["13", "500 ms"], ["14", "1.000 s"], [
      "20",
      "1 min 4.0 s",
    ]]
  ) {
    const bad = HASH.replace("$10$", `$${cost}$`);
    const error = await refused(
      `basic_auth_users:\n  alice: ${HASH}\n  bob: '${bad}'\n`,
      `basic_auth_users.bob: bcrypt cost ${cost} is too slow to check on ` +
        `every login (about ${time} per check on a fast x86 core, several ` +
        "times that on a DPU's Arm cores); use cost 12 or less",
    );
    assert.ok(!error.message.includes(bad), "the hash is not printed");
  }
});

Deno.test("parseWebConfig: basic_auth_users names with a colon are refused; odd names are quoted", async () => {
  await refused(
    `basic_auth_users:\n  "a:b": ${HASH}\n`,
    'basic_auth_users["a:b"]: user names cannot contain ":" ' +
      "(basic auth ends the user name at the first colon)",
  );
  // The name is quoted, so a newline in it cannot break the line.
  await refused(
    `basic_auth_users:\n  "x\\ny:z": ${HASH}\n`,
    'basic_auth_users["x\\ny:z"]: user names cannot contain ":" ' +
      "(basic auth ends the user name at the first colon)",
  );
  await refused(
    `basic_auth_users:\n  "ops team": 'nope'\n`,
    'basic_auth_users["ops team"]: not a bcrypt hash ' +
      "($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)",
  );
});

Deno.test("parseWebConfig: http_server_config", async () => {
  const web = await parse(
    "http_server_config:\n  http2: true\n  headers:\n" +
      "    x-frame-options: sameorigin\n" +
      "    X-Content-Type-Options: nosniff\n" +
      "    X-XSS-Protection: 0\n" +
      "    Strict-Transport-Security: max-age=31536000; includeSubDomains\n" +
      "    Content-Security-Policy: ''\n",
  );
  assert.deepEqual([...web.headers], [
    ["X-Frame-Options", "sameorigin"],
    ["X-Content-Type-Options", "nosniff"],
    ["X-XSS-Protection", "0"],
    ["Strict-Transport-Security", "max-age=31536000; includeSubDomains"],
  ]);
  assert.deepEqual(web.warnings, []);

  for (const name of ["Content-Type", "Authorization", "Server", "X-Custom"]) {
    await refused(
      `http_server_config:\n  headers:\n    ${name}: x\n`,
      `http_server_config.headers.${name}: cannot be configured (only ` +
        "Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, " +
        "X-XSS-Protection, Content-Security-Policy)",
    );
  }
  await refused(
    "http_server_config:\n  headers:\n    X-Frame-Options: DENY\n",
    "http_server_config.headers.X-Frame-Options: expected one of deny, sameorigin",
  );
  await refused(
    "http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
    "http_server_config.headers.X-Content-Type-Options: expected one of nosniff",
  );
  await refused(
    "http_server_config:\n  headers:\n    X-Frame-Options: deny\n" +
      "    x-frame-options: deny\n",
    "http_server_config.headers.x-frame-options: X-Frame-Options is set twice",
  );
  await refused(
    'http_server_config:\n  headers:\n    Content-Security-Policy: "a\\nb"\n',
    "http_server_config.headers.Content-Security-Policy: not a valid header " +
      "value (control or non-Latin-1 characters)",
  );

  const noH2 = await parse("http_server_config:\n  http2: false\n");
  assert.equal(noH2.http2, false);
  // The endpoint speaks HTTP/1.1 only: nothing to warn about.
  assert.deepEqual(noH2.warnings, []);
});

Deno.test("parseWebConfig: TLS needs both a certificate and a key, one way each", async () => {
  await refused(
    "tls_server_config:\n  cert_file: tls/web.crt\n",
    "tls_server_config: cert_file is set but key_file (or key) is missing",
  );
  await refused(
    "tls_server_config:\n  key_file: tls/web.key\n",
    "tls_server_config: key_file is set but cert_file (or cert) is missing",
  );
  await refused(
    "tls_server_config:\n  cert_file: ''\n  key_file: tls/web.key\n",
    "tls_server_config: key_file is set but cert_file (or cert) is missing",
  );
  await refused(
    "tls_server_config:\n  client_auth_type: NoClientCert\n",
    "tls_server_config: has settings but no cert_file (or cert) and " +
      "key_file (or key)",
  );
  await refused(
    "tls_server_config:\n  min_version: TLS12\n",
    /^tls_server_config: has settings but no cert_file/,
  );
  await refused(
    TLS + "  cert: x\n",
    "tls_server_config: cert and cert_file are both set; keep one",
  );
  await refused(
    TLS + "  key: x\n",
    "tls_server_config: key and key_file are both set; keep one",
  );
});

Deno.test("parseWebConfig: relative certificate paths are taken from the web config's directory", async () => {
  const files = memoryFiles({
    ...FILES,
    "conf/tls/web.crt": ec.cert,
    "conf/tls/web.key": ec.key,
    "tls/web.crt": ec.cert,
    "tls/web.key": ec.key,
    "/etc/dpu/tls/web.crt": ec.cert,
  });
  const web = await parseWebConfig(TLS, "/etc/dpu/web.yml", files.readFile);
  assert.deepEqual(files.reads, [
    "/etc/dpu/tls/web.crt",
    "/etc/dpu/tls/web.key",
  ]);
  assert.equal(web.tls?.certFile, "/etc/dpu/tls/web.crt");
  assert.equal(web.tls?.keyFile, "/etc/dpu/tls/web.key");
  assert.equal(web.tls?.cert, ec.cert);
  assert.equal(web.tls?.key, ec.key);

  files.reads.length = 0;
  await parseWebConfig(TLS, "conf/web.yml", files.readFile);
  assert.deepEqual(files.reads, ["conf/tls/web.crt", "conf/tls/web.key"]);

  files.reads.length = 0;
  await parseWebConfig(TLS, "web.yml", files.readFile);
  assert.deepEqual(files.reads, ["tls/web.crt", "tls/web.key"]);

  files.reads.length = 0;
  await parseWebConfig(
    "tls_server_config:\n  cert_file: /etc/dpu/tls/web.crt\n" +
      "  key_file: ../dpu/./tls/web.key\n",
    "/etc/other/web.yml",
    files.readFile,
  );
  assert.deepEqual(files.reads, [
    "/etc/dpu/tls/web.crt",
    "/etc/dpu/tls/web.key",
  ]);
});

Deno.test("parseWebConfig: unreadable or unusable certificate and key", async () => {
  await refused(
    "tls_server_config:\n  cert_file: /etc/ssl/x.crt\n  key_file: tls/web.key\n",
    "tls_server_config.cert_file: no such file /etc/ssl/x.crt",
    Deno.errors.NotFound,
  );
  await refused(
    "tls_server_config:\n  cert_file: tls/web.crt\n  key_file: tls/nokey\n",
    "tls_server_config.key_file: no such file /etc/dpu/tls/nokey",
    Deno.errors.NotFound,
  );
  await refused(
    "tls_server_config:\n  cert_file: tls/junk.crt\n  key_file: tls/web.key\n",
    "tls_server_config.cert_file: no PEM certificate " +
      "(-----BEGIN CERTIFICATE-----) /etc/dpu/tls/junk.crt",
  );
  await refused(
    "tls_server_config:\n  cert_file: tls/broken.crt\n  key_file: tls/web.key\n",
    "tls_server_config.cert_file: not a readable PEM certificate " +
      "/etc/dpu/tls/broken.crt",
  );
  await refused(
    "tls_server_config:\n  cert_file: tls/web.crt\n  key_file: tls/web.crt\n",
    "tls_server_config.key_file: no PEM private key " +
      "(-----BEGIN ... PRIVATE KEY-----) /etc/dpu/tls/web.crt",
  );
  const mismatch = await refused(
    "tls_server_config:\n  cert_file: tls/web.crt\n  key_file: tls/other.key\n",
    "tls_server_config.key_file: does not match the certificate in " +
      "tls_server_config.cert_file /etc/dpu/tls/other.key",
  );
  assert.ok(!mismatch.message.includes("PRIVATE KEY"));
});

Deno.test("parseWebConfig: encrypted and garbled inline keys, never echoed", async () => {
  const encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBO\n" +
    "-----END ENCRYPTED PRIVATE KEY-----\n";
  const garbled = "-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n" +
    "-----END PRIVATE KEY-----\n";
  const indent = (pem: string) => pem.trim().replaceAll("\n", "\n    ");
  await refused(
    `tls_server_config:\n  cert_file: tls/web.crt\n  key: |\n    ${
      indent(encrypted)
    }\n`,
    "tls_server_config.key: encrypted private keys are not supported",
  );
  const error = await refused(
    `tls_server_config:\n  cert_file: tls/web.crt\n  key: |\n    ${
      indent(garbled)
    }\n`,
    "tls_server_config.key: not a readable PEM private key",
  );
  assert.ok(!error.message.includes("SECRET"));
});

Deno.test("parseWebConfig: inline cert and key", async () => {
  const indent = (pem: string) => pem.trim().replaceAll("\n", "\n    ");
  const web = await parse(
    `tls_server_config:\n  cert: |\n    ${indent(ec.cert)}\n  key: |\n    ${
      indent(ec.key)
    }\n`,
  );
  assert.equal(web.tls?.cert, ec.cert);
  assert.equal(web.tls?.key, ec.key);
  assert.equal(web.tls?.certFile, undefined);
  assert.equal(web.tls?.keyFile, undefined);
});

Deno.test("parseWebConfig: TLS versions Deno satisfies pass, others are refused", async () => {
  for (const min of ["TLS10", "TLS11", "TLS12"]) {
    const web = await parse(
      TLS + `  min_version: ${min}\n  max_version: TLS13\n`,
    );
    assert.ok(web.tls !== undefined, min);
    assert.deepEqual(web.warnings, []);
  }
  await refused(
    TLS + "  min_version: TLS13\n",
    "tls_server_config.min_version: TLS13 cannot be enforced: Deno's TLS " +
      "always allows TLS 1.2 too (TLS10, TLS11 and TLS12 are satisfied)",
  );
  await refused(
    TLS + "  max_version: TLS12\n",
    "tls_server_config.max_version: TLS12 cannot be enforced: Deno's TLS " +
      "always allows TLS 1.3 (only TLS13 is satisfied)",
  );
  await refused(
    TLS + "  min_version: TLS12\n  max_version: TLS11\n",
    "tls_server_config.min_version: is above max_version",
  );
  await refused(
    TLS + "  min_version: TLSv1.2\n",
    "tls_server_config.min_version: unknown TLS version (expected TLS10, " +
      "TLS11, TLS12, TLS13)",
  );
});

Deno.test("parseWebConfig: cipher_suites pass only when they cover what Deno may pick", async () => {
  const ecdsa = [
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  ];
  const rsaSuites = ecdsa.map((s) => s.replace("ECDSA", "RSA"));
  const list = (suites: string[]) =>
    `  cipher_suites:\n${suites.map((s) => `    - ${s}\n`).join("")}`;
  assert.ok((await parse(TLS + list(ecdsa))).tls);
  assert.ok(
    (await parse(
      TLS + list([...rsaSuites, ...ecdsa]) +
        "  prefer_server_cipher_suites: false\n",
    )).tls,
  );
  await refused(
    TLS + list(ecdsa.slice(0, 2)),
    "tls_server_config.cipher_suites: cannot be enforced: Deno's TLS cannot " +
      "be restricted and may also pick " +
      "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  );
  const RSA = "tls_server_config:\n  cert_file: tls/rsa.crt\n" +
    "  key_file: tls/rsa.key\n";
  assert.ok((await parse(RSA + list(rsaSuites))).tls);
  await refused(
    RSA + list(ecdsa),
    /^tls_server_config\.cipher_suites: cannot be enforced: .* may also pick TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, /,
  );
  assert.ok((await parse(TLS + "  cipher_suites: []\n")).tls);
});

Deno.test("parseWebConfig: curve_preferences cannot be honoured", async () => {
  await refused(
    TLS + "  curve_preferences: [X25519, CurveP256]\n",
    "tls_server_config.curve_preferences: not supported by dpu-traceback: " +
      "Deno's TLS picks its own key-exchange groups and cannot be restricted",
  );
  assert.ok((await parse(TLS + "  curve_preferences: []\n")).tls);
});

Deno.test("loadWebConfig: a missing web config file", async () => {
  await assert.rejects(loadWebConfig(`${dir}/nope.yml`), {
    name: "NotFound",
    message:
      `Cannot load web config ${dir}/nope.yml: no such file ${dir}/nope.yml`,
  });
  await assert.rejects(loadWebConfig(dir), {
    name: "TypeError",
    message:
      `Cannot load web config ${dir}: is a directory, not a regular file`,
  });
});

Deno.test("loadWebConfig: TLS and basic auth end to end over HTTPS", async () => {
  const sub = `${dir}/etc`;
  await Deno.mkdir(`${sub}/tls`, { recursive: true });
  await Deno.copyFile(`${dir}/ec.crt`, `${sub}/tls/server.crt`);
  await Deno.copyFile(`${dir}/ec.key`, `${sub}/tls/server.key`);
  const hash = bcrypt.hashSync("scrape me", 4);
  await Deno.writeTextFile(
    `${sub}/web.yml`,
    [
      "tls_server_config:",
      "  cert_file: tls/server.crt",
      "  key_file: tls/server.key",
      "  min_version: TLS12",
      "http_server_config:",
      "  headers:",
      "    X-Frame-Options: deny",
      "basic_auth_users:",
      `  prometheus: ${hash}`,
      "",
    ].join("\n"),
  );
  const web = await loadWebConfig(`${sub}/web.yml`);
  assert.equal(web.tls?.certFile, `${sub}/tls/server.crt`);
  assert.ok(web.tls !== undefined);

  using verifier = new BasicAuthVerifier(web.basicAuthUsers);
  // The endpoint's server as the worker starts it from a web config.
  const server = serveMetrics(
    async (request, client) =>
      await basicAuthRefusal(
        verifier,
        headerField(request, "authorization"),
        client,
      ) ?? textAnswer(200, "up 1"),
    {
      listen: "127.0.0.1:0",
      tls: web.tls,
      headers: web.headers,
    },
  );
  await using _stop = { [Symbol.asyncDispose]: () => server.shutdown() };
  using client = Deno.createHttpClient({ caCerts: [web.tls.cert] });
  const url = `https://localhost:${server.port}/metrics`;

  const denied = await fetch(url, { client });
  assert.equal(denied.status, 401);
  assert.equal(denied.headers.get("x-frame-options"), "deny");
  await denied.body?.cancel();

  const ok = await fetch(url, {
    client,
    headers: { authorization: `Basic ${btoa("prometheus:scrape me")}` },
  });
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), "up 1\n");
});

Deno.test("a web config, certificate or key that is a device or a FIFO is one line at once, not a hang", async () => {
  await assert.rejects(settles("/dev/zero", loadWebConfig("/dev/zero")), {
    name: "TypeError",
    message:
      "Cannot load web config /dev/zero: is a character device, not a regular file",
  });
  await using dir = await tempDir("web-config");
  const fifo = `${dir.path}/fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  await assert.rejects(settles(fifo, loadWebConfig(fifo)), {
    name: "TypeError",
    message: `Cannot load web config ${fifo}: is a FIFO, not a regular file`,
  });
  const file = `${dir.path}/web.yml`;
  for (
    const [cert, kind] of [["/dev/urandom", "a character device"], [
      "fifo",
      "a FIFO",
    ]]
  ) {
    await Deno.writeTextFile(
      file,
      `tls_server_config:\n  cert_file: ${cert}\n  key_file: ${cert}\n`,
    );
    const path = cert.startsWith("/") ? cert : `${dir.path}/${cert}`;
    await assert.rejects(settles(path, loadWebConfig(file)), {
      name: "TypeError",
      message:
        `Cannot load web config ${file}: ${path}: is ${kind}, not a regular file`,
    });
  }
  // Still bounded: a regular file past 1 MiB is refused by its size.
  const big = `${dir.path}/big.yml`;
  const handle = await Deno.open(big, { write: true, create: true });
  await handle.truncate(10 * 1024 ** 3);
  handle.close();
  await assert.rejects(loadWebConfig(big), {
    name: "RangeError",
    message:
      `Cannot load web config ${big}: is larger than 1 MiB (1048576 bytes), the most a configuration file may be`,
  });
});
