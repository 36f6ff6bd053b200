/**
 * HTTP basic authentication against the bcrypt hashes of a node_exporter
 * style web config (`basic_auth_users`), checked before any route.
 *
 * Design, and why:
 * - bcrypt runs in a module worker (`bcrypt_worker.ts`). bcryptjs's async
 *   compare yields only every 100 ms, so on the main thread one cost-10
 *   check froze the event loop for ~71 ms in one slice (measured with a 1 ms
 *   interval probe, Deno 2.9.6, bcryptjs 3), and the endpoint's thread
 *   serves every other client from that loop. Through the worker the worst
 *   gap was 2–4 ms.
 * - Successful checks are cached (bounded, least recently used evicted), so
 *   a Prometheus scraping every 15 s costs one bcrypt per process lifetime.
 *   The cache key is an HMAC-SHA-256 of user and password under a random
 *   per-verifier key: the password is never kept, and a leaked key table
 *   cannot be brute-forced offline faster than bcrypt. Failures are never
 *   cached, so a later fix of the password file or the client takes effect,
 *   and only a client that knows a password can add an entry.
 * - Wrong passwords must not lock the right one out. bcrypt is the only
 *   costly step, so it is shared fairly between client addresses: an
 *   address may have one check running or waiting; another check from it
 *   is refused at once ("limited", 429) instead of queueing. So each
 *   address's own queue holds one check, and the checks of different
 *   addresses wait in one short list (`maxQueued`, default 4) for the one
 *   worker. The next check to run is that of the address served least
 *   recently (never served first; between equals, the one that came
 *   first): round-robin over the addresses waiting, so an address just
 *   served goes behind every other waiting one. When the list is full, a
 *   check from an address served less recently than one waiting takes the
 *   place of the waiting check whose address was served most recently
 *   (that one is answered "busy", 503); otherwise the newcomer is "busy".
 *   Why both: first come first served let 8 flooding addresses keep the 4
 *   places full, each answer freeing one place that the flooder just
 *   answered took again before a scraper's retry arrived (issue 22: 18
 *   scrapes in a row got 503). Now a scraper that has not authenticated
 *   yet waits for the checks running and at most one check of each
 *   address served even less recently than it; a flood's addresses, each
 *   served in turn, are all more recent, so it waits for the running
 *   check alone. Turns are counted in checks started, not time, and
 *   remembered for the last 1024 addresses served, so memory stays
 *   bounded; a forgotten address counts as never served, which only a
 *   flood from more addresses than that can use, and such a flood gets
 *   no more than one turn per address either. IPv6 clients are counted by
 *   /64, the block one host usually gets, or one host could take every
 *   place alone.
 * - Hashes above cost {@linkcode MAX_BCRYPT_COST} are refused: each check
 *   of one would hold the worker, and every client queued behind it, for a
 *   second or more (see there for the measurement).
 * - Unknown users are still checked against a dummy hash of the highest cost
 *   configured, so response time does not reveal which users exist.
 *
 * @module
 */

import { clientKey } from "./client_key.ts";
import { type Answer, textAnswer } from "./answer.ts";
import { formatDuration } from "../base/units.ts";

/**
 * What {@linkcode BasicAuthVerifier.verify} decided: "limited" when this
 * client already has a check running or waiting, "busy" when the queue of
 * checks is full or this check's place in it went to a client served less
 * recently.
 */
export type BasicAuthResult = "ok" | "denied" | "limited" | "busy";

