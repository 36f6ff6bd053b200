import assert from "node:assert/strict";
import { terminalSafe } from "./terminal_text.ts";

Deno.test("terminalSafe shows escape sequences, C1 controls, separators and bidi controls as \\uXXXX", () => {
  assert.equal(
    terminalSafe("a\x1b[2J\x1b]52;c;ZXZpbA==\x07b"),
    "a\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007b",
  );
  assert.equal(
    terminalSafe("\x00\t\n\r\x7f"),
    "\\u0000\\u0009\\u000a\\u000d\\u007f",
  );
  assert.equal(
    terminalSafe("\x80\x85\x9b\x9f"),
    "\\u0080\\u0085\\u009b\\u009f",
  );
  assert.equal(terminalSafe("\u2028\u2029"), "\\u2028\\u2029");
  assert.equal(
    terminalSafe("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"),
    "\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069",
  );
  assert.equal(terminalSafe("\u200e\u200f\u061c"), "\\u200e\\u200f\\u061c");
});

Deno.test("terminalSafe keeps printable text, non-Latin scripts and emoji as they are", () => {
  for (
    const text of [
      "ECN > 100 per 2 samples",
      "µs · ±5 °C",
      "温度 > 85",
      "مرحبا",
      "🔥 hot",
      "a\\u001bb",
      "\u00a0\u00ff",
    ]
  ) {
    assert.equal(terminalSafe(text), text);
  }
});

Deno.test("terminalSafe is idempotent and JSON reads its escapes back as the original", () => {
  const hostile = "r\x1b[31m\u202eule\x9b\u2028";
  const once = terminalSafe(hostile);
  assert.equal(terminalSafe(once), once);
  assert.equal(JSON.parse(terminalSafe(JSON.stringify(hostile))), hostile);
});
