import assert from "node:assert/strict";
import { settles, until } from "../tests/until.ts";
import { tempDir } from "../tests/temp_dir.ts";
import { AlertStats } from "../metrics/alert_stats.ts";
import { selfSignedCert } from "../tests/tls_cert.ts";
import type { PostableAlert } from "./alert_state.ts";
import {
  AlertmanagerClient,
  type AlertmanagerClientOptions,
  readCredentials,
} from "./alertmanager_client.ts";
import {
  droppingServer,
  fakeAlertmanager,
} from "./fake_alertmanager_test_util.ts";

function alert(
  name: string,
  endsAt = "2026-11-24T00:02:00.000Z",
): PostableAlert {
  return {
    labels: { alertname: name, instance: "dpu-1", monitor: "nic" },
    annotations: { summary: `${name} fired`, events: "1" },
    startsAt: "2026-11-24T00:00:00.000Z",
    endsAt,
  };
}

function client(
  url: string,
  stats: AlertStats,
  options: Partial<AlertmanagerClientOptions> = {},
  timeoutMs = 2000,
): AlertmanagerClient {
  return new AlertmanagerClient({ url, timeoutMs }, {
    stats,
    index: 0,
    version: "9.8.7",
    backoffMs: 20,
    maxBackoffMs: 200,
    random: () => 0.5,
    ...options,
  });
}

Deno.test("alerts are posted as a JSON array to /api/v2/alerts with our User-Agent", async () => {
  await using am = fakeAlertmanager();
  const stats = AlertStats.create(1);
  const c = client(`${am.url}/`, stats);
  c.send([alert("a"), alert("b")]);
  await c.idle();
  await c.close();
  assert.equal(am.pushes.length, 1);
  const [push] = am.pushes;
  assert.deepEqual(push.alerts, [alert("a"), alert("b")]);
  assert.equal(push.headers.get("content-type"), "application/json");
  assert.equal(push.headers.get("user-agent"), "dpu-traceback/9.8.7");
  assert.equal(push.headers.get("authorization"), null);
  const counts = stats.read(0);
  assert.equal(counts.sent, 2);
  assert.equal(counts.failed, 0);
  assert.equal(counts.queueLength, 0);
  assert.ok(Math.abs(counts.lastSuccessMs - Date.now()) < 5000);
});

Deno.test("a URL with a path prefix keeps it", async () => {
  // The fake answers 404 off /api/v2/alerts: a refusal, counted as failed.
  await using am = fakeAlertmanager();
  const stats = AlertStats.create(1);
  const c = client(`${am.url}/alertmanager`, stats);
  c.send([alert("a")]);
  await c.idle();
  await c.close();
  assert.equal(stats.read(0).failed, 1);
  assert.equal(stats.read(0).sent, 0);
});

Deno.test("more than 64 alerts go in several pushes of at most 64", async () => {
  await using am = fakeAlertmanager();
  const stats = AlertStats.create(1);
  const c = client(am.url, stats);
  c.send(Array.from({ length: 150 }, (_, i) => alert(`r${i}`)));
  await c.idle();
  await c.close();
  assert.deepEqual(am.pushes.map((p) => p.alerts.length), [64, 64, 22]);
  assert.equal(stats.read(0).sent, 150);
  assert.equal(am.alerts.size, 150);
});

Deno.test("a 500 is retried with backoff until it succeeds", async () => {
  await using am = fakeAlertmanager();
  am.answer = { status: 500 };
  const stats = AlertStats.create(1);
  const errors: string[] = [];
  const c = client(am.url, stats, { onError: (l) => errors.push(l) });
  const started = performance.now();
  c.send([alert("a")]);
  await am.received(3);
  am.answer = { status: 200 };
  await c.idle();
  const took = performance.now() - started;
  await c.close();
  // Three failures then success: waits of 20, 40 and 80 ms (jitter 1x).
  assert.equal(am.pushes.length, 4);
  assert.ok(took >= 140, `took ${took} ms`);
  const counts = stats.read(0);
  assert.equal(counts.failed, 3);
  assert.equal(counts.sent, 1);
  assert.equal(am.alerts.size, 1);
  // Told once when the failures began, not at every try.
  assert.equal(errors.length, 1);
  assert.match(
    errors[0],
    /^Alertmanager http:\/\/127\.0\.0\.1:\d+: HTTP 500 fake answer 500; retrying/,
  );
});

