import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { Hono } from "hono";
import { acceptsGzip, gzipResponses } from "./compress.ts";

const OPENMETRICS =
  "application/openmetrics-text; version=1.0.0; charset=utf-8";

function app(): Hono {
  const app = new Hono();
  app.use(gzipResponses());
  app.get(
    "/om",
    (c) =>
      c.body("a_total 1\n".repeat(500), 200, { "content-type": OPENMETRICS }),
  );
  app.get("/small", (c) => c.text("ok\n"));
  app.get(
    "/png",
    (c) => c.body(new Uint8Array(5000), 200, { "content-type": "image/png" }),
  );
  return app;
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
  const res = await app().request("/om", {
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
  const small = await app().request("/small", { headers: gzip });
  assert.equal(small.headers.get("content-encoding"), null);
  assert.equal(await small.text(), "ok\n");
  const png = await app().request("/png", { headers: gzip });
  assert.equal(png.headers.get("content-encoding"), null);
  assert.equal((await png.arrayBuffer()).byteLength, 5000);
  const plain = await app().request("/om");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal((await plain.text()).length, 5000);
});
