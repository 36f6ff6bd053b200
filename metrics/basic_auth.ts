/**
 * HTTP basic authentication against the bcrypt hashes of a node_exporter
 * style web config (`basic_auth_users`), as a Hono middleware.
 *
 * Design, and why:
 * - bcrypt runs in a module worker (`bcrypt_worker.ts`). bcryptjs's async
 *   compare yields only every 100 ms, so on the main thread one cost-10
 *   check froze the event loop for ~71 ms in one slice (measured with a 1 ms
 *   interval probe, Deno 2.9.6, bcryptjs 3), and the agent's per-sample poll
 *   loop shares that thread. Through the worker the worst gap was 2–4 ms.
 * - Successful checks are cached (bounded, least recently used evicted), so
 *   a Prometheus scraping every 15 s costs one bcrypt per process lifetime.
 *   The cache key is an HMAC-SHA-256 of user and password under a random
 *   per-verifier key: the password is never kept, and a leaked key table
 *   cannot be brute-forced offline faster than bcrypt. Failures are never
 *   cached, so a later fix of the password file or the client takes effect.
 * - At most `maxConcurrent` bcrypt checks are in flight; more are answered
 *   "busy" (503) at once instead of queueing CPU work an attacker can pile
 *   up.
 * - Unknown users are still checked against a dummy hash of the highest cost
 *   configured, so response time does not reveal which users exist.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";

/** What {@linkcode BasicAuthVerifier.verify} decided. */
export type BasicAuthResult = "ok" | "denied" | "busy";

/** Tuning for {@linkcode BasicAuthVerifier}. */
export interface BasicAuthOptions {
  /** Successful verifications remembered; 0 disables the cache. Default 64. */
  readonly cacheSize?: number;
  /** bcrypt checks allowed in flight at once; more are "busy". Default 2. */
  readonly maxConcurrent?: number;
  /**
   * Replaces the worker-backed bcrypt compare (tests count calls with it).
   * Resolves whether `password` matches `hash`.
   */
  readonly compare?: (password: string, hash: string) => Promise<boolean>;
  /** How long the bcrypt worker may sit idle before it is stopped. 10 s. */
  readonly workerIdleMs?: number;
}

/** Longest `Authorization` value looked at; real ones are far shorter. */
const MAX_HEADER_LENGTH = 4096;

// A real bcrypt salt and digest (of a password nobody uses); the cost field
// is put in front at run time so the dummy check costs what a real one does.
const DUMMY_SALT_AND_DIGEST =
  "ZEc36rUKGxr0mjxX/0XIhuBcc4YG8wSU0ozer8dWhznLItTYxjZie";

const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/**
 * Whether `hash` is a bcrypt hash this module can check: `$2a$`, `$2b$` or
 * `$2y$`, a two-digit cost from 04 to 31, 60 characters in all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isBcryptHash } from "./basic_auth.ts";
 *
 * assert.equal(
 *   isBcryptHash("$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"),
 *   true,
 * );
 * assert.equal(isBcryptHash("$1$md5crypt$abc"), false);
 * ```
 */
export function isBcryptHash(hash: string): boolean {
  return BCRYPT_HASH.test(hash);
}

/**
 * Checks `Authorization` headers against `user -> bcrypt hash`.
 *
 * Owns a bcrypt worker that is started on first need and stopped after
 * `workerIdleMs` of idleness or by {@linkcode BasicAuthVerifier.close}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import bcrypt from "bcryptjs";
 * import { BasicAuthVerifier } from "./basic_auth.ts";
 *
 * using verifier = new BasicAuthVerifier(
 *   new Map([["prometheus", bcrypt.hashSync("s3cret", 4)]]),
 * );
 * const header = `Basic ${btoa("prometheus:s3cret")}`;
 * assert.equal(await verifier.verify(header), "ok");
 * assert.equal(await verifier.verify(`Basic ${btoa("prometheus:nope")}`), "denied");
 * assert.equal(await verifier.verify(undefined), "denied");
 * ```
 */
export class BasicAuthVerifier implements Disposable {
  readonly #users: ReadonlyMap<string, string>;
  readonly #dummyHash: string;
  readonly #cacheSize: number;
  readonly #maxConcurrent: number;
  readonly #compare: (password: string, hash: string) => Promise<boolean>;
  readonly #worker: BcryptWorker | undefined;
  /** HMAC keys of verified credentials, least recently used first. */
  readonly #cache = new Map<string, true>();
  /** Checks running now, by HMAC key: identical requests share one. */
  readonly #inFlight = new Map<string, Promise<boolean>>();
  #running = 0;
  #hmacKey: Promise<CryptoKey> | undefined;

