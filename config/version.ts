/**
 * The agent's version, from deno.json so that there is one place to bump.
 *
 * @module
 */

import manifest from "../deno.json" with { type: "json" };

/** The agent version, e.g. `0.1.0`. */
export const VERSION: string = manifest.version;
