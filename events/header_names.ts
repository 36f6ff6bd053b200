/**
 * The fixed words of an events.log header block, apart from the writer
 * (events/header.ts, which loads csv-stringify), so that a reader (the
 * endpoint's event pages) can know them without loading it on its thread.
 *
 * @module
 */

import type { ComparisonType } from "../config/types.ts";

/** The words that open a header block, before the writer's version. */
export const HEADER_PREFIX = "Telemetry monitor :";

/** How the reference prints each comparison type in the header. */
export const HEADER_TYPE_NAMES: Readonly<Record<ComparisonType, string>> = {
  inc_gt: "incremental",
  dt_gt: "differential_greater_than",
  dt_lt: "differential_less_than",
  gt: "greater_than",
  lt: "less_than",
};
