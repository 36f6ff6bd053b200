import assert from "node:assert/strict";
import { ColumnNames, isColumnRow } from "./columns.ts";

Deno.test("column-name rows: quoted names, one array per distinct text", () => {
  const names = new ColumnNames();
  const text = 'timestamp, "a, b", " ""x"" "';
  const a = names.parse(text);
  assert.deepEqual(a, ["timestamp", "a, b", ' "x" ']);
  // A copy of the text (another line of the log) gives the same array.
  assert.equal(names.parse(text.split("").join("")), a);
  assert.ok(Object.isFrozen(a));
  assert.notEqual(names.parse("timestamp, c"), a);
});

Deno.test("column-name rows: recognised, and malformed ones refused in one line", () => {
  assert.ok(isColumnRow("timestamp, a"));
  assert.ok(isColumnRow(' "timestamp" ,a'));
  assert.ok(!isColumnRow("1795272600000000000, 1"));
  assert.throws(
    () => new ColumnNames().parse('timestamp, "open'),
    (error: Error) =>
      error instanceof SyntaxError &&
      /^malformed column-name row \(/.test(error.message) &&
      !error.message.includes("\n"),
  );
});

Deno.test("the cache stays bounded", () => {
  const names = new ColumnNames();
  const first = names.parse("timestamp, c0");
  for (let i = 1; i <= 100; i++) names.parse(`timestamp, c${i}`);
  // Forgotten, parsed again: equal, not the same array.
  const again = names.parse("timestamp, c0");
  assert.deepEqual(again, first);
  assert.notEqual(again, first);
});

Deno.test("intern gives one array for equal lists of names", () => {
  const names = new ColumnNames();
  const a = names.intern(["timestamp", "a", "b"]);
  assert.equal(names.intern(["timestamp", "a", "b"]), a);
  assert.notEqual(names.intern(["timestamp", "a"]), a);
  assert.ok(Object.isFrozen(a));
});
