import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { Hono } from "hono";
import { basicAuth, BasicAuthVerifier, isBcryptHash } from "./basic_auth.ts";

// Cost 4 (the minimum) keeps the real bcrypt checks fast.
const ALICE_HASH = bcrypt.hashSync("alice pw", 4);
const BOB_HASH = bcrypt.hashSync("bob pw", 4);

/** `Basic` header of UTF-8 `user:password`. */
function basic(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/** A compare stand-in that records calls and accepts `password`. */
function recordingCompare(accept: (password: string, hash: string) => boolean) {
  const calls: { password: string; hash: string }[] = [];
  const compare = (password: string, hash: string) => {
    calls.push({ password, hash });
    return Promise.resolve(accept(password, hash));
  };
  return { calls, compare };
}

const USERS = new Map([["alice", ALICE_HASH], ["bob", BOB_HASH]]);

Deno.test("BasicAuthVerifier: real bcrypt in the worker: right, wrong, unknown", async () => {
  using verifier = new BasicAuthVerifier(USERS);
  assert.equal(await verifier.verify(basic("alice", "alice pw")), "ok");
  assert.equal(await verifier.verify(basic("bob", "bob pw")), "ok");
  assert.equal(await verifier.verify(basic("alice", "bob pw")), "denied");
  assert.equal(await verifier.verify(basic("alice", "")), "denied");
  assert.equal(await verifier.verify(basic("carol", "alice pw")), "denied");
  assert.equal(await verifier.verify(basic("Alice", "alice pw")), "denied");
});

Deno.test("BasicAuthVerifier: UTF-8 user and password, colons in the password", async () => {
  const password = "pä:ss:wört ✓";
  using verifier = new BasicAuthVerifier(
    new Map([["jürgen", bcrypt.hashSync(password, 4)]]),
  );
  assert.equal(await verifier.verify(basic("jürgen", password)), "ok");
  // The scheme is case-insensitive; spaces around the token are tolerated.
  const token = basic("jürgen", password).slice("Basic ".length);
  assert.equal(await verifier.verify(`bAsIc   ${token} `), "ok");
  assert.equal(await verifier.verify(basic("jürgen", "pä:ss")), "denied");
});

Deno.test("BasicAuthVerifier: unknown users still cost a bcrypt at the highest cost", async () => {
  const { calls, compare } = recordingCompare(() => true);
  const verifier = new BasicAuthVerifier(
    new Map([["low", "$2a$04$" + "a".repeat(53)], [
      "high",
      "$2y$06$" + "b".repeat(53),
    ]]),
    { compare },
  );
  // Even a compare that says "match" cannot let an unknown user in.
  assert.equal(await verifier.verify(basic("nobody", "x")), "denied");
  assert.equal(calls.length, 1);
  assert.match(calls[0].hash, /^\$2b\$06\$/);
  assert.equal(isBcryptHash(calls[0].hash), true);
  assert.equal(calls[0].password, "x");
});

Deno.test("BasicAuthVerifier: malformed headers are denied without bcrypt", async () => {
  const { calls, compare } = recordingCompare(() => true);
  const verifier = new BasicAuthVerifier(USERS, { compare });
  const invalidUtf8 = btoa("\xff\xfe:\xfd");
  for (
    const header of [
      undefined,
      null,
      "",
      "Basic",
      "Basic ",
      "Bearer " + btoa("alice:alice pw"),
      "Digest username=alice",
      "Basic !!!!",
      "Basic YWxpY2U", // unpadded
      "Basic YWxp Y2U6eA==",
      "Basic " + btoa("alice"), // no colon
      "Basic " + invalidUtf8,
      "Basic " + btoa("alice:" + "x".repeat(4000)), // over 4096 characters
      "Basic\t\n" + btoa("alice:alice pw"),
    ]
  ) {
    assert.equal(await verifier.verify(header), "denied", String(header));
  }
  assert.equal(calls.length, 0);
});

Deno.test("BasicAuthVerifier: successes are cached, failures never", async () => {
  const { calls, compare } = recordingCompare((pw) => pw === "alice pw");
  const verifier = new BasicAuthVerifier(USERS, { compare });
  assert.equal(await verifier.verify(basic("alice", "alice pw")), "ok");
  assert.equal(await verifier.verify(basic("alice", "alice pw")), "ok");
  assert.equal(await verifier.verify(basic("alice", "alice pw")), "ok");
  assert.equal(calls.length, 1);
  assert.equal(await verifier.verify(basic("alice", "wrong")), "denied");
  assert.equal(await verifier.verify(basic("alice", "wrong")), "denied");
  assert.equal(calls.length, 3);
  // Same password, other user: its own entry.
  assert.equal(await verifier.verify(basic("bob", "alice pw")), "ok");
  assert.equal(calls.length, 4);
});

Deno.test("BasicAuthVerifier: the cache is bounded and drops the least recently used", async () => {
  const { calls, compare } = recordingCompare(() => true);
  const users = new Map(
    ["a", "b", "c"].map((u) => [u, "$2b$04$" + "c".repeat(53)]),
  );
  const verifier = new BasicAuthVerifier(users, { compare, cacheSize: 2 });
  await verifier.verify(basic("a", "p"));
  await verifier.verify(basic("b", "p"));
  await verifier.verify(basic("a", "p")); // hit; a is now the most recent
  assert.equal(calls.length, 2);
  await verifier.verify(basic("c", "p")); // evicts b
  assert.equal(calls.length, 3);
  await verifier.verify(basic("a", "p"));
  assert.equal(calls.length, 3);
  await verifier.verify(basic("b", "p"));
  assert.equal(calls.length, 4);
});

Deno.test("BasicAuthVerifier: cacheSize 0 checks every time", async () => {
  const { calls, compare } = recordingCompare(() => true);
  const verifier = new BasicAuthVerifier(USERS, { compare, cacheSize: 0 });
  await verifier.verify(basic("alice", "p"));
  await verifier.verify(basic("alice", "p"));
  assert.equal(calls.length, 2);
});

Deno.test("BasicAuthVerifier: busy past maxConcurrent checks in flight", async () => {
  // Checks stay running until the test resolves them, by password.
  const waiting = new Map<string, (ok: boolean) => void>();
  let calls = 0;
  const verifier = new BasicAuthVerifier(USERS, {
    maxConcurrent: 2,
    compare: (password) => {
      calls++;
      return new Promise<boolean>((resolve) => waiting.set(password, resolve));
    },
  });
  const settle = async (count: number) => {
    while (waiting.size < count) await new Promise((r) => setTimeout(r, 1));
  };
  const first = verifier.verify(basic("alice", "1"));
  const second = verifier.verify(basic("bob", "2"));
  await settle(2);
  // Identical credentials share the running check instead of a third one.
  const again = verifier.verify(basic("alice", "1"));
  assert.equal(await verifier.verify(basic("alice", "3")), "busy");
  assert.equal(await verifier.verify(basic("carol", "3")), "busy");
  // Malformed headers are still simply denied.
  assert.equal(await verifier.verify("Basic"), "denied");
  assert.equal(calls, 2);
  waiting.get("1")!(true);
  waiting.get("2")!(false);
  assert.deepEqual(await Promise.all([first, second, again]), [
    "ok",
    "denied",
    "ok",
  ]);
  // Capacity is back.
  const third = verifier.verify(basic("bob", "3"));
  await settle(3);
  waiting.get("3")!(true);
  assert.equal(await third, "ok");
});

Deno.test("BasicAuthVerifier: a failing compare rejects and frees its slot", async () => {
  let fail = true;
  const verifier = new BasicAuthVerifier(USERS, {
    maxConcurrent: 1,
    compare: () =>
      fail ? Promise.reject(new Error("boom")) : Promise.resolve(true),
  });
  await assert.rejects(verifier.verify(basic("alice", "p")), /boom/);
  fail = false;
  assert.equal(await verifier.verify(basic("alice", "p")), "ok");
});

Deno.test("BasicAuthVerifier: rejects bad hashes and options by name, never printing the hash", () => {
  const secret = "$2b$04$" + "z".repeat(52); // 59 characters
  assert.throws(
    () => new BasicAuthVerifier(new Map([["alice", secret]])),
    (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, 'basic auth user "alice": not a bcrypt hash');
      assert.ok(!error.message.includes(secret));
      return true;
    },
  );
  assert.throws(
    () => new BasicAuthVerifier(USERS, { maxConcurrent: 0 }),
    TypeError,
  );
  assert.throws(
    () => new BasicAuthVerifier(USERS, { cacheSize: -1 }),
    TypeError,
  );
  assert.throws(
    () => new BasicAuthVerifier(USERS, { cacheSize: 1.5 }),
    TypeError,
  );
});

