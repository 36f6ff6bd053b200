/**
 * A fake Alertmanager for the tests: `POST /api/v2/alerts` recorded, its
 * answer chosen by the test (accept, an HTTP status, or hang); `GET /api/v2/alerts` lists what it holds, newest state of
 * each alert by labels, as the real one does.
 *
 * @module
 */

import type { PostableAlert } from "./alert_state.ts";

/** How the fake answers the next pushes. */
export type FakeAnswer =
  | { readonly status: number; readonly retryAfter?: string }
  | { readonly hang: true };

/** One push as received. */
export interface FakePush {
  readonly headers: Headers;
  readonly alerts: PostableAlert[];
}

/** A running fake Alertmanager. */
export interface FakeAlertmanager extends AsyncDisposable {
  /** Its base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** Every push received, whatever the answer. */
  readonly pushes: FakePush[];
  /** The answer to pushes from now on (default: 200). */
  answer: FakeAnswer;
  /** Resolves once `n` pushes have been received. */
  received(n: number): Promise<void>;
  /** Alerts it holds by fingerprint (labels), accepted pushes only. */
  readonly alerts: Map<string, PostableAlert>;
}

/** Starts a fake on 127.0.0.1 (a free port), or with TLS when given. */
export function fakeAlertmanager(
  tls?: { cert: string; key: string },
): FakeAlertmanager {
  const pushes: FakePush[] = [];
  const alerts = new Map<string, PostableAlert>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const hung: (() => void)[] = [];
  const fake = {
    answer: { status: 200 } as FakeAnswer,
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    ...(tls ?? {}),
  }, async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== "/api/v2/alerts") {
      return new Response("not found", { status: 404 });
    }
    if (request.method === "GET") {
      return Response.json([...alerts.values()]);
    }
    const body = await request.json() as PostableAlert[];
    pushes.push({ headers: request.headers, alerts: body });
    for (const w of waiters.filter((w) => pushes.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const answer = fake.answer;
    if ("hang" in answer) {
      await new Promise<void>((resolve) => hung.push(resolve));
      return new Response("late", { status: 200 });
    }
    if (answer.status >= 200 && answer.status < 300) {
      for (const alert of body) alerts.set(JSON.stringify(alert.labels), alert);
      return new Response(null, { status: answer.status });
    }
    return new Response(`fake answer ${answer.status}\nsecond line`, {
      status: answer.status,
      headers: answer.retryAfter === undefined
        ? {}
        : { "Retry-After": answer.retryAfter },
    });
  });
  const port = server.addr.port;
  return {
    url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    port,
    pushes,
    alerts,
    get answer() {
      return fake.answer;
    },
    set answer(a: FakeAnswer) {
      fake.answer = a;
    },
    received(n: number) {
      if (pushes.length >= n) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
    async [Symbol.asyncDispose]() {
      hung.forEach((resolve) => resolve());
      await server.shutdown();
    },
  };
}

/**
 * A TCP server at 127.0.0.1 that closes every connection as soon as it
 * has read a little: the client sees the connection dropped.
 */
export function droppingServer(): { url: string } & AsyncDisposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.read(new Uint8Array(1024)).catch(() => null);
      conn.close();
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    async [Symbol.asyncDispose]() {
      listener.close();
      await serving;
    },
  };
}
