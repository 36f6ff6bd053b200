/**
 * Serves the metrics app with Deno.serve, plain or TLS, on a `HOST:PORT`
 * listen address.
 *
 * @module
 */

import { errorMessage } from "../base/error_message.ts";
import type { MetricsApp } from "./app.ts";

/** What {@linkcode serveMetrics} needs. */
export interface ServeOptions {
  /** `HOST:PORT`; IPv6 hosts in brackets; port 0 picks a free port. */
  readonly listen: string;
  /** PEM certificate chain and key: serve HTTPS. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Told of connection-level failures, one line each. */
  readonly onError?: (message: string) => void;
}

/** A running endpoint. */
export interface MetricsServer {
  /** Where it listens, e.g. `http://127.0.0.1:9477/`. */
  readonly url: string;
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish, and resolves. */
  shutdown(): Promise<void>;
}

/** Splits `HOST:PORT` (IPv6 hosts in brackets) into its parts. */
export function splitListen(
  listen: string,
): { hostname: string; port: number } {
  const colon = listen.lastIndexOf(":");
  let hostname = listen.slice(0, colon);
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    hostname = hostname.slice(1, -1);
  }
  return { hostname, port: Number(listen.slice(colon + 1)) };
}

/**
 * Starts serving `app`. Throws a one-line Error naming the address when it
 * cannot listen (in use, not an address of this host, no permission).
 *
 * @example
 * ```ts ignore
 * const server = serveMetrics(app, { listen: "127.0.0.1:0" });
 * console.error(`metrics on ${server.url}`);
 * await server.shutdown();
 * ```
 */
export function serveMetrics(
  app: Pick<MetricsApp, "fetch">,
  options: ServeOptions,
): MetricsServer {
  const { hostname, port } = splitListen(options.listen);
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname,
      port,
      ...(options.tls === undefined
        ? {}
        : { cert: options.tls.cert, key: options.tls.key }),
      onListen: () => {},
      onError: (error) => {
        options.onError?.(
          `metrics endpoint: ${errorMessage(error)}`,
        );
        return new Response("internal error\n", { status: 500 });
      },
    }, (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr }));
  } catch (error) {
    throw new Error(
      `Cannot serve metrics on ${options.listen}: ${listenProblem(error)}`,
      { cause: error },
    );
  }
  const addr = server.addr;
  const host = addr.hostname.includes(":")
    ? `[${addr.hostname}]`
    : addr.hostname;
  return {
    url: `${options.tls ? "https" : "http"}://${host}:${addr.port}/`,
    port: addr.port,
    shutdown: () => server.shutdown(),
  };
}

function listenProblem(error: unknown): string {
  if (error instanceof Deno.errors.AddrInUse) {
    return "the address is in use (another dpu-traceback or exporter? choose one with --listen HOST:PORT, or --listen off)";
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return "not an address of this host (--listen takes a local address)";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied (ports below 1024 need root)";
  }
  return errorMessage(error).split("\n")[0];
}
