import assert from "node:assert/strict";
import { RowPositions } from "./positions.ts";

Deno.test("a window starts at the dump while it has at most capacity rows, then capacity rows back", () => {
  const p = new RowPositions(3);
  p.begin(0, 10, 100);
  assert.deepEqual(p.windowStart(), { file: 0, line: 10, offset: 100 });
  for (let i = 1; i <= 3; i++) p.push(0, 10 + i, 100 + 10 * i);
  assert.equal(p.historyRows(), 3);
  assert.deepEqual(p.windowStart(), { file: 0, line: 10, offset: 100 });
  // Across a rotation: rows of the next file.
  for (let i = 1; i <= 4; i++) p.push(1, i, 10 * i);
  assert.equal(p.historyRows(), 3);
  assert.deepEqual(p.windowStart(), { file: 1, line: 2, offset: 20 });
  assert.equal(p.rows, 7);
});

Deno.test("a new dump starts over; a new capacity forgets the rows", () => {
  const p = new RowPositions(2);
  p.begin(0, 1, 0);
  p.push(0, 2, 5);
  p.push(0, 3, 9);
  p.push(0, 4, 13);
  p.begin(0, 5, 17);
  assert.deepEqual([p.rows, p.open], [0, true]);
  assert.deepEqual(p.windowStart(), { file: 0, line: 5, offset: 17 });
  p.push(0, 6, 20);
  p.capacity = 4;
  assert.equal(p.rows, 0);
  p.reset();
  assert.equal(p.open, false);
});
