import assert from "node:assert/strict";
import { Hono } from "hono";
import { type ConnectionInfo, requestLimits } from "./limits.ts";

/** An app whose handler waits until the test releases it. */
function held(options: Parameters<typeof requestLimits>[0]) {
  const waiting: (() => void)[] = [];
  const app = new Hono<{ Bindings: ConnectionInfo }>();
  app.use(requestLimits(options));
  app.get("/", async (c) => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return c.text("ok");
  });
  const from = (hostname: string) =>
    app.request("/", {}, {
      remoteAddr: { transport: "tcp", hostname, port: 40000 },
    });
  const release = () => waiting.splice(0).forEach((r) => r());
  return { from, release, waiting };
}

Deno.test("one client cannot hold more than maxPerClient requests", async () => {
  const { from, release, waiting } = held({ maxPerClient: 2 });
  const first = [from("10.0.0.1"), from("10.0.0.1")];
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(waiting.length, 2);
  const third = await from("10.0.0.1");
  assert.equal(third.status, 429);
  assert.equal(third.headers.get("retry-after"), "1");
  // Another client is not affected.
  const other = from("10.0.0.2");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(waiting.length, 3);
  release();
  for (const res of await Promise.all([...first, other])) {
    assert.equal(res.status, 200);
  }
  // Slots are returned once requests finish.
  const again = from("10.0.0.1");
  await new Promise((r) => setTimeout(r, 0));
  release();
  assert.equal((await again).status, 200);
});

Deno.test("the total in flight is bounded too", async () => {
  const { from, release } = held({ maxPerClient: 5, maxInFlight: 2 });
  const first = [from("10.0.0.1"), from("10.0.0.2")];
  await new Promise((r) => setTimeout(r, 0));
  const third = await from("10.0.0.3");
  assert.equal(third.status, 503);
  release();
  await Promise.all(first);
});

Deno.test("bodies, other methods and oversized requests are refused first", async () => {
  const app = new Hono();
  app.use(requestLimits({ maxHeaderBytes: 100, maxUrlBytes: 60 }));
  app.all("/", (c) => c.text("ok"));
  const cases: [RequestInit & { path?: string }, number][] = [
    [{ method: "PUT", body: "x" }, 405],
    [{ method: "DELETE" }, 405],
    [{ method: "OPTIONS" }, 405],
    [{ headers: { "transfer-encoding": "chunked" } }, 413],
    [{ headers: { "content-length": "1" } }, 413],
    [{ headers: { "content-length": "0" } }, 200],
    [{ headers: { "x-a": "b".repeat(120) } }, 431],
    [{ path: `/?${"q".repeat(80)}` }, 414],
    [{}, 200],
  ];
  for (const [init, status] of cases) {
    const res = await app.request(init.path ?? "/", init);
    await res.body?.cancel();
    assert.equal(res.status, status, JSON.stringify(init));
  }
});

Deno.test("IPv6 clients are counted by /64, so one host cannot dodge the bound by changing address", async () => {
  const { from, release } = held({ maxPerClient: 2 });
  const first = [from("2001:db8:1:2::1"), from("2001:db8:1:2::2")];
  await new Promise((r) => setTimeout(r, 0));
  // A third address in the same /64 is the same client.
  assert.equal((await from("2001:db8:1:2:ffff::3")).status, 429);
  // Another /64 is another client.
  const other = from("2001:db8:1:3::1");
  await new Promise((r) => setTimeout(r, 0));
  release();
  for (const res of await Promise.all([...first, other])) {
    assert.equal(res.status, 200);
  }
});
