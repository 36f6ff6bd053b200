/**
 * The link an alert carries to the endpoint that raised it.
 *
 * @module
 */

/**
 * The endpoint's URL as a person following an alert's link can use it: an
 * endpoint listening on every address (`0.0.0.0`, `::`) is reached by the
 * host's name, the alerts' `instance`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { linkableUrl } from "./linkable_url.ts";
 *
 * assert.equal(linkableUrl("http://0.0.0.0:9477/", "dpu-7"), "http://dpu-7:9477/");
 * assert.equal(linkableUrl("https://[::]:9477/", "dpu-7"), "https://dpu-7:9477/");
 * assert.equal(linkableUrl("http://10.0.0.5:9477/", "dpu-7"), "http://10.0.0.5:9477/");
 * ```
 */
export function linkableUrl(url: string, instance: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === "0.0.0.0" || parsed.hostname === "[::]") {
    parsed.hostname = instance;
  }
  return parsed.href;
}
