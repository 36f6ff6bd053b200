/**
 * A scrape as Prometheus makes it, counted in bytes on the wire, for the
 * benchmarks that report fabric traffic (bench/fabric.ts,
 * bench/alert_latency.ts).
 *
 * @module
 */

/** The `Accept` header Prometheus 2.42 sends with a scrape. */
export const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/**
 * One HTTP/1.1 GET over a raw socket, gzip accepted: the bytes each way
 * (headers included) and the response's status line and headers.
 */
export async function wireGet(
  host: string,
  port: number,
  path: string,
  accept: string,
): Promise<
  { sent: number; received: number; status: string; headers: string }
> {
  const conn = await Deno.connect({ hostname: host, port });
  const request = `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n` +
    `User-Agent: Prometheus/2.42.0\r\nAccept: ${accept}\r\n` +
    `Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n` +
    `Connection: close\r\n\r\n`;
  const bytes = new TextEncoder().encode(request);
  await conn.write(bytes);
  const chunks: Uint8Array[] = [];
  for await (const chunk of conn.readable) chunks.push(chunk);
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  const text = new TextDecoder("latin1").decode(all);
  const head = text.slice(0, text.indexOf("\r\n\r\n"));
  return {
    sent: bytes.length,
    received: all.length,
    status: head.split("\r\n")[0],
    headers: head,
  };
}