  /**
   * Throws a TypeError naming the user when a hash is not a bcrypt hash
   * (the hash itself is never printed), or when an option is out of range.
   */
  constructor(
    users: ReadonlyMap<string, string>,
    options: BasicAuthOptions = {},
  ) {
    let cost = 10;
    let first = true;
    for (const [user, hash] of users) {
      if (!isBcryptHash(hash)) {
        throw new TypeError(
          `basic auth user ${JSON.stringify(user)}: not a bcrypt hash`,
        );
      }
      const c = Number(hash.slice(4, 6));
      cost = first ? c : Math.max(cost, c);
      first = false;
    }
    this.#users = new Map(users);
    this.#dummyHash = `$2b$${
      String(cost).padStart(2, "0")
    }$${DUMMY_SALT_AND_DIGEST}`;
    this.#cacheSize = checkCount("cacheSize", options.cacheSize ?? 64, 0);
    this.#maxConcurrent = checkCount(
      "maxConcurrent",
      options.maxConcurrent ?? 2,
      1,
    );
    if (options.compare !== undefined) {
      this.#compare = options.compare;
    } else {
      const worker = new BcryptWorker(
        checkCount("workerIdleMs", options.workerIdleMs ?? 10_000, 0),
      );
      this.#worker = worker;
      this.#compare = (password, hash) => worker.compare(password, hash);
    }
  }

  /**
   * Decides on one `Authorization` header value: "ok" for a configured user
   * with the right password, "busy" when `maxConcurrent` bcrypt checks are
   * already running, "denied" otherwise. Malformed headers (not `Basic`, bad
   * base64, not UTF-8, no colon) are denied without running bcrypt. The
   * password is everything after the first colon.
   *
   * Rejects only when the bcrypt worker itself fails.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { BasicAuthVerifier } from "./basic_auth.ts";
   *
   * const calls: string[] = [];
   * const verifier = new BasicAuthVerifier(
   *   new Map([["ops", "$2b$04$" + "a".repeat(53)]]),
   *   // A stand-in for bcrypt that accepts "pw:with:colons".
   *   { compare: (pw) => (calls.push(pw), Promise.resolve(pw === "pw:with:colons")) },
   * );
   * const header = `Basic ${btoa("ops:pw:with:colons")}`;
   * assert.equal(await verifier.verify(header), "ok");
   * assert.equal(await verifier.verify(header), "ok"); // from the cache
   * assert.equal(calls.length, 1);
   * ```
   */
  async verify(authorization: string | null | undefined): Promise<
    BasicAuthResult
  > {
    const credentials = parseBasicAuthorization(authorization);
    if (credentials === undefined) return "denied";
    const { user, password } = credentials;
    const key = await this.#cacheKey(user, password);
    if (this.#cache.has(key)) {
      // Re-insert so eviction drops the least recently used entry.
      this.#cache.delete(key);
      this.#cache.set(key, true);
      return "ok";
    }
    let check = this.#inFlight.get(key);
    if (check === undefined) {
      if (this.#running >= this.#maxConcurrent) return "busy";
      check = this.#check(user, password);
      this.#inFlight.set(key, check);
      check.then(
        () => this.#inFlight.delete(key),
        () => this.#inFlight.delete(key),
      );
    }
    if (!await check) return "denied";
    if (this.#cacheSize > 0) {
      this.#cache.set(key, true);
      if (this.#cache.size > this.#cacheSize) {
        this.#cache.delete(this.#cache.keys().next().value!);
      }
    }
    return "ok";
  }

  /**
   * Stops the bcrypt worker now, failing checks still running. The verifier
   * stays usable: a later check starts a new worker.
   */
  close(): void {
    this.#worker?.stop(new Error("basic auth verifier closed"));
  }

  /** Same as {@linkcode BasicAuthVerifier.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  async #check(user: string, password: string): Promise<boolean> {
    const hash = this.#users.get(user);
    this.#running++;
    try {
      // Unknown users are compared too, against a hash nobody matches, so
      // they take as long as known ones.
      const ok = await this.#compare(password, hash ?? this.#dummyHash);
      return ok && hash !== undefined;
    } finally {
      this.#running--;
    }
  }

  async #cacheKey(user: string, password: string): Promise<string> {
    this.#hmacKey ??= crypto.subtle.generateKey(
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    ) as Promise<CryptoKey>;
    // JSON keeps user and password apart whatever characters they hold.
    const data = new TextEncoder().encode(JSON.stringify([user, password]));
    const mac = await crypto.subtle.sign("HMAC", await this.#hmacKey, data);
    return Array.from(
      new Uint8Array(mac),
      (b) => b.toString(16).padStart(2, "0"),
    )
      .join("");
  }
}

/**
 * Hono middleware requiring basic auth: 401 with `WWW-Authenticate: Basic
 * realm="dpu-traceback", charset="UTF-8"` on missing or wrong credentials,
 * 503 with `Retry-After: 1` when too many bcrypt checks are running.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { BasicAuthVerifier, basicAuth } from "./basic_auth.ts";
 *
 * const verifier = new BasicAuthVerifier(
 *   new Map([["ops", "$2b$04$" + "a".repeat(53)]]),
 *   { compare: (pw) => Promise.resolve(pw === "pw") },
 * );
 * const app = new Hono().use(basicAuth(verifier)).get("/", (c) => c.text("hi"));
 * const denied = await app.request("/");
 * assert.equal(denied.status, 401);
 * assert.equal(
 *   denied.headers.get("www-authenticate"),
 *   'Basic realm="dpu-traceback", charset="UTF-8"',
 * );
 * const ok = await app.request("/", {
 *   headers: { authorization: `Basic ${btoa("ops:pw")}` },
 * });
 * assert.equal(await ok.text(), "hi");
 * ```
 */
export function basicAuth(verifier: BasicAuthVerifier): MiddlewareHandler {
  return async function basicAuthMiddleware(c, next) {
    const result = await verifier.verify(c.req.header("authorization"));
    if (result === "ok") {
      await next();
      return;
    }
    if (result === "busy") {
      return c.text("too many authentication checks running, retry\n", 503, {
        "retry-after": "1",
      });
    }
    return c.text("unauthorized\n", 401, {
      "www-authenticate": 'Basic realm="dpu-traceback", charset="UTF-8"',
    });
  };
}

/** User and password of a well-formed `Basic` header, else undefined. */
function parseBasicAuthorization(
  header: string | null | undefined,
): { user: string; password: string } | undefined {
  if (!header || header.length > MAX_HEADER_LENGTH) return undefined;
  // The scheme is case-insensitive (RFC 7617 §2, RFC 9110 §11.1).
  const match = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (match === null || match[1].length % 4 !== 0) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(match[1]), (ch) => ch.charCodeAt(0));
  } catch {
    return undefined;
  }
  let decoded: string;
  try {
    // Clients send UTF-8 (we advertise charset="UTF-8"); anything else
    // could not match a hash made from a UTF-8 password anyway.
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function checkCount(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TypeError(
      `basic auth ${name}: expected an integer >= ${min}, got ${value}`,
    );
  }
  return value;
}

/** A lazily started bcrypt worker that stops itself when idle. */
class BcryptWorker {
  readonly #idleMs: number;
  #worker: Worker | undefined;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #nextId = 1;
  readonly #pending = new Map<
    number,
    { resolve: (ok: boolean) => void; reject: (error: Error) => void }
  >();

