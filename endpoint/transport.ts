/**
 * Byte streams the endpoint's HTTP layer reads and writes: a TCP
 * connection as it is, or TLS over it.
 *
 * Why TLS is done with node:tls over a connection we accepted ourselves,
 * not with `Deno.listenTls`: in Deno 2.9.6 a `Deno.TlsConn` whose handshake
 * has not finished cannot be closed. `close()` returns, but the socket stays
 * open until the client goes away, so a client that connects and sends
 * nothing would hold a file descriptor for ever, whatever timeout the
 * server keeps. Here the TCP connection is ours: closing it frees the
 * descriptor at once. node:tls in Deno uses the same TLS library (rustls)
 * as `Deno.listenTls`, with the same versions and cipher suites offered
 * (checked with `openssl s_client`), so endpoint/web_config.ts' guarantees
 * hold unchanged.
 *
 * @module
 */

import { Duplex } from "node:stream";
import tls from "node:tls";

/** One connection's bytes. */
export interface Transport {
  /**
   * Reads into `into`; resolves with the number of bytes, or null at the
   * end of the stream. Rejects once the transport is closed.
   */
  read(into: Uint8Array): Promise<number | null>;
  /** Writes all of `bytes`; rejects once the transport is closed. */
  write(bytes: Uint8Array): Promise<void>;
  /** Closes the connection now (idempotent); pending calls reject. */
  close(): void;
}

/**
 * A TCP connection as a {@linkcode Transport}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainTransport } from "./transport.ts";
 *
 * using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
 * const server = plainTransport(await listener.accept());
 * await server.write(new TextEncoder().encode("hi"));
 * const buf = new Uint8Array(8);
 * assert.equal(await client.read(buf), 2);
 * server.close();
 * assert.equal(await client.read(buf), null);
 * client.close();
 * ```
 */
export function plainTransport(conn: Deno.Conn): Transport {
  let closed = false;
  return {
    read: (into) => conn.read(into),
    async write(bytes) {
      let done = 0;
      while (done < bytes.length) {
        done += await conn.write(bytes.subarray(done));
      }
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        conn.close();
      } catch {
        // Already closed by the runtime (the peer reset it).
      }
    },
  };
}

/** The server's certificate chain and key, checked and ready for handshakes. */
export type TlsContext = tls.SecureContext;

/**
 * Loads a PEM certificate chain and key for {@linkcode TlsTransport}.
 * Throws (node:tls' error) when they do not parse or do not match.
 *
 * @example
 * ```ts ignore
 * const context = tlsContext(web.tls.cert, web.tls.key);
 * ```
 */
export function tlsContext(cert: string, key: string): TlsContext {
  return tls.createSecureContext({ cert, key });
}

/** Plaintext queued before the TLS socket is paused, bytes. */
const READ_QUEUE_BYTES = 16 * 1024;

/**
 * TLS (server side, HTTP/1.1 by ALPN) over an accepted TCP connection.
 * Wait for {@linkcode TlsTransport.secured} before reading.
 *
 * @example
 * ```ts ignore
 * const transport = new TlsTransport(await listener.accept(), context);
 * await transport.secured; // or close() it when that takes too long
 * ```
 */
export class TlsTransport implements Transport {
  /** Resolves when the handshake is done; rejects if it fails or is cut. */
  readonly secured: Promise<void>;

  readonly #raw: Duplex;
  readonly #socket: tls.TLSSocket;
  readonly #chunks: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;

  /** Starts the handshake on `conn` with the certificate in `context`. */
  constructor(conn: Deno.Conn, context: TlsContext) {
    this.#raw = connDuplex(conn);
    this.#socket = new tls.TLSSocket(this.#raw, {
      isServer: true,
      secureContext: context,
      // HTTP/2 is not served: a client that offers it gets HTTP/1.1.
      ALPNProtocols: ["http/1.1"],
    });
    this.secured = new Promise<void>((resolve, reject) => {
      this.#socket.once("secure", resolve);
      this.#socket.once("error", reject);
      this.#socket.once(
        "close",
        () => reject(new Error("TLS connection closed")),
      );
    });
    // Settled here too, so that a failed handshake nobody awaits any more
    // (the connection was cut) is not an unhandled rejection.
    this.secured.catch(() => {});
    this.#socket.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#queued += chunk.length;
      // Backpressure: the HTTP layer reads one head at a time.
      if (this.#queued >= READ_QUEUE_BYTES) this.#socket.pause();
      this.#notify();
    });
    this.#socket.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    this.#socket.on("error", (error: Error) => {
      this.#failure ??= error;
      this.#notify();
    });
    this.#socket.on("close", () => {
      this.#failure ??= new Error("TLS connection closed");
      this.#notify();
    });
  }

  /** Reads decrypted bytes into `into`. */
  async read(into: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended) return null;
      if (this.#failure !== undefined) throw this.#failure;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    const chunk = this.#chunks[0];
    const n = Math.min(chunk.length, into.length);
    into.set(chunk.subarray(0, n));
    if (n === chunk.length) this.#chunks.shift();
    else this.#chunks[0] = chunk.subarray(n);
    this.#queued -= n;
    if (this.#queued < READ_QUEUE_BYTES && this.#socket.isPaused()) {
      this.#socket.resume();
    }
    return n;
  }

  /** Encrypts and writes `bytes`; resolves once they reached the socket. */
  write(bytes: Uint8Array): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#socket.write(bytes, (error) => error ? reject(error) : resolve());
    });
  }

  /** Closes the TCP connection now; pending reads and writes reject. */
  close(): void {
    this.#failure ??= new Error("TLS connection closed");
    this.#socket.destroy();
    this.#raw.destroy();
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/**
 * A Deno.Conn as the node Duplex node:tls reads ciphertext from and writes
 * it to. Destroying it closes the connection.
 */
function connDuplex(conn: Deno.Conn): Duplex {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      conn.close();
    } catch {
      // Already closed by the runtime.
    }
  };
  return new Duplex({
    read() {
      // One read at a time: node calls read() again only after a push.
      const buf = new Uint8Array(16 * 1024);
      conn.read(buf).then(
        (n) => this.push(n === null ? null : buf.subarray(0, n)),
        (error) => this.destroy(error),
      );
    },
    write(chunk: Uint8Array, _encoding, callback) {
      (async () => {
        let done = 0;
        while (done < chunk.length) {
          done += await conn.write(chunk.subarray(done));
        }
      })().then(() => callback(), callback);
    },
    final(callback) {
      conn.closeWrite().then(() => callback(), () => callback());
    },
    destroy(error, callback) {
      close();
      callback(error);
    },
  });
}
