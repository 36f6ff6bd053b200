import assert from "node:assert/strict";
import { Body, textAnswer } from "./answer.ts";
import { testEndpoint } from "./endpoint_test_util.ts";
import { exchange } from "./exchange.ts";

const limits = { maxHeaders: 100, maxTargetBytes: 2048 };
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (parts: readonly Uint8Array[]) =>
  parts.map((p) => new TextDecoder().decode(p)).join("");

Deno.test("bodies, other methods and oversized requests are refused first", async () => {
  let reached = 0;
  await using server = testEndpoint(() => {
    reached++;
    return textAnswer(200, "ok");
  }, { limits: { maxHeadBytes: 200, maxTargetBytes: 60 } });
  const cases: [RequestInit & { path?: string }, number][] = [
    [{ method: "PUT", body: "x" }, 405],
    [{ method: "DELETE" }, 405],
    [{ method: "OPTIONS" }, 405],
    [{ headers: { "transfer-encoding": "chunked" } }, 413],
    [{ headers: { "content-length": "1" } }, 413],
    [{ headers: { "content-length": "0" } }, 200],
    [{ headers: { "x-a": "b".repeat(200) } }, 431],
    [{ path: `/?${"q".repeat(80)}` }, 414],
    [{}, 200],
  ];
  for (const [init, status] of cases) {
    const res = await server.request(init.path ?? "/", init);
    await res.body?.cancel();
    assert.equal(res.status, status, JSON.stringify(init));
    if (status === 405) assert.equal(res.headers.get("allow"), "GET, HEAD");
  }
  // Only the two that were allowed reached the handler.
  assert.equal(reached, 2);
});

Deno.test("a handler that throws is a 500 and one quoted line, never a crash", async () => {
  const lines: string[] = [];
  const reply = await exchange(
    bytes("GET /metrics\x1b[31m HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => {
      throw new Error("render failed\nat somewhere");
    },
    { limits, onError: (line) => lines.push(line) },
  );
  // The escape is not a valid target byte: refused before the handler.
  assert.match(text(reply.bytes), /^HTTP\/1\.1 400 /);
  assert.equal(lines.length, 0);

  const failed = await exchange(
    bytes("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => Promise.reject(new Error("render failed\nat somewhere")),
    { limits, onError: (line) => lines.push(line) },
  );
  assert.match(text(failed.bytes), /^HTTP\/1\.1 500 /);
  assert.ok(text(failed.bytes).endsWith("\r\n\r\ninternal error\n"));
  assert.equal(failed.close, false);
  assert.deepEqual(lines, ['metrics endpoint: "/metrics": render failed']);
});

Deno.test("a web config header replaces ours whatever its case, and goes out once", async () => {
  const reply = await exchange(
    bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => textAnswer(200, "ok"),
    {
      limits,
      headers: new Map([["X-Content-Type-Options", "nosniff"], [
        "X-Frame-Options",
        "deny",
      ]]),
    },
  );
  const head = text(reply.bytes);
  assert.equal(head.match(/x-content-type-options/gi)?.length, 1);
  assert.match(head, /\r\nx-frame-options: deny\r\n/);
});

Deno.test("a body is gzipped only for a client that takes gzip, once, and says so in vary either way", async () => {
  let gzips = 0;
  class CountingBody extends Body {
    override gzipped() {
      gzips++;
      return super.gzipped();
    }
  }
  const body = new CountingBody("x_total 1\n".repeat(500), "text/plain");
  const ask = (accept: string) =>
    exchange(
      bytes(`GET / HTTP/1.1\r\nHost: a\r\n${accept}\r\n`),
      () => ({ status: 200, body }),
      { limits },
    );
  const plain = text((await ask("")).bytes);
  assert.equal(gzips, 0);
  assert.match(plain, /\r\nvary: Accept-Encoding\r\n/);
  assert.doesNotMatch(plain, /content-encoding/);
  const zipped = text((await ask("Accept-Encoding: gzip\r\n")).bytes);
  assert.equal(gzips, 1);
  assert.match(zipped, /\r\ncontent-encoding: gzip\r\n/);
  assert.match(zipped, /\r\nvary: Accept-Encoding\r\n/);
});

Deno.test("a stopping server says connection: close on the answers it still gives", async () => {
  const reply = await exchange(
    bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => textAnswer(200, "ok"),
    { limits, stopping: () => true },
  );
  assert.equal(reply.close, true);
  assert.match(text(reply.bytes), /\r\nconnection: close\r\n/);
});

Deno.test("HEAD gets the length a GET would get, and no body; 204 gets neither", async () => {
  const head = await exchange(
    bytes("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => textAnswer(200, "hello"),
    { limits },
  );
  assert.equal(head.bytes.length, 1);
  assert.match(text(head.bytes), /\r\ncontent-length: 6\r\n/);
  const empty = await exchange(
    bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
    () => textAnswer(204, ""),
    { limits },
  );
  assert.equal(empty.bytes.length, 1);
  assert.doesNotMatch(text(empty.bytes), /\r\ncontent-(length|type):/);
});
