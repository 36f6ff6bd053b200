import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import {
  basicAuthRefusal,
  basicAuthUserProblem,
  BasicAuthVerifier,
  isBcryptHash,
} from "./basic_auth.ts";
import { textAnswer } from "./answer.ts";

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

/** A TCP client address, as Deno.serve reports it. */
function from(hostname: string): Deno.NetAddr {
  return { transport: "tcp", hostname, port: 40000 };
}

/** A compare stand-in whose checks run until the test decides each one. */
function gatedCompare() {
  const calls: {
    password: string;
    hash: string;
    decide: (ok: boolean) => void;
  }[] = [];
  const compare = (password: string, hash: string) =>
    new Promise<boolean>((decide) => calls.push({ password, hash, decide }));
  /** Resolves once `count` checks have started. */
  const started = async (count: number) => {
    while (calls.length < count) await new Promise((r) => setTimeout(r, 1));
  };
  return { calls, compare, started };
}

/**
 * Lets requests already sent get past their (asynchronous) HMAC to where
 * they run, queue or are refused: nothing else observable tells.
 */
const admitted = () => new Promise((r) => setTimeout(r, 50));

/**
 * `promise`'s value, or "still pending" after a second: refusals are
 * answered at once, and a test of one should fail, not hang, without them.
 */
