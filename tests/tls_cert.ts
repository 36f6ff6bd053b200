/**
 * A self-signed certificate for localhost, made with openssl, for the tests
 * and benchmarks that serve TLS: CA:FALSE and a subjectAltName, as rustls
 * (Deno's fetch) insists.
 *
 * @module
 */

/** A certificate and key, as PEM text and as the files holding them. */
export interface TestCert {
  readonly cert: string;
  readonly key: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * Writes `<name>.crt` and `<name>.key` in `dir` (an EC P-256 or RSA 2048
 * key) and returns them. Throws with openssl's stderr when it fails.
 */
export async function selfSignedCert(
  dir: string,
  name = "tls",
  kind: "ec" | "rsa" = "ec",
): Promise<TestCert> {
  const certFile = `${dir}/${name}.crt`;
  const keyFile = `${dir}/${name}.key`;
  const { code, stderr } = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      ...(kind === "ec"
        ? ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        : ["rsa:2048"]),
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`openssl req: ${new TextDecoder().decode(stderr).trim()}`);
  }
  return {
    cert: await Deno.readTextFile(certFile),
    key: await Deno.readTextFile(keyFile),
    certFile,
    keyFile,
  };
}
