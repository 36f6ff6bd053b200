import assert from "node:assert/strict";
import { measureText, peakCell } from "./peak_text.ts";

Deno.test("measures read the same in the closing table and in alerts", () => {
  // A peak is a float: past 2^53 it prints as the float's shortest
  // digits, in full (no exponent anywhere in the u64 range), not cut to 6.
  assert.equal(measureText(2 ** 60, ""), "1152921504606847000");
  assert.equal(measureText(2 ** 64 - 1, ""), "18446744073709552000");
  assert.equal(measureText(0, "%"), "0 %");
  assert.equal(measureText(1 / 3, "/s"), "0.333333/s");
  assert.equal(measureText(-2.5, ""), "-2.5");
  assert.equal(
    peakCell({ peak: 0, peakKind: "min", peakUnit: "/s" }),
    "min 0/s",
  );
  assert.equal(peakCell({ peak: NaN, peakKind: "min", peakUnit: "%" }), "-");
});

Deno.test("configured figures read exactly, in the same units as measured ones", () => {
  const exact = { exact: true };
  // A u64 threshold keeps every digit; a measured float would not.
  assert.equal(measureText(2n ** 64n - 1n, "", exact), "18446744073709551615");
  assert.equal(measureText(5n, "/s", exact), "5/s");
  // No rounding to 6 digits: check-config shows what the agent compares.
  assert.equal(measureText(1234567.25, "/s", exact), "1234567.25/s");
  assert.equal(measureText(1234567.25, "/s"), "1234570/s");
  // A ratio as a percentage, without the noise of x 100.
  assert.equal(measureText(0.001, "%", exact), "0.1 %");
  assert.equal(measureText(0.0007, "%", exact), "0.07 %");
  assert.equal(measureText(1e307, "%", exact), "1e+307");
  // Exponents stay as JavaScript writes them.
  assert.equal(measureText(1e21, "", exact), "1e+21");
  assert.equal(measureText(NaN, "/s", exact), "-");
});