Deno.test("isBcryptHash: versions, cost range and length", () => {
  const tail = ALICE_HASH.slice(7);
  for (const prefix of ["$2a$04$", "$2b$10$", "$2y$31$"]) {
    assert.equal(isBcryptHash(prefix + tail), true, prefix);
  }
  for (
    const bad of [
      "$2x$10$" + tail,
      "$2$10$" + tail,
      "$2b$03$" + tail,
      "$2b$32$" + tail,
      "$2b$4$" + tail,
      "$2b$10$" + tail.slice(1),
      "$2b$10$" + tail + "a",
      "$2b$10$" + tail.slice(1) + "!",
      "",
    ]
  ) {
    assert.equal(isBcryptHash(bad), false, bad);
  }
});

Deno.test("BasicAuthVerifier: close() fails a running check; the verifier restarts its worker", async () => {
  // Cost 12 takes ~0.3 s, long enough to close while it runs.
  using verifier = new BasicAuthVerifier(
    new Map([["slow", bcrypt.hashSync("pw", 12)], ["alice", ALICE_HASH]]),
  );
  const running = verifier.verify(basic("slow", "pw"));
  await new Promise((r) => setTimeout(r, 50));
  verifier.close();
  await assert.rejects(running, /closed/);
  assert.equal(await verifier.verify(basic("alice", "alice pw")), "ok");
});