  constructor(idleMs: number) {
    this.#idleMs = idleMs;
  }

  compare(password: string, hash: string): Promise<boolean> {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const worker = this.#worker ??= this.#start();
    const id = this.#nextId++;
    return new Promise<boolean>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, password, hash });
    });
  }

  /** Terminates the worker, rejecting what it still had to do. */
  stop(reason: Error): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#worker?.terminate();
    this.#worker = undefined;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { reject } of pending) reject(reason);
  }

  #start(): Worker {
    const worker = new Worker(new URL("./bcrypt_worker.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = (event: MessageEvent) => {
      const reply = event.data as
        | { id: number; ok: boolean }
        | { id: number; error: string };
      const waiter = this.#pending.get(reply.id);
      if (waiter === undefined) return;
      this.#pending.delete(reply.id);
      if ("error" in reply) {
        waiter.reject(new Error(`bcrypt check failed: ${reply.error}`));
      } else {
        waiter.resolve(reply.ok === true);
      }
      if (this.#pending.size === 0) this.#armIdleTimer();
    };
    worker.onerror = (event: ErrorEvent) => {
      // Handled here: an unhandled worker error would end the whole agent.
      event.preventDefault();
      this.stop(new Error(`bcrypt worker failed: ${event.message}`));
    };
    worker.onmessageerror = () => {
      this.stop(new Error("bcrypt worker sent an unreadable message"));
    };
    return worker;
  }

  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    const timer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#pending.size === 0) {
        this.#worker?.terminate();
        this.#worker = undefined;
      }
    }, this.#idleMs);
    // A live worker keeps the process alive by itself; the timer need not.
    Deno.unrefTimer(timer);
    this.#idleTimer = timer;
  }
}