Deno.test("the backoff doubles up to its maximum, with jitter", async () => {
  await using am = fakeAlertmanager();
  am.answer = { status: 503 };
  const stats = AlertStats.create(1);
  const c = client(am.url, stats, {
    backoffMs: 10,
    maxBackoffMs: 40,
    random: () => 0.999,
  });
  c.send([alert("a")]);
  await am.received(2);
  const times: number[] = [];
  for (let n = 3; n <= 6; n++) {
    await am.received(n);
    times.push(performance.now());
  }
  await c.close();
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  // Waits 10, 20, 40, 40, 40 ms times ~1.25, capped at 40.
  for (const gap of gaps) assert.ok(gap >= 35 && gap < 400, `gaps ${gaps}`);
});

Deno.test("a 400 is refused: counted as failed and not retried", async () => {
  await using am = fakeAlertmanager();
  am.answer = { status: 400 };
  const stats = AlertStats.create(1);
  const errors: string[] = [];
  const c = client(am.url, stats, { onError: (l) => errors.push(l) });
  c.send([alert("a"), alert("b")]);
  await c.idle();
  await new Promise((r) => setTimeout(r, 100));
  await c.close();
  assert.equal(am.pushes.length, 1);
  assert.equal(stats.read(0).failed, 2);
  assert.equal(stats.read(0).queueLength, 0);
  assert.match(
    errors[0],
    /refused 2 alert\(s\), not retried: HTTP 400 fake answer 400$/,
  );
});

Deno.test("refusals are told at most 5 a minute, then how many more there were", async () => {
  await using am = fakeAlertmanager();
  am.answer = { status: 400 };
  const stats = AlertStats.create(1);
  const errors: string[] = [];
  let now = 0;
  const c = client(am.url, stats, {
    onError: (l) => errors.push(l),
    now: () => now,
  });
  const label = c.label;
  const refused =
    `Alertmanager ${label} refused 1 alert(s), not retried: HTTP 400 fake answer 400`;
  // One push, refused, per alert: as a refusing Alertmanager at each resend.
  const push = async (name: string) => {
    c.send([alert(name)]);
    await c.idle();
  };
  for (let i = 0; i < 34; i++) await push(`a${i}`);
  assert.equal(am.pushes.length, 34);
  assert.equal(stats.read(0).failed, 34);
  assert.deepEqual(errors, Array(5).fill(refused));
  // A minute on: the count of those held back, then the next refusal.
  now = 60_000;
  await push("b");
  await push("c");
  assert.deepEqual(errors.slice(5), [
    `Alertmanager ${label}: 29 more messages like these were not logged`,
    refused,
    refused,
  ]);
  // Held back when the client closes: counted then.
  for (let i = 0; i < 5; i++) await push(`d${i}`);
  await c.close();
  assert.deepEqual(errors.slice(8), [
    refused,
    refused,
    refused,
    `Alertmanager ${label}: 2 more messages like these were not logged`,
  ]);
});

/**
 * One push answered `status` with `retryAfter`, then 200: how long the
 * client waited before its retry, ms, and its counters after it.
 */
async function retryWait(
  status: number,
  retryAfter: string,
  backoffMs: number,
): Promise<{ waited: number; failed: number; sent: number }> {
  await using am = fakeAlertmanager();
  am.answer = { status, retryAfter };
  const stats = AlertStats.create(1);
  const c = client(am.url, stats, { backoffMs, maxBackoffMs: 10_000 });
  c.send([alert("a")]);
  await am.received(1);
  const started = performance.now();
  am.answer = { status: 200 };
  await am.received(2);
  const waited = performance.now() - started;
  await c.idle();
  await c.close();
  return { waited, failed: stats.read(0).failed, sent: stats.read(0).sent };
}

for (const status of [429, 503]) {
  Deno.test(`a ${status}'s Retry-After longer than the backoff is waited, in seconds or as a date`, async () => {
    for (const form of ["seconds", "date"]) {
      // A date is to the second: 2-3 s from now.
      const retryAfter = form === "seconds"
        ? "2"
        : new Date(Date.now() + 3_000).toUTCString();
      const { waited, failed, sent } = await retryWait(status, retryAfter, 20);
      // 20 ms of backoff, about 2 s waited: the header's.
      assert.ok(
        waited >= 1_500 && waited < 4_000,
        `${retryAfter}: ${waited} ms`,
      );
      assert.deepEqual([failed, sent], [1, 1]);
    }
  });

  Deno.test(`a ${status}'s Retry-After of 0, in the past or not a delay never shortens the backoff`, async () => {
    const past = new Date(Date.now() - 60_000).toUTCString();
    for (const retryAfter of ["0", past, "1.5", "-1", "soon"]) {
      const { waited } = await retryWait(status, retryAfter, 400);
      // The backoff with its jitter: 300-500 ms.
      assert.ok(waited >= 280, `${retryAfter}: retried after ${waited} ms`);
    }
  });

  Deno.test(`a ${status}'s Retry-After is capped at the longest backoff`, async () => {
    await using am = fakeAlertmanager();
    am.answer = { status, retryAfter: "3600" };
    const stats = AlertStats.create(1);
    const c = client(am.url, stats, { backoffMs: 20, maxBackoffMs: 150 });
    c.send([alert("a")]);
    await am.received(1);
    const started = performance.now();
    await am.received(2);
    const waited = performance.now() - started;
    await c.close();
    // An hour asked, 150 ms waited: an Alertmanager back sees its alerts
    // within the cap (the resend interval), whatever a proxy says.
    assert.ok(waited >= 100 && waited < 2_000, `waited ${waited} ms`);
  });
}

