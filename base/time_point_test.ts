import assert from "node:assert/strict";
import {
  epochMs,
  formatTimePoint,
  NS_PER_DAY,
  NS_PER_SECOND,
  parseTimePoint,
} from "./time_point.ts";

const T = 1_795_272_600n * NS_PER_SECOND; // 2026-11-21T14:50:00Z
const MINUTE = 60n * NS_PER_SECOND;

Deno.test("parseTimePoint reads ISO-8601 in every form the review and the events API took", () => {
  const cases: [string, bigint, bigint][] = [
    ["2026-11-21T14:50:00Z", T, NS_PER_SECOND],
    ["2026-11-21t14:50:00z", T, NS_PER_SECOND],
    ["2026-11-21T14:50", T, MINUTE], // UTC without a zone
    ["2026-11-21 14:50:00", T, NS_PER_SECOND],
    ["  2026-11-21T14:50:00Z\n", T, NS_PER_SECOND],
    ["2026-11-21T16:50:00+02:00", T, NS_PER_SECOND],
    ["2026-11-21T16:50:00+0200", T, NS_PER_SECOND],
    ["2026-11-21T12:20:00-02:30", T, NS_PER_SECOND],
    ["2026-11-21T14:50:00.250Z", T + 250_000_000n, 1_000_000n],
    ["2026-11-21T14:50:00.5", T + 500_000_000n, 100_000_000n],
    ["2026-11-21T14:50:00.000000001Z", T + 1n, 1n],
    // Below a nanosecond: dropped, the span stays one ns.
    ["2026-11-21T14:50:00.1234567899Z", T + 123_456_789n, 1n],
    ["2026-11-21", T - (14n * 60n + 50n) * MINUTE, NS_PER_DAY],
    // Midnight at +02:00 is 22:00 UTC the day before.
    ["2026-11-22+02:00", T + (7n * 60n + 10n) * MINUTE, NS_PER_DAY],
    ["2024-02-29T00:00:00Z", 1_709_164_800n * NS_PER_SECOND, NS_PER_SECOND],
    ["1969-12-31T23:59:59.999999999Z", -1n, 1n],
    // ISO-8601's end of a day.
    ["2026-11-20T24:00", T - (14n * 60n + 50n) * MINUTE, MINUTE],
  ];
  for (const [text, ns, spanNs] of cases) {
    assert.deepEqual(parseTimePoint("--since", text), { ns, spanNs }, text);
  }
  // The same instants through Date, where Date is exact (whole ms).
  for (const text of ["2026-11-21T16:50:00+02:00", "2000-03-01T00:00:00.5Z"]) {
    assert.equal(
      parseTimePoint("--since", text).ns,
      BigInt(Date.parse(text)) * 1_000_000n,
      text,
    );
  }
});

Deno.test("parseTimePoint reads Unix seconds, whole or to the ns", () => {
  assert.deepEqual(parseTimePoint("since", "1795272600"), {
    ns: T,
    spanNs: NS_PER_SECOND,
  });
  assert.deepEqual(parseTimePoint("since", "1795272600.000000001"), {
    ns: T + 1n,
    spanNs: 1n,
  });
  assert.deepEqual(parseTimePoint("since", "1795272600.25"), {
    ns: T + 250_000_000n,
    spanNs: 10_000_000n,
  });
  assert.deepEqual(parseTimePoint("since", "0"), {
    ns: 0n,
    spanNs: NS_PER_SECOND,
  });
  assert.equal(
    parseTimePoint("since", "999999999999").ns,
    999_999_999_999n * NS_PER_SECOND,
  );
});

Deno.test("parseTimePoint refuses what is not a time, in one line naming the option and the value", () => {
  const cases: [string, string, string][] = [
    [
      "yesterday",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    [
      "",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    [
      "14:50",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    [
      "2026-11-21T14:50.5",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    [
      "-1",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    [
      "1e9",
      "TypeError",
      "not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds",
    ],
    ["2026-13-01", "RangeError", "there is no month 13"],
    ["2026-00-01", "RangeError", "there is no month 00"],
    ["2026-02-29", "RangeError", "2026-02 has no day 29"],
    ["2026-04-31", "RangeError", "2026-04 has no day 31"],
    ["2026-11-00", "RangeError", "2026-11 has no day 00"],
    ["2026-11-21T25:00", "RangeError", "there is no hour 25"],
    ["2026-11-21T24:00:01", "RangeError", "there is no hour 24"],
    ["2026-11-21T14:60", "RangeError", "there is no minute 60"],
    ["2026-11-21T14:50:60Z", "RangeError", "there is no second 60"],
    ["2026-11-21T14:50+24:00", "RangeError", "there is no zone offset +24:00"],
    [
      "1795272600000",
      "RangeError",
      "Unix seconds have at most 12 digits (milliseconds? give seconds)",
    ],
  ];
  for (const [text, name, reason] of cases) {
    assert.throws(() => parseTimePoint("--until", text), {
      name,
      message: `--until ${JSON.stringify(text)}: ${reason}`,
    });
  }
  // A hostile value stays one line, and short.
  assert.throws(() => parseTimePoint("since", `a\nb${"x".repeat(100)}`), {
    message: `since "a\\nb${
      "x".repeat(61)
    }...": not a time; give ISO-8601 (2026-11-21T14:50:00Z; UTC if no zone) or Unix seconds`,
  });
});

Deno.test("formatTimePoint writes nine digits that read back as the same nanosecond", () => {
  for (
    const ns of [
      0n,
      1n,
      T,
      T + 300_000_000n,
      T + 999_999_999n,
      -1n,
      -NS_PER_SECOND,
    ]
  ) {
    const text = formatTimePoint(ns);
    assert.match(text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
    assert.deepEqual(parseTimePoint("--event", text), { ns, spanNs: 1n }, text);
  }
  assert.equal(
    formatTimePoint(T + 300_000_000n),
    "2026-11-21T14:50:00.300000000Z",
  );
});

Deno.test("epochMs keeps the fraction of a millisecond", () => {
  assert.equal(epochMs(T), 1_795_272_600_000);
  assert.equal(epochMs(T + 500_000_000n), 1_795_272_600_500);
  assert.equal(epochMs(T + 1_500n), 1_795_272_600_000.0015);
  assert.equal(epochMs(-1_000_000n), -1);
});