async function quick<T>(
  promise: T | Promise<T>,
): Promise<T | "still pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"still pending">((resolve) => {
    timer = setTimeout(() => resolve("still pending"), 1000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

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

Deno.test("BasicAuthVerifier: busy past maxConcurrent checks running and maxQueued waiting", async () => {
  // Checks stay running until the test resolves them, by password.
  const waiting = new Map<string, (ok: boolean) => void>();
  let calls = 0;
  const verifier = new BasicAuthVerifier(USERS, {
    maxConcurrent: 2,
    maxQueued: 0,
    compare: (password) => {
      calls++;
      return new Promise<boolean>((resolve) => waiting.set(password, resolve));
    },
  });
  const settle = async (count: number) => {
    while (waiting.size < count) await new Promise((r) => setTimeout(r, 1));
  };
  const first = verifier.verify(basic("alice", "1"), from("10.0.0.1"));
  const second = verifier.verify(basic("bob", "2"), from("10.0.0.2"));
  await settle(2);
  // Identical credentials share the running check instead of a third one.
  const again = verifier.verify(basic("alice", "1"), from("10.0.0.3"));
  assert.equal(
    await verifier.verify(basic("alice", "3"), from("10.0.0.4")),
    "busy",
  );
  assert.equal(
    await verifier.verify(basic("carol", "3"), from("10.0.0.5")),
    "busy",
  );
  // Malformed headers are still simply denied.
  assert.equal(await verifier.verify("Basic", from("10.0.0.4")), "denied");
  assert.equal(calls, 2);
  waiting.get("1")!(true);
  waiting.get("2")!(false);
  assert.deepEqual(await Promise.all([first, second, again]), [
    "ok",
    "denied",
    "ok",
  ]);
  // Capacity is back.
  const third = verifier.verify(basic("bob", "3"), from("10.0.0.4"));
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
      assert.equal(
        error.message,
        'basic auth user "alice": not a bcrypt hash ' +
          "($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)",
      );
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
  assert.throws(
    () => new BasicAuthVerifier(USERS, { maxQueued: -1 }),
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

Deno.test("basicAuthRefusal: 401, 429, 503 and pass-through, by client address", async () => {
  const gate: { blocked?: Promise<boolean> } = {};
  const verifier = new BasicAuthVerifier(USERS, {
    maxQueued: 0,
    compare: (pw) => gate.blocked ?? Promise.resolve(pw === "alice pw"),
  });
  let reached = 0;
  // As the routes use it: the refusal, or on to the path's answer.
  const request = async (host: string, authorization?: string) => {
    const answer =
      await basicAuthRefusal(verifier, authorization, from(host)) ??
        (reached++, textAnswer(200, "metrics"));
    return new Response(answer.body.bytes.slice(), {
      status: answer.status,
      headers: { ...answer.headers, "content-type": answer.body.type },
    });
  };

  const none = await request("10.0.0.1");
  assert.equal(none.status, 401);
  assert.equal(await none.clone().text(), "unauthorized\n");
  assert.equal(
    none.headers.get("www-authenticate"),
    'Basic realm="dpu-traceback", charset="UTF-8"',
  );
  await none.body?.cancel();

  const wrong = await request("10.0.0.1", basic("alice", "nope"));
  assert.equal(wrong.status, 401);
  assert.ok(wrong.headers.has("www-authenticate"));
  await wrong.body?.cancel();

  const good = await request("10.0.0.1", basic("alice", "alice pw"));
  assert.equal(good.status, 200);
  assert.equal(await good.text(), "metrics\n");
  assert.equal(reached, 1);

  let release!: (ok: boolean) => void;
  gate.blocked = new Promise((resolve) => {
    release = resolve;
  });
  const pending = request("10.0.0.1", basic("bob", "bob pw"));
  await new Promise((r) => setTimeout(r, 10));
  // The same client while its check runs: 429.
  const limited = await quick(request("10.0.0.1", basic("alice", "other")));
  assert.ok(limited instanceof Response, "answered at once");
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "1");
  assert.equal(limited.headers.has("www-authenticate"), false);
  await limited.body?.cancel();
  // Another client, with no place left in the queue: 503.
  const busy = await request("10.0.0.2", basic("alice", "other"));
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  assert.equal(busy.headers.has("www-authenticate"), false);
  await busy.body?.cancel();
  release(true);
  assert.equal((await pending).status, 200);
  assert.equal(reached, 2);
});

Deno.test("BasicAuthVerifier: a flood of wrong passwords from one address does not lock out a scraper at another", async () => {
  // Real bcrypt in the worker, as in production; no cache, so every one of
  // the scraper's requests needs a check of its own during the flood.
  using verifier = new BasicAuthVerifier(
    new Map([["prometheus", bcrypt.hashSync("scrape me", 10)]]),
    { cacheSize: 0 },
  );
  const attacker = from("198.51.100.66");
  const flood = new Map<string, number>();
  let flooding = true;
  let guess = 0;
  // 50 concurrent connections, each sending its next guess (known and
  // unknown users) the moment it has an answer.
  const floods = Array.from({ length: 50 }, async (_, i) => {
    while (flooding) {
      const user = i % 2 === 0 ? "prometheus" : `user${i}`;
      const result = await verifier.verify(
        basic(user, `guess ${guess++}`),
        attacker,
      );
      flood.set(result, (flood.get(result) ?? 0) + 1);
      // Refusals are instant; yield so the loop does not spin the thread.
      if (result !== "denied") await new Promise((r) => setTimeout(r, 0));
    }
  });
  await new Promise((r) => setTimeout(r, 100)); // the flood is on

  const scraper = from("192.0.2.10");
  const scrapes: string[] = [];
  const waits: number[] = [];
  // The attacker's checks that finished while each scrape waited: a count
  // of bcrypt runs, which a loaded machine does not change as it does ms.
  const checksWaited: number[] = [];
  try {
    for (let scrape = 0; scrape < 5; scrape++) {
      const started = performance.now();
      const deniedBefore = flood.get("denied") ?? 0;
      scrapes.push(
        await verifier.verify(basic("prometheus", "scrape me"), scraper),
      );
      checksWaited.push((flood.get("denied") ?? 0) - deniedBefore);
      waits.push(performance.now() - started);
    }
  } finally {
    flooding = false;
    await Promise.all(floods);
  }
  console.log(
    `scrapes during the flood: ${
      waits.map((w) => w.toFixed(0)).join(", ")
    } ms, behind ${checksWaited.join(", ")} of the attacker's checks; ` +
      `flood answers ${JSON.stringify(Object.fromEntries(flood))}`,
  );
  // Each scrape got in at its first attempt.
  assert.deepEqual(scrapes, ["ok", "ok", "ok", "ok", "ok"]);
  // Waiting behind at most one of the attacker's checks (the one running
  // when it asked), then its own.
  for (const checks of checksWaited) {
    assert.ok(checks <= 1, `waited behind ${checks} of the attacker's checks`);
  }
  // And nothing else held it up for long: two cost-10 checks take ~70 ms
  // each here; 10 s is room for any load, not a figure.
  for (const wait of waits) assert.ok(wait < 10_000, `waited ${wait} ms`);
  assert.equal(flood.get("ok"), undefined);
  // One address never fills the queue: refused per address, not as busy.
  assert.equal(flood.get("busy"), undefined);
  assert.ok((flood.get("limited") ?? 0) > 0);
  assert.ok((flood.get("denied") ?? 0) > 0);
});

Deno.test("BasicAuthVerifier: one check per client address; a second is limited at once, never queued", async () => {
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare });
  const a = from("10.0.0.1");
  const first = verifier.verify(basic("alice", "guess 1"), a);
  await started(1);
  assert.equal(
    await quick(verifier.verify(basic("alice", "guess 2"), a)),
    "limited",
  );
  // Even the right password waits for the client's running check.
  assert.equal(
    await quick(verifier.verify(basic("alice", "alice pw"), a)),
    "limited",
  );
  // Identical credentials share the running check: no bcrypt, no refusal.
  const same = verifier.verify(basic("alice", "guess 1"), a);
  // Another address is not affected: it queues behind the running check.
  const other = verifier.verify(basic("bob", "bob pw"), from("10.0.0.2"));
  await admitted();
  assert.equal(calls.length, 1);
  calls[0].decide(false);
  assert.deepEqual(await Promise.all([first, same]), ["denied", "denied"]);
  await started(2);
  assert.equal(calls[1].password, "bob pw");
  calls[1].decide(true);
  assert.equal(await other, "ok");
  // Once its answer is out, the client may check again at once.
  const retry = verifier.verify(basic("alice", "alice pw"), a);
  await started(3);
  calls[2].decide(true);
  assert.equal(await retry, "ok");
});

Deno.test("BasicAuthVerifier: checks wait in a bounded queue, first come first served between clients never served", async () => {
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare, maxQueued: 2 });
  const running = verifier.verify(basic("alice", "a"), from("10.0.0.1"));
  await started(1);
  const second = verifier.verify(basic("alice", "b"), from("10.0.0.2"));
  await admitted();
  const third = verifier.verify(basic("alice", "c"), from("10.0.0.3"));
  await admitted();
  // One running, two waiting: the next client is refused, not queued.
  assert.equal(
    await verifier.verify(basic("alice", "d"), from("10.0.0.4")),
    "busy",
  );
  assert.equal(calls.length, 1);
  for (const [i, password] of ["a", "b", "c"].entries()) {
    await started(i + 1);
    assert.equal(calls[i].password, password);
    calls[i].decide(false);
  }
  assert.deepEqual(await Promise.all([running, second, third]), [
    "denied",
    "denied",
    "denied",
  ]);
  assert.equal(calls.length, 3);
});