Deno.test("a push that hangs past the timeout is retried", async () => {
  await using am = fakeAlertmanager();
  am.answer = { hang: true };
  const stats = AlertStats.create(1);
  const errors: string[] = [];
  const c = client(am.url, stats, { onError: (l) => errors.push(l) }, 100);
  c.send([alert("a")]);
  await am.received(2);
  am.answer = { status: 200 };
  await c.idle();
  await c.close();
  assert.ok(stats.read(0).failed >= 1);
  assert.equal(stats.read(0).sent, 1);
  assert.match(errors[0], /no answer within 100 ms/);
});

Deno.test("a dropped connection and a refused one are retried", async () => {
  await using dropping = droppingServer();
  const stats = AlertStats.create(1);
  const errors: string[] = [];
  const c = client(dropping.url, stats, { onError: (l) => errors.push(l) });
  c.send([alert("a")]);
  while (stats.read(0).failed < 2) await new Promise((r) => setTimeout(r, 10));
  await c.close();
  assert.equal(stats.read(0).sent, 0);
  assert.equal(stats.read(0).queueLength, 1);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].includes("\n"), false);
});

Deno.test("the queue keeps the newest state of each alert and drops the oldest past its bound", async () => {
  await using am = fakeAlertmanager();
  am.answer = { hang: true };
  const stats = AlertStats.create(1);
  const c = client(am.url, stats, { queueLimit: 3, batchSize: 2 }, 60_000);
  c.send([alert("a")]);
  await am.received(1); // "a" in flight, hanging
  c.send([alert("b"), alert("c")]);
  c.send([alert("b", "2026-11-24T00:09:00.000Z")]); // replaces b, not counted twice
  assert.equal(c.queueLength, 3);
  c.send([alert("d"), alert("e")]); // a and c go
  assert.equal(c.queueLength, 3);
  assert.equal(stats.read(0).dropped, 2);
  assert.equal(stats.read(0).queueLength, 3);
  await c.close();
});

Deno.test("an alert updated while its push was in flight is pushed again", async () => {
  await using am = fakeAlertmanager();
  am.answer = { hang: true };
  const stats = AlertStats.create(1);
  const c = client(am.url, stats, {}, 300);
  c.send([alert("a")]);
  await am.received(1);
  am.answer = { status: 200 };
  c.send([alert("a", "2026-11-24T00:09:00.000Z")]);
  await c.idle();
  await c.close();
  assert.equal(
    am.alerts.get(JSON.stringify(alert("a").labels))?.endsAt,
    "2026-11-24T00:09:00.000Z",
  );
});

Deno.test("two Alertmanagers: one down never delays the other", async () => {
  await using up = fakeAlertmanager();
  await using down = fakeAlertmanager();
  down.answer = { hang: true };
  const stats = AlertStats.create(2);
  const a = client(up.url, stats, { index: 0 });
  const b = client(down.url, stats, { index: 1 }, 60_000);
  for (let k = 0; k < 5; k++) {
    a.send([alert(`r${k}`)]);
    b.send([alert(`r${k}`)]);
    await a.idle();
  }
  assert.equal(up.pushes.length, 5);
  assert.equal(stats.read(0).sent, 5);
  assert.equal(stats.read(1).sent, 0);
  assert.equal(stats.read(1).queueLength, 5);
  await a.close();
  await b.close();
});