/** Tuning for {@linkcode BasicAuthVerifier}. */
export interface BasicAuthOptions {
  /** Successful verifications remembered; 0 disables the cache. Default 64. */
  readonly cacheSize?: number;
  /**
   * bcrypt checks handed to the worker at once. Default 1: the one worker
   * runs one at a time, so more would only move the waiting out of this
   * verifier's fair queue into the worker's.
   */
  readonly maxConcurrent?: number;
  /**
   * Checks that may wait for a running one to end, one per client at most.
   * When they are all taken, a check from a client served less recently
   * than one waiting takes the place of the waiting check whose client was
   * served most recently (that one is "busy"); otherwise it is "busy".
   * Default 4, so few answers are held waiting. How long a check waits
   * depends on turns, not on this bound: for the running check and at
   * most one check of each client served less recently than its own. So
   * a scraper among flooding addresses, which are served in turn, waits
   * for one check: about 1 s at {@linkcode MAX_BCRYPT_COST} on a core 4
   * times slower than the one measured there, well inside Prometheus's
   * default 10 s scrape timeout.
   */
  readonly maxQueued?: number;
  /**
   * Replaces the worker-backed bcrypt compare (tests count calls with it).
   * Resolves whether `password` matches `hash`.
   */
  readonly compare?: (password: string, hash: string) => Promise<boolean>;
  /** How long the bcrypt worker may sit idle before it is stopped. 10 s. */
  readonly workerIdleMs?: number;
}

/**
 * The highest bcrypt cost accepted. bcryptjs's compare in Deno 2.9.6,
 * measured on one core of an Intel Xeon (2 vCPU cloud VM): cost 10 70 ms,
 * 11 145 ms, 12 250 ms, 13 485 ms, 14 1.1 s; each step doubles it. The
 * agent runs on a DPU's Arm cores, slower by several times (an estimate, not
 * measured), so cost 12 is the highest whose check stays around a second
 * there. A fixed number, not a calibration at start-up, so the same file is
 * accepted or refused on every machine.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { basicAuthUserProblem, MAX_BCRYPT_COST } from "./basic_auth.ts";
 *
 * assert.equal(MAX_BCRYPT_COST, 12);
 * const tail = "X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";
 * assert.equal(basicAuthUserProblem("ops", `$2y$12$${tail}`), undefined);
 * assert.match(basicAuthUserProblem("ops", `$2y$13$${tail}`)!, /use cost 12 or less/);
 * ```
 */
export const MAX_BCRYPT_COST = 12;

/** Seconds of one check at MAX_BCRYPT_COST on the machine measured above. */
const SECONDS_AT_MAX_COST = 0.25;

/** Longest `Authorization` value looked at; real ones are far shorter. */
const MAX_HEADER_LENGTH = 4096;

// A real bcrypt salt and digest (of a password nobody uses); the cost field
// is put in front at run time so the dummy check costs what a real one does.
const DUMMY_SALT_AND_DIGEST =
  "ZEc36rUKGxr0mjxX/0XIhuBcc4YG8wSU0ozer8dWhznLItTYxjZie";

const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/**
 * Whether `hash` is a bcrypt hash this module can check: `$2a$`, `$2b$` or
 * `$2y$`, a two-digit cost from 04 to 31, 60 characters in all. The cost is
 * not bounded here; see {@linkcode basicAuthUserProblem}.
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
 * Why `user` with `hash` cannot be used for basic auth, in a few words that
 * never quote the hash; undefined when it can. Refused: a user name with a
 * colon (a `Basic` header ends the user name at the first colon, so no
 * client could log in as it), a hash that is not bcrypt, and a cost above
 * {@linkcode MAX_BCRYPT_COST}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { basicAuthUserProblem } from "./basic_auth.ts";
 *
 * const tail = "X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";
 * assert.equal(basicAuthUserProblem("prometheus", `$2y$10$${tail}`), undefined);
 * assert.equal(
 *   basicAuthUserProblem("a:b", `$2y$10$${tail}`),
 *   'user names cannot contain ":" (basic auth ends the user name at the first colon)',
 * );
 * assert.equal(
 *   basicAuthUserProblem("ops", `$2y$14$${tail}`),
 *   "bcrypt cost 14 is too slow to check on every login (about 1.000 s per " +
 *     "check on a fast x86 core, several times that on a DPU's Arm cores); " +
 *     "use cost 12 or less",
 * );
 * ```
 */
