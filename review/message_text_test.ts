import assert from "node:assert/strict";
import { clip, printable } from "./message_text.ts";

Deno.test("printable shows control characters, tabs and newlines included, as ?", () => {
  assert.equal(
    printable("a\u0000b\tc\nd\u001b[31me\u007f\u0085\ufffd"),
    "a?b?c?d?[31me???",
  );
  assert.equal(printable("µs · ok"), "µs · ok");
});

Deno.test("clip cuts at 40 characters and is printable", () => {
  assert.equal(clip("short"), "short");
  assert.equal(clip("\u0000".repeat(45)), "?".repeat(40) + "...");
});
