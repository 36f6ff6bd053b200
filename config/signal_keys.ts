/**
 * The keys that make a rule a signal rule, apart from the zod schema that
 * checks them, so that a reader of events.log (the endpoint's event pages)
 * can know them without loading zod on its thread.
 *
 * @module
 */

import type { SignalKind } from "./types.ts";

/** The keys that make a rule a signal rule, each naming the column it watches. */
export const SIGNAL_KEYS: readonly SignalKind[] = [
  "value",
  "increase",
  "rate",
  "ratio",
];