Deno.test("BasicAuthVerifier: waiting checks start by turns, the client served least recently first", async () => {
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare });
  const [a, b, c] = ["10.0.0.1", "10.0.0.2", "10.0.0.3"].map(from);
  const answers = [verifier.verify(basic("alice", "a1"), a)];
  await started(1);
  answers.push(verifier.verify(basic("alice", "b1"), b));
  await admitted();
  calls[0].decide(false);
  await started(2); // b1 runs; a was served before b
  answers.push(verifier.verify(basic("alice", "a2"), a));
  await admitted();
  answers.push(verifier.verify(basic("alice", "c1"), c));
  await admitted();
  calls[1].decide(false);
  await started(3);
  // c was never served, so its check goes before a's, which came first.
  assert.equal(calls[2].password, "c1");
  answers.push(verifier.verify(basic("alice", "b2"), b));
  await admitted();
  calls[2].decide(false);
  await started(4);
  // a's turn was before b's: a goes first again, whatever came first.
  assert.equal(calls[3].password, "a2");
  calls[3].decide(false);
  await started(5);
  calls[4].decide(false);
  assert.deepEqual(await Promise.all(answers), answers.map(() => "denied"));
  assert.deepEqual(calls.map((call) => call.password), [
    "a1",
    "b1",
    "c1",
    "a2",
    "b2",
  ]);
});