Deno.test("BasicAuthVerifier: bcrypt at cost 10 does not stall the event loop", async () => {
  const hash = bcrypt.hashSync("pw", 10);
  using verifier = new BasicAuthVerifier(new Map([["u", hash]]), {
    cacheSize: 0,
  });
  await verifier.verify(basic("u", "warm up the worker"));
  let last = performance.now();
  let maxGap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  last = started;
  try {
    assert.equal(await verifier.verify(basic("u", "pw")), "ok");
    assert.equal(await verifier.verify(basic("u", "nope")), "denied");
  } finally {
    clearInterval(probe);
  }
  const total = performance.now() - started;
  console.log(
    `two cost-10 checks: ${total.toFixed(0)} ms, longest event-loop gap ` +
      `${maxGap.toFixed(1)} ms`,
  );
  // On the main thread bcryptjs blocks ~70 ms in one slice at cost 10.
  assert.ok(maxGap < 40, `event loop stalled ${maxGap.toFixed(1)} ms`);
});

Deno.test("BasicAuthVerifier: an idle worker does not keep the process alive", async () => {
  const module = new URL("./basic_auth.ts", import.meta.url).href;
  const script = `
    import bcrypt from "bcryptjs";
    import { BasicAuthVerifier } from ${JSON.stringify(module)};
    const v = new BasicAuthVerifier(
      new Map([["u", bcrypt.hashSync("pw", 4)]]),
      { workerIdleMs: 100 },
    );
    console.log(await v.verify("Basic " + btoa("u:pw")));
  `;
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", "--allow-read", script],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  });
  const { code, stdout, stderr } = await child.output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, err);
  assert.equal(new TextDecoder().decode(stdout).trim(), "ok");
  assert.ok(performance.now() - started < 15_000);
});

Deno.test("basicAuth middleware: 401, 503 and pass-through", async () => {
  const gate: { blocked?: Promise<boolean> } = {};
  const verifier = new BasicAuthVerifier(USERS, {
    maxConcurrent: 1,
    compare: (pw) => gate.blocked ?? Promise.resolve(pw === "alice pw"),
  });
  const middleware = basicAuth(verifier);
  assert.equal(middleware.name, "basicAuthMiddleware");
  let reached = 0;
  const app = new Hono().use(middleware).get("/metrics", (c) => {
    reached++;
    return c.text("metrics\n");
  });

  const none = await app.request("/metrics");
  assert.equal(none.status, 401);
  assert.equal(
    none.headers.get("www-authenticate"),
    'Basic realm="dpu-traceback", charset="UTF-8"',
  );
  await none.body?.cancel();

  const wrong = await app.request("/metrics", {
    headers: { authorization: basic("alice", "nope") },
  });
  assert.equal(wrong.status, 401);
  assert.ok(wrong.headers.has("www-authenticate"));
  await wrong.body?.cancel();

  const good = await app.request("/metrics", {
    headers: { authorization: basic("alice", "alice pw") },
  });
  assert.equal(good.status, 200);
  assert.equal(await good.text(), "metrics\n");
  assert.equal(reached, 1);

  let release!: (ok: boolean) => void;
  gate.blocked = new Promise((resolve) => {
    release = resolve;
  });
  const pending = app.request("/metrics", {
    headers: { authorization: basic("bob", "bob pw") },
  });
  await new Promise((r) => setTimeout(r, 10));
  const busy = await app.request("/metrics", {
    headers: { authorization: basic("alice", "other") },
  });
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  assert.equal(busy.headers.has("www-authenticate"), false);
  await busy.body?.cancel();
  release(true);
  assert.equal((await pending).status, 200);
  assert.equal(reached, 2);
});