Deno.test("basic auth and bearer tokens are read from files and sent", async () => {
  await using am = fakeAlertmanager();
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/pw`, "s3cr\u00e9t\n");
    await Deno.writeTextFile(`${dir}/token`, "  abc.def  \n");
    const stats = AlertStats.create(2);
    const basic = await readCredentials({
      url: am.url,
      timeoutMs: 1000,
      basicAuth: { username: "alerts", passwordFile: `${dir}/pw` },
    });
    const bearer = await readCredentials({
      url: am.url,
      timeoutMs: 1000,
      bearerTokenFile: `${dir}/token`,
    });
    const a = client(am.url, stats, { credentials: basic });
    const b = client(am.url, stats, { index: 1, credentials: bearer });
    a.send([alert("a")]);
    await a.idle();
    b.send([alert("b")]);
    await b.idle();
    await a.close();
    await b.close();
    const expected = `Basic ${
      btoa(
        String.fromCharCode(...new TextEncoder().encode("alerts:s3cr\u00e9t")),
      )
    }`;
    assert.equal(am.pushes[0].headers.get("authorization"), expected);
    assert.equal(am.pushes[1].headers.get("authorization"), "Bearer abc.def");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("credentials in the URL become basic auth and never the label", async () => {
  await using am = fakeAlertmanager();
  const url = am.url.replace("http://", "http://ops:p%40ss@");
  const stats = AlertStats.create(1);
  const c = client(url, stats, {
    credentials: await readCredentials({ url, timeoutMs: 1000 }),
  });
  assert.equal(c.label, am.url);
  c.send([alert("a")]);
  await c.idle();
  await c.close();
  assert.equal(
    am.pushes[0].headers.get("authorization"),
    `Basic ${btoa("ops:p@ss")}`,
  );
});

Deno.test("a credential file that is a device, a FIFO or a directory is refused at once, unread", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/token`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const cases: [string, string][] = [
    ["/dev/zero", "a character device"],
    [fifo, "a FIFO"],
    [dir.path, "a directory"],
  ];
  for (const [file, kind] of cases) {
    await assert.rejects(
      settles(
        file,
        readCredentials({
          url: "https://am:9093",
          timeoutMs: 1000,
          bearerTokenFile: file,
        }),
      ),
      {
        name: "TypeError",
        message:
          `Cannot read the bearer token of Alertmanager https://am:9093 from ${file}: is ${kind}, not a regular file`,
      },
    );
    for (const tls of [{ caFile: file }, { certFile: file, keyFile: file }]) {
      await assert.rejects(
        settles(
          file,
          readCredentials({ url: "https://am:9093", timeoutMs: 1000, tls }),
        ),
        {
          message: new RegExp(`from ${file}: is ${kind}, not a regular file$`),
        },
      );
    }
  }
});

Deno.test("an unreadable credential file is a one-line error naming it", async () => {
  await assert.rejects(
    readCredentials({
      url: "https://u:pw@am:9093",
      timeoutMs: 1000,
      bearerTokenFile: "/nonexistent/token",
    }),
    (e: Error) => {
      assert.match(
        e.message,
        /^Cannot read the bearer token of Alertmanager https:\/\/am:9093 from \/nonexistent\/token: /,
      );
      assert.equal(e.message.includes("\n"), false);
      return true;
    },
  );
  await assert.rejects(
    readCredentials({
      url: "https://am:9093",
      timeoutMs: 1000,
      tls: { caFile: "/nonexistent/ca.pem" },
    }),
    /CA certificates of Alertmanager https:\/\/am:9093 from \/nonexistent\/ca\.pem/,
  );
});

