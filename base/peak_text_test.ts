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