Deno.test("BasicAuthVerifier: a full queue gives the place of the client served most recently to one served less recently", async () => {
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare, maxQueued: 2 });
  const [a, b, c, d, e] = [1, 2, 3, 4, 5].map((i) => from(`10.0.0.${i}`));
  const a1 = verifier.verify(basic("alice", "a1"), a);
  await started(1);
  const b1 = verifier.verify(basic("alice", "b1"), b);
  await admitted();
  calls[0].decide(false);
  await started(2); // b1 runs; a was served, b is being served
  const a2 = verifier.verify(basic("alice", "a2"), a);
  await admitted();
  const c1 = verifier.verify(basic("alice", "c1"), c);
  await admitted();
  // Full (a2 and c1 wait). d was never served, a was: d takes a2's place,
  // and a2 is answered "busy" without running.
  const d1 = verifier.verify(basic("alice", "d1"), d);
  assert.equal(await quick(a2), "busy");
  // e was never served either, but neither were c and d: first come keeps
  // its place.
  assert.equal(
    await quick(verifier.verify(basic("alice", "e1"), e)),
    "busy",
  );
  calls[1].decide(false);
  await started(3);
  assert.equal(calls[2].password, "c1");
  // a (served at the first turn) waits again; b (the second) finds only
  // clients served before it, so it may not take a place.
  const a3 = verifier.verify(basic("alice", "a3"), a);
  await admitted();
  assert.equal(
    await quick(verifier.verify(basic("alice", "b2"), b)),
    "busy",
  );
  calls[2].decide(false);
  await started(4);
  calls[3].decide(false);
  await started(5);
  calls[4].decide(false);
  assert.deepEqual(await Promise.all([a1, b1, c1, d1, a3]), [
    "denied",
    "denied",
    "denied",
    "denied",
    "denied",
  ]);
  assert.deepEqual(calls.map((call) => call.password), [
    "a1",
    "b1",
    "c1",
    "d1",
    "a3",
  ]);
});

Deno.test("BasicAuthVerifier: a flood of wrong passwords from 8 addresses does not starve a scraper that has not logged in", async () => {
  // A stand-in for the worker that counts: each check answers on a later
  // turn of the event loop, as the worker's message does. The password
  // names the client, so each check can be told apart.
  const checks: string[] = []; // whose check started, in order
  let floodChecksDone = 0;
  let progress = Promise.withResolvers<void>();
  const compare = async (password: string) => {
    checks.push(password.split(" ")[0]);
    await new Promise((r) => setTimeout(r, 0));
    if (password !== "scraper") floodChecksDone++;
    progress.resolve();
    progress = Promise.withResolvers();
    return password === "scraper";
  };
  // No cache, so every scrape needs a check of its own during the flood.
  const verifier = new BasicAuthVerifier(
    new Map([["prometheus", "$2b$10$" + "a".repeat(53)]]),
    { compare, cacheSize: 0 },
  );
  const hosts = Array.from({ length: 8 }, (_, i) => `198.51.100.${i + 1}`);
  const flood = new Map<string, number>();
  let flooding = true;
  let guess = 0;
  // 6 connections per address, each sending its next guess the moment it
  // has an answer: more addresses than the queue's 4 places.
  const floods = hosts.flatMap((host) =>
    Array.from({ length: 6 }, async () => {
      while (flooding) {
        const result = await verifier.verify(
          basic("prometheus", `${host} guess ${guess++}`),
          from(host),
        );
        flood.set(result, (flood.get(result) ?? 0) + 1);
        // Refusals are instant; yield so the loop does not spin the thread.
        if (result !== "denied") await new Promise((r) => setTimeout(r, 0));
      }
    })
  );

  const scrapes: string[] = [];
  // The flood's checks that ended while each scrape waited: a count of
  // checks, which a loaded machine does not change as it does ms.
  const checksWaited: number[] = [];
  try {
    for (let scrape = 0; scrape < 5; scrape++) {
      // As between scrapes 15 s apart: every flooding address has had a
      // check since the scraper's last one (or since the flood began).
      const since = checks.lastIndexOf("scraper") + 1;
      while (!hosts.every((host) => checks.indexOf(host, since) >= 0)) {
        await progress.promise;
      }
      const before = floodChecksDone;
      scrapes.push(
        await verifier.verify(
          basic("prometheus", "scraper"),
          from("192.0.2.10"),
        ),
      );
      checksWaited.push(floodChecksDone - before);
    }
  } finally {
    flooding = false;
    await Promise.all(floods);
  }
  console.log(
    `scrapes behind ${checksWaited.join(", ")} of the flood's checks; ` +
      `flood answers ${JSON.stringify(Object.fromEntries(flood))}`,
  );
  // Each scrape got in at its first attempt, though the queue was full.
  assert.deepEqual(scrapes, ["ok", "ok", "ok", "ok", "ok"]);
  // Behind at most one check per flooding address. By design it is the
  // check running when it came (it was served least recently, so it goes
  // next; the test before this one pins that order), and any that ended
  // while its request was being hashed for the cache key, before it could
  // queue: a window this count cannot see the end of, so the bound here
  // is the one that holds however long that takes.
  for (const waited of checksWaited) {
    assert.ok(
      waited <= hosts.length,
      `waited behind ${waited} of the flood's checks`,
    );
  }
  assert.equal(flood.get("ok"), undefined);
  // The queue was full: the flood's addresses were refused or gave way.
  assert.ok((flood.get("busy") ?? 0) > 0);
  assert.ok((flood.get("limited") ?? 0) > 0);
  // Every flooding address had turns, not only the first 5 to come.
  for (const host of hosts) assert.ok(checks.includes(host), host);
});

