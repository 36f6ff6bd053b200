import assert from "node:assert/strict";
import {
  findHeadEnd,
  headerField,
  leadingEmptyLines,
  parseRequestHead,
  responseHead,
} from "./http1.ts";

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const parse = (text: string) =>
  parseRequestHead(bytes(text), { maxHeaders: 4, maxTargetBytes: 64 });

Deno.test("request heads that parse", () => {
  const cases: [string, Partial<ReturnType<typeof head>>][] = [
    ["GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", {
      method: "GET",
      target: "/metrics",
      close: false,
    }],
    ["HEAD /?a=1 HTTP/1.1\r\nhost:a\r\nConnection: keep-alive, Close\r\n\r\n", {
      method: "HEAD",
      target: "/?a=1",
      path: "/",
      query: "a=1",
      close: true,
    }],
    // HTTP/1.0: no Host needed; closes after one response.
    ["GET / HTTP/1.0\r\n\r\n", { version: "1.0", close: true }],
    // Absolute form: the path and query; the authority is not used.
    ["GET http://evil.example/x?y HTTP/1.1\r\nHost: a\r\n\r\n", {
      target: "/x?y",
    }],
    ["GET https://evil.example HTTP/1.1\r\nHost: a\r\n\r\n", { target: "/" }],
    // A path that looks like an authority stays a path.
    ["GET //evil.example/x HTTP/1.1\r\nHost: a\r\n\r\n", {
      target: "//evil.example/x",
    }],
    // Read as a URL reads it: unreserved escapes decoded, dot segments
    // resolved, the fragment dropped; reserved escapes kept.
    ["GET /%6detrics HTTP/1.1\r\nHost: a\r\n\r\n", { path: "/metrics" }],
    ["GET /./api/../metrics HTTP/1.1\r\nHost: a\r\n\r\n", {
      path: "/metrics",
    }],
    ["GET /api/v1/events/%31?limit=5#x HTTP/1.1\r\nHost: a\r\n\r\n", {
      path: "/api/v1/events/1",
      query: "limit=5",
    }],
    ["GET /a%2Fb HTTP/1.1\r\nHost: a\r\n\r\n", { path: "/a%2Fb" }],
    ["GET http://a/metrics#top HTTP/1.1\r\nHost: a\r\n\r\n", {
      path: "/metrics",
    }],
    // An empty body is no body.
    ["GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", {
      close: false,
    }],
    // The target's longest allowed length.
    [`GET /${"a".repeat(63)} HTTP/1.1\r\nHost: a\r\n\r\n`, {
      path: `/${"a".repeat(63)}`,
      query: "",
    }],
  ];
  for (const [text, want] of cases) {
    const got = head(text);
    for (const [key, value] of Object.entries(want)) {
      assert.deepEqual(
        got[key as keyof typeof got],
        value,
        JSON.stringify(text),
      );
    }
  }
  // Values are trimmed, names lower-cased, obs-text kept as Latin-1.
  assert.deepEqual(
    head("GET / HTTP/1.1\r\nHost: a\r\nX-A: \t v\xe9 \t\r\n\r\n").headers,
    [["host", "a"], ["x-a", "v\xe9"]],
  );
  // A field sent twice reads as one list; names match in any case.
  const twice = head(
    "GET / HTTP/1.1\r\nHost: a\r\nAccept: a\r\naccept: b\r\n\r\n",
  );
  assert.equal(headerField(twice, "ACCEPT"), "a, b");
  assert.equal(headerField(twice, "authorization"), undefined);
});

function head(text: string) {
  const parsed = parse(text);
  assert.ok(parsed.ok, `${JSON.stringify(text)}: ${JSON.stringify(parsed)}`);
  return parsed.head;
}

Deno.test("request heads that are refused, and with what", () => {
  const cases: [string, number][] = [
    ["GET / HTTP/1.1\nHost: a\r\n\r\n", 400], // bare LF
    ["GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400], // bare CR
    ["GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 400], // NUL
    ["GET / HTTP/1.1\r\nHost: a\r\nX: \x7f\r\n\r\n", 400], // DEL
    ["GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", 400], // obs-fold
    ["GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400], // space before colon
    ["GET / HTTP/1.1\r\nHost: a\r\nno colon\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", 400], // empty name
    ["GET / HTTP/1.1\r\n\r\n", 400], // no Host
    ["GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400],
    [
      "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
      400,
    ],
    ["GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n", 400],
    ["GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400], // two spaces
    ["GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400],
    ["GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n", 400], // target not ASCII
    ["GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400],
    ["GET example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400],
    ["GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505],
    ["GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505],
    ["GET / HTTP/1\r\nHost: a\r\n\r\n", 400],
    ["get / HTTP/1.1\r\nHost: a\r\n\r\n", 405], // not GET: methods are case-sensitive
    ["TRACE / HTTP/1.1\r\nHost: a\r\n\r\n", 405],
    ["CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 405],
    // Read-only: every other method, known or not, is 405.
    ["POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 405],
    ["PURGE / HTTP/1.1\r\nHost: a\r\n\r\n", 405],
    // A body is announced: refused, and the connection closes unread.
    ["GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 413],
    ["GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 413],
    [`GET /${"a".repeat(64)} HTTP/1.1\r\nHost: a\r\n\r\n`, 414],
    ["GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", 431],
  ];
  for (const [text, status] of cases) {
    const parsed = parse(text);
    assert.equal(
      parsed.ok ? 200 : parsed.problem.status,
      status,
      JSON.stringify(text),
    );
  }
});

Deno.test("the end of a head is found across reads, and leading empty lines are counted", () => {
  const text = bytes("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nrest");
  assert.equal(leadingEmptyLines(text, text.length), 4);
  const start = 4;
  const head = text.subarray(start);
  // Fed one byte at a time, the end is found exactly when it arrives.
  let found = -1;
  for (let length = 1; length <= head.length && found < 0; length++) {
    found = findHeadEnd(head, length - 1, length);
    if (found >= 0) assert.equal(length, head.length - 4);
  }
  assert.equal(found, head.length - 4);
  assert.equal(leadingEmptyLines(bytes("\r"), 1), 0);
});

Deno.test("response heads: framing headers are the connection layer's", () => {
  const text = new TextDecoder().decode(
    responseHead(
      200,
      [
        ["content-type", "text/plain"],
        ["content-length", "999"],
        ["transfer-encoding", "chunked"],
        ["keep-alive", "timeout=1"],
        ["set-cookie", "a=1"],
      ],
      { bodyLength: 3, close: false, date: "D" },
    ),
  );
  assert.equal(
    text,
    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nset-cookie: a=1\r\n" +
      "content-length: 3\r\ndate: D\r\n\r\n",
  );
  // An unknown status still makes a valid status line.
  assert.match(
    new TextDecoder().decode(
      responseHead(299, [], { close: true, date: "D" }),
    ),
    /^HTTP\/1\.1 299 \r\n/,
  );
});
