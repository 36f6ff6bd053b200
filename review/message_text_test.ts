import assert from "node:assert/strict";
import { clip } from "./message_text.ts";

Deno.test("clip shows control characters, tabs, newlines and bidi overrides as escapes", () => {
  // It used to write "?" for each by its own code; now terminalSafe's
  // escapes, as every other output does. U+FFFD (bytes that were not
  // UTF-8) is harmless on a terminal and stays.
  assert.equal(
    clip("a\u0000b\tc\nd\u001b[31me\u007f\u0085\ufffd"),
    "a\\u0000b\\u0009c\\u000ad\\u001b[31me\\u007f\\u0085\ufffd",
  );
  assert.equal(clip("rx \u202eyb"), "rx \\u202eyb");
  assert.equal(clip("µs · ok"), "µs · ok");
});

Deno.test("clip cuts at 40 characters and is printable", () => {
  assert.equal(clip("short"), "short");
  assert.equal(clip("\u0000".repeat(45)), "\\u0000".repeat(40) + "...");
});
