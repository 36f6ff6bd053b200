import assert from "node:assert/strict";
import { quoteColumnName, quoteName } from "../events/header.ts";
import { STALE_PERIODS } from "../metrics/agent_metrics.ts";
import { MAX_LINE_BYTES } from "../review/lines.ts";
import { GPU_READINGS, MAX_GPU_INDEX } from "./gpu_readings.ts";
import {
  MAX_ALERT_HOLD_NS,
  MAX_ALERT_RESEND_NS,
  MAX_ALERT_TIMEOUT_NS,
  MAX_COLUMNS,
  MAX_CONFIG_BYTES,
  MAX_DURATION_S,
  MAX_METRICS_WINDOW_S,
  MAX_NAME_CHARS,
  MAX_RING_BYTES,
  MAX_RULE_DURATION_NS,
  MAX_SAMPLE_PERIOD_NS,
  MAX_SUMMARY_CHARS,
  MIN_METRICS_WINDOW_S,
} from "./limits.ts";

/** The longest delay setTimeout waits for rather than firing at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

Deno.test("the longest names still make a column row review can read", () => {
  // The worst name for the row: as many bytes as a name can take, and
  // quotes around it.
  const widest = [
    "\u{10FFFF}".repeat(MAX_NAME_CHARS - 1) + " ",
    '"'.repeat(MAX_NAME_CHARS),
  ].map((name) => new TextEncoder().encode(quoteColumnName(name)).length);
  const row = "timestamp".length + MAX_COLUMNS * (2 + Math.max(...widest));
  assert.ok(row < MAX_LINE_BYTES, `${row} bytes`);
});

Deno.test("the longest sample period fits every timer that waits on it", () => {
  const periodMs = MAX_SAMPLE_PERIOD_NS / 1e6;
  // A GPU monitor calls NVML stalled after 3 periods; metrics call a
  // monitor stale after STALE_PERIODS.
  assert.ok(3 * periodMs <= MAX_TIMER_MS);
  assert.ok(STALE_PERIODS * periodMs <= MAX_TIMER_MS);
});

Deno.test("the metrics window is a whole, exact number of nanoseconds", () => {
  assert.ok(Math.round(MIN_METRICS_WINDOW_S * 1e9) >= 1);
  assert.ok(Number.isSafeInteger(Math.round(MAX_METRICS_WINDOW_S * 1e9)));
});

Deno.test("the other bounds hold what a configuration needs", () => {
  // A --duration of the longest is a safe number of milliseconds.
  assert.ok(Number.isSafeInteger(MAX_DURATION_S * 1000));
  assert.ok(MAX_DURATION_S >= 30 * 86_400);
  // The defaults' ring for the most columns, and a GPU monitor's for every
  // reading of every GPU, fit with room to spare.
  assert.ok(2 * 1024 * (MAX_COLUMNS + 1) * 8 < MAX_RING_BYTES / 32);
  assert.ok(
    2 * 60 * ((MAX_GPU_INDEX + 1) * GPU_READINGS.length + 1) * 8 <
      MAX_RING_BYTES / 32,
  );
  // 1024 columns and 1024 rules with the longest names, as JSON.
  const name = "n".repeat(MAX_NAME_CHARS);
  const doc = JSON.stringify(
    {
      "data-ids": Array(MAX_COLUMNS).fill({
        name,
        data_id: "0x1020000100000000",
      }),
      rules: Array(1024).fill({
        name,
        data_id: "0x1020000100000000",
        comparison_type: "differential_greater_than",
        comparison_value: "18446744073709551615",
      }),
    },
    null,
    2,
  );
  assert.ok(doc.length < MAX_CONFIG_BYTES / 2, `${doc.length} bytes`);
});

Deno.test("rule durations and summaries fit what rules and logs hold", () => {
  // Rules take time differences as float64 ns, exact below 2^53; the
  // longest window or for, added to a timestamp difference, stays exact.
  assert.ok(Number.isSafeInteger(MAX_RULE_DURATION_NS));
  assert.ok(2 * MAX_RULE_DURATION_NS < 2 ** 53);
  // The longest summary of the widest characters, quoted as the events
  // log's header writes it, is a line review reads.
  for (const char of ["\u{10FFFF}", '"', "\\"]) {
    const line = `\t\t\tSummary: ${quoteName(char.repeat(MAX_SUMMARY_CHARS))}`;
    assert.ok(new TextEncoder().encode(line).length < MAX_LINE_BYTES);
  }
});

Deno.test("the longest alert timings fit the timers that wait on them", () => {
  // A firing alert's endsAt lease is 4 resend intervals.
  assert.ok(4 * MAX_ALERT_RESEND_NS / 1e6 <= MAX_TIMER_MS);
  assert.ok(MAX_ALERT_HOLD_NS / 1e6 <= MAX_TIMER_MS);
  assert.ok(MAX_ALERT_TIMEOUT_NS / 1e6 <= MAX_TIMER_MS);
});
