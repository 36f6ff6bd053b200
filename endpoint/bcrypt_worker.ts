/**
 * Module worker that runs bcrypt comparisons for
 * {@linkcode import("./basic_auth.ts").BasicAuthVerifier} off the main
 * thread.
 *
 * bcryptjs's async `compare` yields only every 100 ms, so on the main thread
 * a single cost-10 comparison stalls the event loop (and with it every other
 * client of the endpoint) for about 70 ms. In this worker
 * the synchronous compare is used: blocking here blocks nobody else.
 *
 * Protocol: the host posts {@linkcode BcryptRequest}s and gets one
 * {@linkcode BcryptReply} per request, matched by `id`, in order.
 *
 * @example Start the worker and compare one password
 * ```ts
 * import assert from "node:assert/strict";
 * import bcrypt from "bcryptjs";
 * import type { BcryptReply } from "./bcrypt_worker.ts";
 *
 * const worker = new Worker(new URL("./bcrypt_worker.ts", import.meta.url), {
 *   type: "module",
 * });
 * const reply = await new Promise<BcryptReply>((resolve) => {
 *   worker.onmessage = (e) => resolve(e.data);
 *   worker.postMessage({
 *     id: 1,
 *     password: "s3cret",
 *     hash: bcrypt.hashSync("s3cret", 4),
 *   });
 * });
 * worker.terminate();
 * assert.deepEqual(reply, { id: 1, ok: true });
 * ```
 *
 * @module
 */

import bcrypt from "bcryptjs";
import { errorMessage } from "../base/error_message.ts";

/** One comparison asked of the worker. */
export interface BcryptRequest {
  /** Echoed in the reply. */
  readonly id: number;
  readonly password: string;
  /** A bcrypt hash (`$2a$`, `$2b$` or `$2y$`). */
  readonly hash: string;
}

/** The worker's answer: `ok` is whether the password matches, or `error`. */
export type BcryptReply =
  | { readonly id: number; readonly ok: boolean }
  | { readonly id: number; readonly error: string };

// Typed narrowly by hand rather than with `/// <reference lib="deno.worker" />`,
// which would clash with the window lib when this file is type-checked
// together with the rest of the agent.
const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<BcryptRequest>) => void) | null;
  postMessage(message: BcryptReply): void;
};

scope.onmessage = (event) => {
  const { id, password, hash } = event.data ?? {};
  if (
    typeof id !== "number" || typeof password !== "string" ||
    typeof hash !== "string"
  ) {
    scope.postMessage({ id: Number(id), error: "malformed request" });
    return;
  }
  try {
    scope.postMessage({ id, ok: bcrypt.compareSync(password, hash) });
  } catch (error) {
    // bcryptjs errors describe the hash format, never the password.
    scope.postMessage({
      id,
      error: errorMessage(error),
    });
  }
};