Deno.test("BasicAuthVerifier: IPv6 clients count by /64, IPv4-mapped ones as IPv4", async () => {
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare, maxQueued: 8 });
  const pending = [
    verifier.verify(basic("alice", "1"), from("2001:db8:1:2::10")),
  ];
  await started(1);
  for (
    const same of [
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:DB8:1:2:0:0:0:99%eth0",
      "2001:0db8:0001:0002::",
    ]
  ) {
    assert.equal(
      await quick(verifier.verify(basic("alice", same), from(same))),
      "limited",
      same,
    );
  }
  // Other /64s, IPv4, and no address (or a Unix socket) are other clients.
  pending.push(
    verifier.verify(basic("alice", "2"), from("2001:db8:1:3::10")),
    verifier.verify(basic("alice", "3"), from("192.0.2.1")),
    verifier.verify(basic("alice", "4")),
  );
  await admitted();
  assert.equal(
    await quick(verifier.verify(basic("alice", "5"), from("::ffff:192.0.2.1"))),
    "limited",
  );
  assert.equal(
    await quick(
      verifier.verify(basic("alice", "6"), { transport: "unix", path: "" }),
    ),
    "limited",
  );
  for (let i = 0; i < pending.length; i++) {
    await started(i + 1);
    calls[i].decide(false);
  }
  assert.deepEqual(
    await Promise.all(pending),
    pending.map(() => "denied"),
  );
  // Sent together, so admitted in whichever order their HMACs finished.
  assert.deepEqual(calls.map((c) => c.password).sort(), ["1", "2", "3", "4"]);
});

Deno.test("BasicAuthVerifier: close() also fails checks still waiting", async () => {
  // A stand-in compare: close() stops no worker, so the running check goes
  // on; the waiting one is failed and its client's place given back.
  const { calls, compare, started } = gatedCompare();
  const verifier = new BasicAuthVerifier(USERS, { compare });
  const running = verifier.verify(basic("alice", "1"), from("10.0.0.1"));
  await started(1);
  const waiting = verifier.verify(basic("alice", "2"), from("10.0.0.2"));
  await admitted();
  verifier.close();
  await assert.rejects(quick(waiting), /^Error: basic auth verifier closed$/);
  const again = verifier.verify(basic("alice", "alice pw"), from("10.0.0.2"));
  await admitted();
  calls[0].decide(false);
  assert.equal(await running, "denied");
  await started(2);
  assert.equal(calls.length, 2);
  calls[1].decide(true);
  assert.equal(await again, "ok");
});

Deno.test("BasicAuthVerifier and basicAuthUserProblem: costs above 12 and user names with a colon are refused", () => {
  const tail = ALICE_HASH.slice(7);
  assert.equal(basicAuthUserProblem("alice", "$2b$12$" + tail), undefined);
  const cases: [string, string, string][] = [
    [
      "slow",
      "$2b$13$" + tail,
      "bcrypt cost 13 is too slow to check on every login (about 500 ms per " +
      "check on a fast x86 core, several times that on a DPU's Arm cores); " +
      "use cost 12 or less",
    ],
    [
      "slower",
      "$2y$31$" + tail,
      "bcrypt cost 31 is too slow to check on every login (about 36 h 24 min per " +
      "check on a fast x86 core, several times that on a DPU's Arm cores); " +
      "use cost 12 or less",
    ],
    [
      "a:b",
      ALICE_HASH,
      'user names cannot contain ":" (basic auth ends the user name at the first colon)',
    ],
  ];
  for (const [user, hash, problem] of cases) {
    assert.equal(basicAuthUserProblem(user, hash), problem);
    assert.throws(
      () =>
        new BasicAuthVerifier(new Map([["alice", ALICE_HASH], [user, hash]])),
      (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.equal(
          error.message,
          `basic auth user ${JSON.stringify(user)}: ${problem}`,
        );
        assert.ok(!error.message.includes(tail), "the hash is not printed");
        return true;
      },
    );
  }
});