export function basicAuthUserProblem(
  user: string,
  hash: string,
): string | undefined {
  if (user.includes(":")) {
    return 'user names cannot contain ":" (basic auth ends the user name at the first colon)';
  }
  if (!isBcryptHash(hash)) {
    return "not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)";
  }
  const cost = bcryptCost(hash);
  if (cost > MAX_BCRYPT_COST) {
    const seconds = SECONDS_AT_MAX_COST * 2 ** (cost - MAX_BCRYPT_COST);
    return `bcrypt cost ${cost} is too slow to check on every login (about ` +
      `${
        formatDuration(seconds)
      } per check on a fast x86 core, several times ` +
      `that on a DPU's Arm cores); use cost ${MAX_BCRYPT_COST} or less`;
  }
  return undefined;
}

/**
 * Client addresses whose last turn is remembered (see the module's
 * design notes): about 100 kB at most, and more addresses than a flood
 * that this scheduling can still keep fair would use.
 */
const SERVED_CLIENTS_REMEMBERED = 1024;

/** A check waiting for a slot: start it, give its place away, or fail it. */
interface Waiting {
  /** The client (see clientKey) it is for. */
  readonly from: string;
  /** Order of arrival, to break ties between clients served alike. */
  readonly arrival: number;
  start(): void;
  /** Its place went to another client's check: answer "busy". */
  evict(): void;
  fail(error: Error): void;
}

