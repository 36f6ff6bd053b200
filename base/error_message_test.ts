import assert from "node:assert/strict";
import { errorMessage } from "./error_message.ts";

Deno.test("errorMessage reads an Error's message and strings anything else", () => {
  assert.equal(errorMessage(new TypeError("bad type")), "bad type");
  assert.equal(errorMessage(new Error("cause", { cause: 1 })), "cause");
  assert.equal(errorMessage(undefined), "undefined");
  assert.equal(errorMessage({ toString: () => "custom" }), "custom");
});
