import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { acceptsGzip, Body, textAnswer } from "./answer.ts";
import { testEndpoint } from "./endpoint_test_util.ts";

const OPENMETRICS =
  "application/openmetrics-text; version=1.0.0; charset=utf-8";

/** A server with an OpenMetrics body, a small text one and a binary one. */
function app() {
  const bodies: Record<string, Body> = {
    "/om": new Body("a_total 1\n".repeat(500), OPENMETRICS),
    "/small": new Body("ok\n", "text/plain; charset=utf-8"),
    "/png": new Body(new Uint8Array(5000), "image/png"),
  };
  return testEndpoint((request) => {
    const body = bodies[request.path];
    return body === undefined
      ? textAnswer(404, "not found")
      : { status: 200, body };
  });
}

Deno.test("acceptsGzip() reads Accept-Encoding with q values", () => {
  const cases: [string | null, boolean][] = [
    [null, false],
    ["", false],
    ["gzip", true],
    ["deflate, gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["br", false],
    ["*", true],
    ["GZIP", true],
  ];
  for (const [header, expected] of cases) {
    assert.equal(acceptsGzip(header), expected, String(header));
  }
});

Deno.test("OpenMetrics bodies are gzipped for Prometheus and come back intact", async () => {
  await using server = app();
  const res = await server.request("/om", {
    headers: { "accept-encoding": "gzip" },
  });
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.equal(res.headers.get("content-type"), OPENMETRICS);
  assert.match(res.headers.get("vary") ?? "", /Accept-Encoding/);
  const zipped = new Uint8Array(await res.arrayBuffer());
  assert.ok(zipped.length < 200, `gzip left ${zipped.length} bytes`);
  assert.equal(
    new TextDecoder().decode(gunzipSync(zipped)),
    "a_total 1\n".repeat(500),
  );
});

Deno.test("small, binary, HEAD and not-accepted responses stay as they are", async () => {
  const gzip = { "accept-encoding": "gzip" };
  await using server = app();
  const small = await server.request("/small", { headers: gzip });
  assert.equal(small.headers.get("content-encoding"), null);
  assert.equal(await small.text(), "ok\n");
  const png = await server.request("/png", { headers: gzip });
  assert.equal(png.headers.get("content-encoding"), null);
  assert.equal((await png.arrayBuffer()).byteLength, 5000);
  const plain = await server.request("/om");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal((await plain.text()).length, 5000);
  // HEAD: the length a GET would get, in its coding, and no bytes.
  const head = await server.request("/om", { method: "HEAD", headers: gzip });
  assert.equal(head.headers.get("content-encoding"), "gzip");
  assert.equal(head.headers.get("content-length"), String(zippedLength()));
  assert.equal((await head.arrayBuffer()).byteLength, 0);
});

function zippedLength(): number {
  return new Body("a_total 1\n".repeat(500), OPENMETRICS).gzipped()!.length;
}