/** What a scheduled check settles to: its verdict, or "evicted" unstarted. */
type CheckOutcome = boolean | "evicted";

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
  readonly #maxQueued: number;
  readonly #compare: (password: string, hash: string) => Promise<boolean>;
  readonly #worker: BcryptWorker | undefined;
  /** HMAC keys of verified credentials, least recently used first. */
  readonly #cache = new Map<string, true>();
  /** Checks running or waiting, by HMAC key: identical requests share one. */
  readonly #inFlight = new Map<string, Promise<CheckOutcome>>();
  /** Clients (see clientKey) with a check running or waiting. */
  readonly #clients = new Set<string>();
  /** Checks waiting for a slot, in arrival order. */
  readonly #queue: Waiting[] = [];
  /**
   * The turn (count of checks started before it) at which each client's
   * last check started, least recently served first; bounded by
   * SERVED_CLIENTS_REMEMBERED.
   */
  readonly #served = new Map<string, number>();
  /** Checks started so far: the clock that turns are told by. */
  #turns = 0;
  /** Checks queued so far, to order waiting ones that tie. */
  #arrivals = 0;
  #running = 0;
  #hmacKey: Promise<CryptoKey> | undefined;

  /**
   * Throws a TypeError naming the user when {@linkcode basicAuthUserProblem}
   * finds one (the hash itself is never printed), or when an option is out
   * of range.
   */
  constructor(
    users: ReadonlyMap<string, string>,
    options: BasicAuthOptions = {},
  ) {
    let cost = 10;
    let first = true;
    for (const [user, hash] of users) {
      const problem = basicAuthUserProblem(user, hash);
      if (problem !== undefined) {
        throw new TypeError(
          `basic auth user ${JSON.stringify(user)}: ${problem}`,
        );
      }
      const c = bcryptCost(hash);
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
      options.maxConcurrent ?? 1,
      1,
    );
    this.#maxQueued = checkCount("maxQueued", options.maxQueued ?? 4, 0);
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
   * Decides on one `Authorization` header value from `client` (the
   * connection's remote address; requests without one count as one
   * client): "ok" for a configured user with the right password, "limited"
   * when `client` already has a check running or waiting, "busy" when
   * `maxConcurrent` checks run and `maxQueued` wait from clients served no
   * more recently than `client`, or when this check waited and its place
   * went to a client served less recently; "denied" otherwise. Waiting
   * checks start in order of their clients' last check, least recent
   * first (see the module's notes).
   * Cached credentials and requests identical to a check already running
   * or waiting are answered without a check of their own, so they are
   * never limited, and busy only when the check they share gives its place
   * away. Malformed headers (not `Basic`, bad base64, not UTF-8, no
   * colon) are denied without running bcrypt. The password is everything
   * after the first colon.
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
   *
   * // One check at a time per client address: while a stand-in check
   * // that waits for `verdict` runs, the same client is refused at once.
   * const started = Promise.withResolvers<void>();
   * const verdict = Promise.withResolvers<boolean>();
   * const gated = new BasicAuthVerifier(
   *   new Map([["ops", "$2b$04$" + "a".repeat(53)]]),
   *   { compare: () => (started.resolve(), verdict.promise) },
   * );
   * const a: Deno.NetAddr = { transport: "tcp", hostname: "192.0.2.7", port: 50000 };
   * const guess = gated.verify(`Basic ${btoa("ops:guess 1")}`, a);
   * await started.promise;
   * assert.equal(await gated.verify(`Basic ${btoa("ops:guess 2")}`, a), "limited");
   * verdict.resolve(false);
   * assert.equal(await guess, "denied");
   * ```
   */
  async verify(
    authorization: string | null | undefined,
    client?: Deno.Addr,
  ): Promise<BasicAuthResult> {
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
      const from = clientKey(client);
      if (this.#clients.has(from)) return "limited";
      if (
        this.#running >= this.#maxConcurrent &&
        this.#queue.length >= this.#maxQueued && !this.#makeRoomFor(from)
      ) {
        return "busy";
      }
      check = this.#schedule(user, password, key, from);
    }
    const outcome = await check;
    if (outcome === "evicted") return "busy";
    if (!outcome) return "denied";
    if (this.#cacheSize > 0) {
      this.#cache.set(key, true);
      if (this.#cache.size > this.#cacheSize) {
        this.#cache.delete(this.#cache.keys().next().value!);
      }
    }
    return "ok";
  }

  /**
   * Stops the bcrypt worker now, failing checks still running or waiting.
   * The verifier stays usable: a later check starts a new worker.
   */
  close(): void {
    const error = new Error("basic auth verifier closed");
    // Waiting checks first, so the running ones failing start none of them.
    for (const waiting of this.#queue.splice(0)) waiting.fail(error);
    this.#worker?.stop(error);
  }

  /** Same as {@linkcode BasicAuthVerifier.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** Runs a check now or queues it; `from` and `key` are held until done. */
  #schedule(
    user: string,
    password: string,
    key: string,
    from: string,
  ): Promise<CheckOutcome> {
    this.#clients.add(from);
    const check = new Promise<CheckOutcome>((resolve, reject) => {
      // Released before the caller hears the answer, so a client told
      // "denied" may try again at once without being "limited".
      const release = () => {
        this.#clients.delete(from);
        this.#inFlight.delete(key);
      };
      const start = () => {
        this.#running++;
        this.#servedNow(from);
        this.#check(user, password).then(
          (ok) => {
            this.#running--;
            release();
            resolve(ok);
            this.#startWaiting();
          },
          (error) => {
            this.#running--;
            release();
            reject(error);
            this.#startWaiting();
          },
        );
      };
      if (this.#running < this.#maxConcurrent) {
        start();
      } else {
        this.#queue.push({
          from,
          arrival: this.#arrivals++,
          start,
          evict: () => {
            release();
            resolve("evicted");
          },
          fail: (error) => {
            release();
            reject(error);
          },
        });
      }
    });
    this.#inFlight.set(key, check);
    return check;
  }

  #startWaiting(): void {
    while (this.#running < this.#maxConcurrent && this.#queue.length > 0) {
      // The client served least recently goes first: round-robin over the
      // clients waiting, so none waits behind two checks of another.
      let next = 0;
      for (let i = 1; i < this.#queue.length; i++) {
        if (this.#before(this.#queue[i], this.#queue[next])) next = i;
      }
      this.#queue.splice(next, 1)[0].start();
    }
  }

  /**
   * With the queue full: gives the place of the waiting check whose client
   * was served most recently to `from` when `from` was served less recently
   * still, answering that check "busy"; false when no check may be moved.
   */
  #makeRoomFor(from: string): boolean {
    if (this.#queue.length === 0) return false;
    let last = 0;
    for (let i = 1; i < this.#queue.length; i++) {
      if (this.#before(this.#queue[last], this.#queue[i])) last = i;
    }
    // Strictly less recently: clients tie only when neither was served
    // (or both are forgotten), and then first come keeps its place, as a
    // queue would.
    if (this.#lastTurn(from) >= this.#lastTurn(this.#queue[last].from)) {
      return false;
    }
    this.#queue.splice(last, 1)[0].evict();
    return true;
  }

  /** Whether waiting check `a` is to start before `b`. */
  #before(a: Waiting, b: Waiting): boolean {
    const ta = this.#lastTurn(a.from);
    const tb = this.#lastTurn(b.from);
    return ta < tb || (ta === tb && a.arrival < b.arrival);
  }

  /** The turn of `from`'s last check; -1 when never served (or forgotten). */
  #lastTurn(from: string): number {
    return this.#served.get(from) ?? -1;
  }

  /** Records that `from`'s check starts now, forgetting the oldest client. */
  #servedNow(from: string): void {
    this.#served.delete(from);
    this.#served.set(from, this.#turns++);
    if (this.#served.size > SERVED_CLIENTS_REMEMBERED) {
      this.#served.delete(this.#served.keys().next().value!);
    }
  }

  async #check(user: string, password: string): Promise<boolean> {
    const hash = this.#users.get(user);
    // Unknown users are compared too, against a hash nobody matches, so
    // they take as long as the slowest known one.
    const ok = await this.#compare(password, hash ?? this.#dummyHash);
    return ok && hash !== undefined;
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
 * The refusal for a request without valid credentials, or undefined when
 * they are valid: 401 with `WWW-Authenticate: Basic realm="dpu-traceback",
 * charset="UTF-8"` on missing or wrong credentials; 429 with
 * `Retry-After: 1` when this client's previous check is still running; 503
 * with `Retry-After: 1` when the queue of checks is full (or this check's
 * place in it went to a client served less recently). `client` is the
 * connection's remote address.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BasicAuthVerifier, basicAuthRefusal } from "./basic_auth.ts";
 *
 * using verifier = new BasicAuthVerifier(
 *   new Map([["ops", "$2b$04$" + "a".repeat(53)]]),
 *   { compare: (pw) => Promise.resolve(pw === "pw") },
 * );
 * const client = { transport: "tcp", hostname: "192.0.2.7", port: 50000 } as const;
 * const denied = await basicAuthRefusal(verifier, undefined, client);
 * assert.equal(denied?.status, 401);
 * assert.equal(
 *   denied?.headers?.["www-authenticate"],
 *   'Basic realm="dpu-traceback", charset="UTF-8"',
 * );
 * assert.equal(await basicAuthRefusal(verifier, `Basic ${btoa("ops:pw")}`, client), undefined);
 * ```
 */
export async function basicAuthRefusal(
  verifier: BasicAuthVerifier,
  authorization: string | undefined,
  client: Deno.Addr | undefined,
): Promise<Answer | undefined> {
  const result = await verifier.verify(authorization, client);
  if (result === "ok") return undefined;
  if (result === "limited") {
    return textAnswer(
      429,
      "an authentication check from this client is still running, retry",
      { "retry-after": "1" },
    );
  }
  if (result === "busy") {
    return textAnswer(503, "too many authentication checks waiting, retry", {
      "retry-after": "1",
    });
  }
  return textAnswer(401, "unauthorized", {
    "www-authenticate": 'Basic realm="dpu-traceback", charset="UTF-8"',
  });
}

/** The cost field of a hash {@linkcode isBcryptHash} accepted. */
function bcryptCost(hash: string): number {
  return Number(hash.slice(4, 6));
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
    // Its own permissions: it compares passwords clients send, so it gets
    // nothing of its parent's (which may reach the Alertmanagers) beyond
    // reading its module.
    const worker = new Worker(new URL("./bcrypt_worker.ts", import.meta.url), {
      type: "module",
      deno: {
        permissions: {
          read: "inherit",
          net: false,
          env: false,
          sys: false,
          write: false,
          ffi: false,
          run: false,
          import: false,
        },
      },
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