Deno.test("TLS: verified with the configured CA, refused without it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cert = await selfSignedCert(dir, "am");
    await using am = fakeAlertmanager({ cert: cert.cert, key: cert.key });
    const url = `https://localhost:${am.port}`;
    const stats = AlertStats.create(2);
    const trusted = client(url, stats, {
      credentials: await readCredentials({
        url,
        timeoutMs: 2000,
        tls: { caFile: cert.certFile },
      }),
    });
    trusted.send([alert("a")]);
    await trusted.idle();
    await trusted.close();
    assert.equal(stats.read(0).sent, 1);
    const errors: string[] = [];
    const untrusted = client(url, stats, {
      index: 1,
      onError: (l) => errors.push(l),
    });
    untrusted.send([alert("a")]);
    while (stats.read(1).failed < 1) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await untrusted.close();
    assert.equal(stats.read(1).sent, 0);
    assert.match(errors[0], /certificate|UnknownIssuer/i);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mutual TLS: the client certificate is presented", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const server = await selfSignedCert(dir, "am");
    const clientCert = await selfSignedCert(dir, "agent");
    const credentials = await readCredentials({
      url: "https://localhost:1",
      timeoutMs: 1000,
      tls: {
        caFile: server.certFile,
        certFile: clientCert.certFile,
        keyFile: clientCert.keyFile,
      },
    });
    assert.equal(credentials.cert, clientCert.cert);
    assert.equal(credentials.key, clientCert.key);
    await using am = fakeAlertmanager({ cert: server.cert, key: server.key });
    const url = `https://localhost:${am.port}`;
    const stats = AlertStats.create(1);
    // Deno.serve does not ask for client certificates; what is tested here
    // is that a client with one still connects and pushes.
    const c = client(url, stats, { credentials });
    c.send([alert("a")]);
    await c.idle();
    await c.close();
    assert.equal(stats.read(0).sent, 1);
    await assert.rejects(
      readCredentials({
        url,
        timeoutMs: 1000,
        tls: { certFile: clientCert.certFile },
      }),
      TypeError,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a credential that cannot be a header value is refused at start, naming the file and never the secret", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const token = `${dir}/token`;
    await Deno.writeTextFile(token, "SECRET-TOKEN-123\nsecond-line\n");
    // (A password goes base64-encoded into the header: any byte is fine.)
    const cases = [
      { url: "http://am:9093", timeoutMs: 1000, bearerTokenFile: token },
    ];
    for (const config of cases) {
      await assert.rejects(readCredentials(config), (e: Error) => {
        assert.ok(e instanceof TypeError);
        assert.match(
          e.message,
          /^Cannot use the credentials of Alertmanager http:\/\/am:9093 from \//,
        );
        assert.ok(
          !e.message.includes("SECRET") && !e.message.includes("\u0007"),
        );
        return true;
      });
    }
    // One line, but not a token (RFC 6750): refused too.
    await Deno.writeTextFile(token, "not a token\n");
    await assert.rejects(
      readCredentials(cases[0]),
      /bearer token of Alertmanager http:\/\/am:9093 from .*: a token is one line of letters/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a client certificate that does not parse is refused at start, naming the files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/c.pem`, "not a certificate\n");
    await Deno.writeTextFile(`${dir}/k.pem`, "not a key\n");
    await assert.rejects(
      readCredentials({
        url: "https://am:9093",
        timeoutMs: 1000,
        tls: { certFile: `${dir}/c.pem`, keyFile: `${dir}/k.pem` },
      }),
      (e: Error) => {
        assert.match(
          e.message,
          /^Cannot use the TLS files of Alertmanager https:\/\/am:9093 \(.*c\.pem, .*k\.pem\): /,
        );
        assert.equal(e.message.includes("\n"), false);
        return true;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an error answer is read only as far as 4 KiB, and a redirect is refused, not followed", async () => {
  // A 500 whose body never ends, then a redirect to another host.
  let mode: "endless" | "redirect" = "endless";
  let sentInAll = 0; // body bytes the server got to send, every answer
  const stop = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, signal: stop.signal },
    () => {
      if (mode === "redirect") {
        return new Response(null, {
          status: 307,
          headers: { location: "http://elsewhere.example/x" },
        });
      }
      const chunk = new TextEncoder().encode("\x1b[31mboom ".repeat(1000));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // Far more than the client may read; "endless" to it, yet the
          // server can finish when the test stops it.
          sentInAll += chunk.length;
          if ((sent += chunk.length) > 256 * 1024 * 1024) controller.close();
          else controller.enqueue(chunk);
        },
      });
      return new Response(body, { status: 500 });
    },
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const stats = AlertStats.create(1);
    const errors: string[] = [];
    const c = client(url, stats, { onError: (l) => errors.push(l) }, 5000);
    c.send([alert("a")]);
    await until("the first error line", () => errors.length > 0);
    // Answered from the first 4 KiB (an HTTP 500 line), not by the 5 s
    // timeout of a client still reading.
    assert.match(errors[0], /HTTP 500 /);
    assert.ok(!errors[0].includes("\x1b"), "no terminal control in the line");
    // The body was not read through: the server could send no more than
    // the sockets buffer (the process's RSS, once checked here, is shared
    // with the test files running beside this one).
    assert.ok(
      sentInAll < 64 * 1024 * 1024,
      `the server sent ${sentInAll} bytes`,
    );
    mode = "redirect";
    await c.idle();
    await until("the second error line", () => errors.length >= 2);
    await c.close();
    assert.match(
      errors.at(-1)!,
      /HTTP 307: redirects to http:\/\/elsewhere\.example\/.*; configure that URL instead/,
    );
    assert.ok(!errors.at(-1)!.includes("\x1b"));
  } finally {
    stop.abort();
    await Promise.race([
      server.finished,
      new Promise((r) => setTimeout(r, 2000)),
    ]);
  }
});
